# Origin: https://github.com/asvkarthick/LearnPytorch/blob/HEAD/02-gradient/001-tutorial.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

x = torch.randn(3, requires_grad=True)
print(x)

y = x + 2
print(y)

z = y * y * 2
z = z.mean()
z.backward()
print(x.grad)
