# Origin: https://github.com/pytorch/tutorials/blob/db77dcf6e3637924f43852c014f2af9978b0f891/beginner_source/basics/autogradqs_tutorial.py
# Excerpt: the file's import, then the Jacobian-product part.
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
