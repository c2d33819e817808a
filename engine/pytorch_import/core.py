"""The walk's state and the primitives every part of it uses: making nodes, naming and
renaming them, bounding what is built, and refusing with a place.

The statement walker (:mod:`.walker`) and the expression evaluator
(:mod:`.expressions`) extend :class:`Core`; factories and op handlers are functions
of a ``Core``.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from ..fileformat import MAX_ELEMENTS
from ..graph import MAX_ID_LENGTH
from ..ops import OPS, validate_attrs
from ..ops.record import OpShapeError
from .limits import MAX_NESTING, MAX_NODES, MAX_TOTAL_ELEMENTS
from .naming import derived_name, number_name
from .values import CodeError, Module, Node, Slots, T, describe, where_of


class Core:
    """Variables, the nodes they name, and the limits on what an import may build."""

    def __init__(self, source: str, ids: dict[int, str], assigned: set[str]) -> None:
        self.lines = source.splitlines()
        self.ids = ids
        self.reserved = set(assigned)
        self.nodes: dict[str, Node] = {}
        self.vars: dict[str, Any] = {}
        self.bound_count: dict[str, int] = {}
        self.output: str | None = None
        self.gradient: np.ndarray | None = None
        self.gradient_node: str | None = None
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self.retain: list[str] = []
        self.consts: dict[float, str] = {}
        self.seed = 0
        self.elements = 0
        self.line = 1
        self.stmt = 0
        self.recent: list[str] = []  # ids made by the current statement, in order
        self.done = False
        # Lists and tuples the evaluator built, by id: (the sequence, its elements, its depth).
        # The sequence is kept so its id is never reused while the entry lives.
        self.extents: dict[int, tuple[Sequence[Any], int, int]] = {}

    # ------------------------------------------------------------------ what subclasses give

    def expr(self, node: ast.expr) -> Any:
        """The value of an expression (:class:`.expressions.Expressions`)."""
        raise NotImplementedError

    def call_method(
        self,
        target: T,
        name: str,
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.Call,
        function: str | None = None,
    ) -> Any:
        """``target.name(...)`` (:class:`.expressions.Expressions`)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ binding and naming

    def bind(self, name: str, value: Any, stmt: ast.stmt) -> None:
        """``name = value``: a node made by this statement takes the variable's name."""
        if isinstance(value, T) and self.made_here(value):
            wanted = self.ids.get(stmt.lineno)
            if wanted is None or wanted in self.nodes:
                wanted = self.binding_name(name)
            if wanted != value.id:
                self.rename(value.id, wanted)
            value = T(wanted)
            self.nodes[wanted].named = True
        self.vars[name] = value

    def made_here(self, t: T) -> bool:
        """True for a node this statement made and no variable names yet."""
        return self.nodes[t.id].stmt == self.stmt and t.id not in self.bound_names()

    def binding_name(self, name: str) -> str:
        """``y`` the first time, then ``y_2``, ``y_3``: a name no node has yet."""
        name = name[: MAX_ID_LENGTH - 8]  # room for a _2 suffix inside the graph's id limit
        count = self.bound_count.get(name, 0) + 1
        self.bound_count[name] = count
        candidate = name if count == 1 else f"{name}_{count}"
        while candidate in self.nodes:
            count += 1
            self.bound_count[name] = count
            candidate = f"{name}_{count}"
        return candidate

    def bound_names(self) -> set[str]:
        return {v.id for v in self.vars.values() if isinstance(v, T)}

    def fresh(self, base: str) -> str:
        """A temporary's id: derived from what it computes, clear of every assigned name."""
        base = base if len(base) <= 24 else base[:24].rstrip("_")
        candidate, k = base, 1
        while candidate in self.nodes or candidate in self.reserved:
            k += 1
            candidate = f"{base}_{k}"
        return candidate

    def rename(self, old: str, new: str) -> None:
        """Rename a node this statement made (so only this statement's nodes refer to it).

        It is the newest node or close to it, so moving it to the end keeps the order.
        """
        keys = list(self.nodes)
        after = keys[keys.index(old) + 1 :]
        node = self.nodes.pop(old)
        tail = {k: self.nodes.pop(k) for k in after}
        self.nodes[new] = node
        self.nodes.update(tail)
        for k in self.recent:
            if k in self.nodes:
                n = self.nodes[k]
                n.inputs = [new if s == old else s for s in n.inputs]
        self.recent = [new if k == old else k for k in self.recent]
        for k, v in self.vars.items():
            if v == T(old):
                self.vars[k] = T(new)
        self.consts = {c: (new if i == old else i) for c, i in self.consts.items()}

    def callee_path(self, func: ast.expr) -> str | None:
        """The dotted path a call names, when it names a module function (nothing evaluated)."""
        parts = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return None
        head = self.vars.get(func.id)
        if isinstance(head, Module):
            base = head.path
        elif func.id in self.vars:
            return None
        else:
            base = func.id
        return ".".join([base, *reversed(parts)])

    def consumers(self, nid: str) -> list[str]:
        return [k for k, n in self.nodes.items() if nid in n.inputs]

    # ------------------------------------------------------------------ nodes

    def add(
        self,
        op: str,
        inputs: list[T],
        attrs: dict[str, Any] | None,
        where: ast.AST,
        name: str | None = None,
    ) -> T:
        """A new op node, its shape checked (message at ``where``) before computing it."""
        attrs = dict(attrs or {})
        spec = OPS[op]
        try:
            full = validate_attrs(op, attrs)
        except ValueError as exc:
            self.refuse(where, f"{op}: {exc}")
        xs = [self.nodes[t.id].value for t in inputs]
        try:
            shape = spec.check([x.shape for x in xs], full)
        except OpShapeError as exc:
            self.refuse(where, f"{op}: {exc}")
        self.reserve(math.prod(shape), where, op)
        try:
            with np.errstate(all="ignore"):
                value = np.asarray(spec.forward(xs, full), dtype=np.float64)
        except (ValueError, ArithmeticError, IndexError) as exc:
            self.refuse(where, f"{op}: {exc}")
        nid = self.fresh(name or derived_name(op, [t.id for t in inputs], full))
        rg = any(self.nodes[t.id].requires_grad for t in inputs)
        self.nodes[nid] = Node(op, [t.id for t in inputs], full, value, rg, self.line, self.stmt)
        self.recent.append(nid)
        return T(nid)

    def leaf(
        self,
        value: np.ndarray,
        requires_grad: bool | None,
        where: ast.AST,
        name: str,
        random: bool = False,
    ) -> T:
        """An ``input`` (``requires_grad`` given) or a ``const`` (not given) holding ``value``."""
        nid = self.fresh(name)
        op = "const" if requires_grad is None else "input"
        self.count_node(where)
        self.nodes[nid] = Node(
            op, [], {}, value, bool(requires_grad), self.line, self.stmt, random=random
        )
        self.recent.append(nid)
        return T(nid)

    def constant(self, number: float, where: ast.AST) -> T:
        """A literal number in arithmetic: one const node per distinct value."""
        key = float(number)
        if key in self.consts and self.consts[key] in self.nodes:
            return T(self.consts[key])
        self.reserve(1, where, "const")
        t = self.leaf(np.array(key), None, where, number_name(key))
        self.consts[key] = t.id
        return t

    def as_tensor(self, value: Any, where: ast.AST) -> T:
        if isinstance(value, T):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self.constant(value, where)
        self.refuse(where, f"expected a tensor or a number, got {describe(value)}")

    def materialise(self, name: str, slots: Slots) -> T:
        """The stack a slotted tensor stands for, built when the tensor is first read.

        Rows never written keep the factory's values (as consts); the factory's own
        node goes when nothing else uses it, so no random node is left over.
        """
        base = self.nodes[slots.base]
        where = ast.Pass(lineno=self.line, col_offset=0)
        rows = [
            T(row)
            if row is not None
            else self.leaf(base.value[k].copy(), None, where, f"{slots.base}_row{k}", base.random)
            for k, row in enumerate(slots.rows)
        ]
        del self.vars[name]
        free = not self.consumers(slots.base) and slots.base not in self.bound_names()
        if free:
            del self.nodes[slots.base]
        t = self.add("stack", rows, {"dim": 0}, where)
        wanted = slots.base if free else self.binding_name(name)
        self.rename(t.id, wanted)
        self.nodes[wanted].line = base.line
        self.nodes[wanted].named = True
        self.vars[name] = T(wanted)
        return T(wanted)

    # ------------------------------------------------------------------ limits

    def count_node(self, where: ast.AST) -> None:
        if len(self.nodes) >= MAX_NODES:
            self.refuse(where, f"the code makes more than {MAX_NODES:,} nodes")

    def reserve(self, elements: int, where: ast.AST, what: str) -> None:
        """Check the element limits before an array of ``elements`` is allocated."""
        self.count_node(where)
        if elements > MAX_ELEMENTS:
            self.refuse(
                where, f"{what}: {elements:,} elements; the limit is {MAX_ELEMENTS:,} per tensor"
            )
        if self.elements + elements > MAX_TOTAL_ELEMENTS:
            self.refuse(where, f"the tensors hold more than {MAX_TOTAL_ELEMENTS:,} elements")
        self.elements += elements

    def extent(self, value: Any) -> tuple[int, int]:
        """How many numbers a nested list holds and how deep it nests (a shared sublist is
        counted each time it appears, as ``torch.tensor`` would copy it)."""
        if not isinstance(value, tuple | list):
            return 1, 0
        known = self.extents.get(id(value))
        if known is not None and known[0] is value:
            return known[1], known[2]
        parts = [self.extent(v) for v in value]
        return sum(p[0] for p in parts), 1 + max((p[1] for p in parts), default=0)

    def sequence(self, items: list[Any], where: ast.AST, as_list: bool) -> Any:
        """A list or tuple the evaluator builds, refused before it is built if it would hold
        more numbers than a tensor may or nest deeper than brackets may."""
        parts = [self.extent(v) for v in items]
        count = sum(p[0] for p in parts)
        depth = 1 + max((p[1] for p in parts), default=0)
        return self.bounded(items, count, depth, where, as_list)

    def concatenate(self, a: Sequence[Any], b: Sequence[Any], where: ast.AST) -> Any:
        """``a + b`` of two lists (or two tuples), refused before it is built when too big."""
        (count_a, depth_a), (count_b, depth_b) = self.extent(a), self.extent(b)
        items = [*a, *b] if count_a + count_b <= MAX_ELEMENTS else []
        return self.bounded(
            items, count_a + count_b, max(depth_a, depth_b), where, isinstance(a, list)
        )

    def bounded(
        self, items: list[Any], count: int, depth: int, where: ast.AST, as_list: bool
    ) -> Any:
        if count > MAX_ELEMENTS:
            self.refuse(where, f"a list of {count:,} numbers; the limit is {MAX_ELEMENTS:,}")
        if depth > MAX_NESTING:
            self.refuse(where, f"lists nested more than {MAX_NESTING} deep")
        out = list(items) if as_list else tuple(items)
        if depth > 1 or len(out) > 8:
            self.extents[id(out)] = (out, count, depth)
        return out

    # ------------------------------------------------------------------ messages

    def refuse(self, where: ast.AST, message: str) -> NoReturn:
        line, column = where_of(where)
        col_offset = getattr(where, "col_offset", None)
        if col_offset is not None and 0 < line <= len(self.lines):
            text = self.lines[line - 1].encode("utf-8")[:col_offset]
            column = len(text.decode("utf-8", errors="replace")) + 1
        raise CodeError(message, line, column)

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(f"line {line}: {message}")

    def note(self, where: ast.AST, message: str) -> None:
        self.notes.append(f"line {where_of(where)[0]}: {message}")
