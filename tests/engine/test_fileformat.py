"""The .bpgraph loader and saver: the contract of docs/graph-format.md.

Every error must be one FileFormatError with a one-line message that names the
node at fault; saving must be atomic; unknown keys must survive a round trip.
"""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from engine import file_tensors, fileformat, schema_validator
from engine.examples import EXAMPLES_DIR, list_examples
from engine.fileformat import (
    SUFFIX,
    FileFormatError,
    GraphFile,
    dumps,
    load,
    loads,
    save,
)
from engine.graph import Graph
from engine.ops import OP_NAMES
from engine.schema_validator import validate_schema

ISSUE_EXAMPLE = """
{"format": "backprop-studio-graph", "version": 1, "title": "optional",
 "description": "optional notes to read to the class",
 "nodes": [ {"id": "x", "op": "input", "value": [1.0, 2.0, 3.0], "requires_grad": true},
   {"id": "two", "op": "const", "value": 2},
   {"id": "y", "op": "pow", "inputs": ["x", "two"]},
   {"id": "s", "op": "sum", "inputs": ["y"], "attrs": {"dim": null}} ],
 "backward": {"output": "s", "gradient": null}}
"""


def doc(nodes: list[dict[str, Any]], backward: dict[str, Any] | None = None, **top: Any) -> str:
    d: dict[str, Any] = {"format": "backprop-studio-graph", "version": 1, "nodes": nodes}
    if backward is not None:
        d["backward"] = backward
    d.update(top)
    return json.dumps(d)


def inp(id: str, value: Any, **kw: Any) -> dict[str, Any]:
    return {"id": id, "op": "input", "value": value, **kw}


def op(id: str, name: str, *inputs: str | None, **kw: Any) -> dict[str, Any]:
    return {"id": id, "op": name, "inputs": list(inputs), **kw}


def error_of(text: str, **kw: Any) -> str:
    with pytest.raises(FileFormatError) as info:
        loads(text, **kw)
    message = str(info.value)
    assert "\n" not in message and message.strip() == message and message
    return message


def same_graph(a: Graph, b: Graph) -> None:
    assert list(a.nodes) == list(b.nodes)
    for nid, n in a.nodes.items():
        m = b.nodes[nid]
        assert (n.op, n.inputs, n.attrs, n.requires_grad) == (
            m.op,
            m.inputs,
            m.attrs,
            m.requires_grad,
        )
        if n.value is None:
            assert m.value is None
        else:
            np.testing.assert_array_equal(n.value, m.value)


# --------------------------------------------------------------------------- the happy path


def test_issue_example_loads() -> None:
    gf = loads(ISSUE_EXAMPLE)
    assert list(gf.graph.nodes) == ["x", "two", "y", "s"]
    assert gf.output == "s" and gf.gradient is None
    assert gf.title == "optional" and gf.description.startswith("optional notes")
    x = gf.graph.nodes["x"]
    assert x.requires_grad and x.value.dtype == np.float64
    np.testing.assert_array_equal(x.value, [1.0, 2.0, 3.0])
    assert gf.graph.nodes["s"].attrs == {"dim": None, "keepdim": False}
    assert not gf.graph.nodes["two"].requires_grad


def test_requires_grad_defaults_to_true_on_inputs() -> None:
    gf = loads(doc([inp("x", 1.0), inp("w", 2.0, requires_grad=False)]))
    assert gf.graph.nodes["x"].requires_grad
    assert not gf.graph.nodes["w"].requires_grad


def test_node_order_is_free() -> None:
    forward = json.loads(ISSUE_EXAMPLE)
    reverse = copy.deepcopy(forward)
    reverse["nodes"].reverse()
    a, b = loads(json.dumps(forward)), loads(json.dumps(reverse))
    assert list(b.graph.nodes) == ["s", "y", "two", "x"]  # the file's order is kept
    assert b.graph.topological_order().index("x") < b.graph.topological_order().index("s")
    for nid in a.graph.nodes:
        assert a.graph.nodes[nid].inputs == b.graph.nodes[nid].inputs


