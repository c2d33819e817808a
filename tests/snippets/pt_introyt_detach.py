# Origin: https://github.com/pytorch/tutorials/blob/d228d10c8ad34972ab9a1f64a1fb0dada930b04c/beginner_source/introyt/autogradyt_tutorial.py
# Excerpt: the detach() cell.
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

x = torch.rand(5, requires_grad=True)
y = x.detach()

print(x)
print(y)
