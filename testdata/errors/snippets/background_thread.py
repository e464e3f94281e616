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

import threading, time
stop = threading.Event()
def prefetch():
    while not stop.is_set():
        batch = torch.randn(256, 256).pin_memory()
        batch = batch.to(dev, non_blocking=True)
t = threading.Thread(target=prefetch, daemon=True)
t.start()
time.sleep(0.5)
try:
    with torch.cuda.graph(g):
        y = model(x)
        time.sleep(1.0)          # the capture stays open while the thread works
finally:
    stop.set()
    t.join()
