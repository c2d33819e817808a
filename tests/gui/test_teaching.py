"""Teaching modes in the window: gradient checks from the Teach menu and the node menu."""

from __future__ import annotations

import os

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from engine.fileformat import GraphFile
from engine.gradcheck import Status
from engine.graph import Graph
from gui.main_window import MainWindow, menu_of
from gui.model.quiz import Hidden
from gui.panels.gradcheck import status_color


@pytest.fixture
def window(make_window):  # noqa: ANN001, ANN201
    return make_window(size=(1280, 720))


def menu_action(win: MainWindow, menu: str, text: str):  # noqa: ANN201
    found = [a for a in menu_of(win, menu).actions() if a.text().replace("&", "") == text]
    assert found, f"no {text!r} in {menu}"
    return found[0]


def node_menu_action(win: MainWindow, node: str, prefix: str):  # noqa: ANN201
    item = win.canvas.node_item(node)
    pos = win.canvas.mapFromScene(item.sceneBoundingRect().center())
    menu = win.canvas.context_menu(pos)
    found = [a for a in menu.actions() if a.text().startswith(prefix)]
    assert found, [a.text() for a in menu.actions()]
    return found[0]


def test_check_gradients_on_the_whole_graph(window, artifacts_dir) -> None:  # noqa: ANN001
    menu_action(window, "Teach", "Check Gradients").trigger()
    panel = window.teaching.gradcheck_panel
    assert window.tabs.currentWidget().panel is panel  # a lazy tab, built when shown
    assert [panel.table.item(r, 0).text() for r in range(3)] == ["x1", "x2", "x3"]
    assert [panel.table.item(r, 1).text() for r in range(3)] == ["1.1", "1.4", "1"]
    assert set(panel.row_colors()) == {status_color(Status.OK).name()}
    assert "3 of 3 elements agree" in panel.heading.text()
    assert "6.1e-06" in panel.method.text()
    QApplication.processEvents()
    assert window.grab().save(os.path.join(artifacts_dir, "gradcheck_seed2.png"))


def test_check_gradients_from_a_node_menu(window) -> None:  # noqa: ANN001
    node_menu_action(window, "y1", "Check gradients").trigger()
    panel = window.teaching.gradcheck_panel
    assert panel.result is not None and panel.result.target == "y1"
    # the upstream gradient at y1 is v[0] = 0.1: d(0.1·a·x3)/da = 0.3, /dx3 = 0.2
    assert [panel.table.item(r, 1).text() for r in range(2)] == ["0.3", "0.2"]
    node_menu_action(window, "x2", "Check gradients").trigger()
    assert [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())] == ["x2"]


def test_relu_at_zero_is_coloured_and_said(window) -> None:  # noqa: ANN001
    g = Graph()
    g.add_node("x", "input", value=[0.0, 2.0])
    g.add_node("r", "relu", ["x"])
    g.add_node("s", "sum", ["r"])
    window.doc.load(GraphFile(graph=g, output="s"), None)
    window.teaching.check(None)
    panel = window.teaching.gradcheck_panel
    assert panel.row_colors() == [status_color(Status.KINK).name(), status_color(Status.OK).name()]
    assert "relu at 0" in panel.heading.text()
    assert "not differentiable" in panel.table.item(0, 4).text()


def test_a_refused_check_is_one_line(window) -> None:  # noqa: ANN001
    window.doc.load(GraphFile(graph=Graph()), None)
    window.teaching.check(None)
    text = window.teaching.gradcheck_panel.heading.text()
    assert text.startswith("Cannot check gradients") and "\n" not in text


# --------------------------------------------------------------------------- quiz mode


