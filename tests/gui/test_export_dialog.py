"""File > Export Animation…: the dialog drives a background export the window survives.

The export runs in a child process; while it runs the window keeps handling
events (a timer keeps ticking), the progress bar follows the child's reports,
and Cancel stops it with nothing left on disk.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PIL import Image
from PySide6.QtCore import QTimer

from gui.export.dialog import ExportAnimationDialog
from gui.export.options import FORMATS
from gui.export.render import load_document
from gui.model.timeline import Direction
from gui.player import Player

ROOT = Path(__file__).resolve().parents[2]
SEED2 = ROOT / "assets" / "examples" / "seed2_stack_vjp.bpgraph"


def make_dialog(qtbot, tmp_path: Path, label: str) -> ExportAnimationDialog:  # noqa: ANN001
    dialog = ExportAnimationDialog(load_document(SEED2))
    qtbot.addWidget(dialog)
    dialog.format_box.setCurrentIndex([f.label for f in FORMATS].index(label))
    dialog.width_box.setValue(480)
    dialog.height_box.setValue(270)
    dialog.transition_box.setValue(0.0)
    return dialog


def test_export_runs_in_the_background_with_progress(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    dialog = make_dialog(qtbot, tmp_path, "Animated GIF")
    assert dialog.preview.pixmap() is not None and not dialog.preview.pixmap().isNull()
    out = tmp_path / "lesson.gif"
    dialog.path_edit.setText(str(out))
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(20)
    seen = []
    dialog.progress.valueChanged.connect(seen.append)
    with qtbot.waitSignal(dialog.finished_export, timeout=120_000) as result:
        dialog.export_button.click()
        assert dialog.running and not dialog.export_button.isEnabled()
    timer.stop()
    assert result.args[0] is True, result.args[1]
    assert len(ticks) > 5  # the event loop kept running while the child exported
    assert max(seen) >= 18  # reports up to all 18 pictures arrived (15 steps, k = 0, 2 cards)
    with Image.open(out) as im:
        assert (im.size, im.n_frames) == ((480, 270), 18)
    assert dialog.status.text() == "Exported lesson.gif"


def cancel_mp4_export(qtbot, tmp_path: Path, hard: bool) -> ExportAnimationDialog:  # noqa: ANN001
    """Start a long MP4 export and press Cancel once a few pictures are done.

    ``hard``: the child is killed outright instead (it says nothing and cleans nothing).
    """
    dialog = make_dialog(qtbot, tmp_path, "Video, MP4 (H.264)")
    dialog.transition_box.setValue(2.0)  # many pictures: time to cancel
    dialog.fps_box.setValue(30)
    dialog.path_edit.setText(str(tmp_path / "lesson.mp4"))
    with qtbot.waitSignal(dialog.finished_export, timeout=120_000) as result:
        dialog.export_button.click()
        qtbot.waitUntil(lambda: dialog.progress.value() >= 3, timeout=60_000)
        if hard:  # once its temporary file exists
            qtbot.waitUntil(lambda: os.listdir(tmp_path) != [], timeout=60_000)
            dialog.process.terminate = dialog.process.kill
        dialog.cancel_button.click()
    assert result.args == [False, "Export cancelled: nothing was written"]
    assert dialog.status.text() == result.args[1]
    assert not dialog.running and dialog.export_button.isEnabled()
    return dialog


def test_cancel_leaves_nothing_behind(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    cancel_mp4_export(qtbot, tmp_path, hard=False)
    assert os.listdir(tmp_path) == []


def test_a_killed_export_says_cancelled_and_leaves_nothing(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    cancel_mp4_export(qtbot, tmp_path, hard=True)
    assert os.listdir(tmp_path) == []  # the dialog removed the child's temporary file


def test_format_choice_updates_the_path_and_arguments(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    dialog = make_dialog(qtbot, tmp_path, "PDF worksheet (answer key at the back)")
    dialog.path_edit.setText(str(tmp_path / "seed2.pdf"))
    args = dialog.arguments("g.bpgraph")
    assert args[:5] == ["export", "g.bpgraph", "--all", "--out", str(tmp_path / "seed2.pdf")]
    assert "--worksheet" in args and "480x270" in args
    dialog.format_box.setCurrentIndex([f.label for f in FORMATS].index("Folder of numbered PNGs"))
    assert dialog.path_edit.text() == str(tmp_path / "seed2-frames") + "/"


def test_file_menu_opens_the_dialog_on_the_open_document(
    qtbot,  # noqa: ANN001
    settings_sandbox,  # noqa: ANN001
) -> None:
    from gui.app import create_window

    window = create_window(SEED2)
    qtbot.addWidget(window)
    window.named_actions["export_animation"].trigger()
    dialog = window.findChild(ExportAnimationDialog)
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    assert dialog.doc is window.doc
    assert dialog.path_edit.text().endswith(".gif")
    dialog.close()


def test_handout_and_worksheet_names_differ_and_a_file_is_replaced_only_when_allowed(
    qtbot,  # noqa: ANN001
    tmp_path: Path,
    monkeypatch,  # noqa: ANN001
) -> None:
    """Rehearsal fix 3: both defaulted to lesson.pdf and Export replaced the handout
    without asking."""
    dialog = make_dialog(qtbot, tmp_path, "PDF handout")
    dialog.path_edit.setText(str(tmp_path / "lesson-handout.pdf"))
    labels = [f.label for f in FORMATS]
    dialog.format_box.setCurrentIndex(labels.index("PDF worksheet (answer key at the back)"))
    assert dialog.path_edit.text() == str(tmp_path / "lesson-worksheet.pdf")
    dialog.format_box.setCurrentIndex(labels.index("PDF handout"))
    assert dialog.path_edit.text() == str(tmp_path / "lesson-handout.pdf")
    handout = tmp_path / "lesson-handout.pdf"
    handout.write_bytes(b"the teacher's handout")
    asked: list[Path] = []
    monkeypatch.setattr(dialog, "ask_replace", lambda path: asked.append(path) or False)
    dialog.export_button.click()
    assert asked == [handout] and not dialog.running
    assert handout.read_bytes() == b"the teacher's handout" and "kept" in dialog.status.text()


def test_replace_question_shows_the_file_name_as_plain_text(
    qtbot,  # noqa: ANN001
    tmp_path: Path,
) -> None:
    """A file name is user text: ``<b>`` in one is shown as typed, never as markup
    (``QMessageBox.question`` guesses rich text from it)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QMessageBox

    dialog = make_dialog(qtbot, tmp_path, "Animated GIF")
    seen: list[tuple[Qt.TextFormat, str]] = []

    def answer_no() -> None:  # whichever way the box is shown, it is modal
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append((box.textFormat(), box.text()))
        box.button(QMessageBox.StandardButton.No).click()

    QTimer.singleShot(0, answer_no)
    path = tmp_path / "<b>lesson.gif"
    assert dialog.ask_replace(path) is False
    assert seen == [(Qt.TextFormat.PlainText,
                     f"{path.name} already exists in {path.parent}. Replace it?")]


