"""The gradient flow (``trace.gradient_flow()``): every figure is PyTorch's own, from the
model's ``.grad``; a deep sigmoid MLP's first layer is flagged vanishing, a ReLU one's not."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine import tracefile
from engine.autodiff import backward, forward
from engine.capture import capture, tracking
from engine.fileformat import load
from engine.gradient_flow import (
    EXPLODING,
    VANISHING,
    FlowRow,
    flagged,
    graph_flow,
    trace_flow,
)
from engine.groups import Group
from support import deep_mlp, torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")
ROOT = Path(__file__).resolve().parents[2]


def flow_of(model: torch.nn.Module) -> list[FlowRow]:
    x = torch.randn(8, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    return capture(model(x).sum(), names=model).gradient_flow()


def torch_figures(name: str, p: torch.Tensor) -> tuple[object, ...]:
    g = p.grad.detach()
    return (
        name,
        name.rpartition(".")[0],
        tuple(p.shape),
        g.abs().mean().item(),
        g.abs().max().item(),
        torch.linalg.vector_norm(g).item(),
        (torch.linalg.vector_norm(g) / torch.linalg.vector_norm(p.detach())).item(),
    )


def figures(row: FlowRow) -> tuple[object, ...]:
    return row.name, row.module, row.shape, row.mean_abs, row.max_abs, row.norm, row.ratio


@pytest.mark.parametrize("activation", ["Sigmoid", "ReLU"])
def test_every_figure_is_torchs_in_depth_order(activation: str) -> None:
    model = deep_mlp(getattr(torch.nn, activation))
    rows = flow_of(model)
    want = [torch_figures(n, p) for n, p in model.named_parameters()]
    assert [r.name for r in rows] == [w[0] for w in want]  # depth order: 0.weight first
    for row, expected in zip(rows, want, strict=True):
        got = figures(row)
        assert got[:3] == expected[:3]
        for a, b in zip(got[3:], expected[3:], strict=True):
            assert a == pytest.approx(b, rel=1e-12) or (math.isinf(a) and math.isinf(b))


def test_a_deep_sigmoid_mlp_vanishes_and_a_relu_one_does_not() -> None:
    sigmoid = {r.name: r for r in flow_of(deep_mlp(torch.nn.Sigmoid))}
    first, last = sigmoid["0.weight"], sigmoid["18.weight"]
    assert first.mean_abs < 1e-4 * last.mean_abs  # orders of magnitude below
    assert first.flag == "vanishing" and "(0.0001 × the largest parameter's" in first.reason
    assert last.flag == ""
    relu = flow_of(deep_mlp(torch.nn.ReLU))
    largest = max(r.mean_abs for r in relu)
    assert relu[0].mean_abs > 1e-2 * largest
    assert [r.flag for r in relu] == [""] * len(relu)


def test_the_thresholds() -> None:
    def row(name: str, mean: float) -> FlowRow:
        return FlowRow(name, "", (1,), mean, mean, mean, None)

    median = [row(f"p{i}", 1.0) for i in range(4)]
    rows = flagged([*median, row("big", 1.01 * EXPLODING), row("tiny", 0.99 * VANISHING * 1010)])
    assert [r.flag for r in rows] == ["", "", "", "", "exploding", "vanishing"]
    assert "(1000 × the median parameter's" in rows[4].reason
    assert [r.flag for r in flagged([row("a", 0.0), row("b", 0.0)])] == ["", ""]


def test_a_loaded_trace_has_the_same_flow(tmp_path: Path) -> None:
    model = deep_mlp(torch.nn.Tanh)
    with tracking(model):  # the forward's values: the weights' norms survive the file
        loss = model(torch.ones(2, 16, dtype=torch.float64)).sum()
    live = capture(loss, names=model)
    tracefile.save(tmp_path / "t.bptrace", live)
    loaded = tracefile.load(tmp_path / "t.bptrace")
    for a, b in zip(trace_flow(loaded), live.gradient_flow(), strict=True):
        assert figures(a)[:6] == figures(b)[:6] and a.ratio == pytest.approx(b.ratio, rel=1e-12)


def test_a_graphs_leaves_in_depth_order_with_their_group() -> None:
    """The engine's backward is checked against PyTorch elsewhere; here each row's
    figures are torch's, computed from the leaf's ``.grad`` that backward gives."""
    gf = load(ROOT / "assets/examples/classifier_head.bpgraph")
    matmuls = [n for n, node in gf.graph.nodes.items() if node.op == "matmul"]
    gf.groups = [Group("head", matmuls)]
    rows = graph_flow(gf)
    fwd = forward(gf.graph)
    trace = backward(gf.graph, fwd, gf.output, gf.gradient)
    assert [r.name for r in rows] == [n for n in fwd.order if n in trace.leaves]
    for r in rows:
        p = torch.tensor(fwd.values[r.name], requires_grad=True)
        p.grad = torch.tensor(trace.leaf_grads[r.name])
        want = torch_figures(r.name, p)
        assert r.shape == want[2] and list(figures(r)[3:]) == pytest.approx(want[3:], rel=1e-12)
        feeds_head = set(gf.graph.consumers(r.name)) & set(matmuls)
        assert r.module == ("head" if feeds_head else "")
    assert {r.module for r in rows} == {"head", ""}