def test_unknown_keys_are_kept_through_a_round_trip(tmp_path: Path) -> None:
    d = json.loads(ISSUE_EXAMPLE)
    d["view"] = {"zoom": 1.5, "center": [10, 20]}
    d["step"] = 3
    d["nodes"][0]["position"] = [120.0, 80.0]
    d["nodes"][0]["label"] = "x₁"
    d["backward"]["note"] = "kept"
    gf = loads(json.dumps(d))
    assert gf.extra == {"view": {"zoom": 1.5, "center": [10, 20]}, "step": 3}
    assert gf.node_extra == {"x": {"position": [120.0, 80.0], "label": "x₁"}}
    assert gf.backward_extra == {"note": "kept"}
    path = tmp_path / f"g{SUFFIX}"
    save(path, gf)
    again = load(path)
    assert again.extra == gf.extra and again.node_extra == gf.node_extra
    assert again.backward_extra == gf.backward_extra
    assert json.loads(path.read_text(encoding="utf-8"))["nodes"][0]["label"] == "x₁"


def test_unknown_keys_cannot_override_known_ones() -> None:
    gf = loads(ISSUE_EXAMPLE)
    gf.extra["nodes"] = "clobber"
    gf.node_extra["x"] = {"op": "const", "position": [1, 2]}
    d = json.loads(dumps(gf))
    assert isinstance(d["nodes"], list) and d["nodes"][0]["op"] == "input"
    assert d["nodes"][0]["position"] == [1, 2]


@pytest.mark.parametrize("path", sorted(EXAMPLES_DIR.glob(f"*{SUFFIX}")), ids=lambda p: p.stem)
def test_examples_round_trip(path: Path, tmp_path: Path) -> None:
    gf = load(path)
    out = tmp_path / path.name
    save(out, gf)
    again = load(out)
    same_graph(gf.graph, again.graph)
    assert (again.output, again.title, again.description) == (gf.output, gf.title, gf.description)
    if gf.gradient is None:
        assert again.gradient is None
    else:
        np.testing.assert_array_equal(gf.gradient, again.gradient)
    assert dumps(again) == dumps(gf)  # saving is deterministic


def test_saved_file_is_one_node_per_line() -> None:
    text = dumps(loads(ISSUE_EXAMPLE))
    lines = text.splitlines()
    assert sum(1 for line in lines if line.strip().startswith('{"id": ')) == 4
    assert text.endswith("}\n")


def test_any_extension_loads(tmp_path: Path) -> None:
    p = tmp_path / "graph.json"
    p.write_text(ISSUE_EXAMPLE, encoding="utf-8")
    assert load(p).output == "s"
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf" + ISSUE_EXAMPLE.encode())
    assert load(bom).output == "s"


def test_non_finite_numbers_are_strings_both_ways(tmp_path: Path) -> None:
    gf = loads(
        doc(
            [inp("x", ["NaN", "Infinity", "-Infinity", 1]), op("y", "neg", "x")],
            {"output": "y", "gradient": [1, "NaN", 1, 1]},
        )
    )
    v = gf.graph.nodes["x"].value
    assert np.isnan(v[0]) and v[1] == np.inf and v[2] == -np.inf
    text = dumps(gf)
    d = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    assert d["nodes"][0]["value"] == ["NaN", "Infinity", "-Infinity", 1.0]
    assert d["backward"]["gradient"] == [1.0, "NaN", 1.0, 1.0]
    # Python's own non-standard tokens are accepted on reading.
    bare = (
        '{"format": "backprop-studio-graph", "version": 1, "nodes": ['
        '{"id": "x", "op": "input", "value": [NaN, Infinity, -Infinity]}]}'
    )
    assert np.isnan(loads(bare).graph.nodes["x"].value[0])


