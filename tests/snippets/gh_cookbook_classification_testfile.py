# Origin: https://github.com/vhrehfdl/cookbook-pytorch/blob/HEAD/classification/test.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
import torch.nn.functional as F

input = torch.randn(3, 5, requires_grad=True)
target = torch.randint(5, (3,), dtype=torch.int64)
print(input)
print(target)
loss = F.cross_entropy(input, target)
loss.backward()
