"""The backward player with real widgets (offscreen): seed example 2 played end to end.

Checks what a student sees: the state line, the edge label at each step, the
chain-rule and summary panels, the end-to-end Jacobian, that stepping back
restores the very same frame, that an edit resets the player, and that the
keyboard drives the player without stealing keys from a text field.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QMainWindow, QVBoxLayout, QWidget

from gui.commands import SetValue, push
from gui.document import GraphDocument
from gui.model import labels
from gui.model.timeline import Phase
from gui.player import Player, PlayerToolbar, connect_canvas
from gui.theme import THEME
from support import seed2_graph

SEED2_J = [[6.0, 3.0, 2.0], [1.0, 1.0, 1.0], [1.0, 3.0, 2.0]]


def seed2_doc() -> GraphDocument:
    """Seed example 2 built in code (the .bpgraph asset is tested by the export tests)."""
    doc = GraphDocument()
    doc.graph = seed2_graph()
    doc.set_backward("y", [0.1, 0.2, 0.3])
    return doc


class FakeCanvas:
    """Records what connect_canvas sends (the real canvas is tested by its owner)."""

    def __init__(self) -> None:
        self.frames: list[object] = []
        self.edge_label_provider = None
        self.resumed = 0

    def show_frame(self, frame: object) -> None:
        self.frames.append(frame)

    def resume_follow(self) -> None:
        self.resumed += 1


def grads_in(text: str) -> dict[str, float]:
    return {m[0]: float(m[1]) for m in re.findall(r"(\w+)\.grad = ([-\d.e]+)", text)}


@pytest.fixture
def setup(qtbot):  # noqa: ANN001, ANN201 - fixture
    from gui.panels.chain_rule import ChainRulePanel
    from gui.panels.summary import SummaryPanel

    doc = seed2_doc()
    win = QMainWindow()
    player = Player(doc, win)
    bar = PlayerToolbar(player, win)
    win.addToolBar(bar)
    central = QWidget()
    lay = QVBoxLayout(central)
    chain = ChainRulePanel(player)
    summary = SummaryPanel(doc, player)
    field = QLineEdit()
    lay.addWidget(field)
    lay.addWidget(chain)
    lay.addWidget(summary)
    win.setCentralWidget(central)
    win.resize(900, 900)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    return doc, player, bar, chain, summary, field, win


def test_opens_at_backward_done(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, summary, *_ = setup
    assert player.position == player.timeline.end
    assert player.frame.phase is Phase.BACKWARD_DONE
    assert player.status_text() == "backward done (15 steps)"
    assert bar.status_label.text() == player.status_text()
    assert grads_in(summary.text()) == pytest.approx({"x1": 1.1, "x2": 1.4, "x3": 1.0})


def test_play_through_with_step_forward(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, summary, *_ = setup
    player.to_start()
    assert player.frame.phase is Phase.FORWARD_DONE
    assert player.status_text() == "forward done; backward 0 of 15 steps"
    assert "Backward starts at the output" in chain.text()
    seen = []
    while player.position < player.timeline.end:
        player.step_forward()
        f = player.frame
        seen.append((f.k, f.active.consumer, f.active.operand))
        assert labels.edge_label(f.active)  # every step has a label
    assert [k for k, *_ in seen] == list(range(1, 16))
    assert player.status_text() == "backward done (15 steps)"
    assert grads_in(summary.text()) == pytest.approx({"x1": 1.1, "x2": 1.4, "x3": 1.0})
    assert "x1.grad = 1.1" in summary.text()
    assert "x1.grad = 1.1" in chain.text()  # the chain-rule panel's closing summary


def test_stack_step_label_and_chain_rule(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, *_ = setup
    player.to_start()
    player.step_forward()
    f = player.frame
    assert (f.active.consumer, f.active.operand) == ("y", "y1")
    assert player.status_text() == "backward step 1 of 15: y → y1"
    text = labels.edge_label(f.active)
    assert "[1, 0, 0]ᵀ" in text and text.endswith("· J = 0.1")
    plain = chain.text()
    assert "Step 1 of 15" in plain and "Σ" in plain
    assert "row vector ∂A/∂y (the v you gave)" in plain


def test_fan_out_step_is_marked(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, *_ = setup
    player.seek(player.timeline.position_of_step(9))  # y1 -> x3: x3's second term
    assert (player.frame.active.consumer, player.frame.active.operand) == ("y1", "x3")
    assert player.frame.fan_in["x3"] == 3
    assert "term 2 of 3" in chain.text()
    assert "x3.grad" in chain.text()


def test_end_to_end_view_shows_the_seed_matrix(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, summary, *_ = setup
    e2e = player.end_to_end()
    assert e2e.leaves == ("x1", "x2", "x3")
    np.testing.assert_allclose(e2e.jacobian, SEED2_J)
    np.testing.assert_allclose(np.concatenate([v.ravel() for v in e2e.vjp]), [1.1, 1.4, 1.0])
    text = summary.text()
    cells = text.split("vᵀJ")[0]
    rows = re.findall(r"y\[(\d)\]\n([\d.]+)\n([\d.]+)\n([\d.]+)", cells)
    assert [[float(v) for v in r[1:]] for r in rows] == SEED2_J
    assert "[1, 0, 0]ᵀ·3·2" in text  # composition of edge Jacobians for x1


def test_step_back_restores_the_same_frame(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, summary, *_ = setup
    player.to_start()
    frames, texts = [], []
    for _ in range(6):
        player.step_forward()
        frames.append(player.frame)
        texts.append((labels.edge_label(player.frame.active), chain.html(), summary.html()))
    for _ in range(3):
        player.step_back()
    for _ in range(3):
        player.step_forward()
    assert player.frame == frames[-1]
    assert (labels.edge_label(player.frame.active), chain.html(), summary.html()) == texts[-1]
    player.step_back()
    assert player.frame == frames[-2]
    assert chain.html() == texts[-2][1]


def test_keyboard_drives_player_but_text_field_keeps_keys(setup, qtbot) -> None:  # noqa: ANN001
    doc, player, bar, chain, summary, field, win = setup
    win.setFocus()
    chain.browser.setFocus()
    qtbot.keyClick(chain.browser, Qt.Key.Key_Home)
    assert player.position == player.forward_done_position
    qtbot.keyClick(chain.browser, Qt.Key.Key_Right)
    qtbot.keyClick(chain.browser, Qt.Key.Key_PageDown)
    assert player.frame.k == 2
    qtbot.keyClick(chain.browser, Qt.Key.Key_Left)
    assert player.frame.k == 1
    qtbot.keyClick(chain.browser, Qt.Key.Key_End)
    assert player.frame.phase is Phase.BACKWARD_DONE
    qtbot.keyClick(chain.browser, Qt.Key.Key_Space)
    assert player.playing and player.frame.k == 0  # play from the end replays backward
    qtbot.keyClick(chain.browser, Qt.Key.Key_Space)
    assert not player.playing
    # a focused text field types its keys; the player does not move
    position = player.position
    field.setFocus()
    qtbot.keyClicks(field, "1 2")
    qtbot.keyClick(field, Qt.Key.Key_Left)
    qtbot.keyClick(field, Qt.Key.Key_Home)
    assert field.text() == "1 2" and field.cursorPosition() == 0
    assert player.position == position and not player.playing


def test_toolbar_actions_and_scrubber(setup) -> None:  # noqa: ANN001
    doc, player, bar, *_ = setup
    assert set(bar.named_actions) == {"play", "step_forward", "step_back", "start", "end",
                                      "play_forward"}
    assert bar.named_actions["play"].shortcut().toString() == "Space"
    keys = [k.toString() for k in bar.named_actions["step_forward"].shortcuts()]
    assert keys == ["Right", "PgDown"]
    assert bar.named_actions["step_forward"].shortcutContext() == Qt.ShortcutContext.WindowShortcut
    bar.named_actions["start"].trigger()
    assert player.frame.k == 0
    bar.named_actions["step_forward"].trigger()
    assert player.frame.k == 1
    assert bar.scrubber.value() == player.position
    assert bar.scrubber.maximum() == player.timeline.end
    bar.scrubber.setValue(3)
    assert player.position == 3 and player.frame.phase is Phase.FORWARD
    assert player.status_text() == "forward: node 3 of 10 (x3)"
    bar.speed_box.setCurrentIndex(bar.speed_box.findText("4×"))
    assert player.speed == 4.0


def test_timer_playback_runs_to_the_end(setup, qtbot) -> None:  # noqa: ANN001
    doc, player, bar, *_ = setup
    canvas = FakeCanvas()
    connect_canvas(player, canvas)
    assert canvas.edge_label_provider is labels.edge_label
    player.set_speed(200.0)
    player.play()  # from the end: restarts at forward done
    assert player.playing and player.frame.k == 0
    assert bar.named_actions["play"].text() == "Pause"
    assert canvas.resumed == 1  # a play resumes Follow step after the user's own pan
    qtbot.waitUntil(lambda: not player.playing, timeout=5000)
    assert player.frame.phase is Phase.BACKWARD_DONE
    ks = [f.k for f in canvas.frames]
    assert ks[-16:] == list(range(16))


def test_play_forward_shows_values_node_by_node(setup, qtbot) -> None:  # noqa: ANN001
    doc, player, bar, chain, *_ = setup
    shown = []
    player.frameChanged.connect(lambda f: shown.append(len(f.shown_values)))
    player.set_speed(500.0)
    player.play_forward()
    assert player.frame.phase is Phase.NO_FORWARD
    assert player.status_text() == "forward not run"
    qtbot.waitUntil(lambda: not player.playing, timeout=5000)
    assert shown[:11] == list(range(11))
    assert player.frame.phase is Phase.BACKWARD_DONE


def test_forward_text_during_forward_pass(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, *_ = setup
    player.seek(0)
    assert "Forward pass not run yet" in chain.text()
    player.seek(4)
    assert chain.text().replace("\n", " ").startswith("Forward: node 4 of 10 a = x1 * x2 = 2")


def test_edit_resets_player(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, summary, *_ = setup
    player.to_start()
    player.step_forward()
    player.set_speed(1.0)
    player.play()
    emitted = []
    player.frameChanged.connect(emitted.append)
    assert push(doc, SetValue(doc, "x1", 2.0)) is None
    assert not player.playing
    assert player.position == player.timeline.end
    assert emitted and emitted[-1] is player.frame
    assert player.frame.phase is Phase.BACKWARD_DONE
    # new numbers everywhere: J's first row is now [x2x3, x1x3, x1x2] = [6, 6, 4]
    np.testing.assert_allclose(player.end_to_end().jacobian[0], [6.0, 6.0, 4.0])
    assert grads_in(summary.text())["x2"] == pytest.approx(0.1 * 6 + 0.2 + 0.3 * 3)
    assert bar.status_label.text() == "backward done (15 steps)"
    doc.undo_stack.undo()
    assert grads_in(summary.text()) == pytest.approx({"x1": 1.1, "x2": 1.4, "x3": 1.0})


def test_backward_again_and_zero_grad(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, summary, *_ = setup
    assert not summary.zero_grad_button.isEnabled()
    summary.backward_again_button.click()
    assert grads_in(summary.text()) == pytest.approx({"x1": 2.2, "x2": 2.8, "x3": 2.0})
    assert "earlier backward calls" in summary.text()
    # vᵀJ is still this one call's share
    np.testing.assert_allclose(np.concatenate([v.ravel() for v in player.end_to_end().vjp]),
                               [1.1, 1.4, 1.0])
    player.to_start()
    assert grads_in(summary.text()) == pytest.approx({"x1": 1.1, "x2": 1.4, "x3": 1.0})
    player.to_end()
    summary.zero_grad_button.click()
    assert grads_in(summary.text()) == pytest.approx({"x1": 1.1, "x2": 1.4, "x3": 1.0})


def test_no_backward_says_why(qtbot) -> None:  # noqa: ANN001
    from gui.panels.chain_rule import ChainRulePanel

    doc = seed2_doc()
    doc.set_backward("y", None)  # a vector output needs v
    player = Player(doc)
    panel = ChainRulePanel(player)
    qtbot.addWidget(panel)
    assert player.frame.phase is Phase.FORWARD_DONE
    assert player.status_text().startswith("forward done; no backward: node 'y'")
    assert "No backward pass to show" in panel.text()
    player.play()  # nothing backward to play: plays the forward pass
    assert player.playing and player.position == 0
    player.pause()


def test_jacobian_view_heatmap_and_too_large(qtbot, monkeypatch) -> None:  # noqa: ANN001
    from gui.panels import jacobian_view

    doc = seed2_doc()
    player = Player(doc)
    view = jacobian_view.JacobianView(player)
    qtbot.addWidget(view)
    view.resize(600, 500)
    view.show()
    qtbot.waitExposed(view)
    player.seek(player.timeline.position_of_step(1))
    np.testing.assert_allclose(view.jacobian(), [[1.0], [0.0], [0.0]])
    assert view.j_img.image.shape == (1, 3)  # columns along x, rows along y
    assert "∂y/∂y<sub>1</sub>" in view.title.text()
    monkeypatch.setattr(jacobian_view, "MAX_ENTRIES", 2)
    view._cache.clear()
    player.seek(player.timeline.position_of_step(2))
    assert view.jacobian() is None and "Too large to draw" in view.info.text()
    player.to_start()
    assert view.jacobian() is None and "Step into the backward pass" in view.info.text()


def test_panels_follow_theme_scale(setup) -> None:  # noqa: ANN001
    doc, player, bar, chain, summary, *_ = setup
    before = chain.html()
    old = THEME.scale
    try:
        THEME.scale = 1.6
        chain.apply_theme()
        summary.apply_theme()
        bar.apply_theme()
        assert "font-size:19.2pt" in chain.html() and before != chain.html()
        assert bar.status_label.font().pointSizeF() == pytest.approx(11 * 1.6)
    finally:
        THEME.scale = old
        chain.apply_theme()


def test_panel_screenshots_for_review(setup, artifacts_dir, qtbot) -> None:  # noqa: ANN001
    from gui.panels.jacobian_view import JacobianView

    doc, player, bar, chain, summary, field, win = setup
    view = JacobianView(player)
    qtbot.addWidget(view)
    for panel in (chain, summary, view):
        panel.setParent(None)
        panel.resize(640, 720)
        panel.show()
    player.seek(player.timeline.position_of_step(9))
    qtbot.wait(50)  # let the layouts settle before grabbing
    for name, panel in (("chain_rule_step9", chain), ("jacobian_step9", view)):
        path = os.path.join(artifacts_dir, f"player_{name}.png")
        assert panel.grab().save(path)
    player.seek(player.timeline.position_of_step(1))
    qtbot.wait(50)
    assert view.grab().save(os.path.join(artifacts_dir, "player_jacobian_step1.png"))
    player.to_end()
    qtbot.wait(50)
    for name, panel in (("chain_rule_end", chain), ("summary_end", summary)):
        assert panel.grab().save(os.path.join(artifacts_dir, f"player_{name}.png"))
    bar.setParent(None)
    bar.resize(1000, 40)
    bar.show()
    assert bar.grab().save(os.path.join(artifacts_dir, "player_toolbar.png"))


def test_the_status_line_shows_a_node_id_as_written(qtbot) -> None:  # noqa: ANN001
    """A node id is user text: one that reads as markup is shown literally, as the
    status bar shows it, not rendered (it was bold and its tags gone)."""
    from PySide6.QtWidgets import QLabel

    from engine.graph import Graph

    g = Graph()
    g.add_node("<b>x</b>", "input", value=2.0)
    g.add_node("w", "input", value=3.0)
    g.add_node("y", "mul", ["<b>x</b>", "w"])
    doc = GraphDocument()
    doc.graph = g
    doc.set_backward("y", 1.0)
    win = QMainWindow()
    player = Player(doc, win)
    bar = PlayerToolbar(player, win)
    win.addToolBar(bar)
    qtbot.addWidget(win)
    win.show()
    player.to_start()
    while "<b>x</b>" not in player.status_text():
        player.step_forward()
    text = bar.status_label.text()
    assert text == player.status_text()
    plain = QLabel(text, textFormat=Qt.TextFormat.PlainText)
    plain.setFont(bar.status_label.font())
    plain.setContentsMargins(bar.status_label.contentsMargins())
    bar.status_label.setMinimumWidth(0)  # (a hint is at least the minimum: the text's own)
    assert bar.status_label.sizeHint().width() == plain.sizeHint().width()


def test_the_scrubber_keeps_its_width_while_a_pass_plays(make_window) -> None:  # noqa: ANN001
    """The status line changes length every step; it only widens within one pass, so the
    scrubber beside it narrows at most when a longer line first shows and never widens
    back: stepping back through the pass moves nothing in the toolbar."""
    win = make_window()
    player, scrubber = win.player, win.player_bar.scrubber
    player.to_start()
    widths = []
    while player.position < player.timeline.end:
        player.step_forward()
        QApplication.processEvents()
        widths.append(scrubber.width())
    assert widths == sorted(widths, reverse=True)
    assert len(set(widths)) < len(widths) // 2  # (a status of every length would jitter)
    while player.position > 0:
        player.step_back()
        QApplication.processEvents()
        assert scrubber.width() == widths[-1]
