"""PyTorch code -> graph, for a safe subset of what autograd tutorials write.

Pasted code and opened files come from strangers, so the source is only ever
*read*: the standard library's :mod:`tokenize` and :mod:`ast` turn it into a tree
and this module walks that tree, building engine nodes. Nothing in it is run
(no ``exec``, ``eval`` or ``compile`` of the user's code, no imports), and the
limits on source size, nesting, nodes and tensor elements are checked before
anything of that size is allocated.

What the walk understands: tensor literals and factories, ``requires_grad``,
arithmetic (``@`` and unary minus included), the op table's ops in their
``torch.*``, ``torch.nn.functional.*`` and method spellings, indexing with ints
and ``:``, the seeds' writing-into-slots pattern (``y = torch.randn(3); y[0] = ...``
becomes a stack of the written rows) and the first ``backward(...)``, checked with
PyTorch's rules. Anything else is refused with one line, ``line L, column C: ...``.
A node made by an assignment takes the variable's name; rebinding gives ``y_2``.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import math
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .autodiff import check_gradient
from .errors import GraphError, shape_text
from .fileformat import MAX_ELEMENTS, GraphFile
from .graph import Graph
from .ops import LEAF_OPS, OPS, validate_attrs
from .ops.record import OpShapeError
from .pytorch_train import training_of
from .train import TrainSpec

#: Longest source accepted, in characters (tutorial snippets are a few hundred).
MAX_SOURCE_CHARS = 2_000_000
#: Most nodes one import may create.
MAX_NODES = 5_000
#: Most operators in one statement: bounds the depth of the tree walk.
MAX_OPERATORS = 100
#: Deepest bracket nesting accepted.
MAX_NESTING = 32
#: Most tensor elements across the whole import.
MAX_TOTAL_ELEMENTS = 2 * MAX_ELEMENTS

#: A comment that gives an assignment's node its original id: ``# id: "x.1"``.
ID_COMMENT = re.compile(r"#\s*id:\s*(\".*\")\s*$")

_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_RANDOM = ("rand", "randn", "rand_like", "randn_like")
_PLOT_MODULES = ("matplotlib", "seaborn", "plotly")


class CodeError(Exception):
    """Code outside the subset, or code PyTorch itself would refuse; one line with its place."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        self.line = line
        self.column = column
        self.detail = message.replace("\r", " ").replace("\n", " ")
        super().__init__(f"line {line}, column {column}: {self.detail}")


@dataclass
class Imported:
    """What a snippet builds: the graph, its ``backward(...)`` and what was noted on the way.

    ``warnings`` are things the user should know were skipped or approximated;
    ``notes`` say how composites were expanded; both are ``line L: ...`` strings.
    ``retain_grad`` lists the nodes the code called ``.retain_grad()`` on;
    ``lines`` maps each node to the source line that made it.
    """

    graph: Graph
    output: str | None = None
    gradient: np.ndarray | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    retain_grad: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    train: TrainSpec | None = None  # a torch.optim loop after the backward (pytorch_train)

    def to_graph_file(self, title: str = "") -> GraphFile:
        return GraphFile(graph=self.graph, output=self.output, gradient=self.gradient, title=title,
                         train=self.train)


# =========================================================================== values


@dataclass
class _Node:
    op: str
    inputs: list[str]
    attrs: dict[str, Any]
    value: np.ndarray
    requires_grad: bool
    line: int
    stmt: int  # which statement made it: an assignment names only what it made itself
    random: bool = False  # holds seeded stand-ins for PyTorch's random numbers
    named: bool = False  # was bound to a variable by an assignment
    detached: bool = False  # torch.tensor([...]) of tensors: a copy without history


@dataclass(frozen=True)
class _T:
    """A tensor during the walk: the id of the node holding it."""

    id: str


@dataclass
class _Slots:
    """A no-grad tensor being written row by row (``y[0] = ...``): a stack in waiting."""

    base: str
    rows: list[str | None]


@dataclass(frozen=True)
class _Module:
    path: str


@dataclass(frozen=True)
class _Method:
    target: _T
    name: str


@dataclass(frozen=True)
class _Loss:
    """A loss module (``nn.MSELoss()``): calling it calls its functional form."""

    function: str
    reduction: str


@dataclass(frozen=True)
class _Dtype:
    name: str


@dataclass(frozen=True)
class _Indices:
    """The indices of a max/min over a dim: refused wherever they are used."""


class _ValuesIndices(NamedTuple):
    """What ``torch.max/min(x, dim)`` returns: read ``.values`` or ``[0]``; the indices
    are integers without a gradient, which the graph does not hold."""

    values: _T
    indices: _Indices


@dataclass(frozen=True)
class _Range:
    """``range(n)``: only as ``tuple(range(x.ndim))`` / ``list(range(x.ndim))``, the dims
    the export writes for a logsumexp over all dims (``dim`` null or ``[]``)."""

    n: int


@dataclass(frozen=True)
class _AllDims:
    """``tuple(range(n))`` (``as_list`` False) or ``list(range(n))``."""

    n: int
    as_list: bool


_COLON = object()  # a ``:`` inside an index


# =========================================================================== entry point


def import_code(source: str) -> Imported:
    """Translate ``source`` to a graph; raise :class:`CodeError` if it is outside the subset."""
    _check_text(source)
    ids = _id_comments(source)
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        raise CodeError(f"syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1) from None
    except (ValueError, MemoryError) as exc:
        raise CodeError(f"cannot parse the code: {exc}") from None
    walker = _Walker(source, ids, _assigned_names(tree))
    try:
        walker.run(tree.body)
    except RecursionError:
        raise CodeError("the code is nested too deeply to read") from None
    return _with_training(walker.finish(), tree, walker)


def _with_training(imported: Imported, tree: ast.Module, walker: _Walker) -> Imported:
    """The ``torch.optim`` loop after the backward, if there is one (issue 30)."""
    after = [s for s in tree.body if s.lineno > walker.line]
    names = {k: v.id for k, v in walker.vars.items() if isinstance(v, _T)}
    imported.train = training_of(after, names) if walker.done and after else None
    if imported.train is not None:
        skipped = f"line {after[0].lineno}: lines after the first backward(...) are ignored"
        imported.warnings = [w for w in imported.warnings if w != skipped]
    return imported


def _check_text(source: str) -> None:
    """Limits a tokenizer can check before the tree is built: size, null bytes, nesting."""
    if len(source) > MAX_SOURCE_CHARS:
        raise CodeError(
            f"the code is {len(source):,} characters long; the limit is {MAX_SOURCE_CHARS:,}"
        )
    nul = source.find("\0")
    if nul >= 0:
        line = source.count("\n", 0, nul) + 1
        column = nul - (source.rfind("\n", 0, nul) + 1) + 1
        raise CodeError("the code contains a null byte", line, column)
    depth = 0
    operators = 0
    previous = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            line, col = tok.start
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                operators = 0
            elif tok.type == tokenize.OP:
                if tok.string in "([{":
                    depth += 1
                    if depth > MAX_NESTING:
                        raise CodeError(
                            f"brackets nested more than {MAX_NESTING} deep", line, col + 1
                        )
                elif tok.string in ")]}":
                    depth -= 1
                elif _is_binary_operator(tok.string, previous):
                    operators += 1
                    if operators > MAX_OPERATORS:
                        raise CodeError(
                            f"more than {MAX_OPERATORS} operators in one statement", line, col + 1
                        )
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                previous = tok
    except (tokenize.TokenError, SyntaxError):
        return  # the parser reports it with its place


def _is_binary_operator(op: str, previous: tokenize.TokenInfo | None) -> bool:
    if op not in ("+", "-", "*", "/", "//", "%", "@", "**", "+=", "-=", "*=", "/=", "@="):
        return False
    if op in ("+", "-"):  # a sign after an operator, a comma or an open bracket is unary
        return previous is not None and (
            previous.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)
            or previous.string in (")", "]", "}")
        )
    return True


def _id_comments(source: str) -> dict[int, str]:
    """``# id: "..."`` comments by line: the original id of a node the export had to rename."""
    ids: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                m = ID_COMMENT.search(tok.string)
                if m:
                    try:
                        value = json.loads(m.group(1))
                    except ValueError:
                        continue
                    if isinstance(value, str) and value:
                        ids[tok.start[0]] = value
    except (tokenize.TokenError, SyntaxError):
        pass
    return ids


