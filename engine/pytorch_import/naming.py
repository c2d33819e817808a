"""Node ids an import gives: readable words for numbers and for unnamed intermediates."""

from __future__ import annotations

import re
from typing import Any

_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_WORDS = {"add": "plus", "sub": "minus", "mul": "times", "div": "over", "matmul": "at"}


def number_name(v: float) -> str:
    """``two`` for 2.0, ``half`` for 0.5, ``c_0_1`` for 0.1: a literal's const node id."""
    if v.is_integer() and 0 <= v < len(_NUMBER_WORDS):
        return _NUMBER_WORDS[int(v)]
    if v == 0.5:
        return "half"
    text = repr(v).replace("-", "minus_").replace(".", "_").replace("+", "")
    return "c_" + re.sub(r"\W", "_", text)


def derived_name(op: str, inputs: list[str], attrs: dict[str, Any]) -> str:
    """A readable id for an unnamed intermediate: ``x_sq``, ``a_times_b``, ``sum_y``."""
    if op == "pow" and len(inputs) == 2 and inputs[1] in ("two", "three"):
        return f"{inputs[0]}_{'sq' if inputs[1] == 'two' else 'cube'}"
    if op in _WORDS and len(inputs) == 2:
        return f"{inputs[0]}_{_WORDS[op]}_{inputs[1]}"
    if op == "transpose":
        return f"{inputs[0]}_T"
    if op == "stack":
        return "stack"
    if len(inputs) == 1:
        return f"{op}_{inputs[0]}"
    return op
