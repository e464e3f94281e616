import torch
model = torch.nn.Linear(64, 32, device="cuda")
x = torch.randn(8, 64)
y = model(x)
