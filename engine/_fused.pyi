# The compiled loop's signature (engine/_fused.c), for the type checker.
import numpy as np

def tanh_grad(g: np.ndarray, out: np.ndarray, result: np.ndarray) -> None: ...
