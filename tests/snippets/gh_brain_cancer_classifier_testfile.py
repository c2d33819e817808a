# Origin: https://github.com/sallsdagrate/Brain-Cancer-Classifier/blob/HEAD/classifier/test.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
import torchvision
import torchvision.transforms as transforms

import torch.nn as nn
import torch.nn.functional as F

loss = nn.CrossEntropyLoss()
input = torch.randn(3, 5, requires_grad=True)
target = torch.empty(3, dtype=torch.long).random_(5)
output = loss(input, target)
output.backward()
print(input, target, output)
