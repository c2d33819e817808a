# Origin: https://github.com/hhsecond/HandsOnDeepLearningWithPytorch/blob/HEAD/2.ASimpleNeuralNetwork/autograd_example.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
inputs = torch.FloatTensor([2])
weight = torch.rand(1, requires_grad=True)
bias = torch.ones(1, requires_grad=True)
t = inputs * weight
out = t + bias
out.backward()

weight.grad
bias.grad
