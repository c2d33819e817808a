"""The Gradient flow tab on a real window: it fills as the player steps, the flagged
bar is drawn in the error colour, hovering a bar shows its figures; the handout and the
web player of a captured trace carry it (a 10-layer sigmoid MLP: ``0.weight`` vanishes)."""

from __future__ import annotations

import math
import re
import unicodedata
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from engine.gradient_flow import VANISHING
from gui.model import colours
from gui.model.gradient_flow_view import HEADING, THRESHOLDS
from support import deep_mlp_trace, torch

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.fixture(scope="module")
def sigmoid_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flow") / "sigmoid.bptrace"
    deep_mlp_trace("Sigmoid").save(path)
    return path


@pytest.fixture
def window(qtbot, settings_sandbox, sigmoid_trace: Path):  # noqa: ANN001, ANN201
    from gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    assert w.files.load_path(sigmoid_trace)
    w.tabs.setCurrentIndex(w.tabs.indexOf(w._flow_tab))
    assert w.tabs.tabText(w.tabs.currentIndex()) == "Gradient flow"
    assert w.tabs.tabText(w.tabs.currentIndex() - 1) == "Chain rule"  # beside it
    qtbot.waitExposed(w)
    return w


def _brush(panel, index: int) -> QColor | None:  # noqa: ANN001
    """Bar ``index``'s fill colour, None when hollow."""
    brush = panel.bars.opts["brushes"][index]
    return None if brush.style() == Qt.BrushStyle.NoBrush else brush.color()


def test_the_panel_fills_as_the_player_steps(window) -> None:  # noqa: ANN001
    panel, player, tl = window.gradient_flow, window.player, window.player.timeline
    player.seek(tl.forward_length)
    assert panel.view.reached == 0 and "no gradient" not in panel.text()
    assert "0 of 20 parameters reached" in panel.text()
    seen = []
    for _ in range(len(tl.steps)):
        window.player_bar.named_actions["step_forward"].trigger()
        seen.append(panel.view.reached)
        for i, bar in enumerate(panel.view.bars):  # hollow until reached
            assert (_brush(panel, i) is not None) == bar.reached
            pen = panel.bars.opts["pens"][i].color()
            assert (pen == QColor(colours.NODE_SELECTED)) == bar.active
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == 20
    assert len(set(seen)) == 11  # one Linear module (weight and bias) at a time
    assert THRESHOLDS in panel.text() and HEADING in panel.text()
    assert any(label.isVisible() for label in panel._labels)  # marks over the bars
    player.seek(tl.forward_length)  # back before backward: no mark, no bar left filled
    assert not any(label.isVisible() for label in panel._labels)
    assert all(_brush(panel, i) is None for i in range(20))


def test_the_flagged_bar_and_its_reason(window) -> None:  # noqa: ANN001
    panel = window.gradient_flow
    window.player_bar.named_actions["end"].trigger()
    first = panel.view.bars[0]
    assert first.row.name == "0.weight" and first.flag == "vanishing"
    assert _brush(panel, 0) == QColor(colours.ERROR)
    assert _brush(panel, 19) == QColor(colours.EDGE_DONE)  # 18.bias: not flagged
    assert "0.weight is vanishing: mean |gradient|" in panel.text()
    largest = max(b.row.mean_abs for b in panel.view.bars)
    drawn = [line.value() for line in panel._lines if line.isVisible()]  # dashed
    assert math.log10(VANISHING * largest) == pytest.approx(drawn[0])
    named = panel.plot.getAxis("right")._tickLevels[0]  # each line named beside it
    assert [name for _, name in named] == ["vanishing", "exploding"][: len(drawn)]
    assert panel.plot.isVisible() and panel.bars.isVisible()


def test_hover_shows_the_numbers(window, qtbot) -> None:  # noqa: ANN001
    panel = window.gradient_flow
    window.player_bar.named_actions["end"].trigger()
    qtbot.wait(20)
    panel.plot.scene().sigMouseMoved.emit(panel.bar_centre(0))
    tip = panel.plot.toolTip()
    row = panel.view.bars[0].row
    assert panel.hovered == 0
    for text in ("0.weight", "0 · Linear", "shape 16×16", f"mean |grad| {row.mean_abs:.3g}",
                 f"max |grad| {row.max_abs:.3g}", f"‖grad‖ {row.norm:.3g}",
                 f"‖grad‖/‖weight‖ {row.ratio:.3g}", "VANISHING"):
        assert text in tip
    window.player.seek(window.player.timeline.forward_length)
    panel.plot.scene().sigMouseMoved.emit(panel.bar_centre(0))
    assert "not reached yet" in panel.plot.toolTip()


def test_a_graph_document_shows_its_leaves(qtbot, settings_sandbox) -> None:  # noqa: ANN001
    from gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    panel = w.gradient_flow
    w.tabs.setCurrentIndex(w.tabs.indexOf(w._flow_tab))  # an empty document: no bars
    assert "No gradient flow: the graph has no output" in panel.text()
    assert not panel.bars.isVisible()
    assert w.files.load_path(ROOT / "assets/examples/classifier_head.bpgraph")
    w.player_bar.named_actions["end"].trigger()
    leaves = list(w.doc.results.trace.leaves)
    assert sorted(b.row.name for b in panel.view.bars) == sorted(leaves)
    assert panel.view.reached == len(leaves)


def test_the_handout_and_the_web_player_carry_it(sigmoid_trace: Path, tmp_path: Path) -> None:
    from pypdf import PdfReader

    from gui.export import main as export_main

    for name in ("lesson.pdf", "lesson.html"):
        args = [str(sigmoid_trace), "--all", "--out", str(tmp_path / name), "--size", "400x225"]
        assert export_main(args) == 0
    page = PdfReader(tmp_path / "lesson.pdf").pages[-1].extract_text()
    words = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", page))  # the "fl" ligature
    assert HEADING in words and "0.weight is vanishing: mean |gradient|" in words
    assert "1e-6" in words and "mean |gradient| (log scale)" in words  # the chart: vector text
    html = (tmp_path / "lesson.html").read_text("utf-8")
    slide = html[html.index('<section class="slide flow"'):]
    assert HEADING in slide and "<b>0.weight</b> is vanishing" in slide and "<svg" in slide
    assert slide.count("<rect") >= 20 and "<title>0.weight" in slide  # a tooltip per bar
