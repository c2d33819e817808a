# Origin: https://github.com/simonjulianl/Langevin_Machine_Learning/blob/HEAD/HNNwLJ20210507/src20210507/test/autograd.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

if __name__ == '__main__':

    x = torch.ones(2,2, requires_grad=True)
    print(x)

    y = x + 2
    print(y)

    z = y * y * 3
    out = z.mean()

    print(z, out)

    out.backward()
    print(x.grad)
