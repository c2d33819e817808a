"""Every benchmark script still runs: its graph builders at tiny sizes (checks, not timings).

A benchmark broke without anyone noticing once (its graph gave one node more operands
than the graph now accepts), and figures are only read by hand. These tests run what
each script builds, small, so a script cannot silently break again. A new script in
``benchmarks/`` needs a check here: the first test fails until it has one.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest
import torch

from engine.autodiff import backward, forward
from engine.capture import capture
from engine.fileformat import load
from gui.document import GraphDocument
from gui.model.timeline import Timeline
from support import BENCHMARKS, script

CHECKED = {"bench_capture", "bench_engine", "bench_export", "bench_gui", "bench_legibility",
           "bench_train"}


def test_every_script_has_a_check() -> None:
    assert {p.stem for p in BENCHMARKS.glob("*.py")} == CHECKED


def test_train_quick_run_prints_every_figure(qapp) -> None:  # noqa: ANN001
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert script("bench_train").main(["--quick"]) == 0
    names = [line.split(":")[0] for line in out.getvalue().splitlines()]
    assert names == ["train_step_1000_ms", "forward_backward_1000_ms", "train_step_ratio",
                     "loss_curve_repaint_10k_ms"]


def test_engine_quick_run_prints_every_figure() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert script("bench_engine").main(["--quick"]) == 0
    names = [line.split(":")[0] for line in out.getvalue().splitlines()]
    for figure in (
        "teaching_200_ms",
        "scalar_dag_1000_ratio_vs_torch",
        "matrix_100_ratio_vs_torch",
        "scalar_dag_10k_ratio_vs_torch",
        "scalar_dag_100k_ratio_vs_torch",
        "peak_mem_1000_mb",
    ):
        assert figure in names


@pytest.mark.parametrize(
    "build",
    [
        lambda b: b.teaching_graph(60),
        lambda b: b.scalar_dag(1500, seed=3),  # > 256 sinks: a tree of stacks sums them
        lambda b: b.matrix_graph(12, 5),
    ],
    ids=["teaching", "scalar_dag", "matrix"],
)
def test_engine_and_torch_compute_the_same_graph(build) -> None:  # noqa: ANN001
    bench = script("bench_engine")
    graph, out = build(bench)
    assert all(len(n.inputs) <= 256 for n in graph.nodes.values())
    trace = backward(graph, forward(graph), out)
    leaves = bench.torch_runner(graph, out)()
    wanted = [n for n in graph.nodes if graph.nodes[n].wants_grad]
    assert wanted
    reached = [n for n in wanted if trace.grads[n] is not None]
    assert reached
    for nid in wanted:
        if trace.grads[nid] is None:  # nothing leads from it to the output
            assert leaves[nid].grad is None
            continue
        np.testing.assert_allclose(
            trace.grads[nid], leaves[nid].grad.numpy(), rtol=1e-12, atol=1e-12
        )


def test_gui_graph_file_opens_in_the_window(qapp) -> None:  # noqa: ANN001
    bench = script("bench_gui")
    graph, output = bench.layered_graph(60, seed=1)
    assert output in graph and len(graph) >= 50
    window = bench.open_window(bench.graph_path(60))
    try:
        assert len(window.canvas.canvas.nodes) == len(window.doc.graph) >= 50
        assert window.doc.results.trace is not None
    finally:
        bench.close(window)
    assert all(callable(f) for f in bench.FIGURES.values())


def test_gui_painted_figure_needs_the_viewport_painted(qtbot) -> None:  # noqa: ANN001
    """``*_painted_ms`` times an act to the end of the events it posted, and refuses a
    figure whose viewport did not paint by then (an app showing nothing new yet)."""
    from PySide6.QtWidgets import QAbstractScrollArea

    bench = script("bench_gui")
    area = QAbstractScrollArea()
    qtbot.addWidget(area)
    area.resize(200, 100)
    area.show()
    qtbot.waitExposed(area)
    undone = []
    figure = bench._painted_ms(area.viewport().update, area.viewport(),
                               lambda: undone.append(1), repeats=3)
    assert figure > 0 and undone == [1, 1, 1]
    with pytest.raises(RuntimeError, match="did not paint"):
        bench._painted_ms(lambda: None, area.viewport(), lambda: None, repeats=1)


def test_capture_model_is_captured() -> None:
    bench = script("bench_capture")
    model = bench.mlp(2, 3)
    trace = capture(model(torch.randn(2, 3, dtype=torch.float64)).sum(), names=model)
    assert len(trace.steps) >= 4
    model, loss = bench._resnet18()  # the resnet18 figures' model: builds, and its loss runs
    assert loss().shape == () and sum(p.numel() for p in model.parameters()) > 11_000_000


def test_export_chain_file_has_the_steps_it_says(tmp_path: Path) -> None:
    path = script("bench_export").chain_file(7, tmp_path)
    gf = load(path)
    assert len(backward(gf.graph, forward(gf.graph), gf.output).steps) == 7


def test_export_frame_figures_time_each_picture(qapp, tmp_path: Path) -> None:  # noqa: ANN001
    figures = script("bench_export").mp4_frame_ms(tmp_path, steps=3)
    assert set(figures) == {"mp4_render_frame_ms", "mp4_encode_frame_ms"}
    assert all(v > 0 for v in figures.values())


def test_legibility_frames_render(qapp, tmp_path: Path) -> None:  # noqa: ANN001
    bench = script("bench_legibility")
    path = BENCHMARKS.parent / "assets" / "examples" / "seed1_square_sum.bpgraph"
    doc = GraphDocument()
    doc.load(load(path, partial=True), path)
    timeline = Timeline(doc.results)
    position = bench.frames_of(timeline)[-1]
    assert bench.expected_names(doc, timeline, position)
    image = bench.render_frame(doc, position, (320, 180), view="canvas")
    assert image.width() == 320


def test_legibility_random_graphs_play(qapp) -> None:  # noqa: ANN001
    bench = script("bench_legibility")
    doc = bench.random_document(min(bench.RANDOM_SIZES))
    timeline = Timeline(doc.results)
    assert len(doc.graph.nodes) >= 8 and len(timeline.steps) >= 1
    names = bench.expected_names(doc, timeline, bench.frames_of(timeline)[0])
    assert set(names) == set(doc.graph.nodes)  # a small graph: every name counts


def _tsv_word(line: int, left: int, width: int, text: str) -> str:
    """One word row of tesseract's TSV output (20 px high)."""
    return f"5\t1\t1\t1\t{line}\t1\t{left}\t10\t{width}\t20\t90\t{text}"