def test_partial_accepts_a_graph_being_built() -> None:
    text = doc(
        [
            inp("x", [1.0, 2.0]),
            inp("w", [1.0, 2.0, 3.0]),
            op("a", "add", "x", None),
            op("b", "add", "x", "w"),
            op("m", "mul"),
        ],
        {"output": "b", "gradient": [1.0]},
    )
    gf = loads(text, partial=True)
    assert gf.graph.nodes["a"].inputs == ["x", None]
    assert gf.graph.nodes["m"].inputs == [None, None]
    # ... and saving it keeps the empty port.
    assert json.loads(dumps(gf))["nodes"][2]["inputs"] == ["x", None]
    assert "node 'a': add needs 2 operands, 1 connected" in error_of(text)


def test_partial_still_refuses_structural_errors() -> None:
    assert "operand 'q' does not exist" in error_of(doc([op("y", "neg", "q")]), partial=True)
    assert "cycle" in error_of(doc([op("a", "neg", "b"), op("b", "neg", "a")]), partial=True)
    assert "ragged" in error_of(doc([inp("x", [[1], [1, 2]])]), partial=True)
    assert "takes 2 operands" in error_of(
        doc([inp("x", 1.0), op("a", "add", "x", "x", "x")]), partial=True
    )


# --------------------------------------------------------------------------- the schema


def test_schema_op_names_are_the_engines() -> None:
    names = schema_validator.schema()["$defs"]["opName"]["enum"]
    assert sorted(names) == sorted(OP_NAMES) and len(names) == len(set(names))


def test_schema_file_is_package_data_json() -> None:
    assert schema_validator.SCHEMA_PATH.parent == Path(fileformat.__file__).resolve().parent
    assert schema_validator.SCHEMA_PATH.name.endswith(".json")  # pyproject: engine = ["*.json"]
    d = json.loads(schema_validator.SCHEMA_PATH.read_text(encoding="utf-8"))
    assert d["$schema"].startswith("https://json-schema.org/")


@pytest.mark.parametrize("path", sorted(EXAMPLES_DIR.glob(f"*{SUFFIX}")), ids=lambda p: p.stem)
def test_examples_conform_to_the_schema(path: Path) -> None:
    assert validate_schema(json.loads(path.read_text(encoding="utf-8"))) is None


SCHEMA_BREAKERS = [
    {"nodes": "x"},
    {"nodes": [{"id": "", "op": "input", "value": 1}]},
    {"nodes": [{"id": "x", "op": "input"}]},
    {"nodes": [{"id": "x", "op": "input", "value": {"a": 1}}]},
    {"nodes": [{"id": "x", "op": "input", "value": 1, "requires_grad": "yes"}]},
    {"nodes": [{"id": "y", "op": "neg", "inputs": [3]}]},
    {"nodes": [{"id": "y", "op": "neg", "inputs": ["x"], "value": 2}]},
    {"nodes": [{"id": "y", "op": "sum", "inputs": ["x"], "attrs": {"keepdim": 1}}]},
    {"nodes": [{"id": "y", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [1.5]}}]},
    {"nodes": [], "backward": {"output": 3}},
    {"nodes": [], "backward": {"output": "y", "gradient": [1, "a"]}},
    {"nodes": [], "title": 7},
]


@pytest.mark.parametrize("change", SCHEMA_BREAKERS)
def test_the_validator_agrees_with_jsonschema(change: dict[str, Any]) -> None:
    """The built-in validator against the reference implementation (a test extra)."""
    d = {"format": "backprop-studio-graph", "version": 1, **change}
    assert validate_schema(d) is not None
    with pytest.raises(FileFormatError):
        loads(json.dumps(d))
    assert not jsonschema.Draft202012Validator(schema_validator.schema()).is_valid(d)
    for path in EXAMPLES_DIR.glob(f"*{SUFFIX}"):
        jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), schema_validator.schema())


# --------------------------------------------------------------------------- errors


X = inp("x", [1.0, 2.0, 3.0])

