"""How PyTorch spells what the walk understands: the op table's spellings, the factories,
dtypes, loss modules and the builtins a snippet may name.

The op spellings are read from the table (each record's ``torch``); the few PyTorch
aliases the table does not list are added here.
"""

from __future__ import annotations

import ast

from ..ops import OPS

OPERATOR_TEXT: dict[type, str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
}

#: Spellings PyTorch also accepts that the op table does not list.
_EXTRA_SPELLINGS = {
    "torch.mm": "matmul",
    "Tensor.mm": "matmul",
    "torch.mv": "matmul",
    "Tensor.mv": "matmul",
    "torch.dot": "matmul",
    "Tensor.dot": "matmul",
    "torch.multiply": "mul",
    "Tensor.multiply": "mul",
    "torch.subtract": "sub",
    "Tensor.subtract": "sub",
    "torch.divide": "div",
    "Tensor.divide": "div",
    "torch.true_divide": "div",
    "torch.negative": "neg",
    "Tensor.negative": "neg",
}


def _spellings() -> tuple[dict[str, str], dict[str, str], dict[tuple[str, int], str]]:
    """The op table's PyTorch spellings, split into functions, methods and operators."""
    functions: dict[str, str] = {}
    methods: dict[str, str] = {}
    symbols: dict[tuple[str, int], str] = {}
    spelled = [(s, op.name, op.arity) for op in OPS.values() if op.arity != 0 for s in op.torch]
    spelled += [(s, name, OPS[name].arity) for s, name in _EXTRA_SPELLINGS.items() if name in OPS]
    for spelling, name, arity in spelled:
        if spelling.startswith("torch."):
            functions.setdefault(spelling, name)
        elif spelling.startswith("Tensor."):
            methods.setdefault(spelling.removeprefix("Tensor."), name)
        else:
            symbols.setdefault((spelling, arity or 1), name)
    return functions, methods, symbols


FUNCTIONS, METHODS, SYMBOLS = _spellings()

FACTORIES = {
    "tensor",
    "Tensor",
    "FloatTensor",
    "DoubleTensor",
    "as_tensor",
    "ones",
    "zeros",
    "full",
    "eye",
    "arange",
    "linspace",
    "empty",
    "rand",
    "randn",
    "ones_like",
    "zeros_like",
    "full_like",
    "rand_like",
    "randn_like",
    "empty_like",
    "randint",
}

FLOAT_DTYPES = {f"torch.{d}" for d in ("float", "float32", "float64", "double", "float16", "half")}
DTYPES = FLOAT_DTYPES | {f"torch.{d}" for d in ("int", "int64", "long", "int32", "bool")}

NUMPY_FACTORIES = ("numpy.zeros", "numpy.ones", "numpy.array")

LOSS_MODULES = {
    "torch.nn.MSELoss": "mse_loss",
    "torch.nn.BCELoss": "binary_cross_entropy",
    "torch.nn.BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
    "torch.nn.CrossEntropyLoss": "cross_entropy",
}

#: Builtins a snippet may name (the evaluator's own versions; nothing of Python's is run).
BUILTINS = {"print", "float", "int", "len", "abs", "display", "range", "min", "max", "sum"}
BUILTINS |= {"tuple", "list"}

_PLOT_MODULES = ("matplotlib", "seaborn", "plotly")


def canonical(path: str) -> str:
    """One spelling per function: ``torch.nn.functional`` for F, ``torch`` for its aliases."""
    for long, short in (
        ("torch.autograd.variable.Variable", "torch.autograd.Variable"),
        ("torch.Tensor.", "torch."),
    ):
        if path.startswith(long):
            path = short + path[len(long) :]
    if path.startswith("torch.nn.functional.") or path.startswith("torch.special."):
        return path
    if path.startswith("np."):
        return "numpy." + path[3:]
    return path


def is_plot(path: str | None) -> bool:
    if path is None:
        return False
    return path.split(".")[0] in _PLOT_MODULES or path.startswith("plt.")
