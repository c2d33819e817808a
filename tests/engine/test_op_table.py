"""The op table is the one place that knows an op: the schema file, attribute
validation and the format's documentation agree with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import schema_validator
from engine.ops import OPS, generate, ops_in, validate_attrs
from engine.ops.record import ATTR_KINDS, CATEGORIES


@pytest.mark.parametrize("path", [generate.SCHEMA_PATH, generate.DOC_PATH], ids=lambda p: p.name)
def test_the_mirrors_are_the_generators_output(path: Path) -> None:
    """The schema file and the docs' op table are written from the table, never by hand."""
    checked_in = path.read_text(encoding="utf-8")
    expected = (
        generate.schema_text() if path == generate.SCHEMA_PATH else generate.doc_text(checked_in)
    )
    assert checked_in == expected, f"{path.name} is out of date: run `{generate.COMMAND}`"


def test_the_schema_uses_the_derived_defs() -> None:
    defs = schema_validator.schema()["$defs"]
    assert {"$ref": "#/$defs/opAttrs"} in defs["node"]["allOf"]
    assert defs["node"]["allOf"][0]["if"]["properties"]["op"] == {"$ref": "#/$defs/leafOp"}
    assert schema_validator.SCHEMA_PATH == generate.SCHEMA_PATH


def test_every_attribute_has_a_known_kind_and_a_valid_default() -> None:
    for op in OPS.values():
        names = [a.name for a in op.attrs]
        assert len(names) == len(set(names)), op.name
        for attr in op.attrs:
            assert attr.kind in ATTR_KINDS and attr.help, (op.name, attr.name)
            assert attr.problem(attr.default) is None, (op.name, attr.name)
        assert validate_attrs(op.name, {}) == op.defaults


@pytest.mark.parametrize(
    "op,attrs,words",
    [
        ("sum", {"dim": "0"}, "'dim' must be null, an integer or a list of integers"),
        ("sum", {"keepdim": 1}, "'keepdim' must be true or false"),
        ("select", {"index": True}, "'index' must be an integer"),
        ("select", {"dim": 65}, "'dim' must be from -64 to 64, got 65"),
        ("reshape", {"shape": [1.5]}, "'shape' must be a list of integers"),
        ("tanh", {"dim": 0}, "tanh has no attribute 'dim'"),
        ("input", {"dim": 0}, "input has no attribute 'dim'"),
    ],
)
def test_validate_attrs_reads_the_specs(op: str, attrs: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        validate_attrs(op, attrs)


@pytest.mark.parametrize("op", [n for n, o in OPS.items() if o.attrs])
def test_the_schema_refuses_a_wrong_attribute_type(op: str) -> None:
    attr = OPS[op].attrs[0]
    doc = {
        "format": "backprop-studio-graph",
        "version": 1,
        "nodes": [{"id": "y", "op": op, "inputs": ["x"], "attrs": {attr.name: "text"}}],
    }
    issue = schema_validator.validate_schema(doc)
    assert issue is not None and issue.path == ("nodes", 0, "attrs", attr.name)
    assert issue.title == ATTR_KINDS[attr.kind].want


def test_the_table_runs_in_palette_order() -> None:
    """Families are assembled in palette order, so the palette, quick search and the
    schema's op list all read the table top to bottom by category."""
    ranks = [CATEGORIES.index(op.category) for op in OPS.values()]
    assert ranks == sorted(ranks)
    assert all(ops_in(c) for c in CATEGORIES)


@pytest.mark.parametrize("op", [n for n, o in OPS.items() if o.kinks is not None])
def test_a_records_kinks_are_what_gradcheck_reports(op: str) -> None:
    """gradcheck reads where an op has no derivative from its record, nowhere else."""
    from engine.gradcheck import node_kinks

    kinks = OPS[op].kinks
    assert kinks is not None
    at_kink = [np.zeros(3), np.full(3, 0.5)] if OPS[op].arity == 2 else [np.zeros(3)]
    if op == "div":
        at_kink = [np.ones(3), np.zeros(3)]
    if op in ("maximum", "minimum"):  # a tie
        at_kink = [np.zeros(3), np.zeros(3)]
    words = node_kinks(op, at_kink)
    assert words == f"{kinks.words}; 3 elements sit there"
    away = [np.array([2.0, 3.0, 4.0]), np.array([5.0, 6.0, 7.0])]  # no zero, no tie
    assert node_kinks(op, away[: len(at_kink)]) is None


def test_a_tie_for_the_max_is_a_kink_per_slice() -> None:
    """max/min over a dim: only elements tying for their own slice's extreme."""
    from engine.gradcheck import node_kinks

    x = np.array([[1.0, 1.0, 0.0], [2.0, 0.0, 0.0]])
    assert node_kinks("max", [x], {"dim": 1}) is not None  # row 0 ties at 1
    assert node_kinks("max", [x], {"dim": None}) is None  # 2 is alone
    assert "2 elements" in (node_kinks("min", [x], {"dim": 1}) or "")  # row 1 ties at 0
    assert node_kinks("max", [x[1:]], {"dim": 1}) is None


@pytest.mark.parametrize(
    "op, attr", [(op.name, a.name) for op in OPS.values() for a in op.attrs], ids=str
)
def test_each_attribute_kinds_strategy_draws_values_of_that_kind(op: str, attr: str) -> None:
    """The random-graph tests draw attributes from the kind's strategy: every draw is a
    value of the kind (the schema's type), and some draws are valid for the record."""
    from hypothesis import find, given, settings
    from hypothesis import strategies as st

    spec = OPS[op].attr(attr)
    kind = ATTR_KINDS[spec.kind]

    @settings(max_examples=10, deadline=None, database=None)
    @given(value=st.sampled_from([(2, 3), (), (3,)]).flatmap(spec.strategy))
    def drawn(value: object) -> None:
        assert kind.accepts(value), value

    drawn()
    assert spec.problem(find(spec.strategy((2, 3)), lambda v: spec.problem(v) is None)) is None
