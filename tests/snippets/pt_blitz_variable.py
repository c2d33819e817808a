# Origin: https://github.com/pytorch/tutorials/blob/56d1da96ef0e5acf5187d89c27d6ca6178170bc5/beginner_source/blitz/autograd_tutorial.py
# Excerpt: the Variable part, from the imports to print(x.grad).
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
from torch.autograd import Variable

###############################################################
# Create a variable:
x = Variable(torch.ones(2, 2), requires_grad=True)
print(x)

###############################################################
# Do an operation of variable:
y = x + 2
print(y)

###############################################################
# ``y`` was created as a result of an operation, so it has a ``grad_fn``.
print(y.grad_fn)

###############################################################
# Do more operations on y
z = y * y * 3
out = z.mean()

print(z, out)

out.backward()

print(x.grad)
