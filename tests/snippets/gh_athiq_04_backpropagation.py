# Origin: https://github.com/athiq-ahmed/Pytorch/blob/HEAD/04_backpropagation.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

x = torch.tensor(1.0)
y = torch.tensor(2.0)
w = torch.tensor(1.0, requires_grad=True)

# forward pass and compute the loss
y_pred = w * x
loss = (y_pred - y) ** 2

print(loss)

# backward
loss.backward()
print(w.grad)

# update weights
# next forwad and backward
