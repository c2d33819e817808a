"""A ``train`` block as a ``torch.optim`` training loop, written and read back.

The export writes the graph and its ``backward(...)`` as always, then the loop::

    optimizer = torch.optim.SGD([w, b], lr=0.1)
    optimizer.zero_grad()            # drop the .grad the backward above left
    losses = []
    for step in range(200):
        optimizer.zero_grad()        # absent when the block's zero_grad is false
        wx = w * x                   # the graph's op lines again
        ...
        losses.append(loss.item())
        loss.backward()
        optimizer.step()

The importer stops at the first ``backward(...)``; :func:`training_of` then reads
the statements after it (never running them) and gives the block back when they
are this loop, so ``import(export(G))`` keeps it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from .train import OPTIMIZERS, TrainError, TrainSpec, check_hyper

_CLASSES = {"SGD": ("sgd", "momentum"), "Adam": ("adam",)}


def training_lines(spec: TrainSpec, names: Mapping[str, str], op_lines: Sequence[str],
                   params: Sequence[str]) -> list[str]:
    """The loop for ``spec``; ``op_lines`` are the graph's op statements (recomputed each
    step), ``names`` each node's variable, ``params`` the parameters' node ids."""
    opt = f"torch.optim.{'Adam' if spec.optimizer == 'adam' else 'SGD'}"
    args = f"[{', '.join(names[p] for p in params)}], lr={spec.lr!r}"
    if spec.optimizer == "momentum":
        args += f", momentum={spec.momentum!r}"
    if spec.optimizer == "adam":
        args += f", betas=({spec.betas[0]!r}, {spec.betas[1]!r}), eps={spec.eps!r}"
    loss = names[spec.loss]
    lines = ["", f"# Training: {spec.steps} steps of {opt} (the file's train block)",
             f"optimizer = {opt}({args})",
             "optimizer.zero_grad()  # drop the .grad the backward above left"]
    if spec.target is not None:
        lines.append(f"target = {spec.target!r}  # the loss to get below")
    lines += ["losses = []", f"for step in range({spec.steps}):"]
    body = ["optimizer.zero_grad()"] if spec.zero_grad else []
    body += list(op_lines)
    body += [f"losses.append({loss}.item())", f"{loss}.backward()", "optimizer.step()"]
    lines += [f"    {line}" for line in body]
    lines.append('print("losses =", losses)')
    lines += [f'print("{names[p]} =", {names[p]})' for p in params]
    return lines


def training_of(body: Sequence[ast.stmt], names: Mapping[str, str]) -> TrainSpec | None:
    """The train block the statements ``body`` (those after the graph's backward) spell,
    or None when they are not the loop :func:`training_lines` writes.

    ``names`` maps each variable the graph part bound to its node id.
    """
    optimizer = _optimizer(body, names)
    if optimizer is None:
        return None
    var, spec = optimizer
    loop = next((s for s in body if isinstance(s, ast.For)), None)
    if loop is None or (steps := _range_count(loop.iter)) is None:
        return None
    calls = [c for c in map(_method_call, loop.body) if c is not None]
    if (var, "step") not in calls:
        return None
    loss = next((obj for obj, m in calls if m == "backward" and obj in names), None)
    if loss is None:
        return None
    spec.loss, spec.steps = names[loss], steps
    spec.zero_grad = (var, "zero_grad") in calls
    for stmt in body:
        if (
            isinstance(stmt, ast.Assign)
            and _assigns(stmt, "target")
            and isinstance(stmt.value, ast.Constant)
        ):
            value = stmt.value.value
            if isinstance(value, int | float) and not isinstance(value, bool):
                spec.target = float(value)
    try:
        check_hyper(spec)
    except TrainError:
        return None
    return spec


def _optimizer(body: Sequence[ast.stmt], names: Mapping[str, str]) -> tuple[str, TrainSpec] | None:
    """``opt = torch.optim.SGD([w, b], lr=..., ...)`` -> ("opt", the spec so far)."""
    for stmt in body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)):
            continue
        call = stmt.value
        cls = _torch_optim(call.func)
        if cls is None or len(call.args) != 1 or not isinstance(call.args[0], ast.List | ast.Tuple):
            continue
        params = [e.id for e in call.args[0].elts if isinstance(e, ast.Name)]
        if len(params) != len(call.args[0].elts) or any(p not in names for p in params):
            return None
        if any(k.arg is None for k in call.keywords):  # **options: not a loop we write
            return None
        try:
            kwargs = {str(k.arg): ast.literal_eval(k.value) for k in call.keywords}
        except ValueError:
            return None
        spec = TrainSpec(loss="", params=[names[p] for p in params])
        if not set(kwargs) <= {"lr", "momentum", "betas", "eps"} or not _numbers(kwargs):
            return None
        spec.lr = float(kwargs.get("lr", spec.lr))
        if cls == "Adam":
            spec.optimizer = "adam"
            if "momentum" in kwargs:
                return None
            spec.betas = tuple(float(b) for b in kwargs.get("betas", spec.betas))  # type: ignore[assignment]
            spec.eps = float(kwargs.get("eps", spec.eps))
        else:
            if "betas" in kwargs or "eps" in kwargs:
                return None
            momentum = float(kwargs.get("momentum", 0.0))
            spec.optimizer = "momentum" if momentum else "sgd"
            if momentum:
                spec.momentum = momentum
        assert spec.optimizer in OPTIMIZERS
        return stmt.targets[0].id, spec
    return None


def _numbers(kwargs: dict[str, object]) -> bool:
    def number(x: object) -> bool:
        return isinstance(x, int | float) and not isinstance(x, bool)

    betas = kwargs.get("betas", (0.0, 0.0))
    return (all(number(v) for k, v in kwargs.items() if k != "betas")
            and isinstance(betas, tuple | list) and len(betas) == 2 and all(map(number, betas)))


def _torch_optim(func: ast.expr) -> str | None:
    """``torch.optim.SGD`` / ``torch.optim.Adam`` -> "SGD" / "Adam"."""
    if (isinstance(func, ast.Attribute) and func.attr in _CLASSES
            and isinstance(func.value, ast.Attribute) and func.value.attr == "optim"
            and isinstance(func.value.value, ast.Name) and func.value.value.id == "torch"):
        return func.attr
    return None


def _range_count(node: ast.expr) -> int | None:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
            and len(node.args) == 1 and not node.keywords
            and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is int):
        return node.args[0].value
    return None


def _method_call(stmt: ast.stmt) -> tuple[str, str] | None:
    """``obj.method()`` as a statement -> (obj, method)."""
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and not stmt.value.args and not stmt.value.keywords
            and isinstance(stmt.value.func, ast.Attribute)
            and isinstance(stmt.value.func.value, ast.Name)):
        return stmt.value.func.value.id, stmt.value.func.attr
    return None


def _assigns(stmt: ast.stmt, name: str) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name)


__all__ = ["training_lines", "training_of"]
