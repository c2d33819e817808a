# Origin: https://github.com/pytorch/tutorials/blob/db77dcf6e3637924f43852c014f2af9978b0f891/beginner_source/basics/autogradqs_tutorial.py
# Excerpt: the one-layer network, from the import to print(b.grad) (prose comments left out).
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")

loss.backward()
print(w.grad)
print(b.grad)
