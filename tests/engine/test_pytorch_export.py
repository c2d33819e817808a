"""Graph -> PyTorch script: import(export(G)) == G, and the script under torch gives our gradients.

Round trips run over every shipped example and over hypothesis-drawn graphs (with
ids that are not Python names); the exported scripts run in-process under PyTorch
(our own generated code, not a user's) and every leaf's and retained non-leaf's
``.grad`` must match the engine's to rtol 1e-12.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_random_graphs import random_graph

from engine.autodiff import backward, forward
from engine.examples import list_examples
from engine.fileformat import load
from engine.graph import Graph
from engine.pytorch_check import TorchCheckError, compare_with_torch, run_with_torch
from engine.pytorch_export import export_script, python_names
from engine.pytorch_import import CodeError, import_code
from support import torch

EXAMPLES = [path for path, _ in list_examples()]


def assert_same_graph(a: Graph, b: Graph) -> None:
    assert list(a.nodes) == list(b.nodes)
    for nid, x in a.nodes.items():
        y = b.nodes[nid]
        assert (x.op, x.inputs, x.attrs, x.requires_grad) == (
            y.op,
            y.inputs,
            y.attrs,
            y.requires_grad,
        ), nid
        if x.is_leaf:
            assert x.value.shape == y.value.shape, nid
            np.testing.assert_array_equal(x.value, y.value)  # bit for bit, NaN included


def round_trip(graph: Graph, output: str | None, v: np.ndarray | None) -> str:
    script = export_script(graph, output, v, retain_grads=True)
    im = import_code(script)
    assert_same_graph(graph, im.graph)
    assert im.output == output
    if v is None:
        assert im.gradient is None
    else:
        np.testing.assert_array_equal(im.gradient, v)
    return script


def run_under_torch(script: str, graph: Graph) -> dict[str, Any]:
    """Execute our generated script with torch; each node's ``.grad`` by node id."""
    namespace: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(script, "<exported>", "exec"), namespace)  # our own script, not a user's
    names = python_names(graph)
    grads: dict[str, Any] = {}
    seen: set[int] = set()
    for nid in graph.nodes:
        tensor = namespace.get(names[nid])
        if tensor is None or id(tensor) in seen:
            # torch returns its operand itself where an op changes nothing (e.g.
            # flatten(x, 0, 0)): that name is the operand's tensor and its .grad
            # is the operand's, so there is nothing of this node's to compare.
            continue
        seen.add(id(tensor))
        grads[nid] = tensor.grad
    return grads


def check_against_torch(script: str, graph: Graph, output: str, v: np.ndarray | None) -> None:
    trace = backward(graph, forward(graph), output, v)
    theirs = run_under_torch(script, graph)
    for nid, node in graph.nodes.items():
        ours = trace.grads.get(nid)
        if node.is_leaf and not node.wants_grad:
            continue
        got = theirs.get(nid)
        if ours is None or got is None:
            # A retained non-leaf off the output's path: PyTorch leaves .grad None
            assert got is None or not np.any(got.numpy()), nid
            continue
        # atol: a gradient that is zero in exact arithmetic (x / sum(x) summed) is
        # rounding noise of ~1e-17 whose size depends on the order of summation.
        np.testing.assert_allclose(got.numpy(), ours, rtol=1e-12, atol=1e-15, err_msg=nid)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_round_trips(path) -> None:
    gf = load(path)
    round_trip(gf.graph, gf.output, gf.gradient)


@pytest.mark.skipif(torch is None, reason="needs torch (the test extra)")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_exported_example_runs_under_torch_with_our_gradients(path) -> None:
    gf = load(path)
    script = export_script(gf.graph, gf.output, gf.gradient, retain_grads=True)
    check_against_torch(script, gf.graph, gf.output, gf.gradient)


ODD_IDS = ["a b", "1st", "for", "torch", "x.grad", "ü", "print", "y-2", ""]


def _renamed(graph: Graph, data: st.DataObject) -> dict[str, str]:
    """Give some nodes ids that are not Python names."""
    mapping = {}
    for nid in list(graph.nodes):
        if data.draw(st.integers(0, 3)) == 0:
            new = data.draw(st.sampled_from(ODD_IDS)) + nid
            if new not in graph.nodes:
                graph.rename(nid, new)
                mapping[nid] = new
    return mapping


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(drawn=random_graph(max_ops=8), data=st.data())
def test_random_graphs_round_trip_and_match_torch(drawn, data) -> None:
    graph, _, output, v = drawn
    output = _renamed(graph, data).get(output, output)
    script = round_trip(graph, output, v)
    if torch is not None:
        check_against_torch(script, graph, output, v)