ERRORS = [
    ("not json", "{", "cut short"),
    ("not json 2", "hello", "not valid JSON"),
    ("empty", "", "empty"),
    ("list", "[1, 2]", "a list, not a JSON object"),
    ("no format", '{"version": 1, "nodes": []}', '"format"'),
    ("wrong format", '{"format": "other", "version": 1, "nodes": []}', '"other"'),
    (
        "wrong version",
        '{"format": "backprop-studio-graph", "version": 2, "nodes": []}',
        "version 2",
    ),
    (
        "version true",
        '{"format": "backprop-studio-graph", "version": true, "nodes": []}',
        "version true",
    ),
    ("no version", '{"format": "backprop-studio-graph", "nodes": []}', '"version"'),
    ("no nodes", '{"format": "backprop-studio-graph", "version": 1}', "'nodes'"),
    ("duplicate id", doc([X, inp("x", 1.0)]), "node 'x': this id is used twice"),
    ("missing id", doc([{"op": "input", "value": 1}]), "nodes[0] has no 'id'"),
    ("empty id", doc([inp("", 1.0)]), "nodes[0].id must be a non-empty string"),
    (
        "list op with attrs",
        doc([{"id": "y", "op": [], "inputs": [], "attrs": {}}]),
        "node 'y': op must be one of the engine's op names, got []",
    ),
    ("missing op", doc([{"id": "y"}]), "node 'y' has no 'op'"),
    ("unknown op", doc([X, op("y", "foo", "x")]), "node 'y': unknown op 'foo'"),
    ("missing operand", doc([X, op("y", "neg", "q")]), "node 'y': operand 'q' does not exist"),
    ("self loop", doc([op("a", "neg", "a")]), "cycle through nodes 'a'"),
    (
        "cycle",
        doc([X, op("a", "add", "x", "c"), op("b", "neg", "a"), op("c", "exp", "b")]),
        "cycle through nodes 'a', 'b', 'c'",
    ),
    ("too few operands", doc([X, op("y", "add", "x")]), "node 'y': add needs 2 operands"),
    ("too many operands", doc([X, op("y", "neg", "x", "x")]), "node 'y': neg takes 1 operand"),
    ("no operands", doc([op("y", "stack")]), "node 'y': stack needs at least 1 operand"),
    ("empty port", doc([X, op("y", "mul", None, "x")]), "1 connected (operand 0 is empty)"),
    (
        "leaf with operands",
        doc([X, {**inp("w", 1.0), "inputs": ["x"]}]),
        "node 'w': an input takes no operands",
    ),
    (
        "broadcast",
        doc([X, inp("w", [1.0, 2.0]), op("y", "add", "x", "w")]),
        "node 'y': cannot broadcast shapes (3,) and (2,)",
    ),
    (
        "matmul",
        doc([X, inp("w", [[1.0, 2.0]]), op("y", "matmul", "w", "x")]),
        "node 'y': cannot multiply shapes (1, 2) and (3,)",
    ),
    (
        "stack shapes",
        doc([X, inp("w", 1.0), op("y", "stack", "x", "w")]),
        "node 'y': stack needs operands of one shape",
    ),
    (
        "select range",
        doc([X, op("y", "select", "x", attrs={"index": 5})]),
        "node 'y': index 5 is out of range",
    ),
    (
        "reshape",
        doc([X, op("y", "reshape", "x", attrs={"shape": [2, 2]})]),
        "node 'y': cannot reshape (3,)",
    ),
    ("sum dim", doc([X, op("y", "sum", "x", attrs={"dim": 3})]), "node 'y': dim 3"),
    (
        "bad attr",
        doc([X, op("y", "sum", "x", attrs={"axis": 0})]),
        "node 'y': sum has no attribute 'axis'",
    ),
    ("attr type", doc([X, op("y", "select", "x", attrs={"index": 1.5})]), "node 'y': attrs"),
    (
        "ragged",
        doc([inp("x", [[1, 2], [3]])]),
        "node 'x': value is a ragged nested list: value[1] has 1 element but value[0] has 2",
    ),
    ("ragged deep", doc([inp("x", [[1, 2], [3, [4]]])]), "value[1][1] is a list"),
    ("ragged mixed", doc([inp("x", [1, [2]])]), "ragged"),
    (
        "string value",
        doc([inp("x", [1, "two"])]),
        "node 'x': value[1] must be a number or a nested list of numbers",
    ),
    ("bool value", doc([inp("x", True)]), "node 'x': value must be a number"),
    ("null value", doc([inp("x", None)]), "node 'x': value must be a number"),
    ("missing value", doc([{"id": "x", "op": "const"}]), "node 'x' has no 'value'"),
    (
        "value on op",
        doc([X, {**op("y", "neg", "x"), "value": 1}]),
        "node 'y': a neg node computes its value",
    ),
    ("huge int", doc([inp("x", [10**400])]), "too large"),
    ("too deep", doc([inp("x", json.loads("[" * 40 + "1" + "]" * 40))]), "32"),
    (
        "const requires grad",
        doc([{"id": "c", "op": "const", "value": 1, "requires_grad": True}]),
        "node 'c': a const never requires grad",
    ),
    (
        "op requires grad",
        doc([X, {**op("y", "neg", "x"), "requires_grad": True}]),
        "node 'y': requires_grad belongs on inputs",
    ),
    ("output missing", doc([X], {"output": "q"}), "backward.output names node 'q'"),
    (
        "no gradient for non-scalar",
        doc([X, op("y", "neg", "x")], {"output": "y"}),
        "node 'y': grad can be implicitly created only for scalar outputs",
    ),
    (
        "gradient shape",
        doc([X, op("y", "neg", "x")], {"output": "y", "gradient": [1, 2]}),
        "node 'y': the gradient v has shape (2,) but the output has shape (3,)",
    ),
    (
        "ragged gradient",
        doc([X, op("y", "neg", "x")], {"output": "y", "gradient": [[1], 2]}),
        "backward.gradient is a ragged nested list",
    ),
    (
        "no grad needed",
        doc([{"id": "c", "op": "const", "value": 1.0}, op("y", "neg", "c")], {"output": "y"}),
        "node 'y': does not require grad",
    ),
    (
        "huge result",
        doc([inp("a", [[1.0]] * 4000), inp("b", [[1.0] * 4000]), op("m", "matmul", "a", "b")]),
        "node 'm': its result would have shape (4000, 4000), 16,000,000 elements",
    ),
    (
        "huge reshape",
        doc([inp("a", [0.0]), op("r", "reshape", "a", attrs={"shape": [0, -1]})]),
        "node 'r'",
    ),
]


