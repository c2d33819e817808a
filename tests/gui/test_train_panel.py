"""Train mode in the window (issue 30): Teach > Train, a step as one undo command, Play N
steps, Stop, Reset, the update drawn on the parameters' boxes, and the 1280x720 renders."""

from __future__ import annotations

import os

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from engine.examples import EXAMPLES_DIR
from gui.canvas.train_marks import MARK_PT
from gui.main_window import MainWindow, menu_of
from gui.model.semantic_zoom import MIN_SCREEN_PT


@pytest.fixture
def window(make_window):  # noqa: ANN001, ANN201
    return make_window(EXAMPLES_DIR / "fit_line.bpgraph", size=(1280, 720))


def open_train(win: MainWindow):  # noqa: ANN201
    actions = menu_of(win, "Teach").actions()
    action = next(a for a in actions if a.text().replace("&", "") == "Train")
    action.trigger()
    return win.teaching.train_panel


def value(win: MainWindow, nid: str) -> float:
    return float(win.doc.graph.nodes[nid].value)


def test_a_step_is_one_undoable_command_drawn_on_the_boxes(window, artifacts_dir) -> None:  # noqa: ANN001
    panel = open_train(window)
    assert window.tabs.currentWidget().panel is panel  # a lazy tab, built when shown
    stack = window.doc.undo_stack
    before = stack.count()
    assert panel.step()
    assert stack.count() == before + 1
    assert value(window, "w") == pytest.approx(0.808) and value(window, "b") == pytest.approx(0.608)
    marks = window.teaching.train_marks.marks
    assert set(marks) == {"w", "b"}
    # Fit-zoom at 1280x720 draws the update line under 8 pt: summarised at the canvas's
    # minimum size (semantic zoom), the line in full once it is readable.
    zoom = window.canvas.zoom()
    assert zoom * MARK_PT < window.canvas.canvas.min_text_pt
    assert marks["w"].compact and marks["w"].text.text() == "w ← 0.808"
    assert marks["w"].text.font().pointSizeF() * zoom == pytest.approx(MIN_SCREEN_PT)
    window.canvas.zoom_by(1.0 / zoom)
    assert not marks["w"].compact
    assert marks["w"].text.text() == "w ← 0 − 0.1 · (−8.08) = 0.808"
    window.canvas.zoom_by(0.1)  # the far view: boxes without text, plates hidden
    assert window.canvas.canvas.far and not marks["w"].isVisible()
    assert "w ← w − lr · g,   lr = 0.1" in panel.rule.text()
    assert "step 1: loss = 11.256" in panel.rule.text()
    QApplication.processEvents()
    assert window.grab().save(os.path.join(artifacts_dir, "train_fit_line_step1.png"))
    stack.undo()
    assert value(window, "w") == 0.0 and window.doc.train_state is None and not marks
    stack.redo()
    assert value(window, "w") == pytest.approx(0.808)


def test_play_n_steps_then_reset(window, qtbot) -> None:  # noqa: ANN001
    panel = open_train(window)
    panel.rate.setValue(60)
    panel.play(5)
    qtbot.waitUntil(lambda: not panel.timer.isActive(), timeout=5000)
    state = window.doc.train_state
    assert state is not None and state.t == 5 and len(state.losses) == 5
    assert list(panel.curve.curve.getData()[1]) == list(state.losses)
    assert set(panel.paths.lines) == {"w", "b"}
    window.doc.undo_stack.undo()  # one step back: the fifth update undone alone
    assert window.doc.train_state.t == 4
    panel.reset()
    assert value(window, "w") == 0.0 and window.doc.train_state is None
    window.doc.undo_stack.undo()  # Reset is undoable too
    assert window.doc.train_state.t == 4


def test_settings_are_commands_and_adam_shows_its_moments(window) -> None:  # noqa: ANN001
    panel = open_train(window)
    panel.optimizer.setCurrentText("adam")
    assert window.doc.train.optimizer == "adam"
    assert panel.step()
    text = panel.rule.text()
    assert "m̂ = m / (1 − 0.9ᵗ)" in text and "m = −0.808" in text and "t = 1" in text
    up = window.doc.train_state.last.updates["w"]
    assert np.isclose(up.new, 0.1 * 0.001 / 0.001 * 1.0, rtol=1e-6)  # Adam's first step: lr
    window.doc.undo_stack.undo()
    window.doc.undo_stack.undo()
    assert window.doc.train.optimizer == "sgd"


def test_saved_file_keeps_the_train_block(window, tmp_path) -> None:  # noqa: ANN001
    from engine.fileformat import load, save

    open_train(window).optimizer.setCurrentText("momentum")
    path = tmp_path / "t.bpgraph"
    save(path, window.doc.to_file())
    assert load(path).train.optimizer == "momentum"