def test_legibility_lines_are_cut_between_boxes_not_inside_one() -> None:
    bench = script("bench_legibility")
    header = "\t".join("level page block par line word left top width height conf text".split())
    tsv = "\n".join(
        [
            header,
            _tsv_word(1, 90, 40, "wx"),  # rows need not come left to right
            _tsv_word(1, 10, 40, "z"),
            _tsv_word(1, 60, 20, "="),  # one box's title: z = wx
            _tsv_word(1, 400, 60, "log_p"),  # the next box along, on the same line
            _tsv_word(2, 10, 40, "y1=x"),
            _tsv_word(3, 500, 30, "—"),  # an edge's stroke just left of a name
            _tsv_word(3, 540, 60, "loss"),
        ]
    )
    assert bench.line_starts(tsv, 1.5) == {"z", "logp", "y1", "loss"}
    assert bench.line_starts(tsv, None) == {"z", "y1", ""}  # the first version's rule


def test_legibility_frame_is_read_whole_also_as_exported(tmp_path: Path) -> None:
    from PIL import Image

    bench = script("bench_legibility")
    png = tmp_path / "frame.png"
    Image.new("RGB", (64, 36), (240, 240, 235)).save(png)
    as_exported, prepared = bench.PREPARED.readings
    assert bench.prepare(png, as_exported) == png
    image = Image.open(bench.prepare(png, prepared))
    border = 2 * prepared.border_px
    assert image.size == (2 * 64 + border, 2 * 36 + border)
    assert image.getextrema() == (255, 255)  # light paper, no ink: all white


def test_legibility_presentation_figures_measure(qapp, settings_sandbox) -> None:  # noqa: ANN001
    """The write-up's sizes and the label-overlap count run on a small example."""
    bench = script("bench_legibility")
    doc = bench.example_document(
        BENCHMARKS.parent / "assets" / "examples" / "seed2_stack_vjp.bpgraph"
    )
    win = bench.presentation_window()
    try:
        from PySide6.QtCore import QStandardPaths

        assert not QStandardPaths.isTestModeEnabled()  # later tests keep the suite's sandbox
        body, subs = bench.writeup_px(win, [doc])
        assert min(body) >= 22 and min(subs) >= 15
        covered, frames = bench.label_covers(win, [doc])
        assert frames == 15 and 0 <= covered <= frames
    finally:
        win.close()