def test_quiz_hides_the_vjp_until_predicted(window, qtbot, artifacts_dir) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt

    panel = window.teaching.quiz_panel
    menu_action(window, "Teach", "Quiz Mode").trigger()
    assert panel.active and window.tabs.currentWidget().panel is panel  # a lazy tab
    player = window.player
    assert player.frame.k == 1 and player.frame.hidden == {"vjp", "accumulated"}
    assert "· J = ?" in window.canvas.canvas.label.text
    assert "Predict step 1" in window.chain_rule.text()
    assert panel.question.text().endswith("[0.1, 0.2, 0.3] · J?")
    QApplication.processEvents()
    assert window.grab().save(os.path.join(artifacts_dir, "quiz_seed2.png"))
    # a wrong vjp does not score, nor does the right one after it (first attempts score)
    qtbot.keyClicks(panel.answer, "0.2")
    qtbot.keyClick(panel.answer, Qt.Key.Key_Return)
    assert panel.quiz.score == 0 and "not quite" in panel.verdict.text()
    panel.answer.clear()
    qtbot.keyClicks(panel.answer, "0.1")
    qtbot.mouseClick(panel.check_button, Qt.MouseButton.LeftButton)
    assert panel.quiz.score == 0 and panel.verdict.text() == "right"
    assert "· J = 0.1" in window.canvas.canvas.label.text
    assert player.frame.hidden == {"accumulated"}
    # Reveal (the R key, as in presentation mode) shows the engine's value, no point
    window.teaching.actions["reveal"].trigger()
    assert "the engine says 0.1" in panel.verdict.text() and panel.quiz.score == 0
    assert not player.frame.hidden and "score 0 of 2" in panel.score.text()
    assert "(2 attempts" in panel.score.text()
    # switching off shows everything again
    menu_action(window, "Teach", "Quiz Mode").trigger()
    assert not panel.active and player.frame_filter is None


def test_quiz_in_presentation_mode_a_key_reveals(window, qtbot, artifacts_dir) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt

    window.teaching.quiz_panel.set_active(True)
    window.canvas.animations_enabled = False  # the screenshot shows where the camera goes
    window.enter_presentation()
    window.showNormal()  # a 1280x720 projector (offscreen, full screen is 800x800)
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: "Predict step 1" in window.chain_rule.text())
    QApplication.processEvents()
    assert window.grab().save(os.path.join(artifacts_dir, "quiz_presentation.png"))
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_R)
    qtbot.keyClick(window.canvas, Qt.Key.Key_R)
    assert not window.player.frame.hidden
    assert "Predict" not in window.chain_rule.text()


def test_quiz_teacher_chooses_jacobians(window) -> None:  # noqa: ANN001
    panel = window.teaching.quiz_panel
    for kind, box in panel.hide_boxes.items():  # the teacher's ticks
        box.setChecked(kind is Hidden.JACOBIAN)
    panel.set_active(True)
    assert window.player.frame.hidden == {"jacobian"}
    assert "∂y/∂y1 = ?" in window.canvas.canvas.label.text
    panel.answer.setText("[1, 0, 0]")
    panel.check()
    assert panel.quiz.score == 1 and not window.player.frame.hidden


# --------------------------------------------------------------------------- forward mode


def test_forward_mode_plays_through_the_player_bar(window, qtbot, artifacts_dir) -> None:  # noqa: ANN001
    """The panel sets the tangents; the player bar's direction switch plays forward mode
    on the canvas (edge, label, the consumer's tangent) and in the chain-rule panel."""
    from PySide6.QtCore import Qt

    from gui.model.timeline import Direction

    panel, player = window.teaching.forward_panel, window.player
    window.tabs.setCurrentWidget(panel.parentWidget())  # its lazy tab
    assert set(panel.editors) == {"x1", "x2", "x3"}
    assert panel.editors["x1"].text() == "1.0" and panel.editors["x2"].text() == "0.0"
    assert "Forward passes: 3" in panel.comparison.text()
    assert "reverse passes: 3" in panel.comparison.text()
    assert player.direction is Direction.REVERSE  # showing the tab switches nothing
    box = window.player_bar.direction_box
    box.setCurrentIndex(box.findData(Direction.FORWARD))
    assert player.direction is Direction.FORWARD
    tl = player.timeline
    assert len(tl.steps) == 15 and player.frame.k == 0
    assert "Forward mode: 15 edge steps" in window.chain_rule.text()
    for _ in range(len(tl.steps)):
        qtbot.keyClick(window.canvas, Qt.Key.Key_Right)
    frame = player.frame
    assert frame.status == "forward mode done (15 steps)"
    assert frame.active_edge == ("y3", "y", 2) and frame.active is None
    assert "tan y = [6, 1, 1]" in window.chain_rule.text()
    assert "Forward step 15 of 15: y3 → y" in window.chain_rule.text()
    scene = window.canvas.canvas
    assert scene.label.isVisible() and "J · " in scene.label.text
    assert scene.nodes["y"].content.grad_title == "tan"
    assert window.grab().save(os.path.join(artifacts_dir, "forward_mode_seed2.png"))
    panel.onehot_index.setValue(2)
    panel.set_one_hot(2)  # Run: forward mode from its start, with the new tangents
    assert player.frame.k == 0
    player.to_end()
    assert "tan y = [2, 1, 2]" in window.chain_rule.text()
    panel.set_ones()
    assert panel.editors["x2"].text() == "1.0"
    box.setCurrentIndex(box.findData(Direction.REVERSE))
    assert player.direction is Direction.REVERSE and player.frame.tangent_step is None