def test_names_that_are_not_python_get_a_comment_with_the_id() -> None:
    g = Graph()
    g.add_node("x 1", "input", value=[1.0, float("nan"), -float("inf")])
    g.add_node("for", "const", value=np.zeros((2, 0)))
    g.add_node("torch", "neg", ["x 1"])
    script = export_script(g, None, None)
    assert 'x_1 = torch.tensor([1.0, float("nan"), -float("inf")], dtype=torch.float64, ' in script
    assert '# id: "x 1"' in script and '# id: "for"' in script and '# id: "torch"' in script
    assert "torch.zeros(2, 0, dtype=torch.float64)" in script
    assert_same_graph(g, import_code(script).graph)


def test_an_unconnected_port_is_written_as_a_comment() -> None:
    g = Graph()
    g.add_node("x", "input", value=1.0)
    g.add_node("y", "add", ["x", None])
    script = export_script(g, None, None)
    assert "# y = add(...): an operand port is not connected" in script


@pytest.mark.skipif(torch is None, reason="needs torch (the test extra)")
def test_check_with_torch_runs_a_separate_process_and_agrees_on_seed2() -> None:
    gf = load(EXAMPLES[[p.stem for p in EXAMPLES].index("seed2_stack_vjp")])
    rows = compare_with_torch(gf.graph, gf.output, gf.gradient)
    by_node = {r.node: r for r in rows}
    assert set(by_node) == set(gf.graph.nodes)
    assert all(r.agree for r in rows)
    np.testing.assert_allclose(by_node["x1"].theirs, 1.1, rtol=1e-12)
    # A wrong gradient on our side is caught: PyTorch's numbers are really compared.
    gf.graph.set_value("x3", 4.0)
    theirs = run_with_torch(gf.graph, gf.output, gf.gradient)
    assert not np.allclose(theirs["x1"], 1.1)


def test_check_with_torch_reports_a_failing_script_in_one_line() -> None:
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0])
    g.add_node("y", "sum", ["x"])
    with pytest.raises(TorchCheckError) as info:
        run_with_torch(g, "y", np.ones(3))  # v of the wrong shape: PyTorch refuses it
    assert "\n" not in str(info.value) and str(info.value)