def _html_export(qtbot, dialog: ExportAnimationDialog, out: Path) -> str:  # noqa: ANN001
    dialog.path_edit.setText(str(out))
    with qtbot.waitSignal(dialog.finished_export, timeout=120_000) as result:
        dialog.export_button.click()
    assert result.args[0] is True, result.args[1]
    return out.read_text("utf-8")


def test_a_forward_export_plays_the_players_tangents_and_reverse_is_unchanged(
    qtbot, tmp_path: Path  # noqa: ANN001
) -> None:
    doc = load_document(SEED2)
    player = Player(doc)
    player.set_tangents({"x1": 0.375, "x2": -1.25, "x3": 0.0})
    player.set_direction(Direction.FORWARD)
    dialog = ExportAnimationDialog(doc, player=player)
    qtbot.addWidget(dialog)
    dialog.format_box.setCurrentIndex([f.label for f in FORMATS].index("Web page player (HTML)"))
    dialog.width_box.setValue(400)
    dialog.height_box.setValue(225)
    assert dialog.direction_box.currentText() == "forward"  # the player's, to start with
    page = _html_export(qtbot, dialog, tmp_path / "forward.html")
    assert "tangents u on the inputs: x1 = 0.375, x2 = -1.25, x3 = 0<" in page
    assert "Forward step 1 of" in page
    assert not list(tmp_path.glob("*.json")) and not list(Path(tempfile.gettempdir()).glob(
        "export-*.tangents.json"))  # the hand-over file is gone
    dialog.direction_box.setCurrentText("reverse")
    assert "--tangents" not in dialog.arguments("g.bpgraph")
    page = _html_export(qtbot, dialog, tmp_path / "reverse.html")
    assert "Forward step" not in page and "tangents u" not in page
    assert "backward step 1 of" in page
