# Origin: https://github.com/cloudfu/PyTorch_Learn/blob/HEAD/dive/2.5.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

x = torch.arange(4.0, requires_grad=True)
print(x)
y = 2 * torch.dot(x, x)
print(y)
y.backward()
print(x.grad)
