# Origin: https://github.com/191220029/NNA-A2/blob/HEAD/test.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
import numpy as np

a = torch.tensor(np.zeros((2,1)), requires_grad=True)
b = torch.tensor(np.ones((1,2)), requires_grad=True)
c = a + b
c.retain_grad()
d = c.sum()
d.retain_grad()
d.backward(retain_graph=True)
print(a.grad)
print(b.grad)
print(c.grad)
print(d.grad)
