"""Presentation mode keeps the chain-rule step in view: a class cannot scroll the projector.

At 1280x720 a step with a 3x3 Jacobian (a 50-node random graph, step 31 of 62) was taller
than the panel: its last matrix row was cut and a scroll bar showed. The panel then shrank
the text to its height, to 12-14 px with 8-10 px subscripts, and its heading jumped from
step to step. Now, in presentation mode only (the window's panel scrolls), the text keeps
one size of at least 22 px (sub- and superscripts 15 px) and a step that does not fit is
shortened by the panel's stated rule (``SHORTENINGS``).
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from engine.examples import EXAMPLES_DIR
from engine.fileformat import GraphFile
from gui.main_window import MainWindow
from gui.model.chain_rule import SUMMARY_HEADING
from gui.panels.chain_rule import PRESENT_BODY_PX, PRESENT_SUB_PX, step_bottom, text_px
from support import present, script


@pytest.fixture
def presenting(make_window):  # noqa: ANN001, ANN201
    return present(make_window(size=(1280, 720)))


def _random50(win: MainWindow) -> None:
    graph, output = script("bench_gui").layered_graph(50, seed=50)  # bench_legibility's 50
    win.doc.load(GraphFile(graph=graph, output=output), None)
    QApplication.processEvents()


def _step_in_view(win: MainWindow, k: int) -> str:
    """Show step ``k``; assert its text lies inside the panel, scrolled to the top, with
    nothing to scroll (but the whole call's summary after the last step) and nothing
    past the right edge; return its title line."""
    win.player.seek(win.player.timeline.position_of_step(k))
    QApplication.processEvents()
    text = win.chain_rule.text()
    browser = win.chain_rule.browser
    doc, viewport = browser.document(), browser.viewport()
    bar = browser.verticalScrollBar()
    summary = SUMMARY_HEADING in text
    assert bar.value() == 0 and (summary or bar.maximum() == 0), (k, bar.maximum())
    first = doc.documentLayout().blockBoundingRect(doc.firstBlock())
    assert first.top() >= 0 and step_bottom(doc) <= viewport.height(), (k, step_bottom(doc))
    assert doc.idealWidth() <= viewport.width() + 1  # and the width, the summary's too
    body, subs = text_px(doc)
    assert min(body) >= PRESENT_BODY_PX and min(subs, default=99) >= PRESENT_SUB_PX, k
    assert len(set(body)) == 1, k  # one size: the heading as large at every step
    return text.splitlines()[0]


def test_a_tall_step_fits_the_panel_in_presentation_mode(presenting: MainWindow) -> None:
    win = presenting
    _random50(win)
    assert len(win.player.timeline.steps) == 62
    title = _step_in_view(win, 31)
    assert title.startswith("Step 31 of 62") and "n4_1" in title and "n3_6" in title
    panel = win.chain_rule
    assert "-1.171" in panel.text()  # the row arriving from above keeps its numbers
    assert panel.elide and "J[3×3]" in panel.text()  # shortened: the test is not vacuous
    win.leave_presentation()  # the window's panel scrolls a tall step instead
    win.resize(1280, 720)
    QApplication.processEvents()
    assert not win.chain_rule.fit_height


@pytest.mark.parametrize("stem", sorted(p.stem for p in EXAMPLES_DIR.glob("*.bpgraph")))
def test_every_example_step_fits_the_panel_in_presentation_mode(
    presenting: MainWindow, stem: str
) -> None:
    win = presenting
    assert win.files.load_path(EXAMPLES_DIR / f"{stem}.bpgraph", example=True)
    QApplication.processEvents()
    steps = len(win.player.timeline.steps)
    for k in range(1, steps + 1):
        assert _step_in_view(win, k).startswith(f"Step {k} of {steps}")


def test_a_4x4_jacobian_step_is_shortened_by_the_rule_not_shrunk(presenting: MainWindow) -> None:
    """Seed 3's 4x4 Jacobians do not fit the projector's panel at 22 px: the step is
    written with the Jacobian as its shape, the upstream row's numbers kept, the size
    kept; the window's panel writes it in full at the app's size, and scrolls."""
    win = presenting
    assert win.files.load_path(EXAMPLES_DIR / "seed3_mean_of_square.bpgraph", example=True)
    QApplication.processEvents()
    _step_in_view(win, 2)
    panel = win.chain_rule
    text = panel.text()
    assert panel.elide and "J[4×4]" in text and "0.25" in text
    assert "Row vector" not in text and "row vector" not in text  # the words on J go
    win.leave_presentation()
    win.resize(1280, 720)
    QApplication.processEvents()
    assert not panel.compact and not panel.elide
    assert "row vector ∂out/∂z times the Jacobian" in panel.text()


def test_a_big_edge_label_near_the_view_edge_keeps_off_the_step_boxes(
    presenting: MainWindow,
) -> None:
    """Seed 3, step 3: the scaled-up 4x4 Jacobian label had no whole spot inside the view
    that covered no box; the best one stuck out and was slid back over the step's own
    boxes, hiding y and z. Its spots are now tried where they slide to."""
    win = presenting
    assert win.files.load_path(EXAMPLES_DIR / "seed3_mean_of_square.bpgraph", example=True)
    win.player.seek(win.player.timeline.position_of_step(3))
    QApplication.processEvents()
    canvas = win.canvas.canvas
    label = canvas.label.sceneBoundingRect()
    assert canvas.label.isVisible() and canvas.label.scale() > 1.0  # enlarged to be read
    assert win.canvas.mapToScene(win.canvas.viewport().rect()).boundingRect().contains(label)
    for nid in ("y", "z"):
        box = canvas.nodes[nid].scene_rect()
        covered = label.intersected(box)
        assert covered.width() * covered.height() < 0.1 * box.width() * box.height(), nid


@pytest.mark.parametrize("stem", ["seed2_stack_vjp", "classifier_head"])
def test_presentation_screenshots(presenting: MainWindow, stem: str, artifacts_dir: str) -> None:
    """Screenshots at 1280x720 of the first, middle and last step, to look at; each
    step's write-up in view at the projector's sizes."""
    import os

    win = presenting
    assert win.files.load_path(EXAMPLES_DIR / f"{stem}.bpgraph", example=True)
    QApplication.processEvents()
    n = len(win.player.timeline.steps)
    for k in sorted({1, (n + 1) // 2, n}):
        _step_in_view(win, k)
        path = os.path.join(artifacts_dir, f"presentation_{stem}_step{k}.png")
        assert win.grab().save(path)


def test_a_16_number_upstream_row_is_summarised_when_shortened(presenting: MainWindow) -> None:
    """XOR's 2-4-1 net, step 4 (h back to XW1): the upstream ∂loss/∂h has 16 numbers, a
    row twice the projector panel's width at 22 px; shortened, it is said by its shape,
    least and greatest (the window's panel keeps all 16)."""
    win = presenting
    assert win.files.load_path(EXAMPLES_DIR / "xor_mlp.bpgraph", example=True)
    QApplication.processEvents()
    _step_in_view(win, 4)
    panel = win.chain_rule
    assert panel.elide and "upstream 4×4 min -0.2283 max 0.2854" in " ".join(panel.text().split())
    win.leave_presentation()
    win.resize(1280, 720)
    QApplication.processEvents()
    assert not panel.elide and "-0.007971" in panel.text()


def test_every_captured_module_step_fits_the_panel_in_presentation_mode(
    presenting: MainWindow, tmp_path
) -> None:  # noqa: ANN001
    """A captured MLP's modules play as one step each: its second Linear's J (4×14) and
    the 15 numbers its first sends back ran past the bottom of the projector's panel.
    Shortened, J is said by its shape and a long vector by its shape, least and greatest."""
    from engine import tracefile
    from support import captured_mlp, torch

    if torch is None:
        pytest.skip("torch is not installed")
    path = captured_mlp(tmp_path / "mlp.bptrace")
    win = presenting
    win.files.open_loaded(tracefile.load(path), path)
    QApplication.processEvents()
    steps = len(win.player.timeline.steps)
    shortened = []
    for k in range(1, steps + 1):
        assert _step_in_view(win, k).startswith(f"Step {k} of {steps}")
        if win.player.frame.active_group is not None and win.chain_rule.elide:
            shortened.append(win.chain_rule.text())
    assert any("J = ∂(Addmm2)/∂(Tanh1, 2.weight, 2.bias): 4×14" in t for t in shortened)
