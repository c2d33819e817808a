# Origin: https://github.com/dangxuanvuong98/Template_classification/blob/HEAD/test_loss.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
from torch import nn
loss = nn.CrossEntropyLoss()
input = torch.randn(3, 5, requires_grad=True)
target = torch.empty(3, dtype=torch.long).random_(5)
print(input)
print(target)
output = loss(input, target)
print(output)
output.backward()