@pytest.mark.parametrize(("text", "expected"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_are_one_line_and_name_the_problem(text: str, expected: str) -> None:
    assert expected in error_of(text)


def test_too_many_elements_in_a_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fileformat, "MAX_ELEMENTS", 10)
    monkeypatch.setattr(file_tensors, "MAX_ELEMENTS", 10)
    assert "node 'x': value has 12 elements" in error_of(doc([inp("x", [[0.0] * 4] * 3)]))
    assert "12 elements" in error_of(
        doc([inp("x", [0.0] * 4), inp("w", [[0.0]] * 3), op("y", "mul", "x", "w")])
    )


def test_missing_unreadable_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="no such file"):
        load(tmp_path / "nope.bpgraph")
    with pytest.raises(FileFormatError, match="cannot read the file: it is a folder"):
        load(tmp_path)
    if hasattr(os, "mkfifo"):  # reading a pipe with no writer would block forever
        fifo = tmp_path / "pipe.bpgraph"
        os.mkfifo(fifo)
        with pytest.raises(FileFormatError, match="not a regular file"):
            load(fifo)
    if os.geteuid() != 0:  # root reads anything
        p = tmp_path / "locked.bpgraph"
        p.write_text(ISSUE_EXAMPLE)
        p.chmod(0)
        with pytest.raises(FileFormatError, match="cannot read"):
            load(p)


