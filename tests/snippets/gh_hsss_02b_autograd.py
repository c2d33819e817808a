# Origin: https://github.com/hsss/pytorch_tutorial/blob/HEAD/examples/02b-autograd.py
# Copied as published (an excerpt where noted), for the import coverage test.
import os
import torch

x = torch.tensor(3, dtype = torch.float, requires_grad=True)
print(x)

y = x ** 2.
print(y)

y.backward()
print(x.grad.item())
