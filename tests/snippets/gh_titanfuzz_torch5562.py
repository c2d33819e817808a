# Origin: https://github.com/WGQZYJZ/Empirical-Study-on-LLM-based-DL-Compiler-Testing-Techniques/blob/HEAD/TitanFuzz/mycoverage/test_programs_titan_all_10000/torch5562.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch
from torch import nn
from torch.autograd import Variable
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
linear = torch.nn.Linear(2, 1)
y = linear(x)
y.backward(torch.ones_like(y))