def test_forward_mode_bad_tangent_is_one_line(window, qtbot) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt

    from gui.model.timeline import Direction

    panel = window.teaching.forward_panel
    window.tabs.setCurrentWidget(panel.parentWidget())  # its lazy tab
    panel.editors["x1"].setText("[1, 2]")
    qtbot.keyClick(panel.editors["x1"], Qt.Key.Key_Return)
    assert window.player.direction is Direction.REVERSE
    assert panel.message.text().startswith("node 'x1'") and "shape" in panel.message.text()


# --------------------------------------------------------------------------- groups


SEED2_OPERANDS = ["x1x2", "y1", "x1_plus_x2", "y2", "x2x3", "y3"]


def test_ctrl_g_groups_the_selection_undoably(window, qtbot, artifacts_dir, tmp_path) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt

    from engine.fileformat import load, save

    doc = window.doc
    window.canvas.select_ids(["x1", *SEED2_OPERANDS])  # the leaf stays outside
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert [(g.members, g.collapsed) for g in doc.groups] == [(SEED2_OPERANDS, True)]
    frames = window.teaching.group_frames
    caption = frames.frames["group"].caption.text()
    assert "x1, x2, x3 → y1, y2, y3" in caption
    assert "[6, 3, 2]" in caption and "[1, 3, 2]" in caption
    # the caption sits on an opaque plate over the faded members, inside the box
    frame = frames.frames["group"]
    text_rect = frame.caption.mapRectToParent(frame.caption.boundingRect())
    assert frame.plate.isVisible() and frame.plate.brush().color().alpha() == 255
    assert frame.plate.rect().contains(text_rect) and frame.rect().contains(frame.plate.rect())
    assert window.teaching.playback_counts() == (4, 15)
    QApplication.processEvents()
    assert window.grab().save(os.path.join(artifacts_dir, "group_seed2.png"))
    # nested: a group inside, expanded outer
    window.canvas.select_ids(["x1x2", "y1"])
    window.teaching.actions["group_selection"].trigger()
    assert len(doc.groups) == 2
    window.canvas.select_ids(["y2"])
    window.teaching.actions["collapse_or_expand_group"].trigger()
    assert not doc.groups[0].collapsed
    assert not frames.frames["group"].plate.isVisible()  # an expanded frame is an outline
    assert window.teaching.playback_counts() == (12, 15)
    # save and reload keep groups; leaf grads never change
    path = tmp_path / "grouped.bpgraph"
    save(path, doc.to_file())
    again = load(path)
    assert [(g.id, g.members, g.collapsed) for g in again.groups] == [
        ("group", SEED2_OPERANDS, False),
        ("group2", ["x1x2", "y1"], True),
    ]
    grads = [float(doc.results.trace.grads[x]) for x in ("x1", "x2", "x3")]
    assert grads == pytest.approx([1.1, 1.4, 1.0])
    # undo all three edits
    for _ in range(3):
        doc.undo_stack.undo()
    assert doc.groups == [] and not frames.frames


def test_a_refused_group_says_why(window) -> None:  # noqa: ANN001
    window.canvas.select_ids(["x1x2", "y"])
    window.teaching.actions["group_selection"].trigger()
    assert window.doc.groups == []
    assert (
        "convex" in window.statusBar().currentMessage()
        or "comes back" in window.statusBar().currentMessage()
    )


