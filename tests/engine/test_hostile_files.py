"""Issue 15's hostile files, each as the issue gives it: refused in one line, or loaded.

The GUI side (File > Open, Paste, export) is in tests/gui/test_hostile_open.py.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import cli
from engine.errors import BIDI_CONTROLS, GraphError
from engine.fileformat import (
    MAX_DEPTH,
    MAX_ID_LENGTH,
    MAX_NODES,
    MAX_OPERANDS,
    FileFormatError,
    dumps,
    load,
    loads,
)
from engine.graph import Graph, fresh_id
from engine.json_stream import CHUNK, write_json
from engine.layout_keys import MAX_COORD

ROOT = Path(__file__).resolve().parents[2]

#: Issue 15 #1, with each of the positions it lists.
BAD_POSITION = (
    '{"format":"backprop-studio-graph","version":1,"nodes":[{"id":"x","op":"input",'
    '"value":1.0,"position":POS},{"id":"y","op":"exp","inputs":["x"]}],'
    '"backward":{"output":"y","gradient":null}}'
)
BAD_POSITIONS = ['["a","b"]', "[[1],2]", "[null,null]", "[1e400, 0]", "[NaN, Infinity]",
                 '["NaN", 0]', "[1, 2, 3]", "{}", f"[{MAX_COORD * 10}, 0]"]


def header(nodes: list[dict[str, Any]], **extra: Any) -> str:
    doc = {"format": "backprop-studio-graph", "version": 1, "nodes": nodes}
    doc.update(extra)
    return json.dumps(doc)


def one_line_error(text: str) -> str:
    with pytest.raises(FileFormatError) as info:
        loads(text, partial=True)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    return message


@pytest.mark.parametrize("pos", BAD_POSITIONS)
def test_a_bad_position_is_refused_in_one_line(pos: str) -> None:
    message = one_line_error(BAD_POSITION.replace("POS", pos))
    assert message.startswith("node 'x': position must be two finite numbers")


def test_good_positions_and_view_load() -> None:
    text = BAD_POSITION.replace("POS", "[-120.5, 80]")
    doc = json.loads(text)
    doc["view"] = {"zoom": 1.5, "center": [10, -20]}
    gf = loads(json.dumps(doc))
    assert gf.node_extra["x"]["position"] == [-120.5, 80]
    assert gf.extra["view"] == {"zoom": 1.5, "center": [10, -20]}


@pytest.mark.parametrize(
    "view",
    ['"wide"', '{"zoom": NaN, "center": [0, 0]}', '{"zoom": -1}', '{"zoom": true}',
     '{"zoom": 1, "center": [Infinity, 0]}', '{"zoom": 1, "center": "middle"}'],
)
def test_a_bad_view_is_refused(view: str) -> None:
    text = BAD_POSITION.replace("POS", "[0, 0]")
    text = text[:-1] + f',"view":{view}}}'
    assert one_line_error(text).startswith("view")


def test_a_bad_autosave_record_is_refused() -> None:
    text = BAD_POSITION.replace("POS", "[0, 0]")
    assert "autosave.source" in one_line_error(text[:-1] + ',"autosave":{"source":5}}')


def test_huge_arity_is_refused_before_any_work() -> None:
    """Issue 15 #3: a stack of 100,000 operands took 6 GB in the GUI."""
    nodes = [{"id": "x", "op": "input", "value": 1.0},
             {"id": "s", "op": "stack", "inputs": ["x"] * 100_000}]
    message = one_line_error(header(nodes))
    assert message == f"node 's': 100,000 operands; a node may have at most {MAX_OPERANDS}"
    nodes[1]["inputs"] = ["x"] * MAX_OPERANDS
    assert loads(header(nodes)).graph.nodes["s"].inputs == ["x"] * MAX_OPERANDS


def test_a_megabyte_id_is_refused_with_a_short_line() -> None:
    """Issue 15 #3 and #10: a 1 MB id took minutes and echoed a 1 MB error line."""
    big = "q" * 2**20
    message = one_line_error(header([{"id": big, "op": "input", "value": 1.0}]))
    assert f"an id may have at most {MAX_ID_LENGTH}" in message and len(message) < 200
    # Also where the id is quoted in another error (here: an unknown operand).
    nodes = [{"id": "y", "op": "exp", "inputs": [big]}]
    assert len(one_line_error(header(nodes))) < 200