def _assigned_names(tree: ast.Module) -> set[str]:
    """Every plain name the code assigns: temporaries keep out of their way."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


# =========================================================================== the walk


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


def _where(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1


class _Walker:
    """Walks statements in order, keeping variables and the nodes they name."""

    def __init__(self, source: str, ids: dict[int, str], assigned: set[str]) -> None:
        self.lines = source.splitlines()
        self.ids = ids
        self.reserved = set(assigned)
        self.nodes: dict[str, _Node] = {}
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
                    self.vars[alias.asname] = _Module(alias.name)
                else:
                    head = alias.name.split(".")[0]
                    self.vars[head] = _Module(head)
            return
        if stmt.level:
            self.refuse(stmt, "a relative import is outside the supported subset")
        module = stmt.module or ""
        for alias in stmt.names:
            if alias.name == "*":
                self.refuse(stmt, "import * is outside the supported subset")
            self.vars[alias.asname or alias.name] = _Module(f"{module}.{alias.name}")

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
        if isinstance(current, _T):
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
            if not isinstance(target, _T):
                self.refuse(func, f".{func.attr}() needs a tensor, got {_describe(target)}")
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
            if _is_int(seed):
                self.seed = seed
            self.warn(
                stmt.lineno,
                "torch.manual_seed: PyTorch's own random numbers can't be "
                "reproduced; rand/randn use seeded numbers of their own",
            )
        elif path in ("print", "display") or (path or "").endswith(".print") or _is_plot(path):
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
        if isinstance(value, _T | _Slots):
            return True
        return isinstance(value, _Module) and value.path.split(".")[0] == "torch"

    def call_root(self, func: ast.expr) -> str:
        """The name a call chain starts from (``__import__`` in ``__import__('os').system``)."""
        while not isinstance(func, ast.Name):
            if isinstance(func, ast.Attribute | ast.Subscript):
                func = func.value
            elif isinstance(func, ast.Call):
                func = func.func
            else:
                return _construct(func)
        path = self.callee_path(func)
        return path or func.id

    def try_tensor(self, node: ast.expr) -> _T | None:
        """The tensor a plain name or attribute chain refers to, without building anything."""
        if isinstance(node, ast.Name):
            value = self.vars.get(node.id)
            if isinstance(value, _Slots):
                return self.materialise(node.id, value)
            return value if isinstance(value, _T) else None
        return None

    # ------------------------------------------------------------------ binding and naming

    def bind(self, name: str, value: Any, stmt: ast.stmt) -> None:
        """``name = value``: a node made by this statement takes the variable's name."""
        if isinstance(value, _T) and self.made_here(value):
            wanted = self.ids.get(stmt.lineno)
            if wanted is None or wanted in self.nodes:
                wanted = self.binding_name(name)
            if wanted != value.id:
                self.rename(value.id, wanted)
            value = _T(wanted)
            self.nodes[wanted].named = True
        self.vars[name] = value

    def made_here(self, t: _T) -> bool:
        """True for a node this statement made and no variable names yet."""
        return self.nodes[t.id].stmt == self.stmt and t.id not in self.bound_names()

    def binding_name(self, name: str) -> str:
        """``y`` the first time, then ``y_2``, ``y_3``: a name no node has yet."""
        count = self.bound_count.get(name, 0) + 1
        self.bound_count[name] = count
        candidate = name if count == 1 else f"{name}_{count}"
        while candidate in self.nodes:
            count += 1
            self.bound_count[name] = count
            candidate = f"{name}_{count}"
        return candidate

    def bound_names(self) -> set[str]:
        return {v.id for v in self.vars.values() if isinstance(v, _T)}

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
            if v == _T(old):
                self.vars[k] = _T(new)
        self.consts = {c: (new if i == old else i) for c, i in self.consts.items()}

    def add(
        self,
        op: str,
        inputs: list[_T],
        attrs: dict[str, Any] | None,
        where: ast.AST,
        name: str | None = None,
    ) -> _T:
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
        with np.errstate(all="ignore"):
            value = np.asarray(spec.forward(xs, full), dtype=np.float64)
        nid = self.fresh(name or _derived_name(op, [t.id for t in inputs], full))
        rg = any(self.nodes[t.id].requires_grad for t in inputs)
        self.nodes[nid] = _Node(op, [t.id for t in inputs], full, value, rg, self.line, self.stmt)
        self.recent.append(nid)
        return _T(nid)

    def leaf(
        self,
        value: np.ndarray,
        requires_grad: bool | None,
        where: ast.AST,
        name: str,
        random: bool = False,
    ) -> _T:
        """An ``input`` (``requires_grad`` given) or a ``const`` (not given) holding ``value``."""
        nid = self.fresh(name)
        op = "const" if requires_grad is None else "input"
        self.count_node(where)
        self.nodes[nid] = _Node(
            op, [], {}, value, bool(requires_grad), self.line, self.stmt, random=random
        )
        self.recent.append(nid)
        return _T(nid)

    def constant(self, number: float, where: ast.AST) -> _T:
        """A literal number in arithmetic: one const node per distinct value."""
        key = float(number)
        if key in self.consts and self.consts[key] in self.nodes:
            return _T(self.consts[key])
        self.reserve(1, where, "const")
        t = self.leaf(np.array(key), None, where, _number_name(key))
        self.consts[key] = t.id
        return t

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

    # ------------------------------------------------------------------ messages

    def refuse(self, where: ast.AST, message: str) -> Any:
        line, column = _where(where)
        if where is not None and hasattr(where, "col_offset") and 0 < line <= len(self.lines):
            text = self.lines[line - 1].encode("utf-8")[: where.col_offset]
            column = len(text.decode("utf-8", errors="replace")) + 1
        raise CodeError(message, line, column)

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(f"line {line}: {message}")

    def note(self, where: ast.AST, message: str) -> None:
        self.notes.append(f"line {_where(where)[0]}: {message}")

    # ------------------------------------------------------------------ expressions

    def expr(self, node: ast.expr) -> Any:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.refuse(node, f"{_construct(node)} is outside the supported subset")
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, int | float | bool | str) or node.value is None:
            return node.value
        self.refuse(node, f"a {type(node.value).__name__} literal is outside the supported subset")

    def expr_Name(self, node: ast.Name) -> Any:
        return self.lookup(node)

    def lookup(self, node: ast.Name) -> Any:
        name = node.id
        if name in self.vars:
            value = self.vars[name]
            if isinstance(value, _Slots):
                return self.materialise(name, value)
            return value
        if name in _BUILTINS:
            return _Module(name)
        if name in vars(builtins):
            self.refuse(node, f"{name} is outside the supported subset")
        self.refuse(node, f"name {name!r} is not defined")

    def expr_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node: ast.List) -> list:
        return [self.expr(e) for e in node.elts]

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            if isinstance(value, _T) and ("-", 1) in _SYMBOLS:
                return self.add(_SYMBOLS["-", 1], [value], None, node)
            if _is_number(value):
                return -value
        if isinstance(node.op, ast.UAdd) and (_is_number(value) or isinstance(value, _T)):
            return value
        if isinstance(node.op, ast.Not) and isinstance(value, bool):
            return not value
        self.refuse(node, f"{_construct(node)} is outside the supported subset")

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: ast.operator, a: Any, b: Any, where: ast.AST) -> Any:
        name = _SYMBOLS.get((_OPERATOR_TEXT.get(type(op), ""), 2))
        if isinstance(a, _T) or isinstance(b, _T):
            if name is None:
                self.refuse(
                    where,
                    f"the operator {_OPERATOR_TEXT.get(type(op), '?')} on "
                    "tensors is outside the supported subset",
                )
            if name == "matmul" and not (isinstance(a, _T) and isinstance(b, _T)):
                self.refuse(where, "@ needs two tensors")
            return self.add(name, [self.as_tensor(a, where), self.as_tensor(b, where)], None, where)
        if _is_number(a) and _is_number(b):
            return _number_op(op, a, b, where, self)
        for v in (a, b):
            if isinstance(v, _ValuesIndices | _Indices):
                self.refuse(where, f"{_describe(v)} cannot take part in arithmetic")
        if isinstance(a, tuple | list) and isinstance(b, tuple | list) and isinstance(op, ast.Add):
            return a + b
        self.refuse(where, f"{_construct(where)} on these values is outside the supported subset")

    def as_tensor(self, value: Any, where: ast.AST) -> _T:
        if isinstance(value, _T):
            return value
        if _is_number(value):
            return self.constant(value, where)
        self.refuse(where, f"expected a tensor or a number, got {_describe(value)}")

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        attr = node.attr
        if isinstance(base, _Module):
            path = f"{base.path}.{attr}"
            if path in _DTYPES:
                return _Dtype(path)
            if path == "math.pi":
                return math.pi
            if path == "math.e":
                return math.e
            return _Module(path)
        if isinstance(base, _T):
            n = self.nodes[base.id]
            if attr == "T":
                return self.transpose(base, node)
            if attr == "mT":  # a batch of matrices
                return self.add("transpose", [base], {"dim0": -2, "dim1": -1}, node)
            if attr == "shape":
                return tuple(int(d) for d in n.value.shape)
            if attr in ("data",):
                return self.detach(base, node)
            if attr == "requires_grad":
                return n.requires_grad
            if attr == "grad":
                self.refuse(node, ".grad is only there after backward(...)")
            if attr == "ndim":
                return n.value.ndim
            return _Method(base, attr)
        if isinstance(base, _ValuesIndices) and attr in ("values", "indices"):
            return getattr(base, attr)
        self.refuse(node, f"attribute .{attr} of {_describe(base)} is outside the supported subset")

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        base = self.expr(node.value)
        index = self.index(node.slice)
        if isinstance(base, tuple | list):
            if len(index) == 1 and isinstance(index[0], int):
                try:
                    return base[index[0]]
                except IndexError:
                    self.refuse(node, f"index {index[0]} is out of range")
            self.refuse(node, "only a single integer index into a tuple is supported")
        if not isinstance(base, _T):
            self.refuse(node, f"cannot index {_describe(base)}")
        out, dim = base, 0
        for item in index:
            if item is _COLON:
                dim += 1
                continue
            out = self.add(
                "select",
                [out],
                {"dim": dim, "index": item},
                node,
                name=f"{out.id}_{item}" if dim == 0 else None,
            )
        return out

    def index(self, node: ast.expr) -> list[Any]:
        """An index as a list of ints and ``:``; any other slice is refused."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        out: list[Any] = []
        for item in items:
            if isinstance(item, ast.Slice):
                if item.lower is not None or item.upper is not None or item.step is not None:
                    self.refuse(item, "slices other than ':' are outside the supported subset")
                out.append(_COLON)
                continue
            value = self.expr(item)
            if not isinstance(value, int) or isinstance(value, bool):
                self.refuse(item, f"an index must be an integer or ':', got {_describe(value)}")
            out.append(value)
        return out

    def expr_Call(self, node: ast.Call) -> Any:
        callee = self.expr(node.func)
        if isinstance(callee, _Method):
            args, kwargs = self.arguments(node)
            return self.call_method(callee.target, callee.name, args, kwargs, node)
        if isinstance(callee, _Module):
            return self.call_function(callee.path, node)
        if isinstance(callee, _Loss):
            args, kwargs = self.arguments(node)
            if len(args) != 2 or not isinstance(args[0], _T) or kwargs:
                self.refuse(node, "a loss module takes (input, target)")
            loss = f"torch.nn.functional.{callee.function}"
            extra = {"reduction": callee.reduction}
            return self.call_method(args[0], callee.function, [args[1]], extra, node, loss)
        self.refuse(node, f"{_describe(callee)} is not callable")

    def callee_path(self, func: ast.expr) -> str | None:
        """The dotted path a call names, when it names a module function (nothing evaluated)."""
        parts = []
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name):
            return None
        head = self.vars.get(func.id)
        if isinstance(head, _Module):
            base = head.path
        elif func.id in self.vars:
            return None
        else:
            base = func.id
        return ".".join([base, *reversed(parts)])

    def arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                value = self.expr(a.value)
                if not isinstance(value, tuple | list):
                    self.refuse(a, "can only unpack a tuple or list with *")
                args.extend(value)
            else:
                args.append(self.expr(a))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                self.refuse(kw, "**keyword unpacking is outside the supported subset")
            kwargs[kw.arg] = self.expr(kw.value)
        return args, kwargs

    def unsupported(self, node: ast.AST) -> Any:
        self.refuse(node, f"{_construct(node)} is outside the supported subset")

    expr_Lambda = expr_ListComp = expr_DictComp = expr_SetComp = expr_GeneratorExp = unsupported
    expr_IfExp = expr_Compare = expr_BoolOp = expr_Dict = expr_Set = expr_JoinedStr = unsupported
    expr_NamedExpr = expr_Await = expr_Yield = expr_YieldFrom = expr_Starred = unsupported

    # ------------------------------------------------------------------ calls

    def call_function(self, path: str, node: ast.Call) -> Any:
        path = _canonical(path)
        if path in _BUILTIN_FUNCTIONS:
            args, kwargs = self.arguments(node)
            return _BUILTIN_FUNCTIONS[path](self, args, kwargs, node)
        module, _, name = path.rpartition(".")
        if module == "torch" and name in _FACTORIES:
            args, kwargs = self.arguments(node)
            return self.factory(name, args, kwargs, node)
        if path in ("torch.autograd.Variable", "torch.autograd.variable.Variable"):
            args, kwargs = self.arguments(node)
            return self.variable(args, kwargs, node)
        if path in _NUMPY_FACTORIES:
            args, kwargs = self.arguments(node)
            return self.numpy_factory(path, args, kwargs, node)
        if path in _LOSS_MODULES:
            args, kwargs = self.arguments(node)
            if args or set(kwargs) - {"reduction"}:
                self.refuse(node, f"{path}: only reduction=... is supported")
            return _Loss(_LOSS_MODULES[path], kwargs.get("reduction", "mean"))
        if path == "torch.manual_seed":
            self.refuse(node, "torch.manual_seed(...) belongs on a line of its own")
        if path == "torch.autograd.grad":
            self.refuse(node, "torch.autograd.grad is outside the supported subset; use backward")
        if module not in ("torch", "torch.nn.functional", "torch.special"):
            self.refuse(node, f"{path}(...) is outside the supported subset")
        if path == "torch.where":
            return self.where(node)
        args, kwargs = self.arguments(node)
        op = _FUNCTIONS.get(path)
        if name in ("amax", "amin"):  # over all dims only: over one, a tie splits as max's does not
            if args[1:] or set(kwargs) - {"dim"} or kwargs.pop("dim", ()) != ():
                self.refuse(node, f"{path} over a dim splits ties; write x.{name[1:]}(dim).values")
        if op == "stack":
            return self.stack(args, kwargs, node)
        if not args or not isinstance(args[0], _T):
            self.refuse(node, f"{path}(...) needs a tensor as its first argument")
        if op is None:
            return self.fallback(name, args[0], args[1:], kwargs, node, f"{path}(...)")
        return self.apply(op, args[0], args[1:], kwargs, node)

    def call_method(
        self,
        target: _T,
        name: str,
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.Call,
        function: str | None = None,
    ) -> Any:
        """``target.name(...)``, or the function ``function(target, ...)`` when given."""
        op = _FUNCTIONS.get(function) if function else _METHODS.get(name)
        if op is None:
            spelled = f"{function}(...)" if function else f".{name}()"
            return self.fallback(name, target, args, kwargs, node, spelled)
        return self.apply(op, target, args, kwargs, node)

    def apply(
        self, op: str, target: _T, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        """An op of the table, its arguments read by its own handler or the generic one."""
        handler = _HANDLERS.get(op)
        if handler is not None:
            return handler(self, target, args, kwargs, node)
        return self.generic(op, target, args, kwargs, node)

    def fallback(
        self,
        name: str,
        target: _T,
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.Call,
        spelled: str,
    ) -> Any:
        """A spelling the table lacks: a composite of its ops, a pass-through, or a refusal."""
        if name in _COMPOSITES:
            return _COMPOSITES[name](self, target, args, kwargs, node)
        if name in _PASS_THROUGH:
            return _PASS_THROUGH[name](self, target, args, kwargs, node)
        if name == "random_" and self.nodes[target.id].op == "const" and self.made_here(target):
            return self.fill_random_ints(target, args, node)
        if name.endswith("_") and name[:-1] in _METHODS:
            self.refuse(node, f"in-place {spelled} inside an expression is outside the subset")
        self.refuse(node, f"{spelled}: the op table has no such op")

    def generic(
        self, op: str, target: _T, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> _T:
        """An op in the table: tensors first (as many as its arity), then its attributes."""
        spec = OPS[op]
        operands = [target]
        rest = list(args)
        arity = spec.arity or 1
        while len(operands) < arity and rest:
            operands.append(self.as_tensor(rest.pop(0), node))
        if len(operands) < arity:
            self.refuse(node, f"{op} needs {arity} tensors, got {len(operands)}")
        names = [a.name for a in spec.attrs]
        if len(rest) > len(names):
            self.refuse(node, f"{op}: too many arguments")
        attrs = dict(zip(names, rest, strict=False))
        for key, value in kwargs.items():
            if key in ("out", "inplace") and not value:
                continue
            if key == "axis" and "dim" in names:
                key = "dim"
            if key not in names:
                self.refuse(node, f"{op}: unsupported keyword argument {key!r}")
            attrs[key] = value
        attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.items()}
        return self.add(op, operands, attrs, node)

    # ------------------------------------------------------------------ factories

    def factory(self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> _T:
        requires_grad = kwargs.pop("requires_grad", None)
        dtype = kwargs.pop("dtype", None)
        for ignored in ("device", "layout", "pin_memory", "memory_format"):
            kwargs.pop(ignored, None)
        if requires_grad is not None and not isinstance(requires_grad, bool):
            self.refuse(node, "requires_grad must be True or False")
        floating = dtype is not None and dtype.name in _FLOAT_DTYPES
        if requires_grad and name in ("tensor", "as_tensor") and args and not floating:
            if _all_ints(args[0]) and dtype is None or (dtype is not None and not floating):
                self.refuse(
                    node,
                    "only floating-point tensors can require grad (PyTorch "
                    "refuses integers: write 1.0, or dtype=torch.float)",
                )
        value, random = self.factory_value(name, args, kwargs, node)
        if random:
            self.seed += 1
        t = self.leaf(value, requires_grad, node, name.removesuffix("_like"), random=random)
        if name == "tensor" and _holds_tensors(args[0] if args else None):
            self.nodes[t.id].detached = True
        return t

    def factory_value(
        self, name: str, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> tuple[np.ndarray, bool]:
        if name in ("tensor", "Tensor", "FloatTensor", "DoubleTensor", "as_tensor"):
            if len(args) != 1 or kwargs:
                if name in ("Tensor", "FloatTensor", "DoubleTensor") and all(
                    isinstance(a, int) for a in args
                ):
                    shape = self.shape(args, node, name)
                    self.warn(node.lineno, f"torch.{name}(sizes) is uninitialised; using zeros")
                    return np.zeros(shape), False
                self.refuse(node, f"torch.{name} takes one value")
            return self.literal(args[0], node, name), False
        if name.endswith("_like"):
            if not args or not isinstance(args[0], _T):
                self.refuse(node, f"torch.{name} needs a tensor")
            shape = self.nodes[args[0].id].value.shape
            base = name.removesuffix("_like")
            rest = args[1:]
        else:
            base = name
            rest = args
            shape = ()
        if base in ("ones", "zeros", "empty", "rand", "randn", "full"):
            if not name.endswith("_like"):
                if base == "full":
                    if not rest:
                        self.refuse(node, "torch.full needs a size and a fill value")
                    size = rest[0]
                    rest = rest[1:]
                    shape = self.shape(
                        list(size) if isinstance(size, tuple | list) else [size], node, name
                    )
                else:
                    size = kwargs.pop("size", None)
                    shape = self.shape(rest if size is None else [size], node, name)
                    rest = []
            self.reserve(math.prod(shape), node, name)
            if base == "full":
                fill = rest[0] if rest else kwargs.pop("fill_value", None)
                if not _is_number(fill):
                    self.refuse(node, "torch.full needs a number to fill with")
                return np.full(shape, float(fill)), False
            if base == "ones":
                return np.ones(shape), False
            if base in ("zeros", "empty"):
                if base == "empty":
                    self.warn(node.lineno, "torch.empty is uninitialised; using zeros")
                return np.zeros(shape), False
            rng = np.random.default_rng(self.seed)
            if base == "rand":
                return rng.random(shape), True
            return rng.standard_normal(shape), True
        if base == "eye":
            dims = [d for d in rest if d is not None]
            if not 1 <= len(dims) <= 2 or not all(_is_int(d) and d >= 0 for d in dims):
                self.refuse(node, "torch.eye takes one or two sizes")
            n, m = dims[0], dims[-1]
            self.reserve(n * m, node, name)
            return np.eye(n, m), False
        if base == "arange":
            nums = [a for a in rest] + [
                kwargs.pop(k) for k in ("start", "end", "step") if k in kwargs
            ]
            if not 1 <= len(nums) <= 3 or not all(_is_number(a) for a in nums):
                self.refuse(node, "torch.arange takes one to three numbers")
            start, end, step = (
                (0, nums[0], 1) if len(nums) == 1 else (*nums[:2], nums[2] if len(nums) == 3 else 1)
            )
            if step == 0:
                self.refuse(node, "torch.arange: the step must not be zero")
            count = max(0, math.ceil((end - start) / step))
            self.reserve(count, node, name)
            return start + step * np.arange(count, dtype=np.float64), False
        if base == "randint":
            low, high = (0, rest[0]) if len(rest) == 2 else tuple(rest[:2])
            size = kwargs.pop("size", rest[-1] if len(rest) in (2, 3) else None)
            if not (_is_int(low) and _is_int(high) and high > low and size is not None):
                self.refuse(node, "torch.randint takes [low,] high and a size")
            shape = self.shape(list(size) if isinstance(size, tuple | list) else [size], node, name)
            self.reserve(math.prod(shape), node, name)
            return np.random.default_rng(self.seed).integers(low, high, shape).astype(float), True
        if base == "linspace":
            nums = list(rest) + [kwargs.pop(k) for k in ("start", "end", "steps") if k in kwargs]
            if len(nums) != 3 or not all(_is_number(a) for a in nums) or not _is_int(nums[2]):
                self.refuse(node, "torch.linspace takes start, end and a number of steps")
            if nums[2] < 0:
                self.refuse(node, "torch.linspace: the number of steps must not be negative")
            self.reserve(nums[2], node, name)
            return np.linspace(float(nums[0]), float(nums[1]), nums[2]), False
        self.refuse(node, f"torch.{name} is outside the supported subset")

    def fill_random_ints(self, t: _T, args: list[Any], node: ast.Call) -> _T:
        """``torch.empty(3).random_(5)`` on a fresh tensor: seeded integers in [0, 5)."""
        if len(args) != 1 or not _is_int(args[0]) or args[0] < 1:
            self.refuse(node, ".random_(n) takes one positive integer here")
        n = self.nodes[t.id]
        n.value = np.random.default_rng(self.seed).integers(0, args[0], n.value.shape) * 1.0
        n.random = True
        self.seed += 1
        return t

    def numpy_factory(self, path: str, args: list[Any], kwargs: dict, node: ast.Call) -> list:
        """``np.zeros/ones/array`` handed to ``torch.tensor``: their values as nested lists."""
        kwargs.pop("dtype", None)
        if kwargs or len(args) != 1:
            self.refuse(node, f"{path}(...) takes one argument here")
        what = path.replace("numpy.", "np.")
        if path == "numpy.array":
            return self.literal(args[0], node, what).tolist()
        shape = self.shape([args[0]], node, what)
        self.reserve(math.prod(shape), node, what)
        return np.full(shape, 1.0 if path == "numpy.ones" else 0.0).tolist()

    def shape(self, dims: list[Any], node: ast.AST, what: str) -> tuple[int, ...]:
        if len(dims) == 1 and isinstance(dims[0], tuple | list):
            dims = list(dims[0])
        if not all(_is_int(d) and d >= 0 for d in dims):
            self.refuse(node, f"torch.{what}: sizes must be non-negative integers")
        if len(dims) > 32:
            self.refuse(node, f"torch.{what}: more than 32 dims")
        count = math.prod(dims)
        if count > MAX_ELEMENTS:
            self.refuse(node, f"torch.{what}: {count:,} elements; the limit is {MAX_ELEMENTS:,}")
        return tuple(dims)

    def literal(self, value: Any, node: ast.AST, what: str) -> np.ndarray:
        """A nested list of numbers (or of one-element tensors, copied) as a float64 array."""
        count = [0]

        def walk(v: Any) -> Any:
            if isinstance(v, tuple | list):
                return [walk(x) for x in v]
            if isinstance(v, _T):
                tv = self.nodes[v.id].value
                if tv.size != 1 and tv.ndim:
                    return tv.tolist()
                return float(tv.reshape(()))
            if _is_number(v):
                count[0] += 1
                return float(v)
            self.refuse(node, f"torch.{what}: expected numbers, got {_describe(v)}")

        data = walk(value)
        try:
            array = np.array(data, dtype=np.float64)
        except ValueError:
            self.refuse(node, f"torch.{what}: the nested lists are not rectangular")
        self.reserve(array.size, node, what)
        return array

    def variable(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> _T:
        """``Variable(t, requires_grad=...)`` from old tutorials: a leaf holding t's value."""
        if len(args) != 1 or not isinstance(args[0], _T):
            self.refuse(node, "Variable(...) takes one tensor")
        rg = kwargs.get("requires_grad")
        t = args[0]
        n = self.nodes[t.id]
        if n.op == "const" and self.made_here(t):
            if rg is not None:
                n.op, n.requires_grad = "input", bool(rg)
            return t
        return self.leaf(n.value.copy(), None if rg is None else bool(rg), node, "variable")

    # ------------------------------------------------------------------ op handlers

    def transpose(self, t: _T, node: ast.AST) -> _T:
        """``.T`` / ``.t()``: rows and columns of a matrix (PyTorch's ``.t()`` refuses more)."""
        if self.nodes[t.id].value.ndim > 2:
            self.refuse(node, ".T and .t() take at most 2 dims here; use .transpose(dim0, dim1)")
        return self.add("transpose", [t], None, node)

    def detach(self, t: _T, node: ast.AST) -> _T:
        return self.leaf(self.nodes[t.id].value.copy(), None, node, f"{t.id}_detached")

    def reduction(
        self, op: str, t: _T, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> _T:
        dim = kwargs.pop("dim", kwargs.pop("axis", args[0] if args else None))
        keepdim = kwargs.pop("keepdim", args[1] if len(args) > 1 else False)
        kwargs.pop("dtype", None)
        if kwargs or len(args) > 2:
            self.refuse(node, f"{op}: unsupported arguments")
        if isinstance(dim, tuple):
            dim = list(dim)
        return self.add(op, [t], {"dim": dim, "keepdim": keepdim}, node)

    def where(self, node: ast.Call) -> _T:
        """``torch.where(torch.tensor(<True/False literal>), a, b)``: the condition is read
        into the where op's constant attribute, never made a node."""
        cond = node.args[0] if len(node.args) == 3 and not node.keywords else None
        literal = None
        if isinstance(cond, ast.Call) and _canonical(self.callee_path(cond.func) or "") in (
            "torch.tensor",
            "torch.as_tensor",
        ):
            dtype = [k for k in cond.keywords if k.arg == "dtype"]
            if len(cond.args) == 1 and len(dtype) == len(cond.keywords) <= 1:
                literal = self.expr(cond.args[0])
        if literal is None:
            self.refuse(node, "torch.where needs torch.tensor(<True/False values>), a, b")
        condition = self.bool_literal(literal, cond)
        a, b = (self.as_tensor(self.expr(arg), arg) for arg in node.args[1:])
        return self.add("where", [a, b], {"condition": condition}, node)

    def bool_literal(self, value: Any, node: ast.AST) -> bool | list:
        """A bool or rectangular nested list of bools, as the where op's condition holds it."""

        def check(v: Any) -> None:
            if isinstance(v, tuple | list):
                for x in v:
                    check(x)
            elif not isinstance(v, bool):
                self.refuse(node, f"torch.where's condition must be True/False, got {_describe(v)}")

        check(value)
        try:
            array = np.array(value, dtype=bool)
        except ValueError:
            self.refuse(node, "torch.where's condition: the nested lists are not rectangular")
        if array.dtype != bool or array.ndim != np.ndim(value):
            self.refuse(node, "torch.where's condition: the nested lists are not rectangular")
        self.reserve(array.size, node, "where")
        return array.tolist()

    def extreme(
        self, op: str, t: _T, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        """``x.max()`` (a tensor), ``x.max(dim, keepdim)`` (values and indices, as torch)
        and ``torch.max(a, b)`` (the elementwise maximum)."""
        other = kwargs.pop("other", args[0] if args and isinstance(args[0], _T) else None)
        if other is not None:
            if args[1:] or kwargs:
                self.refuse(node, f"{op}(a, b): unsupported arguments")
            return self.add("maximum" if op == "max" else "minimum", [t, other], None, node)
        dim = kwargs.pop("dim", args[0] if args else None)
        keepdim = kwargs.pop("keepdim", args[1] if len(args) > 1 else False)
        if kwargs or len(args) > 2 or not (dim is None or _is_int(dim)):
            self.refuse(node, f"{op}: takes one integer dim and keepdim")
        if dim is None:
            if keepdim:
                self.refuse(node, f"{op}: keepdim needs a dim")
            return self.add(op, [t], {"dim": None, "keepdim": False}, node)
        values = self.add(op, [t], {"dim": dim, "keepdim": bool(keepdim)}, node)
        return _ValuesIndices(values, _Indices())

    def logsumexp(self, t: _T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> _T:
        """logsumexp over dims; ``tuple(range(x.ndim))`` is null (all dims), ``list(...)`` []."""
        dim = kwargs.get("dim", args[0] if args else None)
        if isinstance(dim, _AllDims):
            if dim.n != self.nodes[t.id].value.ndim:
                self.refuse(node, f"logsumexp: range({dim.n}) is not every dim of the tensor")
            whole: list | None = [] if dim.as_list else None
            if args:
                args = [whole, *args[1:]]
            else:
                kwargs["dim"] = whole
        elif dim is None:
            self.refuse(node, "logsumexp needs a dim (PyTorch has no default)")
        return self.reduction("logsumexp", t, args, kwargs, node)

    def reshape(self, t: _T, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> _T:
        dims = args if args else [kwargs.pop("shape", kwargs.pop("size", None))]
        if len(dims) == 1 and isinstance(dims[0], tuple | list):
            dims = list(dims[0])
        if not all(_is_int(d) for d in dims):
            self.refuse(node, "reshape/view take integer sizes")
        return self.add("reshape", [t], {"shape": list(dims)}, node)

    def reshape_to(self, t: _T, shape: Sequence[int], node: ast.AST, what: str) -> _T:
        if "reshape" not in OPS:
            self.refuse(node, f"{what} needs reshape, which the op table lacks")
        self.note(node, f"{what} written as a reshape to {list(shape)}")
        return self.add("reshape", [t], {"shape": list(shape)}, node)

    def stack(self, args: list[Any], kwargs: dict[str, Any], node: ast.Call) -> _T:
        if not args or not isinstance(args[0], tuple | list) or not args[0]:
            self.refuse(node, "torch.stack takes a list of tensors")
        dim = kwargs.pop("dim", args[1] if len(args) > 1 else 0)
        tensors = [self.as_tensor(a, node) for a in args[0]]
        return self.add("stack", tensors, {"dim": dim}, node)

    # ------------------------------------------------------------------ slots, attributes

    def write_slot(self, target: ast.Subscript, value_node: ast.expr) -> None:
        """``y[i] = expr``: y becomes a stack of its rows (written ones and the rest)."""
        if not isinstance(target.value, ast.Name):
            self.refuse(target, "only writes into a named tensor (y[0] = ...) are supported")
        name = target.value.id
        current = self.vars.get(name)
        if isinstance(current, _T):
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
            slots = _Slots(current.id, [None] * n.value.shape[0])
        elif isinstance(current, _Slots):
            slots = current
        else:
            self.refuse(target, f"name {name!r} is not a tensor")
        index = self.index(target.slice)
        if len(index) != 1 or index[0] is _COLON:
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
            t = _T(wanted)
            self.nodes[wanted].named = True
        slots.rows[i % rows] = t.id
        self.vars[name] = slots

    def materialise(self, name: str, slots: _Slots) -> _T:
        """The stack a slotted tensor stands for, built when the tensor is first read.

        Rows never written keep the factory's values (as consts); the factory's own
        node goes when nothing else uses it, so no random node is left over.
        """
        base = self.nodes[slots.base]
        where = ast.Pass(lineno=self.line, col_offset=0)
        rows = [
            _T(row)
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
        self.vars[name] = _T(wanted)
        return _T(wanted)

    def consumers(self, nid: str) -> list[str]:
        return [k for k, n in self.nodes.items() if nid in n.inputs]

    def set_attribute(self, target: ast.Attribute, value_node: ast.expr) -> None:
        if target.attr != "requires_grad":
            self.refuse(target, f"setting .{target.attr} is outside the supported subset")
        t = self.expr(target.value)
        value = self.expr(value_node)
        if not isinstance(t, _T) or not isinstance(value, bool):
            self.refuse(target, "requires_grad = True/False works on a tensor")
        self.set_requires_grad(t, value, target)

    def set_requires_grad(self, t: _T, flag: bool, where: ast.AST) -> None:
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

    def check_not_grad_leaf(self, t: _T, where: ast.AST, what: str) -> None:
        n = self.nodes[t.id]
        if n.op in LEAF_OPS and n.requires_grad:
            self.refuse(
                where, f"{what} on leaf {t.id!r}, which requires grad (PyTorch refuses it too)"
            )

    # ------------------------------------------------------------------ statement methods

    def stmt_requires_grad_(self, t: _T, call: ast.Call) -> None:
        args, kwargs = self.arguments(call)
        flag = kwargs.get("requires_grad", args[0] if args else True)
        if not isinstance(flag, bool):
            self.refuse(call, "requires_grad_ takes True or False")
        self.set_requires_grad(t, flag, call)

    def stmt_retain_grad(self, t: _T, call: ast.Call) -> None:
        if t.id not in self.retain:
            self.retain.append(t.id)

    def stmt_backward(self, t: _T, call: ast.Call) -> None:
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
        if not isinstance(tensors, _T):
            self.refuse(call, "torch.autograd.backward takes one tensor here")
        self.backward(tensors, gradient, call)

    def backward(self, t: _T, gradient: Any, call: ast.Call) -> None:
        """The first ``backward(...)``: output and v, checked with PyTorch's rules."""
        n = self.nodes[t.id]
        v = None
        if gradient is not None:
            if isinstance(gradient, _T):
                v = self.nodes[gradient.id].value
                if self.nodes[gradient.id].requires_grad:
                    self.refuse(call, "the gradient v must not require grad")
                self.gradient_node = gradient.id
            elif _is_number(gradient) or isinstance(gradient, list | tuple):
                v = self.literal(gradient, call, "backward")
            else:
                self.refuse(call, f"the gradient v must be a tensor, got {_describe(gradient)}")
        try:
            check_gradient(t.id, n.value.shape, None if v is None else v.shape, n.requires_grad)
        except GraphError as exc:
            self.refuse(call, f"backward: {exc.detail}" if exc.node is None else str(exc))
        self.output = t.id
        self.gradient = None if v is None else np.array(v, dtype=np.float64)
        self.done = True

    def inplace_method(self, func: ast.Attribute, target: _T, call: ast.Call) -> None:
        """``y.add_(1)`` and friends: a new node under the same variable (``y_2``)."""
        name = func.attr[:-1]
        if name == "zero":
            self.check_not_grad_leaf(target, call, f".{func.attr}()")
            self.refuse(call, f".{func.attr}() is outside the supported subset")
        if name not in _METHODS:
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
            self.vars = {k: v for k, v in self.vars.items() if v != _T(g)}
        for nid, n in list(self.nodes.items()):
            if n.detached and not self.consumers(nid) and nid != self.output:
                self.warn(
                    n.line,
                    f"{nid} = torch.tensor([...]) of tensors is a copy without "
                    "history and is unused: skipped",
                )
                del self.nodes[nid]
        self.vars = {
            k: v for k, v in self.vars.items() if not isinstance(v, _T) or v.id in self.nodes
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
            graph.add_node(
                nid,
                n.op,
                inputs=list(n.inputs) or None,
                attrs=n.attrs if n.op not in LEAF_OPS else None,
                value=n.value if n.op in LEAF_OPS else None,
                requires_grad=n.requires_grad,
            )
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


_STATEMENT_METHODS: dict[str, Callable[[_Walker, _T, ast.Call], None]] = {
    "requires_grad_": _Walker.stmt_requires_grad_,
    "retain_grad": _Walker.stmt_retain_grad,
    "backward": _Walker.stmt_backward,
}


# =========================================================================== op spellings


_OPERATOR_TEXT: dict[type, str] = {
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
    "torch.transpose": "transpose",
    "Tensor.transpose": "transpose",
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


_FUNCTIONS, _METHODS, _SYMBOLS = _spellings()

_FACTORIES = {
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

_DTYPES = {
    f"torch.{d}"
    for d in (
        "float",
        "float32",
        "float64",
        "double",
        "float16",
        "half",
        "int",
        "int64",
        "long",
        "int32",
        "bool",
    )
}

_NUMPY_FACTORIES = ("numpy.zeros", "numpy.ones", "numpy.array")

_LOSS_MODULES = {
    "torch.nn.MSELoss": "mse_loss",
    "torch.nn.BCELoss": "binary_cross_entropy",
    "torch.nn.BCEWithLogitsLoss": "binary_cross_entropy_with_logits",
    "torch.nn.CrossEntropyLoss": "cross_entropy",
}

_FLOAT_DTYPES = {f"torch.{d}" for d in ("float", "float32", "float64", "double", "float16", "half")}

_BUILTINS = {"print", "float", "int", "len", "abs", "display", "range", "min", "max", "sum"}
_BUILTINS |= {"tuple", "list"}


def _identity(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    return t


def _transpose_handler(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    dims = [a for a in args] + [kwargs.pop(k) for k in ("dim0", "dim1") if k in kwargs]
    if not dims:  # t() / torch.t(x): a matrix's two dims
        return w.transpose(t, node)
    if len(dims) != 2 or not all(_is_int(d) for d in dims):
        w.refuse(node, "transpose needs two integer dims")
    return w.add("transpose", [t], {"dim0": int(dims[0]), "dim1": int(dims[1])}, node)


def _select_handler(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    dim = kwargs.pop("dim", args[0] if args else None)
    index = kwargs.pop("index", args[1] if len(args) > 1 else None)
    if not (_is_int(dim) and _is_int(index)):
        w.refuse(node, "select takes an integer dim and index")
    return w.add("select", [t], {"dim": dim, "index": index}, node)


def _shape_after(w: _Walker, t: _T, op: str, args: list, kwargs: dict, node: ast.Call) -> tuple:
    """The shape squeeze/unsqueeze/flatten give, for writing them as a reshape."""
    shape = list(w.nodes[t.id].value.shape)
    if op == "flatten":
        start = kwargs.pop("start_dim", args[0] if args else 0)
        end = kwargs.pop("end_dim", args[1] if len(args) > 1 else -1)
        nd = max(len(shape), 1)
        if not (_is_int(start) and _is_int(end)) or not (-nd <= start < nd and -nd <= end < nd):
            w.refuse(node, "flatten: dims out of range")
        start, end = start % nd, end % nd
        if not shape:
            return (1,)
        return (*shape[:start], math.prod(shape[start : end + 1]), *shape[end + 1 :])
    dim = kwargs.pop("dim", args[0] if args else None)
    if op == "unsqueeze":
        if not _is_int(dim) or not -len(shape) - 1 <= dim <= len(shape):
            w.refuse(node, "unsqueeze: dim out of range")
        dim %= len(shape) + 1
        return (*shape[:dim], 1, *shape[dim:])
    if dim is None:
        return tuple(n for n in shape if n != 1)
    if not _is_int(dim) or not -max(len(shape), 1) <= dim < max(len(shape), 1):
        w.refuse(node, "squeeze: dim out of range")
    if not shape:
        return ()
    dim %= len(shape)
    return tuple(n for k, n in enumerate(shape) if k != dim or n != 1)


def _reshaping(op: str) -> Callable[[_Walker, _T, list, dict, ast.Call], _T]:
    """squeeze/unsqueeze/flatten as a reshape, for when the table has no op of that name."""

    def handler(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
        return w.reshape_to(t, _shape_after(w, t, op, args, kwargs, node), node, op)

    return handler


_HANDLERS: dict[str, Callable[[_Walker, _T, list, dict, ast.Call], Any]] = {
    "transpose": _transpose_handler,
    "select": _select_handler,
    "sum": lambda w, t, a, k, n: w.reduction("sum", t, a, k, n),
    "mean": lambda w, t, a, k, n: w.reduction("mean", t, a, k, n),
    "reshape": lambda w, t, a, k, n: w.reshape(t, a, k, n),
    "max": lambda w, t, a, k, n: w.extreme("max", t, a, k, n),
    "min": lambda w, t, a, k, n: w.extreme("min", t, a, k, n),
    "logsumexp": lambda w, t, a, k, n: w.logsumexp(t, a, k, n),
}

#: Methods that change nothing the graph records (dtype, device, copies), and detach.
_PASS_THROUGH: dict[str, Callable[[_Walker, _T, list, dict, ast.Call], Any]] = {
    **{m: _identity for m in ("float", "double", "clone", "contiguous", "to", "cpu")},
    "detach": lambda w, t, a, k, n: w.detach(t, n),
    "squeeze": _reshaping("squeeze"),
    "unsqueeze": _reshaping("unsqueeze"),
    "flatten": _reshaping("flatten"),
}


# --------------------------------------------------------------------------- composites


def _composite(name: str, how: str) -> Callable[[Callable], Callable]:
    """Register ``name`` as written with existing ops (used only when the table lacks it)."""

    def register(build: Callable) -> Callable:
        def handler(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
            w.note(node, f"{name} written with the op table's ops: {how}")
            return build(w, t, args, kwargs, node)

        _COMPOSITES[name] = handler
        return build

    return register


_COMPOSITES: dict[str, Callable[[_Walker, _T, list, dict, ast.Call], _T]] = {}


def _dim_arg(w: _Walker, args: list, kwargs: dict, node: ast.Call, what: str) -> int:
    dim = kwargs.pop("dim", args[0] if args else None)
    if not _is_int(dim):
        w.refuse(node, f"{what} needs an integer dim")
    return dim


@_composite("sqrt", "x ** 0.5")
def _sqrt(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    return w.add("pow", [t, w.constant(0.5, node)], None, node)


@_composite("square", "x ** 2")
def _square(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    return w.add("pow", [t, w.constant(2.0, node)], None, node)


@_composite("softmax", "exp(x) / sum(exp(x), dim, keepdim=True)")
def _softmax(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    dim = _dim_arg(w, args, kwargs, node, "softmax")
    e = w.add("exp", [t], None, node)
    s = w.add("sum", [e], {"dim": dim, "keepdim": True}, node)
    return w.add("div", [e, s], None, node)


@_composite("log_softmax", "x - log(sum(exp(x), dim, keepdim=True))")
def _log_softmax(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    dim = _dim_arg(w, args, kwargs, node, "log_softmax")
    e = w.add("exp", [t], None, node)
    s = w.add("sum", [e], {"dim": dim, "keepdim": True}, node)
    return w.add("sub", [t, w.add("log", [s], None, node)], None, node)


@_composite("linear", "x @ W.T + b")
def _linear(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    weight = kwargs.pop("weight", args[0] if args else None)
    bias = kwargs.pop("bias", args[1] if len(args) > 1 else None)
    if not isinstance(weight, _T):
        w.refuse(node, "linear needs a weight tensor")
    out = w.add("matmul", [t, w.transpose(weight, node)], None, node)
    if bias is not None:
        out = w.add("add", [out, w.as_tensor(bias, node)], None, node)
    return out


def _reduce_loss(w: _Walker, t: _T, kwargs: dict, node: ast.Call) -> _T:
    reduction = kwargs.pop("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        w.refuse(node, f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if kwargs:
        w.refuse(node, f"unsupported argument {next(iter(kwargs))!r}")
    if reduction == "none":
        return t
    return w.add(reduction, [t], {"dim": None, "keepdim": False}, node)


@_composite("mse_loss", "mean((input - target) ** 2)")
def _mse_loss(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    target = kwargs.pop("target", args[0] if args else None)
    d = w.add("sub", [t, w.as_tensor(target, node)], None, node)
    return _reduce_loss(w, w.add("pow", [d, w.constant(2.0, node)], None, node), kwargs, node)


@_composite("binary_cross_entropy", "-mean(y·log p + (1 - y)·log(1 - p))")
def _bce(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    target = w.as_tensor(kwargs.pop("target", args[0] if args else None), node)
    one = w.constant(1.0, node)
    pos = w.add("mul", [target, w.add("log", [t], None, node)], None, node)
    q = w.add("log", [w.add("sub", [one, t], None, node)], None, node)
    neg = w.add("mul", [w.add("sub", [one, target], None, node), q], None, node)
    loss = w.add("neg", [w.add("add", [pos, neg], None, node)], None, node)
    return _reduce_loss(w, loss, kwargs, node)


@_composite("binary_cross_entropy_with_logits", "binary_cross_entropy(sigmoid(x), y)")
def _bce_logits(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    p = w.add("sigmoid", [t], None, node)
    bce = "torch.nn.functional.binary_cross_entropy"
    return w.call_method(p, "binary_cross_entropy", args, kwargs, node, bce)


@_composite("cross_entropy", "-mean(sum(target · log_softmax(x, dim=1), dim=1))")
def _cross_entropy(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
    target = w.as_tensor(kwargs.pop("target", args[0] if args else None), node)
    x = w.nodes[t.id].value
    y = w.nodes[target.id]
    if x.ndim != 2:
        w.refuse(node, "cross_entropy is supported for (batch, classes) inputs")
    if y.value.shape != x.shape:  # class indices: one-hot rows, a const
        if y.value.shape != x.shape[:1] or y.requires_grad:
            w.refuse(node, "cross_entropy needs class indices of shape (batch,) or probabilities")
        classes = y.value.astype(int)
        if classes.min(initial=0) < 0 or classes.max(initial=0) >= x.shape[1]:
            w.refuse(node, "cross_entropy: a class index is out of range")
        target = w.leaf(np.eye(x.shape[1])[classes], None, node, f"{target.id}_one_hot", y.random)
    log_p = w.call_method(t, "log_softmax", [1], {}, node)
    picked = w.add("sum", [w.add("mul", [target, log_p], None, node)], {"dim": 1}, node)
    return _reduce_loss(w, w.add("neg", [picked], None, node), kwargs, node)


def _loss_handler(name: str) -> Callable[[_Walker, _T, list, dict, ast.Call], _T]:
    """A loss the table has as one op: that op for PyTorch's default mean over a target
    that fits it; the composite above for other reductions or class-index targets."""

    def handler(w: _Walker, t: _T, args: list, kwargs: dict, node: ast.Call) -> _T:
        target = kwargs.get("target", args[0] if args else None)
        plain = kwargs.get("reduction", "mean") == "mean" and len(args) <= 1
        plain = plain and set(kwargs) <= {"target", "reduction"} and isinstance(target, _T)
        if plain:
            shapes = [w.nodes[t.id].value.shape, w.nodes[target.id].value.shape]
            try:
                OPS[name].check(shapes, {})
            except OpShapeError:
                plain = False
        if not plain:
            return _COMPOSITES[name](w, t, args, kwargs, node)
        return w.add(name, [t, target], None, node)

    return handler


for _loss in ("mse_loss", "binary_cross_entropy", "cross_entropy"):
    _HANDLERS[_loss] = _loss_handler(_loss)


# =========================================================================== small helpers


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _all_ints(v: Any) -> bool:
    if isinstance(v, tuple | list):
        return all(_all_ints(x) for x in v)
    return _is_int(v)


def _holds_tensors(v: Any) -> bool:
    if isinstance(v, _T):
        return True
    return isinstance(v, tuple | list) and any(_holds_tensors(x) for x in v)


def _number_name(v: float) -> str:
    if v.is_integer() and 0 <= v < len(_NUMBER_WORDS):
        return _NUMBER_WORDS[int(v)]
    if v == 0.5:
        return "half"
    text = repr(v).replace("-", "minus_").replace(".", "_").replace("+", "")
    return "c_" + re.sub(r"\W", "_", text)


def _derived_name(op: str, inputs: list[str], attrs: dict[str, Any]) -> str:
    """A readable id for an unnamed intermediate: ``x_sq``, ``a_times_b``, ``sum_y``."""
    words = {"add": "plus", "sub": "minus", "mul": "times", "div": "over", "matmul": "at"}
    if op == "pow" and len(inputs) == 2 and inputs[1] in ("two", "three"):
        return f"{inputs[0]}_{'sq' if inputs[1] == 'two' else 'cube'}"
    if op in words and len(inputs) == 2:
        return f"{inputs[0]}_{words[op]}_{inputs[1]}"
    if op == "transpose":
        return f"{inputs[0]}_T"
    if op == "stack":
        return "stack"
    if len(inputs) == 1:
        return f"{op}_{inputs[0]}"
    return op


def _number_op(op: ast.operator, a: Any, b: Any, where: ast.AST, w: _Walker) -> Any:
    """Arithmetic on plain numbers (sizes, scale factors), guarded against huge results."""
    try:
        if isinstance(op, ast.Add):
            out = a + b
        elif isinstance(op, ast.Sub):
            out = a - b
        elif isinstance(op, ast.Mult):
            out = a * b
        elif isinstance(op, ast.Div):
            out = a / b
        elif isinstance(op, ast.FloorDiv):
            out = a // b
        elif isinstance(op, ast.Mod):
            out = a % b
        elif isinstance(op, ast.Pow):
            if _is_int(a) and _is_int(b) and (b > 64 or b < 0):
                out = float(a) ** float(b)
            else:
                out = a**b
        else:
            w.refuse(where, f"{_construct(where)} is outside the supported subset")
    except (ZeroDivisionError, OverflowError) as exc:
        w.refuse(where, f"arithmetic error: {exc}")
    if isinstance(out, complex):
        w.refuse(where, "a complex number is outside the supported subset")
    if _is_int(out) and abs(out) >= 2**63:
        w.refuse(where, "an integer this large is outside the supported subset")
    return out


def _builtin_float(w: _Walker, args: list, kwargs: dict, node: ast.Call) -> float:
    if len(args) == 1 and isinstance(args[0], str):
        text = args[0].strip().lower()
        if text in ("nan", "inf", "+inf", "-inf", "infinity", "-infinity"):
            return float(text)
    if len(args) == 1 and _is_number(args[0]):
        return float(args[0])
    w.refuse(node, "float(...) takes a number or 'nan'/'inf'")


def _builtin_int(w: _Walker, args: list, kwargs: dict, node: ast.Call) -> int:
    if len(args) == 1 and _is_number(args[0]) and math.isfinite(args[0]):
        return int(args[0])
    w.refuse(node, "int(...) takes a finite number")


def _builtin_len(w: _Walker, args: list, kwargs: dict, node: ast.Call) -> int:
    if len(args) == 1 and isinstance(args[0], tuple | list):
        return len(args[0])
    if len(args) == 1 and isinstance(args[0], _T):
        shape = w.nodes[args[0].id].value.shape
        if shape:
            return shape[0]
    w.refuse(node, "len(...) takes a list or a tensor with at least one dim")


def _math(fn: Callable[[float], float]) -> Callable[[_Walker, list, dict, ast.Call], float]:
    def call(w: _Walker, args: list, kwargs: dict, node: ast.Call) -> float:
        if len(args) != 1 or not _is_number(args[0]):
            w.refuse(node, "math functions take one number here")
        try:
            return fn(args[0])
        except (ValueError, OverflowError) as exc:
            w.refuse(node, f"math error: {exc}")

    return call


def _tensor_builtin(op: str) -> Callable[[_Walker, list, dict, ast.Call], Any]:
    def call(w: _Walker, args: list, kwargs: dict, node: ast.Call) -> Any:
        if len(args) == 1 and isinstance(args[0], _T):
            return w.call_method(args[0], op, [], kwargs, node)
        w.refuse(node, f"{op}(...) takes one tensor here")

    return call


def _builtin_range(w: _Walker, args: list, kwargs: dict, node: ast.Call) -> _Range:
    if len(args) != 1 or kwargs or not _is_int(args[0]) or not 0 <= args[0] <= 64:
        w.refuse(node, "range(...) is supported only as tuple(range(x.ndim)) for dims")
    return _Range(args[0])


def _all_dims(as_list: bool) -> Callable[[_Walker, list, dict, ast.Call], _AllDims]:
    def build(w: _Walker, args: list, kwargs: dict, node: ast.Call) -> _AllDims:
        if len(args) != 1 or kwargs or not isinstance(args[0], _Range):
            w.refuse(node, "tuple(...)/list(...) are supported only around range(x.ndim)")
        return _AllDims(args[0].n, as_list)

    return build


_BUILTIN_FUNCTIONS: dict[str, Callable[[_Walker, list, dict, ast.Call], Any]] = {
    "range": _builtin_range,
    "tuple": _all_dims(as_list=False),
    "list": _all_dims(as_list=True),
    "float": _builtin_float,
    "int": _builtin_int,
    "len": _builtin_len,
    "abs": _tensor_builtin("abs"),
    "math.sqrt": _math(math.sqrt),
    "math.exp": _math(math.exp),
    "math.log": _math(math.log),
    "math.sin": _math(math.sin),
    "math.cos": _math(math.cos),
    "math.tanh": _math(math.tanh),
    "numpy.sqrt": _math(math.sqrt),
    "numpy.exp": _math(math.exp),
    "numpy.log": _math(math.log),
}


def _canonical(path: str) -> str:
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


def _known_callable(path: str) -> bool:
    return _canonical(path) in _BUILTIN_FUNCTIONS or path.startswith("torch")


def _is_plot(path: str | None) -> bool:
    if path is None:
        return False
    return path.split(".")[0] in _PLOT_MODULES or path.startswith("plt.")


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


def _construct(node: ast.AST) -> str:
    names = {
        "Lambda": "a lambda",
        "ListComp": "a list comprehension",
        "DictComp": "a dict comprehension",
        "SetComp": "a set comprehension",
        "GeneratorExp": "a generator expression",
        "IfExp": "a conditional expression",
        "Compare": "a comparison",
        "BoolOp": "and/or",
        "Dict": "a dict",
        "Set": "a set",
        "JoinedStr": "an f-string",
        "NamedExpr": "the := operator",
        "Starred": "a starred expression",
        "BinOp": "this operator",
    }
    return names.get(type(node).__name__, type(node).__name__)


def _describe(value: Any) -> str:
    if isinstance(value, _T):
        return f"tensor {value.id!r}"
    if isinstance(value, _Module):
        return value.path
    if isinstance(value, _Method):
        return f"method .{value.name}"
    if isinstance(value, _Indices):
        return "the indices of max/min (integers without a gradient)"
    if isinstance(value, _ValuesIndices):
        return "(values, indices) of max/min: read .values"
    if value is None:
        return "None"
    return type(value).__name__


def python_name_ok(name: str) -> bool:
    """True when ``name`` can be a variable in the script as it is."""
    return name.isidentifier() and not keyword.iskeyword(name)


__all__ = ["CodeError", "ID_COMMENT", "Imported", "MAX_NODES", "import_code", "python_name_ok"]
