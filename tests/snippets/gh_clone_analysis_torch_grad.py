# Origin: https://github.com/abeeto/PyTorchCodeCloneAnalysis/blob/HEAD/GHData/oskin1_torch_practice/torch_grad.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch


x = torch.ones(2, 2, requires_grad=True)
y = x + 2
z = y ** 2 * 3
out = z.mean()

out.backward()


print(x.grad)