def test_too_many_nodes_is_refused_and_the_limit_loads() -> None:
    def chain(n: int) -> str:  # issue 15 #3: a_i = add(a_{i-1}, x)
        nodes = [{"id": "x", "op": "input", "value": 1.0},
                 {"id": "a0", "op": "input", "value": 1.0}]
        nodes += [{"id": f"a{i}", "op": "add", "inputs": [f"a{i - 1}", "x"]} for i in range(1, n)]
        return header(nodes, backward={"output": f"a{n - 1}"})

    assert "at most" in one_line_error(chain(MAX_NODES))  # MAX_NODES + 1 nodes
    gf = loads(chain(2001))
    assert len(gf.graph.nodes) == 2002


@pytest.mark.parametrize("where", ["id", "title", "key", "extra"])
def test_a_lone_surrogate_is_refused(where: str) -> None:
    """Issue 15 #7: "\\ud800" made `run` print a traceback and every save fail."""
    nodes = [{"id": "x", "op": "input", "value": 1.0}]
    doc: dict[str, Any] = {"format": "backprop-studio-graph", "version": 1, "nodes": nodes}
    if where == "id":
        nodes[0]["id"] = "x\ud800"
    elif where == "title":
        doc["title"] = "\ud800"
    elif where == "key":
        nodes[0]["\ud800"] = 1
    else:
        doc["notes"] = [{"a": "ok \udfff"}]
    message = one_line_error(json.dumps(doc))
    assert "lone surrogate" in message
    message.encode("utf-8")  # printable


def test_deep_nesting_is_refused_and_what_loads_can_be_saved() -> None:
    """Issue 15 #8: an unknown key 600 levels deep loaded but could never be saved."""
    deep: Any = 1
    for _ in range(600):
        deep = [deep]
    text = header([{"id": "x", "op": "input", "value": 1.0}], notes=deep)
    assert f"more than {MAX_DEPTH} levels deep" in one_line_error(text)
    ok: Any = 1
    for _ in range(MAX_DEPTH - 2):
        ok = {"k": ok}
    gf = loads(header([{"id": "x", "op": "input", "value": 1.0}], notes=ok))
    assert loads(dumps(gf)).extra == gf.extra


def test_a_32_dim_tensor_still_loads() -> None:
    value: Any = 1.0
    for _ in range(32):
        value = [value]
    gf = loads(header([{"id": "x", "op": "input", "value": value}]))
    assert gf.graph.nodes["x"].value.ndim == 32


def test_a_huge_empty_shape_is_refused() -> None:
    """Issue 15 #10: a shape with 4294967297 got past the element check (0 elements)."""
    nodes = [{"id": "x", "op": "input", "value": []},
             {"id": "y", "op": "reshape", "inputs": ["x"], "attrs": {"shape": [4294967297, 0]}}]
    assert "may multiply to at most" in one_line_error(header(nodes))


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "main.py", "run", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_run_with_an_empty_file_name_says_so() -> None:
    """Issue 15 #10: `run ""` said "it is a folder"."""
    proc = run_cli("")
    assert proc.returncode == 2
    assert proc.stderr == "error: : no file name given\n"


def test_run_refuses_a_surrogate_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.bpgraph"
    path.write_text('{"format":"backprop-studio-graph","version":1,"title":"\\ud800",'
                    '"nodes":[{"id":"x","op":"input","value":1.0}]}')
    proc = run_cli(str(path))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "surrogate" in proc.stderr


def test_run_prints_a_1e7_element_tensor_by_formatting_only_what_is_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 15 #3: every element was formatted before the table cut the text."""
    calls = 0
    real = cli._num

    def counting(v: float) -> str:
        nonlocal calls
        calls += 1
        return real(v)

    monkeypatch.setattr(cli, "_num", counting)
    text = cli.compact(np.arange(10**7, dtype=float).reshape(1000, 10_000))
    assert text.startswith("[[0., 1., 2., 3.") and text.endswith("…") and len(text) == 60
    assert calls < 30


