"""The statement walker: assignments and their bindings, writes into slots,
``requires_grad`` / ``detach`` rules, the first ``backward(...)``, and the graph at the end.

Statements run in order; each one's nodes are named after the variable it assigns.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autodiff import check_gradient
from ..errors import GraphError, shape_text
from ..graph import Graph
from ..ops import LEAF_OPS
from .expressions import Expressions
from .factories import literal
from .spellings import METHODS, is_plot
from .values import (
    COLON,
    Imported,
    Module,
    Slots,
    T,
    construct,
    describe,
    is_int,
    is_number,
)

_REFUSED_STATEMENTS: dict[type, str] = {
    ast.For: "a for loop",
    ast.AsyncFor: "a for loop",
    ast.While: "a while loop",
    ast.FunctionDef: "a function definition (def)",
    ast.AsyncFunctionDef: "a function definition (def)",
    ast.ClassDef: "a class definition",
    ast.With: "a with block",
    ast.AsyncWith: "a with block",
    ast.Try: "a try block",
    ast.Raise: "raise",
    ast.Return: "return",
    ast.Delete: "del",
    ast.Global: "global",
    ast.Nonlocal: "nonlocal",
    ast.Assert: "assert",
}


def _is_main_guard(test: ast.expr) -> bool:
    """``if __name__ == "__main__":``: its body is read like the rest of the file."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


