"""The example library: every file runs through the CLI and matches PyTorch.

The PyTorch side is built generically from the loaded file (each op mapped to
torch, ``out.backward(gradient=v)``), so a new example is checked by merely
adding it to assets/examples/. The seeds' numbers are also checked explicitly:
they are the numbers users compare with their tutorials first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import cli
from engine.autodiff import backward, end_to_end_jacobian, forward
from engine.examples import EXAMPLES_DIR
from engine.fileformat import SUFFIX, GraphFile, load
from support import close, torch_op

EXAMPLES = sorted(EXAMPLES_DIR.glob(f"*{SUFFIX}"))
REQUIRED = [
    "seed1_square_sum",
    "seed2_stack_vjp",
    "seed3_mean_of_square",
    "seed4_weighted_v",
    "seed4b_ones_v",
    "fan_out",
    "broadcasting",
    "neuron_layer",
    "mean_vs_sum",
    "logistic_loss",
    "matmul_chain",
    "classifier_head",
    "attention_scores",
]


@pytest.fixture(scope="module")
def torch() -> Any:
    """PyTorch, the oracle; the comparisons skip where it is not installed."""
    return pytest.importorskip("torch")


def cli_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = cli.main([str(path), "--json", "--steps"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""  # no NaN/inf warnings in the shipped examples
    return json.loads(out)


def torch_reference(gf: GraphFile, torch: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Values and gradients of the same computation in PyTorch float64."""
    tensors: dict[str, Any] = {}
    for nid in gf.graph.topological_order():
        node = gf.graph.nodes[nid]
        if node.is_leaf:
            t = torch.tensor(node.value, dtype=torch.float64, requires_grad=node.wants_grad)
        else:
            t = torch_op(node.op, [tensors[s] for s in node.inputs], node.attrs)
            if t.requires_grad:
                t.retain_grad()
        tensors[nid] = t
    v = None if gf.gradient is None else torch.tensor(gf.gradient, dtype=torch.float64)
    tensors[gf.output].backward(gradient=v)
    values = {k: t.detach().numpy() for k, t in tensors.items()}
    grads = {
        k: (t.grad.numpy() if t.requires_grad and t.grad is not None else None)
        for k, t in tensors.items()
    }
    return values, grads


