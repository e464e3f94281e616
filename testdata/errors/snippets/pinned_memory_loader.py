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

import time
from torch.utils.data import DataLoader, TensorDataset
data = TensorDataset(torch.randn(4096, 64), torch.randn(4096, 64))
loader = DataLoader(data, batch_size=8, num_workers=2, pin_memory=True, prefetch_factor=8)
it = iter(loader)
static_x, static_y = next(it)
static_x, static_y = static_x.to(dev), static_y.to(dev)
with torch.cuda.graph(g):
    loss = torch.nn.functional.mse_loss(model(static_x), static_y)
    loss.backward()
    time.sleep(1.0)
for bx, by in it:
    static_x.copy_(bx, non_blocking=True)
    static_y.copy_(by, non_blocking=True)
    g.replay()