def test_a_collapsed_group_plays_as_one_step(window) -> None:  # noqa: ANN001
    player = window.player
    window.canvas.select_ids(SEED2_OPERANDS)
    window.teaching.actions["group_selection"].trigger()
    assert player.timeline.frame(player.timeline.end).n == 4
    player.seek(player.timeline.position_of_step(4))
    frame = player.frame
    assert frame.active is None and frame.active_group.group.id == "group"
    text = window.chain_rule.text()
    assert "as one step" in text and "[6, 3, 2]" in text and "[1.1, 1.4, 1]" in text
    assert "Step 4 of 4: group as one step" in text  # not "group group" (fix 8)
    assert window.teaching.group_frames.active == "group"
    player.to_end()
    assert [float(player.frame.grads[x]) for x in ("x1", "x2", "x3")] == pytest.approx(
        [1.1, 1.4, 1.0]
    )
    window.teaching.actions["collapse_or_expand_group"].trigger()  # expand: 15 steps again
    assert player.frame.n == 15
    assert [float(player.frame.grads[x]) for x in ("x1", "x2", "x3")] == pytest.approx(
        [1.1, 1.4, 1.0]
    )
    window.doc.undo_stack.undo()
    assert player.frame.n == 4


def test_cannot_tell_and_curvature_verdicts_are_shown(window, artifacts_dir) -> None:  # noqa: ANN001
    g = Graph()
    g.add_node("x", "input", value=[0.3, 1.0])
    g.add_node("k", "const", value=[1e5, 1.0])
    g.add_node("c", "const", value=[0.0, 1e10])
    g.add_node("m", "mul", ["x", "k"])  # x0: sin(1e5·x) has a sharp curvature
    g.add_node("a", "add", ["m", "c"])
    g.add_node("d", "sub", ["a", "c"])  # x1: (x + 1e10) - 1e10 cancels
    g.add_node("y", "sin", ["d"])
    g.add_node("s", "sum", ["y"])
    window.doc.load(GraphFile(graph=g, output="s"), None)
    window.teaching.check(None)
    panel = window.teaching.gradcheck_panel
    verdicts = [panel.table.item(r, 4).text() for r in range(2)]
    assert "step too large for this curvature" in verdicts[0]
    assert verdicts[1].startswith("cannot tell")
    assert panel.row_colors()[1] == status_color(Status.CANCELLED).name()
    QApplication.processEvents()
    assert window.grab().save(os.path.join(artifacts_dir, "gradcheck_cannot_tell.png"))


def test_help_examples_tour_says_what_each_example_teaches(window) -> None:  # noqa: ANN001
    from PySide6.QtWidgets import QMessageBox

    from engine.examples import EXAMPLE_LESSONS, list_examples
    from gui.model.labels import esc

    examples = list_examples()
    assert {p.stem for p, _t in examples} == set(EXAMPLE_LESSONS)  # one sentence each
    menu_action(window, "Help", "Examples Tour").trigger()
    box = window.findChild(QMessageBox, "ExamplesTour")
    assert box is not None and box.isVisible()
    for path, _title in examples:
        assert esc(EXAMPLE_LESSONS[path.stem]) in box.text()
    box.close()


def test_quiz_in_the_forward_direction_asks_the_tangents(window, qtbot) -> None:  # noqa: ANN001
    """Predict, then reveal, for forward mode: each step's jvp J·t, then the consumer's
    tangent; the canvas label, the box and the chain-rule text hide them until then."""
    from PySide6.QtCore import Qt

    from gui.model.timeline import Direction

    player, panel = window.player, window.teaching.quiz_panel
    player.set_direction(Direction.FORWARD)
    panel.set_active(True)
    step = player.timeline.steps[0]
    assert player.frame.k == 1 and player.frame.tangent_step is step
    assert player.frame.hidden == {"vjp", "accumulated"}
    label = window.canvas.canvas.label.text
    assert label.endswith("= ?") and "J · 1" in label
    assert f"Predict forward step 1, {step.operand} → {step.consumer}" in window.chain_rule.text()
    assert step.consumer not in player.frame.grads  # its tangent is what is asked
    qtbot.keyClicks(panel.answer, str(float(step.jvp)))
    qtbot.keyClick(panel.answer, Qt.Key.Key_Return)
    assert panel.verdict.text() == "right" and panel.quiz.score == 1
    assert player.frame.hidden == {"accumulated"}
    assert f"tan {step.consumer} after += jvp" in panel.question.text()
    window.teaching.actions["reveal"].trigger()
    assert not player.frame.hidden and "= ?" not in window.canvas.canvas.label.text
    np.testing.assert_array_equal(player.frame.grads[step.consumer], step.accumulated)
    assert "score 1 of 2" in panel.score.text()
    n = len(player.timeline.steps)
    assert len(panel.quiz.questions) == 2 * n and panel.quiz.scorable_steps == n