def test_the_library_is_complete() -> None:
    stems = {p.stem for p in EXAMPLES}
    assert set(REQUIRED) <= stems
    assert len(stems) >= 11


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_matches_torch(path: Path, torch: Any, capsys: pytest.CaptureFixture[str]) -> None:
    gf = load(path)
    got = cli_json(path, capsys)
    values, grads = torch_reference(gf, torch)
    assert got["output"] == gf.output
    assert set(got["values"]) == set(gf.graph.nodes) == set(got["grads"])
    for nid in gf.graph.nodes:
        close(got["values"][nid], values[nid])
        if grads[nid] is None:
            assert got["grads"][nid] is None, nid
        else:
            assert got["grads"][nid] is not None, nid
            close(got["grads"][nid], grads[nid])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_steps_print_and_compose(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Small tensors: every Jacobian prints, and each VJP is upstream times Jacobian."""
    got = cli_json(path, capsys)
    last: dict[str, Any] = {}
    assert got["steps"]
    for step in got["steps"]:
        jac = step["jacobian"]
        assert jac is not None, (step["consumer"], step["operand"])
        upstream = np.ravel(np.asarray(step["upstream"], dtype=float))
        vjp = np.ravel(np.asarray(step["vjp"], dtype=float))
        np.testing.assert_allclose(upstream @ np.asarray(jac, dtype=float), vjp, atol=1e-12)
        last[step["operand"]] = step["accumulated"]
    for nid, acc in last.items():
        np.testing.assert_allclose(acc, got["grads"][nid], atol=1e-12)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_reads_aloud(path: Path) -> None:
    gf = load(path)
    assert gf.title and len(gf.title) <= 90
    assert 80 <= len(gf.description) <= 700
    assert not gf.extra  # the view is the GUI's business
    # A hand layout (every node's position, nothing else) only where the automatic one
    # frames badly on a 1280x720 screen.
    kept = {key for extra in gf.node_extra.values() for key in extra}
    assert kept <= {"position"}
    assert not gf.node_extra or set(gf.node_extra) == set(gf.graph.nodes)


def leaf_grads(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return cli_json(EXAMPLES_DIR / f"{path}{SUFFIX}", capsys)["grads"]


def test_seed1(capsys: pytest.CaptureFixture[str]) -> None:
    g = leaf_grads(Path("seed1_square_sum"), capsys)
    assert g["x"] == [2.0, 4.0, 6.0]


def test_seed2(capsys: pytest.CaptureFixture[str]) -> None:
    g = leaf_grads(Path("seed2_stack_vjp"), capsys)
    np.testing.assert_allclose([g["x1"], g["x2"], g["x3"]], [1.1, 1.4, 1.0], rtol=1e-12)
    gf = load(EXAMPLES_DIR / "seed2_stack_vjp.bpgraph")
    y = gf.graph.nodes["y"]
    assert y.op == "stack" and y.inputs == ["y1", "y2", "y3"]
    np.testing.assert_array_equal(gf.gradient, [0.1, 0.2, 0.3])
    fwd = forward(gf.graph)
    np.testing.assert_array_equal(fwd.values["y1"], 6.0)  # x1·x2·x3
    np.testing.assert_array_equal(fwd.values["y2"], 6.0)  # x1+x2+x3
    np.testing.assert_array_equal(fwd.values["y3"], 7.0)  # x1+x2·x3
    jac = end_to_end_jacobian(gf.graph, fwd, "y", ["x1", "x2", "x3"])
    np.testing.assert_array_equal(jac, [[6, 3, 2], [1, 1, 1], [1, 3, 2]])


def test_seed3(capsys: pytest.CaptureFixture[str]) -> None:
    g = leaf_grads(Path("seed3_mean_of_square"), capsys)
    assert g["x"] == [[1.5, 1.5], [1.5, 1.5]]


def test_seed4_and_4b(capsys: pytest.CaptureFixture[str]) -> None:
    g = leaf_grads(Path("seed4_weighted_v"), capsys)
    assert [g["x1"], g["x2"], g["x3"]] == [10.0, 34.0, 42.0]
    g = leaf_grads(Path("seed4b_ones_v"), capsys)
    assert [g["x1"], g["x2"], g["x3"]] == [5.0, 18.0, 34.0]
    a = load(EXAMPLES_DIR / "seed4_weighted_v.bpgraph")
    b = load(EXAMPLES_DIR / "seed4b_ones_v.bpgraph")
    assert list(a.graph.nodes) == list(b.graph.nodes)  # the same graph ...
    np.testing.assert_array_equal(a.gradient, [3, 2, 1])  # ... with a different v
    np.testing.assert_array_equal(b.gradient, [1, 1, 1])
    assert "4b" in a.description and "[10, 34, 42]" in b.description  # each explains the other


def test_teaching_examples_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    assert leaf_grads(Path("fan_out"), capsys)["x"] == 7.0
    g = leaf_grads(Path("broadcasting"), capsys)
    assert g["b"] == 6.0 and g["x"] == [1.0, 2.0, 3.0]
    assert leaf_grads(Path("mean_vs_sum"), capsys)["x"] == [1.25] * 4
    assert leaf_grads(Path("matmul_chain"), capsys)["x"] == [2.0, 4.0]
    g = leaf_grads(Path("logistic_loss"), capsys)
    assert g["w"] == [-0.5, -1.0] and g["b"] == -0.5
    g = leaf_grads(Path("neuron_layer"), capsys)
    assert np.asarray(g["W"]).shape == (2, 3) and g["b"] == g["z"]


def test_fan_out_receives_two_steps(capsys: pytest.CaptureFixture[str]) -> None:
    steps = cli_json(EXAMPLES_DIR / "fan_out.bpgraph", capsys)["steps"]
    into_x = [s for s in steps if s["operand"] == "x"]
    assert sorted(s["vjp"] for s in into_x) == [3.0, 4.0]
    assert into_x[-1]["accumulated"] == 7.0


def test_a_one_element_outputs_jacobian_is_its_backward_pass_seeded_with_ones() -> None:
    """J of a one-element output is one row: the pass a backward seeded with ones made
    (its trace's grads), taken instead of a second pass, holds the same numbers."""
    checked = 0
    for path in EXAMPLES:
        gf = load(path)
        fwd = forward(gf.graph)
        if gf.output is None or np.size(fwd.values.get(gf.output, np.zeros(2))) != 1:
            continue
        trace = backward(gf.graph, fwd, gf.output, np.ones(np.shape(fwd.values[gf.output])))
        leaves = list(trace.leaves)
        passed = end_to_end_jacobian(gf.graph, fwd, gf.output, leaves)
        seeded = end_to_end_jacobian(gf.graph, fwd, gf.output, leaves, seeded=trace.grads)
        assert passed is not None and seeded is not None, path.name
        np.testing.assert_array_equal(seeded, passed, err_msg=path.name)
        checked += 1
    assert checked >= 5
