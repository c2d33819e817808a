"""Expressions: names, literals, arithmetic, attributes, indexing and calls, each turned
into a value of :mod:`.values` or a node of the graph being built."""

from __future__ import annotations

import ast
import builtins
import math
from typing import Any

import numpy as np

from ..ops import OPS
from . import factories
from .core import Core
from .evaluator import BUILTIN_FUNCTIONS, number_op
from .handlers import COMPOSITES, HANDLERS, PASS_THROUGH, detach, reverse_dims, stack
from .spellings import (
    BUILTINS,
    DTYPES,
    FACTORIES,
    FUNCTIONS,
    LOSS_MODULES,
    METHODS,
    NUMPY_FACTORIES,
    OPERATOR_TEXT,
    SYMBOLS,
    canonical,
)
from .values import (
    COLON,
    Dtype,
    Indices,
    Loss,
    Method,
    Module,
    Slots,
    T,
    ValuesIndices,
    construct,
    describe,
    is_int,
    is_number,
)

_VARIABLE = ("torch.autograd.Variable", "torch.autograd.variable.Variable")
_MODULES = ("torch", "torch.nn.functional", "torch.special")


class Expressions(Core):
    """Evaluates expressions; the statements that use them are :class:`.walker.Walker`'s."""

    def expr(self, node: ast.expr) -> Any:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            self.refuse(node, f"{construct(node)} is outside the supported subset")
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
            if isinstance(value, Slots):
                return self.materialise(name, value)
            return value
        if name in BUILTINS:
            return Module(name)
        if name in vars(builtins):
            self.refuse(node, f"{name} is outside the supported subset")
        self.refuse(node, f"name {name!r} is not defined")

    def try_tensor(self, node: ast.expr) -> T | None:
        """The tensor a plain name refers to, without building anything."""
        if isinstance(node, ast.Name):
            value = self.vars.get(node.id)
            if isinstance(value, Slots):
                return self.materialise(node.id, value)
            return value if isinstance(value, T) else None
        return None

    def expr_Tuple(self, node: ast.Tuple) -> Any:
        return self.sequence([self.expr(e) for e in node.elts], node, as_list=False)

    def expr_List(self, node: ast.List) -> Any:
        return self.sequence([self.expr(e) for e in node.elts], node, as_list=True)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            if isinstance(value, T) and ("-", 1) in SYMBOLS:
                return self.add(SYMBOLS["-", 1], [value], None, node)
            if is_number(value):
                return -value
        if isinstance(node.op, ast.UAdd) and (is_number(value) or isinstance(value, T)):
            return value
        if isinstance(node.op, ast.Not) and isinstance(value, bool):
            return not value
        self.refuse(node, f"{construct(node)} is outside the supported subset")

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: ast.operator, a: Any, b: Any, where: ast.AST) -> Any:
        text = OPERATOR_TEXT.get(type(op), "?")
        name = SYMBOLS.get((text, 2))
        if isinstance(a, T) or isinstance(b, T):
            if name is None:
                self.refuse(where, f"the operator {text} on tensors is outside the subset")
            if name == "matmul" and not (isinstance(a, T) and isinstance(b, T)):
                self.refuse(where, "@ needs two tensors")
            return self.add(name, [self.as_tensor(a, where), self.as_tensor(b, where)], None, where)
        if is_number(a) and is_number(b):
            return number_op(op, a, b, where, self)
        for v in (a, b):
            if isinstance(v, ValuesIndices | Indices):
                self.refuse(where, f"{describe(v)} cannot take part in arithmetic")
        if isinstance(a, tuple | list) and type(a) is type(b) and isinstance(op, ast.Add):
            return self.concatenate(a, b, where)
        self.refuse(where, f"{construct(where)} on these values is outside the supported subset")

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        base = self.expr(node.value)
        attr = node.attr
        if isinstance(base, Module):
            path = f"{base.path}.{attr}"
            if path in DTYPES:
                return Dtype(path)
            if path in ("math.pi", "math.e"):
                return math.pi if attr == "pi" else math.e
            return Module(path)
        if isinstance(base, T):
            return self.tensor_attribute(base, node)
        if isinstance(base, ValuesIndices) and attr in ("values", "indices"):
            return getattr(base, attr)
        self.refuse(node, f"attribute .{attr} of {describe(base)} is outside the supported subset")

    def tensor_attribute(self, base: T, node: ast.Attribute) -> Any:
        n = self.nodes[base.id]
        attr = node.attr
        if attr == "T":
            return reverse_dims(self, base, node)
        if attr == "mT":  # a batch of matrices
            return self.add("transpose", [base], {"dim0": -2, "dim1": -1}, node)
        if attr == "shape":
            return tuple(int(d) for d in n.value.shape)
        if attr == "data":
            return detach(self, base, node)
        if attr == "requires_grad":
            return n.requires_grad
        if attr == "grad":
            self.refuse(node, ".grad is only there after backward(...)")
        if attr == "ndim":
            return n.value.ndim
        return Method(base, attr)

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
        if not isinstance(base, T):
            self.refuse(node, f"cannot index {describe(base)}")
        out, dim = base, 0
        for item in index:
            if item is COLON:
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
                out.append(COLON)
                continue
            value = self.expr(item)
            if not is_int(value):
                self.refuse(item, f"an index must be an integer or ':', got {describe(value)}")
            out.append(value)
        return out

    def expr_Call(self, node: ast.Call) -> Any:
        callee = self.expr(node.func)
        if isinstance(callee, Method):
            args, kwargs = self.arguments(node)
            return self.call_method(callee.target, callee.name, args, kwargs, node)
        if isinstance(callee, Module):
            return self.call_function(callee.path, node)
        if isinstance(callee, Loss):
            args, kwargs = self.arguments(node)
            if len(args) != 2 or not isinstance(args[0], T) or kwargs:
                self.refuse(node, "a loss module takes (input, target)")
            loss = f"torch.nn.functional.{callee.function}"
            extra = {"reduction": callee.reduction}
            return self.call_method(args[0], callee.function, [args[1]], extra, node, loss)
        self.refuse(node, f"{describe(callee)} is not callable")

    def arguments(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        args: list[Any] = []
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
        self.refuse(node, f"{construct(node)} is outside the supported subset")

    expr_Lambda = expr_ListComp = expr_DictComp = expr_SetComp = expr_GeneratorExp = unsupported
    expr_IfExp = expr_Compare = expr_BoolOp = expr_Dict = expr_Set = expr_JoinedStr = unsupported
    expr_NamedExpr = expr_Await = expr_Yield = expr_YieldFrom = expr_Starred = unsupported

    # ------------------------------------------------------------------ calls

    def call_function(self, path: str, node: ast.Call) -> Any:
        path = canonical(path)
        module, _, name = path.rpartition(".")
        special = self.special_call(path, module, name, node)
        if special is not None:
            return special
        if module not in _MODULES:
            self.refuse(node, f"{path}(...) is outside the supported subset")
        if path == "torch.where":
            return self.where(node)
        args, kwargs = self.arguments(node)
        op = FUNCTIONS.get(path)
        if name in ("amax", "amin"):  # over all dims only: over one, a tie splits as max's does not
            if args[1:] or set(kwargs) - {"dim"} or kwargs.pop("dim", ()) != ():
                self.refuse(node, f"{path} over a dim splits ties; write x.{name[1:]}(dim).values")
        if op == "stack":
            return stack(self, args, kwargs, node)
        if not args or not isinstance(args[0], T):
            self.refuse(node, f"{path}(...) needs a tensor as its first argument")
        if op is None:
            return self.fallback(name, args[0], args[1:], kwargs, node, f"{path}(...)")
        return self.apply(op, args[0], args[1:], kwargs, node)

    def special_call(self, path: str, module: str, name: str, node: ast.Call) -> Any:
        """Builtins, factories, ``Variable``, numpy arrays and loss modules; None otherwise."""
        if path == "torch.manual_seed":
            self.refuse(node, "torch.manual_seed(...) belongs on a line of its own")
        if path == "torch.autograd.grad":
            self.refuse(node, "torch.autograd.grad is outside the supported subset; use backward")
        known = (
            path in BUILTIN_FUNCTIONS
            or (module == "torch" and name in FACTORIES)
            or path in _VARIABLE + NUMPY_FACTORIES
            or path in LOSS_MODULES
        )
        if not known:
            return None
        args, kwargs = self.arguments(node)
        if path in BUILTIN_FUNCTIONS:
            return BUILTIN_FUNCTIONS[path](self, args, kwargs, node)
        if module == "torch" and name in FACTORIES:
            return factories.factory(self, name, args, kwargs, node)
        if path in _VARIABLE:
            return factories.variable(self, args, kwargs, node)
        if path in NUMPY_FACTORIES:
            return factories.numpy_factory(self, path, args, kwargs, node)
        if args or set(kwargs) - {"reduction"}:
            self.refuse(node, f"{path}: only reduction=... is supported")
        return Loss(LOSS_MODULES[path], kwargs.get("reduction", "mean"))

    def call_method(
        self,
        target: T,
        name: str,
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.Call,
        function: str | None = None,
    ) -> Any:
        """``target.name(...)``, or the function ``function(target, ...)`` when given."""
        op = FUNCTIONS.get(function) if function else METHODS.get(name)
        if op is None:
            spelled = f"{function}(...)" if function else f".{name}()"
            return self.fallback(name, target, args, kwargs, node, spelled)
        return self.apply(op, target, args, kwargs, node)

    def apply(
        self, op: str, target: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> Any:
        """An op of the table, its arguments read by its own handler or the generic one."""
        handler = HANDLERS.get(op)
        if handler is not None:
            return handler(self, target, args, kwargs, node)
        return self.generic(op, target, args, kwargs, node)

    def fallback(
        self,
        name: str,
        target: T,
        args: list[Any],
        kwargs: dict[str, Any],
        node: ast.Call,
        spelled: str,
    ) -> Any:
        """A spelling the table lacks: a composite of its ops, a pass-through, or a refusal."""
        if name in COMPOSITES:
            return COMPOSITES[name](self, target, args, kwargs, node)
        if name in PASS_THROUGH:
            return PASS_THROUGH[name](self, target, args, kwargs, node)
        if name == "random_" and self.nodes[target.id].op == "const" and self.made_here(target):
            return factories.fill_random_ints(self, target, args, node)
        if name.endswith("_") and name[:-1] in METHODS:
            self.refuse(node, f"in-place {spelled} inside an expression is outside the subset")
        self.refuse(node, f"{spelled}: the op table has no such op")

    def generic(
        self, op: str, target: T, args: list[Any], kwargs: dict[str, Any], node: ast.Call
    ) -> T:
        """An op in the table: tensors first (as many as its arity), then its attributes,
        in the order and with the ``*sizes`` and ignored keywords its record's
        ``torch_args`` gives."""
        spec = OPS[op]
        how = spec.torch_args
        operands = [target]
        rest = list(args)
        arity = spec.arity or 1
        while len(operands) < arity and rest:
            operands.append(self.as_tensor(rest.pop(0), node))
        if len(operands) < arity:
            self.refuse(node, f"{op} needs {arity} tensors, got {len(operands)}")
        one_sequence = len(rest) == 1 and isinstance(rest[0], tuple | list)
        if how.sizes is not None and rest and not one_sequence:
            rest = [rest]  # x.reshape(2, 3) is x.reshape((2, 3))
        names = list(how.order or [a.name for a in spec.attrs])
        if len(rest) > len(names):
            self.refuse(node, f"{op}: too many arguments")
        attrs = dict(zip(names, rest, strict=False))
        for key, value in kwargs.items():
            if (key in ("out", "inplace") and not value) or key in how.ignored:
                continue
            if key == "axis" and "dim" in names:
                key = "dim"
            if key not in names:
                self.refuse(node, f"{op}: unsupported keyword argument {key!r}")
            attrs[key] = value
        attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.items()}
        return self.add(op, operands, attrs, node)

    # ------------------------------------------------------------------ torch.where

    def where(self, node: ast.Call) -> T:
        """``torch.where(torch.tensor(<True/False literal>), a, b)``: the condition is read
        into the where op's constant attribute, never made a node."""
        cond = node.args[0] if len(node.args) == 3 and not node.keywords else None
        literal = None
        if isinstance(cond, ast.Call) and canonical(self.callee_path(cond.func) or "") in (
            "torch.tensor",
            "torch.as_tensor",
        ):
            dtype = [k for k in cond.keywords if k.arg == "dtype"]
            if len(cond.args) == 1 and len(dtype) == len(cond.keywords) <= 1:
                literal = self.expr(cond.args[0])
        if literal is None or cond is None:
            self.refuse(node, "torch.where needs torch.tensor(<True/False values>), a, b")
        condition = self.bool_literal(literal, cond)
        a, b = (self.as_tensor(self.expr(arg), arg) for arg in node.args[1:])
        return self.add("where", [a, b], {"condition": condition}, node)

    def bool_literal(self, value: Any, node: ast.AST) -> Any:
        """A bool or rectangular nested list of bools, as the where op's condition holds it."""

        def check(v: Any) -> None:
            if isinstance(v, tuple | list):
                for x in v:
                    check(x)
            elif not isinstance(v, bool):
                self.refuse(node, f"torch.where's condition must be True/False, got {describe(v)}")

        check(value)
        try:
            array = np.array(value, dtype=bool)
        except ValueError:
            self.refuse(node, "torch.where's condition: the nested lists are not rectangular")
        if array.dtype != bool or array.ndim != np.ndim(value):
            self.refuse(node, "torch.where's condition: the nested lists are not rectangular")
        self.reserve(array.size, node, "where")
        return array.tolist()
