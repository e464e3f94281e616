import torch
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Linear(64, 64, device=dev)
x = torch.randn(8, 64, device=dev)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):          # warm up on a side stream, as the docs do
    for _ in range(3):
        model(x).sum().backward()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()

from torch.utils.checkpoint import checkpoint
def block(t):
    return torch.nn.functional.dropout(model(t), 0.1)
xin = x.clone().requires_grad_()
with torch.cuda.graph(g):
    y = checkpoint(block, xin, use_reentrant=False)
    y.sum().backward()
