"""What an op record is: :class:`Op`, its attribute specs (:class:`Attr`, :data:`ATTR_KINDS`),
the palette categories and the shape error every ``check`` raises."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import attr_strategies as draws

Array = np.ndarray


Shape = tuple[int, ...]


Attrs = dict[str, Any]


Forward = Callable[[Sequence[Array], Attrs], Array]


Vjp = Callable[[int, Array, Sequence[Array], Array, Attrs], Array]


Jvp = Callable[[Sequence["Array | None"], Sequence[Array], Array, Attrs], Array]


Check = Callable[[Sequence[Shape], Attrs], Shape]


Title = Callable[[Sequence[str], Attrs], str]


Words = Callable[[int, Sequence[Shape], Shape, Attrs], str]


CATEGORIES = (
    "Leaves",
    "Arithmetic",
    "Elementwise functions",
    "Reductions",
    "Linear algebra",
    "Shape",
    "Losses",
)


class OpShapeError(ValueError):
    """Raised by an op's ``check`` with a message that names the shapes involved."""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_bool_tensor(v: Any) -> bool:
    """true/false, or a non-empty rectangular nested list of them."""
    if isinstance(v, bool):
        return True
    if not isinstance(v, list) or not v:
        return False
    try:
        return np.array(v).dtype == np.bool_
    except ValueError:  # ragged
        return False


def parse_int_list(text: str, allow_none: bool) -> int | list[int] | None:
    """``""``/``None`` -> None, ``"1"`` -> 1, ``"0, 1"`` or ``"[0, 1]"`` -> [0, 1].

    Raises ValueError with a message a student can act on.
    """
    bracketed = text.strip().startswith(("[", "("))
    cleaned = text.strip().strip("[]()").strip()
    if not cleaned or cleaned.lower() == "none":
        if allow_none:
            return None
        raise ValueError("give a list of integers such as 2, 3")
    parts = [p.strip() for p in cleaned.replace(";", ",").split(",") if p.strip()]
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not an integer or a list of integers") from None
    if allow_none and len(numbers) == 1 and "," not in cleaned and not bracketed:
        return numbers[0]
    return numbers


def _parse_int_or_null(text: str) -> int | None:
    value = parse_int_list(text, allow_none=True)
    if isinstance(value, list):
        raise ValueError("give one integer, or nothing for all elements")
    return value


def _parse_number_or_null(text: str) -> float | None:
    cleaned = text.strip()
    if not cleaned or cleaned.lower() == "none":
        return None
    try:
        return float(cleaned)
    except ValueError:
        raise ValueError(f"{cleaned!r} is not a number") from None


def _parse_number(text: str) -> float:
    value = _parse_number_or_null(text)
    if value is None:
        raise ValueError("give a number")
    return value


def _parse_bools(text: str) -> Any:
    try:
        value = json.loads(text.strip().replace("True", "true").replace("False", "false"))
    except ValueError:
        raise ValueError("give true/false or a nested list of them, e.g. [true, false]") from None
    return _as_bools(value)


def _as_bools(value: Any) -> Any:
    if isinstance(value, list):
        return [_as_bools(v) for v in value]
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise ValueError(f"{value!r} is not true or false")


def _parse_bool(text: str) -> bool:
    cleaned = text.strip().lower()
    if cleaned not in ("true", "false"):
        raise ValueError(f"{text.strip()!r} is not true or false")
    return cleaned == "true"


def _parse_int(text: str) -> int:
    value = parse_int_list(text, allow_none=False)
    if isinstance(value, list) and len(value) == 1 and not text.strip().startswith(("[", "(")):
        return value[0]
    raise ValueError(f"{text.strip()!r} is not one integer")


_INT = {"type": "integer"}


_INTS = {"type": "array", "items": {"title": "an integer", "type": "integer"}}


@dataclass(frozen=True)
class AttrKind:
    """Everything about one kind of attribute value, asked by the loader, the schema and
    the inspector: a test (``accepts``), the words for an error (``want``), its JSON
    schema, how typed text becomes a value (``parse``; ValueError says why not), what
    an empty line edit suggests (``placeholder``), what a random-graph test draws
    (``strategy(attr, shape)``: a hypothesis strategy, :mod:`.attr_strategies`) and
    whether a non-finite float is saved as "NaN"/"Infinity" (``floats``). Values are
    JSON as they are."""

    want: str
    accepts: Callable[[Any], bool]
    schema: dict[str, Any]
    parse: Callable[[str], Any]
    strategy: Callable[[Attr, Shape], Any]
    placeholder: str = ""
    floats: bool = False


