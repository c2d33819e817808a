# Origin: https://github.com/dsingal0/aslOpenVINO/blob/HEAD/pytorchBlitz/autograd.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
x = torch.ones(2,2,requires_grad=True)
print(x)
y = x+2
print(y)
z = y*y*3
out = z.mean()
out.backward()
print(x.grad)
print(y.grad)
