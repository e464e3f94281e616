import torch
model = torch.nn.Linear(64, 32, device="cuda")
x = torch.randn(8, 48, device="cuda")
y = model(x)