class Walker(Expressions):
    """Walks statements in order, keeping variables and the nodes they name."""

    # ------------------------------------------------------------------ statements

    def run(self, body: Sequence[ast.stmt]) -> None:
        for stmt in body:
            if self.done:
                self.warn(stmt.lineno, "lines after the first backward(...) are ignored")
                return
            self.line = stmt.lineno
            self.stmt += 1
            self.recent = []
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        kind = type(stmt)
        if kind in _REFUSED_STATEMENTS:
            self.refuse(stmt, f"{_REFUSED_STATEMENTS[kind]} is outside the supported subset")
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            self.imports(stmt)
        elif isinstance(stmt, ast.If):
            if not _is_main_guard(stmt.test) or stmt.orelse:
                self.refuse(stmt, "an if statement is outside the supported subset")
            self.run(stmt.body)
        elif isinstance(stmt, ast.Assign):
            self.assign(stmt)
        elif isinstance(stmt, ast.AugAssign):
            self.aug_assign(stmt)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is None or not isinstance(stmt.target, ast.Name):
                self.refuse(stmt, "an annotation without a value is outside the supported subset")
            self.bind(stmt.target.id, self.expr(stmt.value), stmt)
        elif isinstance(stmt, ast.Expr):
            self.expression_statement(stmt)
        elif isinstance(stmt, ast.Pass):
            return
        else:
            self.refuse(stmt, f"{type(stmt).__name__} is outside the supported subset")

    def imports(self, stmt: ast.Import | ast.ImportFrom) -> None:
        """Remember which local names mean which modules; nothing is imported."""
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self.vars[alias.asname] = Module(alias.name)
                else:
                    head = alias.name.split(".")[0]
                    self.vars[head] = Module(head)
            return
        if stmt.level:
            self.refuse(stmt, "a relative import is outside the supported subset")
        module = stmt.module or ""
        for alias in stmt.names:
            if alias.name == "*":
                self.refuse(stmt, "import * is outside the supported subset")
            self.vars[alias.asname or alias.name] = Module(f"{module}.{alias.name}")

    def assign(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) != 1:
            self.refuse(stmt, "chained assignment (a = b = ...) is outside the supported subset")
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            self.bind(target.id, self.expr(stmt.value), stmt)
        elif isinstance(target, ast.Tuple | ast.List):
            value = self.expr(stmt.value)
            if not isinstance(value, tuple | list) or len(value) != len(target.elts):
                self.refuse(target, "can only unpack a tuple of the same length")
            for t, v in zip(target.elts, value, strict=True):
                if not isinstance(t, ast.Name):
                    self.refuse(t, "can only unpack into plain names")
                self.bind(t.id, v, stmt)
        elif isinstance(target, ast.Subscript):
            self.write_slot(target, stmt.value)
        elif isinstance(target, ast.Attribute):
            self.set_attribute(target, stmt.value)
        else:
            self.refuse(target, "this assignment target is outside the supported subset")

    def aug_assign(self, stmt: ast.AugAssign) -> None:
        if not isinstance(stmt.target, ast.Name):
            self.refuse(stmt, "in-place arithmetic on anything but a plain name is not supported")
        current = self.lookup(stmt.target)
        if isinstance(current, T):
            self.check_not_grad_leaf(current, stmt, "in-place arithmetic")
        self.bind(stmt.target.id, self.binop(stmt.op, current, self.expr(stmt.value), stmt), stmt)

    def expression_statement(self, stmt: ast.Expr) -> None:
        """A bare expression: side-effect calls are read, unused results skipped with a warning,
        and calls of anything outside PyTorch (``exec``, ``os.system``) refused."""
        call = stmt.value
        if isinstance(call, ast.Constant) and isinstance(call.value, str):
            return  # a docstring
        if not isinstance(call, ast.Call):
            self.warn(stmt.lineno, "an expression whose result is unused was skipped")
            return
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _STATEMENT_METHODS:
            target = self.expr(func.value)
            if not isinstance(target, T):
                self.refuse(func, f".{func.attr}() needs a tensor, got {describe(target)}")
            _STATEMENT_METHODS[func.attr](self, target, call)
            return
        if isinstance(func, ast.Attribute):
            target = self.try_tensor(func.value)
            if target is not None and func.attr.endswith("_"):
                self.inplace_method(func, target, call)
                return
        path = self.callee_path(func)
        if path == "torch.autograd.backward":
            self.autograd_backward(call)
        elif path == "torch.manual_seed" and call.args:
            seed = self.expr(call.args[0])
            if is_int(seed):
                self.seed = seed
            self.warn(
                stmt.lineno,
                "torch.manual_seed: PyTorch's own random numbers can't be "
                "reproduced; rand/randn use seeded numbers of their own",
            )
        elif path in ("print", "display") or (path or "").endswith(".print") or is_plot(path):
            self.warn(stmt.lineno, f"{path}(...) skipped")
        elif self.tensor_call(func):
            self.warn(stmt.lineno, "a call whose result is unused was skipped")
        else:
            root = self.call_root(func)
            self.refuse(func, f"{root}(...) is outside the supported subset")

    def tensor_call(self, func: ast.expr) -> bool:
        """True for ``torch.*(...)`` or a method of a tensor variable: harmless to skip."""
        root = func
        while isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        value = self.vars.get(root.id)
        if isinstance(value, T | Slots):
            return True
        return isinstance(value, Module) and value.path.split(".")[0] == "torch"

    def call_root(self, func: ast.expr) -> str:
        """The name a call chain starts from (``__import__`` in ``__import__('os').system``)."""
        while not isinstance(func, ast.Name):
            if isinstance(func, ast.Attribute | ast.Subscript):
                func = func.value
            elif isinstance(func, ast.Call):
                func = func.func
            else:
                return construct(func)
        path = self.callee_path(func)
        return path or func.id

    # ------------------------------------------------------------------ slots, attributes

    def write_slot(self, target: ast.Subscript, value_node: ast.expr) -> None:
        """``y[i] = expr``: y becomes a stack of its rows (written ones and the rest)."""
        if not isinstance(target.value, ast.Name):
            self.refuse(target, "only writes into a named tensor (y[0] = ...) are supported")
        name = target.value.id
        current = self.vars.get(name)
        if isinstance(current, T):
            n = self.nodes[current.id]
            if n.requires_grad and n.op in LEAF_OPS:
                self.refuse(
                    target,
                    f"in-place write into leaf {name!r}, which requires grad "
                    "(PyTorch refuses it too)",
                )
            if n.op not in LEAF_OPS or n.value.ndim == 0:
                self.refuse(
                    target,
                    "writing into slots works on a fresh tensor from a factory "
                    "(y = torch.zeros(3); y[0] = ...)",
                )
            slots = Slots(current.id, [None] * n.value.shape[0])
        elif isinstance(current, Slots):
            slots = current
        else:
            self.refuse(target, f"name {name!r} is not a tensor")
        index = self.index(target.slice)
        if len(index) != 1 or index[0] is COLON:
            self.refuse(target.slice, "only y[i] = ... with one integer index is supported")
        i = index[0]
        rows = len(slots.rows)
        if not -rows <= i < rows:
            self.refuse(target.slice, f"index {i} is out of range for size {rows}")
        value = self.expr(value_node)
        base_value = self.nodes[slots.base].value
        row_shape = base_value.shape[1:]
        t = self.as_tensor(value, value_node)
        shape = self.nodes[t.id].value.shape
        if shape != row_shape:
            self.refuse(
                value_node,
                f"cannot write a tensor of shape {shape_text(shape)} into a "
                f"row of shape {shape_text(row_shape)}",
            )
        if self.made_here(t) and self.nodes[t.id].op not in LEAF_OPS:
            wanted = self.fresh(
                f"{name}{i % rows}" if not name[-1].isdigit() else f"{name}_{i % rows}"
            )
            self.rename(t.id, wanted)
            t = T(wanted)
            self.nodes[wanted].named = True
        slots.rows[i % rows] = t.id
        self.vars[name] = slots

    def set_attribute(self, target: ast.Attribute, value_node: ast.expr) -> None:
        if target.attr != "requires_grad":
            self.refuse(target, f"setting .{target.attr} is outside the supported subset")
        t = self.expr(target.value)
        value = self.expr(value_node)
        if not isinstance(t, T) or not isinstance(value, bool):
            self.refuse(target, "requires_grad = True/False works on a tensor")
        self.set_requires_grad(t, value, target)

    def set_requires_grad(self, t: T, flag: bool, where: ast.AST) -> None:
        n = self.nodes[t.id]
        if n.op not in LEAF_OPS:
            if n.requires_grad:
                self.refuse(
                    where,
                    "requires_grad can only be changed on a leaf (PyTorch refuses "
                    "it on a computed tensor)",
                )
            # A computed tensor without history is a leaf to PyTorch: keep its value only.
            self.note(where, f"{t.id} has no history, so it becomes a leaf holding its value")
            n.op, n.inputs, n.attrs = "input", [], {}
            self.prune_orphans()
        elif n.op == "const":
            n.op = "input"
        n.requires_grad = flag
        self.propagate_requires_grad()

    def propagate_requires_grad(self) -> None:
        for n in self.nodes.values():
            if n.op not in LEAF_OPS:
                n.requires_grad = any(self.nodes[s].requires_grad for s in n.inputs)

    def prune_orphans(self, keep: Sequence[str] = ()) -> None:
        """Drop temporaries nothing uses any more (nor any variable names)."""
        changed = True
        while changed:
            changed = False
            used = {s for n in self.nodes.values() for s in n.inputs}
            bound = self.bound_names() | set(keep)
            for nid in list(self.nodes):
                if nid not in used and nid not in bound and nid != self.output:
                    if self.nodes[nid].named:
                        self.warn(self.nodes[nid].line, f"{nid} is never used: dropped")
                    del self.nodes[nid]
                    changed = True

    def check_not_grad_leaf(self, t: T, where: ast.AST, what: str) -> None:
        n = self.nodes[t.id]
        if n.op in LEAF_OPS and n.requires_grad:
            self.refuse(
                where, f"{what} on leaf {t.id!r}, which requires grad (PyTorch refuses it too)"
            )

    # ------------------------------------------------------------------ statement methods

    def stmt_requires_grad_(self, t: T, call: ast.Call) -> None:
        args, kwargs = self.arguments(call)
        flag = kwargs.get("requires_grad", args[0] if args else True)
        if not isinstance(flag, bool):
            self.refuse(call, "requires_grad_ takes True or False")
        self.set_requires_grad(t, flag, call)

    def stmt_retain_grad(self, t: T, call: ast.Call) -> None:
        if t.id not in self.retain:
            self.retain.append(t.id)

    def stmt_backward(self, t: T, call: ast.Call) -> None:
        args, kwargs = self.arguments(call)
        gradient = kwargs.pop("gradient", args[0] if args else None)
        kwargs.pop("retain_graph", None)
        kwargs.pop("create_graph", None)
        if kwargs:
            self.refuse(call, f"backward: unsupported argument {next(iter(kwargs))!r}")
        self.backward(t, gradient, call)

    def autograd_backward(self, call: ast.Call) -> None:
        args, kwargs = self.arguments(call)
        tensors = kwargs.pop("tensors", args[0] if args else None)
        gradient = kwargs.pop("grad_tensors", args[1] if len(args) > 1 else None)
        if isinstance(tensors, tuple | list) and len(tensors) == 1:
            tensors = tensors[0]
        if isinstance(gradient, tuple | list) and len(gradient) == 1:
            gradient = gradient[0]
        if not isinstance(tensors, T):
            self.refuse(call, "torch.autograd.backward takes one tensor here")
        self.backward(tensors, gradient, call)

    def backward(self, t: T, gradient: Any, call: ast.Call) -> None:
        """The first ``backward(...)``: output and v, checked with PyTorch's rules."""
        n = self.nodes[t.id]
        v = None
        if gradient is not None:
            if isinstance(gradient, T):
                v = self.nodes[gradient.id].value
                if self.nodes[gradient.id].requires_grad:
                    self.refuse(call, "the gradient v must not require grad")
                self.gradient_node = gradient.id
            elif is_number(gradient) or isinstance(gradient, list | tuple):
                v = literal(self, gradient, call, "backward")
            else:
                self.refuse(call, f"the gradient v must be a tensor, got {describe(gradient)}")
        try:
            check_gradient(t.id, n.value.shape, None if v is None else v.shape, n.requires_grad)
        except GraphError as exc:
            self.refuse(call, f"backward: {exc.detail}" if exc.node is None else str(exc))
        self.output = t.id
        self.gradient = None if v is None else np.array(v, dtype=np.float64)
        self.done = True

    def inplace_method(self, func: ast.Attribute, target: T, call: ast.Call) -> None:
        """``y.add_(1)`` and friends: a new node under the same variable (``y_2``)."""
        name = func.attr[:-1]
        if name == "zero":
            self.check_not_grad_leaf(target, call, f".{func.attr}()")
            self.refuse(call, f".{func.attr}() is outside the supported subset")
        if name not in METHODS:
            self.refuse(call, f".{func.attr}() is outside the supported subset")
        self.check_not_grad_leaf(target, call, f"in-place .{func.attr}()")
        if not isinstance(func.value, ast.Name):
            self.refuse(call, "in-place methods are supported on plain names only")
        args, kwargs = self.arguments(call)
        result = self.call_method(target, name, args, kwargs, call)
        self.bind(func.value.id, result, ast.Pass(lineno=call.lineno))

    # ------------------------------------------------------------------ the result

    def finish(self) -> Imported:
        g = self.gradient_node
        if g is not None and self.nodes[g].op == "const" and not self.consumers(g):
            del self.nodes[g]  # v given as a variable: it is the backward's, not the graph's
            self.vars = {k: v for k, v in self.vars.items() if v != T(g)}
        for nid, n in list(self.nodes.items()):
            if n.detached and not self.consumers(nid) and nid != self.output:
                self.warn(
                    n.line,
                    f"{nid} = torch.tensor([...]) of tensors is a copy without "
                    "history and is unused: skipped",
                )
                del self.nodes[nid]
        self.vars = {
            k: v for k, v in self.vars.items() if not isinstance(v, T) or v.id in self.nodes
        }
        self.prune_orphans()
        for nid, n in self.nodes.items():
            if n.random:
                self.warn(
                    n.line,
                    f"{nid}: PyTorch's own random numbers can't be reproduced; "
                    "it holds seeded random numbers instead",
                )
        graph = Graph()
        for nid, n in self.nodes.items():
            try:
                graph.add_node(
                    nid,
                    n.op,
                    inputs=list(n.inputs) or None,
                    attrs=n.attrs if n.op not in LEAF_OPS else None,
                    value=n.value if n.op in LEAF_OPS else None,
                    requires_grad=n.requires_grad,
                )
            except (GraphError, ValueError) as exc:
                self.refuse(ast.Pass(lineno=n.line, col_offset=0), str(exc))
        if self.output is None:
            self.warnings.append("no backward(...) call: the graph has no output set")
        return Imported(
            graph=graph,
            output=self.output,
            gradient=self.gradient,
            warnings=self.warnings,
            notes=self.notes,
            retain_grad=[r for r in self.retain if r in self.nodes],
            lines={k: n.line for k, n in self.nodes.items()},
        )


_STATEMENT_METHODS: dict[str, Callable[[Walker, T, ast.Call], None]] = {
    "requires_grad_": Walker.stmt_requires_grad_,
    "retain_grad": Walker.stmt_retain_grad,
    "backward": Walker.stmt_backward,
}