def _spelt_graph() -> Graph:
    """where, max, min and logsumexp in every form the script writer spells differently."""
    g = Graph()
    g.add_node("x", "input", value=[[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])  # ties on purpose
    g.add_node("y", "input", value=[5.0, 3.0, -1.0])
    g.add_node("w", "where", ["x", "y"], attrs={"condition": [True, False, True]})
    g.add_node("w0", "where", ["w", "x"], attrs={"condition": False})
    g.add_node("m", "max", ["w0"])
    g.add_node("m1", "max", ["x"], attrs={"dim": 1})
    g.add_node("n1", "min", ["x"], attrs={"dim": 0, "keepdim": True})
    g.add_node("n", "min", ["x"])
    g.add_node("l", "logsumexp", ["x"], attrs={"dim": 1})
    g.add_node("la", "logsumexp", ["x"], attrs={"dim": None, "keepdim": True})
    g.add_node("le", "logsumexp", ["x"], attrs={"dim": []})
    g.add_node("s1", "sum", ["m1"], attrs={"dim": None})
    g.add_node("s2", "sum", ["n1"], attrs={"dim": None})
    g.add_node("s3", "sum", ["l"], attrs={"dim": None})
    g.add_node("s4", "sum", ["la"], attrs={"dim": None})
    parts = ["m", "n", "s1", "s2", "s3", "s4", "le"]
    total = parts[0]
    for k, part in enumerate(parts[1:]):
        g.add_node(f"t{k}", "add", [total, part])
        total = f"t{k}"
    return g


def test_where_max_min_logsumexp_are_written_as_pytorch_writes_them() -> None:
    g = _spelt_graph()
    script = round_trip(g, "t5", None)
    assert "w = torch.where(torch.tensor([True, False, True]), x, y)" in script
    assert "w0 = torch.where(torch.tensor(False), w, x)" in script
    assert "m = torch.max(w0)\n" in script
    assert "m1 = torch.max(x, dim=1).values" in script
    assert "n1 = torch.min(x, dim=0, keepdim=True).values" in script
    assert "l = torch.logsumexp(x, dim=1)" in script
    assert "la = torch.logsumexp(x, dim=tuple(range(x.ndim)), keepdim=True)" in script
    assert "le = torch.logsumexp(x, dim=list(range(x.ndim)))" in script


@pytest.mark.skipif(torch is None, reason="needs torch (the test extra)")
def test_where_max_min_logsumexp_scripts_give_our_gradients_with_ties() -> None:
    g = _spelt_graph()
    script = export_script(g, "t5", None, retain_grads=True)
    check_against_torch(script, g, "t5", None)
    # The tie at 3.0 in x's first row: the full max splits, max over a dim picks one.
    trace = backward(g, forward(g), "m1", np.ones(2))
    np.testing.assert_array_equal(trace.grads["x"], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


@pytest.mark.parametrize(
    ("line", "op", "attrs"),
    [
        ("v = x.max()", "max", {"dim": None, "keepdim": False}),
        ("v = x.max(1)[0]", "max", {"dim": 1, "keepdim": False}),
        ("v, i = torch.min(x, dim=0, keepdim=True)", "min", {"dim": 0, "keepdim": True}),
        ("v = torch.amin(x)", "min", {"dim": None, "keepdim": False}),
        ("v = torch.max(x, x)", "maximum", {}),
        ("v = x.logsumexp(0)", "logsumexp", {"dim": 0, "keepdim": False}),
        ("v = torch.logsumexp(x, (0, 1))", "logsumexp", {"dim": [0, 1], "keepdim": False}),
    ],
)
def test_the_other_spellings_of_max_min_and_logsumexp_import(line, op, attrs) -> None:
    source = f"import torch\nx = torch.ones(2, 3, requires_grad=True)\n{line}\n"
    node = import_code(source).graph.nodes["v"]
    assert (node.op, node.attrs) == (op, attrs)


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ("v = x.max(1) + 1", 5, "(values, indices) of max/min: read .values"),
        ("v = x.max(1).indices + 1", 5, "indices of max/min"),
        ("v = torch.amax(x, dim=1)", 5, "torch.amax over a dim splits ties"),
        ("v = torch.where(x > 0, x, x)", 5, "torch.where needs torch.tensor(<True/False"),
        ("v = torch.where(torch.tensor([1.0, 0.0, 1.0]), x, x)", 17, "must be True/False"),
        ("v = torch.where(torch.tensor([[True], [False, True]]), x, x)", 17, "not rectangular"),
        ("v = torch.logsumexp(x, dim=tuple(range(3)))", 5, "range(3) is not every dim"),
        ("v = x.max(keepdim=True)", 5, "keepdim needs a dim"),
    ],
)
def test_bad_where_max_min_logsumexp_are_refused_at_their_column(line, column, message) -> None:
    source = f"import torch\nx = torch.ones(2, 3, requires_grad=True)\n{line}\n"
    with pytest.raises(CodeError) as info:
        import_code(source)
    assert f"line 3, column {column}:" in str(info.value)
    assert message in str(info.value)


def test_an_attribute_at_a_zero_default_is_still_written() -> None:
    g = Graph()
    g.add_node("x", "input", value=[1.0, 2.0])
    g.add_node("u", "unsqueeze", ["x"], attrs={"dim": 0})  # 0 == False, but PyTorch needs it
    script = round_trip(g, None, None)
    assert "u = torch.unsqueeze(x, dim=0)" in script


def test_softplus_round_trips_with_its_float_attributes() -> None:
    """A record with float attributes: the export writes them as keywords, the importer
    reads them back (positional too, in PyTorch's order)."""
    g = Graph()
    g.add_node("x", "input", value=np.array([0.2, 0.7]), requires_grad=True)
    g.add_node("y", "softplus", ["x"], attrs={"beta": 2.0, "threshold": 1.0})
    script = export_script(g, "y", np.ones(2))
    assert "torch.nn.functional.softplus(x, beta=2.0, threshold=1.0)" in script
    back = import_code(script).graph
    assert back.nodes["y"].op == "softplus"
    assert back.nodes["y"].attrs == {"beta": 2.0, "threshold": 1.0}
    code = (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = torch.nn.functional.softplus(x, 3, 0.5)\n"
    )
    assert import_code(code).graph.nodes["y"].attrs == {"beta": 3, "threshold": 0.5}
