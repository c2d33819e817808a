# Origin: https://github.com/snuonuo/Pytorch-Framework/blob/HEAD/lesson/1-3计算图与动态图机制/1-3-Computational-Graph.py
# Copied as published (an excerpt where noted), for the import coverage test.
import torch

w = torch.tensor([1.], requires_grad=True)
x = torch.tensor([2.], requires_grad=True)

a = torch.add(w, x)     
# 执行a.retain_grad()会保存a的梯度

b = torch.add(w, 1)
y = torch.mul(a, b)

y.backward()
print(w.grad)

# 查看叶子结点：用户创建的节点
# 非叶子节点在反向传播之后梯度会被释放掉

# print("is_leaf:\n", w.is_leaf, x.is_leaf, a.is_leaf, b.is_leaf, y.is_leaf)
# print("gradient:\n", w.grad, x.grad, a.grad, b.grad, y.grad)

# 查看 grad_fn
# 记录创建该张量时所用的方法/函数 记录y是用乘法得到的
print("grad_fn:\n", w.grad_fn, x.grad_fn, a.grad_fn, b.grad_fn, y.grad_fn)

