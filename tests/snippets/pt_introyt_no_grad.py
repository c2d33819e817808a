# Origin: https://github.com/pytorch/tutorials/blob/d228d10c8ad34972ab9a1f64a1fb0dada930b04c/beginner_source/introyt/autogradyt_tutorial.py
# Excerpt: the torch.no_grad() cell.
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

a = torch.ones(2, 3, requires_grad=True) * 2
b = torch.ones(2, 3, requires_grad=True) * 3

c1 = a + b
print(c1)

with torch.no_grad():
    c2 = a + b

print(c2)

c3 = a * b
print(c3)
