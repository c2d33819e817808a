# Origin: https://github.com/pytorch/tutorials/blob/56d1da96ef0e5acf5187d89c27d6ca6178170bc5/beginner_source/blitz/autograd_tutorial.py
# Excerpt: the file's imports, then the 'crazy things' part.
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
from torch.autograd import Variable

x = torch.randn(3)
x = Variable(x, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

###############################################################
#
gradients = torch.FloatTensor([0.1, 1.0, 0.0001])
y.backward(gradients)

print(x.grad)
