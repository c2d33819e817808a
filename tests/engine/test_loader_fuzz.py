"""Fuzzing the loader: every input either loads or gives one FileFormatError line.

Three sources of input: random JSON (and random-but-plausible graph documents),
random mutations of the shipped examples, and damaged text (truncated, spliced).
Whatever loads must also be safe to use: strict loads run forward and backward
without a single error, and save/load round-trips them. Budget: a few seconds.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.autodiff import backward, forward
from engine.examples import EXAMPLES_DIR
from engine.fileformat import (
    SUFFIX,
    FileFormatError,
    GraphFile,
    dumps,
    loads,
)
from engine.ops import OP_NAMES
from engine.schema_validator import first_issue, schema, validate_schema

FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

EXAMPLE_DOCS = [
    json.loads(p.read_text(encoding="utf-8")) for p in sorted(EXAMPLES_DIR.glob(f"*{SUFFIX}"))
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "x", "y", "NaN", "Infinity", "-Infinity", "input", "add", "sum"]),
    st.text(max_size=5),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["id", "op", "inputs", "attrs", "value", "dim", "x", "output"]),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)

IDS = ["a", "b", "c", "d", "e", "f", "x"]
numbers = st.one_of(st.integers(-3, 3), st.floats(-3, 3), st.sampled_from(["NaN", "Infinity"]))
tensors = st.one_of(
    numbers,
    st.lists(numbers, max_size=3),
    st.lists(st.lists(numbers, min_size=2, max_size=2), min_size=1, max_size=3),
    st.lists(st.one_of(numbers, st.lists(numbers, max_size=2)), max_size=3),  # often ragged
)
junk_attrs = st.dictionaries(
    st.sampled_from(["dim", "keepdim", "index", "shape", "axis"]),
    st.one_of(
        st.integers(-3, 3),
        st.booleans(),
        st.none(),
        st.lists(st.integers(-2, 4), max_size=3),
        st.just(10**30),
    ),
    max_size=2,
)
small = st.integers(-2, 2)
OP_ATTRS = {
    "sum": st.fixed_dictionaries(
        {}, optional={"dim": st.one_of(st.none(), small), "keepdim": st.booleans()}
    ),
    "stack": st.fixed_dictionaries({}, optional={"dim": small}),
    "select": st.fixed_dictionaries({}, optional={"dim": small, "index": small}),
    "reshape": st.fixed_dictionaries(
        {"shape": st.lists(st.sampled_from([-1, 1, 2, 3, 4]), max_size=3)}
    ),
}
OP_ATTRS["mean"] = OP_ATTRS["sum"]


@st.composite
def plausible_nodes(draw: st.DrawFn, id: str) -> dict[str, Any]:
    """A node that is often valid, so the deeper checks (shapes, cycles) get exercised."""
    op = draw(st.sampled_from([*OP_NAMES, "input", "input", "const", "nope"]))
    node: dict[str, Any] = {"id": id, "op": op}
    if op in ("input", "const"):
        node["value"] = draw(tensors)
        if draw(st.booleans()):
            node["requires_grad"] = draw(st.booleans())
    else:
        node["inputs"] = draw(
            st.lists(st.one_of(st.sampled_from(IDS), st.none()), min_size=1, max_size=3)
        )
        if draw(st.integers(0, 9)) == 0:
            node["attrs"] = draw(junk_attrs)
        elif op in OP_ATTRS:
            node["attrs"] = draw(OP_ATTRS[op])
    if draw(st.integers(0, 9)) == 0:
        node[draw(st.sampled_from(["position", "label", "value", "requires_grad"]))] = draw(
            json_values
        )
    return node


@st.composite
def plausible_docs(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(st.sampled_from(IDS), max_size=6, unique=draw(st.integers(0, 9)) > 0))
    nodes = [draw(plausible_nodes(i)) for i in ids]
    d: dict[str, Any] = {"format": "backprop-studio-graph", "version": 1, "nodes": nodes}
    if draw(st.booleans()):
        d["backward"] = {
            "output": draw(st.one_of(st.sampled_from(IDS), st.none())),
            "gradient": draw(st.one_of(st.none(), tensors)),
        }
    return d


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated_examples(draw: st.DrawFn) -> dict[str, Any]:
    """An example with a few random edits: replace, delete, duplicate or retarget."""
    d = copy.deepcopy(draw(st.sampled_from(EXAMPLE_DOCS)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(d) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = d
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        kind = draw(st.sampled_from(["replace", "delete", "duplicate", "rename", "number"]))
        if kind == "replace":
            parent[key] = draw(json_values)
        elif kind == "delete":
            del parent[key]
        elif kind == "duplicate" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif kind == "rename":
            nodes = d.get("nodes")
            nodes = nodes if isinstance(nodes, list) else []
            # Only string ids: an id an earlier edit made a list would be placed inside
            # itself (a list that contains itself, which no JSON file can hold).
            ids = [n.get("id") for n in nodes if isinstance(n, dict)]
            ids = [i for i in ids if isinstance(i, str) and i]
            parent[key] = draw(st.sampled_from([*ids, "ghost"]))
        elif kind == "number":
            parent[key] = draw(numbers)
    return d


#: What binary_cross_entropy says of a NaN or out-of-range input or target (as torch).
_VALUE_REFUSAL = "values between 0 and 1"


def check(text: str) -> None:
    """The property: loads, or one FileFormatError line; what loads is usable."""
    for partial in (False, True):
        try:
            gf = loads(text, partial=partial)
        except FileFormatError as exc:
            message = str(exc)
            assert message and "\n" not in message and "\r" not in message
            continue
        fwd = forward(gf.graph)
        if partial:
            continue
        # The loader checks shapes, not values: the only refusal left to the forward pass
        # is a value torch refuses too (a NaN or out-of-range probability), in one line.
        refused = {k: str(e) for k, e in fwd.errors.items()}
        assert all(_VALUE_REFUSAL in m and "\n" not in m for m in refused.values()), refused
        if refused:
            continue
        if gf.output is not None:
            trace = backward(gf.graph, fwd, gf.output, gf.gradient)
            assert trace.grads[gf.output] is not None
        again = loads(dumps(gf))
        assert list(again.graph.nodes) == list(gf.graph.nodes)
        assert dumps(again) == dumps(gf)


@FUZZ
@given(json_values)
def test_random_json(value: Any) -> None:
    check(json.dumps(value))


@FUZZ
@given(json_values)
def test_random_json_behind_a_valid_header(nodes: Any) -> None:
    check(json.dumps({"format": "backprop-studio-graph", "version": 1, "nodes": nodes}))


@settings(FUZZ, max_examples=150)
@given(plausible_docs())
def test_random_graph_documents(d: dict[str, Any]) -> None:
    check(json.dumps(d))


@settings(FUZZ, max_examples=150)
@given(mutated_examples())
def test_mutated_examples(d: dict[str, Any]) -> None:
    check(json.dumps(d))


@FUZZ
@given(st.sampled_from(EXAMPLE_DOCS), st.data())
def test_damaged_text(d: dict[str, Any], data: st.DataObject) -> None:
    text = json.dumps(d, indent=1)
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, min(len(text), a + 20)))
    kind = data.draw(st.sampled_from(["truncate", "cut", "splice"]))
    if kind == "truncate":
        text = text[:a]
    elif kind == "cut":
        text = text[:a] + text[b:]
    else:
        junk = data.draw(st.text(alphabet='{}[]",:0123456789.eE-ntrufals ', max_size=8))
        text = text[:a] + junk + text[b:]
    check(text)


def test_pathological_inputs_fail_fast() -> None:
    """Deep nesting, huge numbers and big shapes: one error line, no recursion blow-up."""
    header = '{"format": "backprop-studio-graph", "version": 1, "nodes": '
    cases = [
        "[" * 100_000 + "]" * 100_000,
        header + "[" * 5000 + "]" * 5000 + "}",
        header + '[{"id": "x", "op": "input", "value": ' + "[" * 900 + "1" + "]" * 900 + "}]}",
        header + '[{"id": "x", "op": "input", "value": 1' + "0" * 5000 + "}]}",
        header + '[{"id": "x", "op": "input", "value": [1]}, {"id": "r", "op": "reshape", '
        '"inputs": ["x"], "attrs": {"shape": [100000, 100000, 0]}}]}',
    ]
    for text in cases:
        check(text)
    gf = GraphFile()
    assert loads(dumps(gf)).graph.nodes == {}


def test_many_nodes_load_in_linear_time() -> None:
    """A long chain must not make the cycle checks quadratic."""
    n = 3000
    nodes = [{"id": "n0", "op": "input", "value": 1.0}]
    nodes += [{"id": f"n{i}", "op": "neg", "inputs": [f"n{i - 1}"]} for i in range(1, n)]
    nodes.reverse()
    gf = loads(
        json.dumps(
            {
                "format": "backprop-studio-graph",
                "version": 1,
                "nodes": nodes,
                "backward": {"output": f"n{n - 1}"},
            }
        )
    )
    fwd = forward(gf.graph)
    assert np.asarray(fwd.values[f"n{n - 1}"]) == -1.0


GENERIC = copy.deepcopy(schema())  # not the cached object: no tensor fast path


@settings(FUZZ, max_examples=150)
@given(plausible_docs() | mutated_examples())
def test_tensor_fast_path_agrees_with_the_generic_walk(d: dict[str, Any]) -> None:
    fast, generic = validate_schema(d), validate_schema(d, GENERIC)
    assert (fast is None) == (generic is None)
    if fast is not None and generic is not None:
        assert (fast.path, fast.keyword, fast.title) == (
            generic.path,
            generic.keyword,
            generic.title,
        )


@settings(FUZZ, max_examples=150)
@given(plausible_docs() | mutated_examples())
def test_the_quick_verdict_agrees_with_the_walk(d: dict[str, Any]) -> None:
    # validate_schema asks a compiled yes/no check first and walks only a failing
    # document: the walk must find an issue exactly when the check says no.
    for sch in (schema(), GENERIC):
        assert (validate_schema(d, sch) is None) == (first_issue(d, sch) is None)


def test_each_ops_attribute_branch_is_asked_by_the_op_it_names() -> None:
    # The op-attribute branches ("if op is X, then ...") are one lookup by op: a node
    # without an op, or with a non-string one, still meets every branch's "then",
    # as the generic walk has it; another op's attributes are not checked.
    base = {"format": "backprop-studio-graph", "version": 1}
    cases = [
        {"id": "y", "op": "clamp", "inputs": ["x"], "attrs": {"min": "low"}},  # refused
        {"id": "y", "op": "sum", "inputs": ["x"], "attrs": {"min": "low"}},  # not clamp's
        {"id": "y", "inputs": ["x"], "attrs": {"dim": "a"}},  # no op: every then applies
        {"id": "y", "op": 3, "inputs": ["x"], "attrs": {"dim": "a"}},
        {"id": "y", "op": "softmax", "inputs": ["x"], "attrs": {"dim": 1.5}},
        {"id": "y", "op": "softmax", "inputs": ["x"], "attrs": {"dim": 1}},
    ]
    verdicts = []
    for node in cases:
        d = {**base, "nodes": [{"id": "x", "op": "input", "value": 1.0}, node]}
        fast = validate_schema(d)
        assert (fast is None) == (first_issue(d, schema()) is None), node
        assert (fast is None) == (validate_schema(d, GENERIC) is None), node
        verdicts.append(fast is None)
    assert verdicts == [False, True, False, False, False, True]


def test_a_big_tensor_loads() -> None:
    value = [[float(i % 7) for i in range(1000)] for _ in range(300)]
    text = json.dumps(
        {
            "format": "backprop-studio-graph",
            "version": 1,
            "nodes": [{"id": "x", "op": "input", "value": value}],
        }
    )
    gf = loads(text)
    assert gf.graph.nodes["x"].value.shape == (300, 1000)
