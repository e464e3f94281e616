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

side = torch.cuda.Stream()
with torch.cuda.graph(g):
    y = model(x)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        z = y * 2            # work forked onto a side stream...
    out = y + 1              # ...and the capturing stream never waits for it