ATTR_KINDS: dict[str, AttrKind] = {
    "int": AttrKind("an integer", _is_int, _INT, _parse_int, draws.integer),
    "int-or-null": AttrKind(
        "null or an integer",
        lambda v: v is None or _is_int(v),
        {"anyOf": [{"type": "null"}, _INT]},
        _parse_int_or_null,
        draws.integer_or_null,
        "all elements (None)",
    ),
    "int-or-list": AttrKind(
        "null, an integer or a list of integers",
        lambda v: v is None or _is_int(v) or (isinstance(v, list) and all(map(_is_int, v))),
        {"anyOf": [{"type": "null"}, _INT, {"type": "array", "items": _INT}]},
        lambda text: parse_int_list(text, allow_none=True),
        draws.dims,
        "all dims (None)",
    ),
    "bool": AttrKind(
        "true or false",
        lambda v: isinstance(v, bool),
        {"type": "boolean"},
        _parse_bool,
        draws.boolean,
    ),
    "shape": AttrKind(
        "a list of integers",
        lambda v: isinstance(v, list) and all(map(_is_int, v)),
        _INTS,
        lambda text: parse_int_list(text, allow_none=False),
        draws.target_shape,
        "e.g. 2, 3 or -1",
    ),
    "number": AttrKind(
        "a number",
        _is_number,
        {"type": "number"},
        _parse_number,
        draws.number,
        "a number",
        floats=True,
    ),
    "number-or-null": AttrKind(
        "null or a number",
        lambda v: v is None or _is_number(v),
        {"anyOf": [{"type": "null"}, {"type": "number"}]},
        _parse_number_or_null,
        draws.number_or_null,
        "no bound (None)",
        floats=True,
    ),
    "bool-tensor": AttrKind(
        "true, false or a nested list of them",
        _is_bool_tensor,
        {"$ref": "#/$defs/boolTensor"},
        _parse_bools,
        draws.bool_tensor,
        "e.g. [true, false]",
    ),
}


