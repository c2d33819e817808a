# Origin: https://github.com/Singingkettle/ChangShuoRadioRecognition/blob/HEAD/backup/ce_loss.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
import torch.nn as nn
# Example of target with class indices
loss = nn.CrossEntropyLoss()
# Example of target with class probabilities
input = torch.randn(3, 5, requires_grad=True)
target = torch.randn(3, 5).softmax(dim=1)
output = loss(input, target)
output.backward()
print(input.grad)
