import torch
free, total = torch.cuda.mem_get_info()
big = torch.empty(int(total * 2), dtype=torch.uint8, device="cuda")