@dataclass(frozen=True)
class Attr:
    """One attribute of an op: its name, kind (a key of :data:`ATTR_KINDS`), default,
    allowed integer range (``low``/``high``, inclusive, None: unbounded) and the
    one-line help a student sees next to its widget."""

    name: str
    kind: str
    default: Any
    help: str = ""
    low: int | None = None
    high: int | None = None

    def strategy(self, shape: Shape) -> Any:
        """A hypothesis strategy of values for an operand of ``shape`` (its kind's)."""
        return ATTR_KINDS[self.kind].strategy(self, shape)

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not a valid value of this attribute (None: it is)."""
        kind = ATTR_KINDS[self.kind]
        if not kind.accepts(value):
            return f"attribute {self.name!r} must be {kind.want}, got {value!r}"
        low = self.low if self.low is not None else -np.inf
        high = self.high if self.high is not None else np.inf
        if _is_int(value) and not low <= value <= high:
            return f"attribute {self.name!r} must be from {self.low} to {self.high}, got {value}"
        return None


DIM_RANGE = {"low": -64, "high": 64}


DIM_HELP = "Negative values count from the end, as in PyTorch"


DIMS_HELP = "Empty for all dims, an integer, or a list such as 0, 1"


KEEPDIM = Attr("keepdim", "bool", False, "Keep the reduced dims as size 1")


@dataclass(frozen=True)
class Kinks:
    """Where an op has no derivative (the engine uses PyTorch's value there): ``where``
    maps the operands and the node's attributes to a mask of such elements, ``words``
    says why, for gradcheck."""

    where: Callable[[list[np.ndarray], Attrs], np.ndarray]
    words: str


def at_zero(operand: int, words: str) -> Kinks:
    """The kinks of an op with no derivative where operand ``operand`` is 0."""
    return Kinks(lambda xs, attrs: xs[operand] == 0.0, words)


@dataclass(frozen=True)
class Domain:
    """Where the op's values stay inside what numpy and PyTorch compute alike, for tests
    that draw random graphs: which operands must be positive (``positive``: log, sqrt,
    a base, a divisor) or in (0, 1) (``unit``: probabilities), and when the result is
    positive or in (0, 1): ``"always"``, ``"kept"`` (when every operand is) or
    ``"first"`` (when the first operand is; pow's base); None: not known to be."""

    positive: tuple[int, ...] = ()
    unit: tuple[int, ...] = ()
    gives_positive: str | None = None
    gives_unit: str | None = None

    def needs(self, operand: int) -> str | None:
        """``"positive"``, ``"unit"`` or None: what operand ``operand`` must be."""
        if operand in self.positive:
            return "positive"
        return "unit" if operand in self.unit else None

    def keeps(self, rule: str | None, operands: Sequence[bool]) -> bool:
        """Whether the result has the property ``rule`` grants, given the operands'."""
        if rule == "always":
            return True
        if rule == "kept":
            return all(operands)
        return rule == "first" and bool(operands) and operands[0]


#: The domain of an op that takes any real operands and promises nothing of its result.
ANYWHERE = Domain()

#: Positive operands give a positive result (sums, products, copies).
KEEPS_POSITIVE = Domain(gives_positive="kept")

#: Positive operands, or operands in (0, 1), give the same (selections, copies, means).
KEEPS_BOTH = Domain(gives_positive="kept", gives_unit="kept")


#: A PyTorch call as Python source, from the record, the operands' source and the
#: node's attributes (defaults filled in).
TorchCall = Callable[["Op", Sequence[str], Attrs], str]


@dataclass(frozen=True)
class TorchArgs:
    """How PyTorch passes the op's attributes where that is not the generic rule
    (operands first, then the attributes in the record's order, by name as keywords):
    ``order`` is the positional order, ``sizes`` an attribute PyTorch also takes as
    ``*sizes`` (``x.reshape(2, 3)``), ``ignored`` keywords that change nothing the graph
    records (``dtype``)."""

    order: tuple[str, ...] | None = None
    sizes: str | None = None
    ignored: tuple[str, ...] = ()


GENERIC_ARGS = TorchArgs()


@dataclass(frozen=True)
class Op:
    """One op: how to compute it, push a tangent forward, pull a gradient back.

    - ``arity``: operand count; None: variadic (at least one); 0: a leaf.
    - ``forward(xs, attrs)``: the value.
    - ``vjp(i, g, xs, out, attrs)``: the gradient with respect to operand ``i``
      given the upstream gradient ``g`` (shaped like ``out``).
    - ``jvp(tangents, xs, out, attrs)``: the output tangent ``J·t`` given one
      tangent per operand (None for an operand that carries none; all None gives
      zeros). For every op ``⟨u, Jᵀv⟩ = ⟨v, Ju⟩``, which the tests check.
    - ``check(shapes, attrs)``: the output shape, or :class:`OpShapeError`.
    - ``title(operand_names, attrs)``: how the node reads (``a + b``, ``sum(a)``).
    - ``jacobian_words(i, shapes, out_shape, attrs)``: the Jacobian's structure.
    - ``attrs``: the attribute specs, in display order.
    - ``torch``: the op's PyTorch spellings, for reading and writing PyTorch code:
      ``torch.X`` is a function (``torch.nn.functional.X`` spelled out),
      ``Tensor.X`` a method, and a bare symbol (``+``, ``@``, ``.T``, ``[]``) an
      operator. The first entry is the preferred spelling.
    - ``kinks``: where the derivative is undefined (None: nowhere), which gradcheck
      reports instead of calling a mismatch there a bug.
    - ``domain``: the operands' test domain (:class:`Domain`).
    - ``torch_args``: how PyTorch passes the attributes, read by the importer
      (:class:`TorchArgs`; the generic rule when left out).
    - ``torch_call``: the call as Python source when the generic rule
      (:func:`engine.ops.torch_source.expression`) does not write it; the script
      export writes it and the tests' PyTorch oracle runs it.
    """

    name: str
    arity: int | None
    category: str
    doc: str
    forward: Forward
    vjp: Vjp
    jvp: Jvp
    check: Check
    title: Title
    jacobian_words: Words
    attrs: tuple[Attr, ...] = ()
    torch: tuple[str, ...] = ()
    kinks: Kinks | None = None
    domain: Domain = ANYWHERE
    torch_args: TorchArgs = GENERIC_ARGS
    torch_call: TorchCall | None = None

    @property
    def is_leaf(self) -> bool:
        return self.arity == 0

    @property
    def defaults(self) -> Attrs:
        """Attribute name -> default value."""
        return {a.name: a.default for a in self.attrs}

    def attr(self, name: str) -> Attr:
        return next(a for a in self.attrs if a.name == name)
