"""The read-only viewer for captured traces: modules collapsed into boxes, their
inner steps played as one summarised step until a double-click expands them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from engine import tracefile
from gui.model.trace_view import GROUP, TraceView, describe
from support import torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from engine.capture import capture

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer1 = torch.nn.Linear(4, 8)
            self.layer2 = torch.nn.Linear(8, 3)

        def forward(self, x: object) -> object:
            return self.layer2(torch.relu(self.layer1(x)))

    torch.manual_seed(5)
    model = Net().double()
    x = torch.randn(2, 4, dtype=torch.float64)
    loss = torch.nn.functional.cross_entropy(model(x), torch.tensor([0, 2]))
    path = tmp_path_factory.mktemp("viewer") / "net.bptrace"
    capture(loss, names=model).save(path)
    return path


def test_modules_collapse_and_their_steps_summarise(trace_path: Path) -> None:
    view = TraceView(tracefile.load(trace_path))
    assert {GROUP + "layer1", GROUP + "layer2"} <= set(view.items)
    assert view.items[GROUP + "layer1"].members == ("layer1.weight", "T1", "layer1.bias", "Addmm1")
    # the box says what crosses it: Relu1 sends (2, 8) in, nothing leaves toward the input
    assert view.items[GROUP + "layer1"].subtitle == "4 nodes\n∇in [2, 8] ∇out -"
    assert view.items[GROUP + "layer2"].subtitle == "4 nodes\n∇in [2, 3] ∇out [2, 8]"
    # every trace step is shown exactly once, in PyTorch's order
    covered = [k for s in view.shown for k in range(s.first, s.last)]
    assert covered == list(range(len(view.trace.steps)))
    inner = [s for s in view.shown if s.source == s.target == GROUP + "layer1"]
    assert len(inner) == 1 and inner[0].last - inner[0].first == 3  # Addmm1 -> 3 operands... T1
    text = describe(view, view.shown.index(inner[0]))
    assert "inside layer1, 3 steps" in text and "gradient in:" in text
    collapsed = len(view.shown)
    assert view.toggle(GROUP + "layer1")
    assert "Addmm1" in view.items and len(view.shown) == collapsed + 2
    assert view.toggle("Addmm1") and GROUP + "layer1" in view.items  # folds back
    assert not view.toggle("NllLoss1")  # not in a module: nothing to fold


def test_step_panel_writes_the_edge_out(trace_path: Path) -> None:
    view = TraceView(tracefile.load(trace_path), expanded={"layer1", "layer2"})
    k = next(i for i, s in enumerate(view.shown) if s.target == "Relu1")
    text = describe(view, k)
    assert text.startswith(f"Step {k + 1} of {len(view.shown)}: Addmm2 → Relu1 (operand 1)")
    assert "vjp = upstream · J" in text
    step = view.steps_of(k)[0]
    np.testing.assert_allclose(
        step.upstream.ravel() @ step.jacobian(), step.vjp.ravel(), atol=1e-12
    )
    assert view.received(-1) == {"NllLoss1"}
    assert "Relu1" in view.received(k) and "Relu1" not in view.received(k - 1)


def test_viewer_window_plays_and_expands_on_double_click(qtbot, trace_path: Path) -> None:  # noqa: ANN001
    from gui.trace_viewer import open_trace

    window = open_trace(trace_path)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.k == -1 and "autograd nodes" in window.panel.toPlainText()
    qtbot.keyClick(window.canvas, Qt.Key.Key_Right)
    qtbot.keyClick(window.canvas, Qt.Key.Key_Right)
    assert window.k == 1 and window.label.text() == f"2 / {len(window.view.shown)}"
    assert window.panel.toPlainText().startswith("Step 2")
    qtbot.keyClick(window.canvas, Qt.Key.Key_End)
    last = window.view.shown[window.k]
    assert last.source == last.target == GROUP + "layer1"  # summarised until expanded
    box = window.canvas.boxes[GROUP + "layer1"]
    window.canvas.centerOn(box)
    at = window.canvas.mapFromScene(box.sceneBoundingRect().center())
    qtbot.mouseDClick(window.canvas.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert "Addmm1" in window.canvas.boxes and GROUP + "layer1" not in window.canvas.boxes
    shown = window.view.shown[window.k]  # still on the same step of the pass
    assert shown.first == last.first and not shown.summarised
    window.grab().save(str(trace_path.with_suffix(".png")))


def test_file_open_shows_a_trace_read_only_and_refuses_a_bad_one(
    qtbot,
    no_dialogs,
    trace_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    from gui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    before = window.doc.graph
    monkeypatch.setattr(MainWindow, "ask_open_path", lambda self: str(trace_path))
    window.open_dialog()
    (viewer,) = window.trace_windows
    qtbot.addWidget(viewer)
    assert "read-only" in viewer.windowTitle() and window.doc.graph is before
    bad = tmp_path / "bad.bptrace"
    bad.write_text('{"format": "backprop-studio-trace", "version": 9}')
    monkeypatch.setattr(MainWindow, "ask_open_path", lambda self: str(bad))
    window.open_dialog()
    assert len(window.trace_windows) == 1
    assert no_dialogs["errors"] == [
        "Cannot open bad.bptrace: unsupported trace version 9: this program reads 1"
    ]


def test_main_refuses_a_bad_trace_in_one_line(
    qapp,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],  # noqa: ANN001
) -> None:
    from gui.app import main

    bad = tmp_path / "cut.bptrace"
    bad.write_text('{"format": "backprop-studio-trace", "version": 1, "nodes": [')
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: not valid JSON") and err.count("\n") == 1
