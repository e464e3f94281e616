import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")
dist.init_process_group("nccl", rank=0, world_size=1)
torch.manual_seed(0)
dev = torch.device("cuda")
model = DDP(torch.nn.Linear(64, 64, device=dev))   # built on the default stream
x = torch.randn(8, 64, device=dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):                               # fewer than the 11 DDP warmups
        opt.zero_grad(set_to_none=True)
        model(x).sum().backward()
        opt.step()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
opt.zero_grad(set_to_none=True)
with torch.cuda.graph(g):
    loss = model(x).sum()
    loss.backward()
g.replay()
torch.cuda.synchronize()
dist.destroy_process_group()