def test_presentation_render(window, qtbot, artifacts_dir) -> None:  # noqa: ANN001
    panel = open_train(window)
    panel.rate.setValue(60)
    panel.play(20)
    qtbot.waitUntil(lambda: not panel.timer.isActive(), timeout=5000)
    window.canvas.animations_enabled = False
    window.enter_presentation()
    window.showNormal()
    window.resize(1280, 720)
    qtbot.wait(50)
    QApplication.processEvents()
    assert window.grab().save(os.path.join(artifacts_dir, "train_presentation.png"))


def test_inspector_trainable_switch(window) -> None:  # noqa: ANN001
    open_train(window)
    section = window.inspector.node
    section.set_node("b")
    assert section.trainable.isVisible() and section.trainable.isChecked()
    section.trainable.setChecked(False)
    assert window.doc.train.params == ["w"]
    window.teaching.train_panel.step()
    assert window.doc.train_state.last.updates.keys() == {"w"} and value(window, "b") == 0.0
    section.set_node("x")  # data: requires no grad, so it cannot be a parameter
    assert section.trainable.isVisible() and not section.trainable.isEnabled()
    window.doc.undo_stack.undo()
    window.doc.undo_stack.undo()
    section.set_node("b")
    assert section.trainable.isChecked()


def test_chain_rule_panel_writes_the_update_after_backward(window, qtbot) -> None:  # noqa: ANN001
    panel = open_train(window)
    assert panel.step()
    window.player.to_end()
    window.tabs.setCurrentWidget(window.chain_rule)
    qtbot.waitUntil(lambda: "Then the update, step 1 (sgd)" in window.chain_rule.text())
    text = window.chain_rule.text()
    assert "w ← 0.808 − 0.1 ·" not in text  # the step shown is the one that ran
    assert "w ← 0 − 0.1 · (−8.08) = 0.808" in text and "w ← w − lr · g" in text


def test_play_backward_first_then_the_update(window, qtbot) -> None:  # noqa: ANN001
    panel = open_train(window)
    panel.play_backward.setChecked(True)
    window.player.set_speed(60)
    assert panel.step() and window.player.playing
    assert window.doc.train_state is None  # no update before the backward has played
    qtbot.waitUntil(lambda: window.doc.train_state is not None, timeout=5000)
    assert window.doc.train_state.t == 1 and value(window, "w") == pytest.approx(0.808)
    # paused half-way: that step makes no update
    assert panel.step()
    window.player.pause()
    assert window.doc.train_state.t == 1 and not panel._pending


def test_exported_script_holds_the_training_loop(window) -> None:  # noqa: ANN001
    script = window.pytorch.dock.code()
    assert "optimizer = torch.optim.SGD([w, b], lr=0.1)" in script
    assert "for step in range(200):" in script


def test_the_box_value_changes_when_the_update_pulse_reaches_it(window, qtbot) -> None:  # noqa: ANN001
    """Issue 30: after a step the act plays; each parameter's box shows its old value
    until the pulse gets there (the frame model's ``shown_values``), the new one after,
    and at the end every box shows the document's value again, no pulse left."""
    from gui.model.update_act import active, at

    panel = open_train(window)
    marks = window.teaching.train_marks
    boxes = window.canvas.canvas.nodes
    seen: list[tuple[float, str, str, bool, str | None]] = []

    def record(t: object) -> None:
        seen.append((float(t), boxes["w"].content.value, boxes["b"].content.value,
                     marks.pulse.isVisible(), active(marks.updates(), marks.frame)))

    assert window.canvas.animations_enabled
    window.player.seek(window.player.timeline.end)
    QApplication.processEvents()
    label = window.canvas.canvas.label
    assert label.isVisible()  # backward done: the last step's label
    marks.act.valueChanged.connect(record)
    assert panel.step()
    assert value(window, "w") == pytest.approx(0.808)  # the document has the new values
    assert boxes["w"].content.value == "0" and boxes["b"].content.value == "0"  # not yet
    assert marks.pulse.isVisible()
    qtbot.waitUntil(lambda: marks.frame is None, timeout=10_000)  # the act played out
    assert len(seen) > 4
    for t, w, b, pulse, target in seen:
        frame = at(t, 2)
        assert w == ("0.808" if frame.arrived(0) else "0"), t
        assert b == ("0.608" if frame.arrived(1) else "0"), t
        assert pulse == (target is not None)
    assert any(w == "0.808" and b == "0" for _, w, b, _, _ in seen)  # w first, then b
    assert boxes["w"].content.value == "0.808" and boxes["b"].content.value == "0.608"
    assert not marks.pulse.isVisible() and window.canvas.canvas.held_values == {}
    assert not label.isVisible()  # the update is the act at the end now, not that step
    window.doc.undo_stack.undo()  # undo shows the values at once: no act
    assert marks.frame is None and boxes["w"].content.value == "0"
    assert label.isVisible()
