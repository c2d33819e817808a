# Origin: https://github.com/pytorch/tutorials/blob/d228d10c8ad34972ab9a1f64a1fb0dada930b04c/beginner_source/introyt/autogradyt_tutorial.py
# Excerpt: 'More Autograd Detail', the repeated doubling.
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float) # stand-in for gradients
y.backward(v)

print(x.grad)
