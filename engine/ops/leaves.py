"""The leaves ``input`` and ``const``: records of arity 0 whose value the file gives."""

from __future__ import annotations

from typing import Any

from .record import Op


def _no_rule(*args: Any) -> Any:
    raise TypeError("a leaf has no rule: its value is given, not computed")


def _leaf(name: str, doc: str, formula: str) -> Op:
    """``input`` or ``const``: arity 0, its value given in the file, no rules."""
    return Op(
        name=name,
        arity=0,
        category="Leaves",
        doc=doc,
        forward=_no_rule,
        vjp=_no_rule,
        jvp=_no_rule,
        check=_no_rule,
        title=lambda a, attrs: formula,
        jacobian_words=_no_rule,
        torch=("torch.tensor",),
    )


RECORDS: tuple[Op, ...] = (
    _leaf("input", "A leaf tensor; requires grad unless switched off.", "requires_grad"),
    _leaf("const", "A constant tensor; never requires grad.", "constant"),
)
