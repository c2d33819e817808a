# Origin: https://github.com/pytorch/tutorials/blob/d228d10c8ad34972ab9a1f64a1fb0dada930b04c/beginner_source/introyt/autogradyt_tutorial.py
# Excerpt: 'Turning Autograd Off and On', the requires_grad flag.
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

a = torch.ones(2, 3, requires_grad=True)
print(a)

b1 = 2 * a
print(b1)

a.requires_grad = False
b2 = 2 * a
print(b2)