def test_file_over_50_mb_is_refused_unread(tmp_path: Path) -> None:
    p = tmp_path / "big.bpgraph"
    with open(p, "wb") as fh:  # sparse: costs no disk
        fh.truncate(fileformat.MAX_FILE_BYTES + 1)
    with pytest.raises(FileFormatError, match="limit is 50 MB"):
        load(p)


def test_binary_and_truncated_files(tmp_path: Path) -> None:
    p = tmp_path / "bin.bpgraph"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(FileFormatError, match="not UTF-8"):
        load(p)
    text = dumps(load(EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"))
    p.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(FileFormatError, match="cut short"):
        load(p)


# --------------------------------------------------------------------------- saving


def test_save_is_atomic_when_the_rename_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "g.bpgraph"
    path.write_text("previous contents")

    def fail(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileformat.os, "replace", fail)
    with pytest.raises(FileFormatError, match="No space left"):
        save(path, loads(ISSUE_EXAMPLE))
    assert path.read_text() == "previous contents"
    assert os.listdir(tmp_path) == ["g.bpgraph"]  # no temporary file left behind


def test_save_is_atomic_when_writing_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "g.bpgraph"
    path.write_text("previous contents")

    def fail(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(fileformat.os, "fsync", fail)
    with pytest.raises(FileFormatError, match="Input/output error"):
        save(path, loads(ISSUE_EXAMPLE))
    assert path.read_text() == "previous contents"
    assert os.listdir(tmp_path) == ["g.bpgraph"]


def test_save_refuses_unwritable_extras_without_touching_the_file(tmp_path: Path) -> None:
    path = tmp_path / "g.bpgraph"
    path.write_text("previous contents")
    gf = loads(ISSUE_EXAMPLE)
    gf.extra["view"] = object()
    with pytest.raises(FileFormatError, match="cannot write"):
        save(path, gf)
    assert path.read_text() == "previous contents"
    assert os.listdir(tmp_path) == ["g.bpgraph"]


def test_save_into_a_missing_folder_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(FileFormatError, match="cannot save"):
        save(tmp_path / "no" / "such" / "g.bpgraph", loads(ISSUE_EXAMPLE))


def test_save_keeps_the_old_files_permissions(tmp_path: Path) -> None:
    path = tmp_path / "g.bpgraph"
    path.write_text("x")
    path.chmod(0o640)
    save(path, loads(ISSUE_EXAMPLE))
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert load(path).output == "s"


def test_save_accepts_numpy_in_extras(tmp_path: Path) -> None:
    gf = loads(ISSUE_EXAMPLE)
    gf.node_extra["x"] = {"position": np.array([1.5, 2.0]), "weight": np.float32(0.5)}
    gf.extra["view"] = {"zoom": np.float64(2.0), "bad": float("nan"), "t": (1, 2)}
    save(tmp_path / "g.bpgraph", gf)
    again = load(tmp_path / "g.bpgraph")
    assert again.node_extra["x"] == {"position": [1.5, 2.0], "weight": 0.5}
    assert again.extra["view"] == {"zoom": 2.0, "bad": "NaN", "t": [1, 2]}


def test_an_empty_graph_file_round_trips(tmp_path: Path) -> None:
    save(tmp_path / "e.bpgraph", GraphFile())
    gf = load(tmp_path / "e.bpgraph")
    assert len(gf.graph) == 0 and gf.output is None and gf.gradient is None


# --------------------------------------------------------------------------- examples


def test_list_examples_seeds_first() -> None:
    listed = list_examples()
    stems = [p.stem for p, _ in listed]
    assert stems[:5] == [
        "seed1_square_sum",
        "seed2_stack_vjp",
        "seed3_mean_of_square",
        "seed4_weighted_v",
        "seed4b_ones_v",
    ]
    assert sorted(stems) == sorted(p.stem for p in EXAMPLES_DIR.glob(f"*{SUFFIX}"))
    assert all(title and title != Path(p).stem for p, title in listed)
    assert EXAMPLES_DIR == Path(fileformat.__file__).resolve().parent.parent / "assets" / "examples"
