"""The gradient-flow panel's model, headless: bars fill exactly when a parameter's
gradient is final, the active step's parameters are marked, a deep sigmoid MLP's first
layer is flagged vanishing (a ReLU one's is not), and user text stays text."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from engine.captured import as_graph
from engine.fileformat import load
from engine.gradient_flow import VANISHING, FlowRow
from engine.groups import GroupStep
from engine.trace import Step
from gui.model.gradient_flow_view import (
    HEADING,
    THRESHOLDS,
    FlowModel,
    chart,
    document_flow,
    final_view,
    flow_html,
    flow_svg,
    hover_text,
    module_titles,
)
from gui.model.results import Results
from gui.model.timeline import Timeline, timeline_of
from support import deep_mlp_trace, torch

ROOT = Path(__file__).resolve().parents[2]
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def trace_doc(trace) -> tuple[SimpleNamespace, Timeline]:  # noqa: ANN001
    """What the app's document holds for a captured pass, and the player's timeline."""
    shown = as_graph(trace)
    tl = timeline_of(shown.graph, Results(shown.forward, trace), shown.groups)
    return SimpleNamespace(captured=(trace, shown.forward), groups=shown.groups), tl


def flow_model(doc: SimpleNamespace, tl: Timeline) -> FlowModel:
    rows, error = document_flow(doc)
    assert error == ""
    return FlowModel(rows, tl, module_titles(doc.groups))


@pytest.fixture(scope="module")
def sigmoid() -> tuple[SimpleNamespace, Timeline]:
    if torch is None:
        pytest.skip("torch is not installed")
    return trace_doc(deep_mlp_trace("Sigmoid"))


@needs_torch
def test_bars_fill_exactly_when_a_gradient_is_final(sigmoid) -> None:  # noqa: ANN001
    doc, tl = sigmoid
    model = flow_model(doc, tl)
    final = doc.captured[0].grads
    assert model.view(tl.frame(tl.forward_length - 1)).reached == 0  # forward playing
    reached_before = 0
    for k in range(len(tl.steps) + 1):
        frame = tl.frame(tl.position_of_step(k))
        view = model.view(frame)
        for bar in view.bars:
            name = bar.row.name
            has_final = name in frame.grads and np.array_equal(frame.grads[name], final[name])
            assert bar.reached == has_final, (k, name)
        assert view.reached >= reached_before  # it only fills
        reached_before = view.reached
        step = tl.steps[k - 1] if k else None
        into = set(step.vjps) if isinstance(step, GroupStep) else (
            {step.operand} if isinstance(step, Step) else set())
        assert {b.row.name for b in view.bars if b.active} == into & {r.name for r in model.rows}
        assert f"backward step {k} of {len(tl.steps)}" in view.status
    assert reached_before == len(model.rows) == 20
    # depth order, grouped by module: ten Linear modules of a weight and a bias each
    assert [m.title for m in model.modules] == [f"{2 * i} · Linear" for i in range(10)]
    assert all(m.last - m.first == 1 for m in model.modules)


@needs_torch
def test_a_deep_sigmoid_mlp_is_flagged_vanishing_and_a_relu_one_is_not(sigmoid) -> None:  # noqa: ANN001
    view = final_view(*sigmoid)
    first = view.bars[0]
    assert first.row.name == "0.weight" and first.flag == "vanishing"
    assert first.row.mean_abs < VANISHING * max(b.row.mean_abs for b in view.bars)
    assert view.bars[-2].row.name == "18.weight" and view.bars[-2].flag == ""
    text = flow_html(view, 10)
    assert HEADING in text and labels_text(THRESHOLDS) in text
    assert f"<b>0.weight</b> is vanishing: {labels_text(first.row.reason)}" in text
    assert "VANISHING: mean |gradient|" in hover_text(first)
    relu = final_view(*trace_doc(deep_mlp_trace("ReLU")))
    assert relu.flagged == [] and relu.reached == 20
    assert "No parameter reached so far is flagged." in flow_html(relu, 10)


def labels_text(text: str) -> str:
    from gui.model.labels import esc

    return esc(text)


@needs_torch
def test_a_flag_shows_once_its_bar_is_reached(sigmoid) -> None:  # noqa: ANN001
    doc, tl = sigmoid
    model = flow_model(doc, tl)
    first_bar = model.view(tl.frame(tl.end)).bars[0]
    before = model.view(tl.frame(tl.position_of_step(first_bar.done_at - 1))).bars[0]
    assert not before.reached and before.flag == "" and "not reached yet" in hover_text(before)
    word = '"middle">vanishing</text>'  # written on the bar where it fits (a wide chart)
    assert word not in flow_svg(model.view(tl.frame(tl.forward_length)), width=4000)
    assert word in flow_svg(model.view(tl.frame(tl.end)), width=4000)


def test_the_chart_is_log10_of_each_mean_with_the_thresholds() -> None:
    rows = [FlowRow(f"p{i}", "", (2,), m, m, m, None) for i, m in enumerate((1e-7, 1e-2, 1.0, 0.0))]
    c = chart(rows)
    assert c.tops[:3] == pytest.approx((-7.0, -2.0, 0.0))
    assert c.tops[3] > c.floor  # a zero gradient keeps a stub at the floor
    assert c.vanishing == pytest.approx(math.log10(VANISHING * 1.0))
    assert c.floor <= -7.5 and c.ceiling >= 0.5 and c.decades[0] >= c.floor


def test_a_graphs_leaves_fill_too() -> None:
    gf = load(ROOT / "assets/examples/classifier_head.bpgraph")
    doc = SimpleNamespace(captured=None, groups=[], to_file=lambda: gf)
    from engine.autodiff import backward, forward

    fwd = forward(gf.graph)
    results = Results(fwd, backward(gf.graph, fwd, gf.output, gf.gradient))
    tl = Timeline(results)
    model = flow_model(doc, tl)
    assert [r.name for r in model.rows] == [n for n in fwd.order if n in results.trace.leaves]
    assert model.view(tl.frame(tl.forward_length)).reached == 0
    assert model.view(tl.frame(tl.end)).reached == len(model.rows)


def test_names_stay_text_in_the_words_and_the_chart() -> None:
    hostile = "<script>alert(1)</script>"
    rows = [FlowRow(hostile, hostile, (1,), 1e-9, 1e-9, 1e-9, None, "vanishing", hostile),
            FlowRow("b", "", (1,), 1.0, 1.0, 1.0, None)]
    gf = load(ROOT / "assets/examples/classifier_head.bpgraph")
    from engine.autodiff import backward, forward

    fwd = forward(gf.graph)
    tl = Timeline(Results(fwd, backward(gf.graph, fwd, gf.output, gf.gradient)))
    view = FlowModel(rows, tl, {hostile: hostile}).view(tl.frame(tl.end))
    assert view.flagged and view.bars[0].flag == "vanishing"
    for markup in (flow_html(view, 10), flow_svg(view, width=4000)):
        assert "<script" not in markup and "&lt;script&gt;" in markup


def test_no_output_says_why_in_one_line() -> None:
    gf = load(ROOT / "assets/examples/classifier_head.bpgraph")
    gf.output = None
    rows, error = document_flow(SimpleNamespace(captured=None, groups=[], to_file=lambda: gf))
    assert rows == [] and error == "the graph has no output to call backward() on"
    from engine.autodiff import forward

    tl = Timeline(Results(forward(gf.graph)))
    view = FlowModel(rows, tl, {}, error).view(tl.frame(tl.end))
    assert f"No gradient flow: {error}" in flow_html(view, 10)
