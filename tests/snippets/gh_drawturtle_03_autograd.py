# Origin: https://github.com/khanh21062002/drawturtle/blob/HEAD/pytorch_tutorial/Gradient-Calculation-With-Autograd/03-autograd.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

x = torch.randn(3, requires_grad= True)
print(x)

y = x + 2 
print(y)
z = y*y*2
#z = z.mean()
print(z)

v = torch.tensor([0.1, 1.9, 0.001], dtype= torch.float32)
z.backward(v)#dz/dx
print(x.grad) 
