"""THE op table: one record per op, forward, VJP and JVP side by side.

Everything that needs to know about an op reads :data:`OPS`, in the spirit of
HIPS autograd's ``defvjp`` and PyTorch's ``derivatives.yaml``: the engine, titles
on the canvas, the palette and quick search (category, description), the
inspector (one widget per attribute, chosen by the attribute's kind), the file
format (attribute validation here; the schema's op list and attribute rules and
the docs' op table, written by :mod:`.generate`), Jacobian descriptions, forward mode
(``jvp``), the PyTorch bridge (``torch``, ``torch_args``, ``torch_call``: the importer,
the script export and the tests' PyTorch oracle) and the random-graph tests
(``domain``). The leaves ``input`` and ``const``
are records too, with arity 0. Semantics follow PyTorch in float64,
broadcasting where PyTorch broadcasts.

The records live in one module per family (a palette category), built from the
shared pieces in :mod:`.build`; what a record holds is :mod:`.record`. Adding an op
means adding one record to its family's ``RECORDS`` (and its tests), then running
``python -m engine.ops.generate`` to rewrite the schema and the docs' op table:
nothing else lists ops.
"""

from __future__ import annotations

from . import arithmetic, elementwise, leaves, linalg, losses, reductions, shape, softmax
from .record import Attrs, Op

#: The families in palette order; a family's records keep their order.
_FAMILIES = (leaves, arithmetic, elementwise, softmax, reductions, linalg, shape, losses)

#: The table: op name -> record, the two leaf kinds first, then by category.
OPS: dict[str, Op] = {op.name: op for family in _FAMILIES for op in family.RECORDS}

#: Every op name a graph file may use: the two leaf kinds, then the primitives.
OP_NAMES: tuple[str, ...] = tuple(OPS)

#: The ops whose value is given, not computed (arity 0).
LEAF_OPS: tuple[str, ...] = tuple(name for name, op in OPS.items() if op.is_leaf)


def ops_in(category: str) -> list[str]:
    """Op names of one palette category, in table order."""
    return [op.name for op in OPS.values() if op.category == category]


def validate_attrs(op_name: str, attrs: Attrs) -> Attrs:
    """Return the op's full attrs (defaults filled in); raise ValueError on a bad one."""
    op = OPS.get(op_name)
    specs = {a.name: a for a in op.attrs} if op else {}
    unknown = sorted(set(attrs) - set(specs))
    if unknown:
        raise ValueError(f"{op_name} has no attribute {unknown[0]!r}")
    full = {**(op.defaults if op else {}), **attrs}
    for key, value in full.items():
        problem = specs[key].problem(value)
        if problem:
            raise ValueError(problem)
    return full