@pytest.mark.parametrize(
    "value",
    [np.arange(3 * CHUNK, dtype=float) / 7, np.arange(4 * CHUNK, dtype=float).reshape(2, -1, 4),
     np.array([[np.nan, np.inf], [-np.inf, 1.5]]), np.full((CHUNK + 3,), -np.inf),
     np.zeros((0, 3)), np.float64(2.5), np.ones((3, CHUNK + 1))],
)
def test_streamed_json_is_the_json_module_s(value: np.ndarray) -> None:
    """The fast writer gives the very text json.dumps gives for the lists."""
    from engine.fileformat import tensor_to_json

    doc = {"output": "y", "k": 3, "none": None, "t": value, "steps": [{"v": value}]}
    plain = {"output": "y", "k": 3, "none": None, "t": tensor_to_json(value),
             "steps": [{"v": tensor_to_json(value)}]}
    out = io.StringIO()
    write_json(doc, out)
    assert out.getvalue() == json.dumps(plain, allow_nan=False)


def test_loading_the_issue_s_examples_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "pos.bpgraph"
    path.write_text(BAD_POSITION.replace("POS", '["a","b"]'))
    with pytest.raises(FileFormatError, match="position"):
        load(path)


def test_edits_cannot_make_a_graph_the_loader_would_refuse() -> None:
    """The limits hold for edits too, so whatever the GUI saves reopens."""
    g = Graph()
    with pytest.raises(GraphError, match="at most 200 characters"):
        g.add_node("q" * (MAX_ID_LENGTH + 1), "input", value=1.0)
    g.add_node("x", "input", value=1.0)
    with pytest.raises(GraphError, match="at most 200 characters"):
        g.rename("x", "q" * (MAX_ID_LENGTH + 1))
    g.add_node("s", "stack")
    with pytest.raises(GraphError, match=f"at most {MAX_OPERANDS} operands"):
        g.connect("x", "s", MAX_OPERANDS)
    long = "q" * MAX_ID_LENGTH
    assert len(fresh_id(long, {long})) == MAX_ID_LENGTH
    for i in range(MAX_NODES - 2):
        g.add_node(f"n{i}", "const", value=0.0)
    with pytest.raises(GraphError, match=f"at most {MAX_NODES:,} nodes"):
        g.add_node("one_more", "const", value=0.0)


def test_a_graph_built_in_code_may_lift_the_node_limit() -> None:
    """The engine benchmark's 100,000-node DAG is never saved: it lifts the file limit,
    and a copy keeps whichever limit its graph had."""
    small = Graph(max_nodes=2)
    small.add_node("a", "input", value=1.0)
    small.add_node("b", "neg", ["a"])
    with pytest.raises(GraphError, match="at most 2 nodes"):
        small.copy().add_node("c", "neg", ["b"])
    free = Graph(max_nodes=None)
    for i in range(MAX_NODES + 1):
        free.add_node(f"n{i}", "const", value=0.0)
    assert len(free.copy()) == MAX_NODES + 1


@pytest.mark.parametrize("control", sorted(BIDI_CONTROLS))
def test_an_id_with_a_bidi_control_is_refused_naming_the_node(control: str) -> None:
    """Issue 24: a U+202E in an id reversed the text after it wherever the id was shown (a
    write-up, the canvas, the web page: "Trojan Source"). The file is refused in one line
    naming the node, the control written out, none in the message itself; an edit cannot
    make such an id either (the graph's one rule)."""
    nid = f"x{control}1"
    message = one_line_error(header([{"id": nid, "op": "input", "value": 1.0}]))
    assert message.startswith(
        f"node {nid!r}: the id holds the bidirectional control U+{ord(control):04X}")
    assert BIDI_CONTROLS.isdisjoint(message)
    g = Graph()
    with pytest.raises(GraphError, match="bidirectional control"):
        g.add_node(nid, "input", value=1.0)
    g.add_node("x", "input", value=1.0)
    with pytest.raises(GraphError, match="bidirectional control"):
        g.rename("x", nid)
    assert list(g.nodes) == ["x"]


@pytest.mark.parametrize("control", ["\u202e", "\u2066", "\u200f"])
def test_a_group_id_with_a_bidi_control_is_refused_naming_the_group(control: str) -> None:
    """A group's id is shown as a node's is (its collapsed box, the write-ups), so a file
    whose group id holds a bidirectional control is refused in one line naming the group,
    with no control in the message."""
    gid = f"g{control}1"
    message = one_line_error(header([{"id": "a", "op": "input", "value": 1.0},
                                     {"id": "b", "op": "neg", "inputs": ["a"]}],
                                    groups=[{"id": gid, "members": ["b"]}]))
    assert message.startswith(f"group {gid!r}: the id holds the bidirectional control "
                              f"U+{ord(control):04X}"), message
    assert BIDI_CONTROLS.isdisjoint(message)
