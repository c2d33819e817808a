# Origin: https://github.com/pytorch/tutorials/blob/d228d10c8ad34972ab9a1f64a1fb0dada930b04c/beginner_source/introyt/autogradyt_tutorial.py
# Excerpt: 'The High-Level API'.
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

def exp_adder(x, y):
    return 2 * x.exp() + 3 * y

inputs = (torch.rand(1), torch.rand(1)) # arguments for the function
print(inputs)
torch.autograd.functional.jacobian(exp_adder, inputs)
