"""File > Export Animation…: choose a format, size and timing, see the first frame, export.

The export runs in a child process (``main.py export --all ... --progress``) fed a
snapshot of the open document, so the window stays responsive however long an MP4
takes and a crash in an encoder cannot take the app down. The child reports
``progress: i/n`` lines that drive the progress bar; Cancel terminates it, and the
child removes its temporary file on the way out (nothing partial is left).
A cancelled export's outcome is the dialog's to state: the child's own last words
may arrive after its exit is noticed (or never, if it was killed outright), so
the message after a Cancel does not depend on them.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QProcess, QProcessEnvironment, Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.atomic_write import remove_stale_temps
from engine.fileformat import SUFFIX, save

from ..document import GraphDocument
from ..layouts import fill
from ..model import colours
from ..model.timeline import Direction, timeline_of
from ..plain_box import plain_box
from ..player import Player
from ..theme import using
from .frame_sheet import render_frame
from .options import (
    DEFAULT_SIZE,
    FORMATS,
    FPS_RANGE,
    HOLD_RANGE,
    MAX_SIDE,
    MIN_SIDE,
    TRANSITION_RANGE,
    VIEWS,
    Format,
    Timing,
    View,
    write_tangents,
)

MAIN_PY = Path(__file__).resolve().parents[2] / "main.py"
PROGRESS = re.compile(r"progress: (\d+)/(\d+)")
PREVIEW_WIDTH = 384
CANCELLED = "Export cancelled: nothing was written"


class ExportAnimationDialog(QDialog):
    """Options, a preview of the first frame, and the export running in the background.

    ``finished_export(ok, message)`` is emitted when the child process ends. Given the
    window's ``player``, the direction starts as the player's and a forward export plays
    the tangents the player has (read when the export starts), not the command line's e₀.
    """

    finished_export = Signal(bool, str)

    def __init__(
        self, doc: GraphDocument, parent: QWidget | None = None, player: Player | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export Animation")
        self.doc = doc
        self.player = player
        self._tangents_file: Path | None = None
        self.process: QProcess | None = None
        self._snapshot: Path | None = None
        self._stderr = ""
        self._cancelled = False
        self._file: Path | None = None  # the running export's output file (None: a folder)

        defaults = Timing()
        self.format_box = QComboBox()
        self.format_box.addItems([f.label for f in FORMATS])
        self.path_edit = QLineEdit(self._suggested_path(FORMATS[0]))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        path_row = fill(QHBoxLayout(), (self.path_edit, 1), browse)
        self.width_box, self.height_box = (
            QSpinBox(minimum=MIN_SIDE, maximum=MAX_SIDE, value=value, suffix=" px")
            for value in DEFAULT_SIZE
        )
        size_row = fill(QHBoxLayout(), self.width_box, QLabel("×"), self.height_box)
        self.hold_box = self._seconds(defaults.hold, HOLD_RANGE)
        self.transition_box = self._seconds(defaults.transition, TRANSITION_RANGE)
        self.fps_box = QSpinBox(minimum=FPS_RANGE[0], maximum=FPS_RANGE[1], value=int(defaults.fps))
        self.forward_box = QCheckBox("Play the forward pass first")
        self.view_box = QComboBox()
        self.view_box.addItems(VIEWS)
        self.view_box.setToolTip("slide: canvas and chain-rule text; canvas: the canvas alone")
        self.theme_box = QComboBox()  # the export's colours, light unless asked
        self.theme_box.addItems(list(colours.THEMES))
        self.theme_box.setCurrentText(colours.DEFAULT)
        self.direction_box = QComboBox()
        self.direction_box.addItems([d.value for d in Direction])
        self.direction_box.setToolTip("reverse: the backward pass, vᵀJ; forward: forward mode, J·t")
        if player is not None:
            self.direction_box.setCurrentText(player.direction.value)

        form = QFormLayout()
        for label, field in (
            ("Format", self.format_box), ("Save to", path_row), ("Size", size_row),
            ("Hold each step", self.hold_box), ("Transition", self.transition_box),
            ("Frames per second", self.fps_box), ("View", self.view_box),
            ("Theme", self.theme_box), ("Direction", self.direction_box), ("", self.forward_box),
        ):
            form.addRow(label, field)

        self.preview = QLabel(alignment=Qt.AlignmentFlag.AlignCenter)
        self.preview.setMinimumWidth(PREVIEW_WIDTH)
        self.progress = QProgressBar(minimum=0, maximum=1, value=0)
        self.status = QLabel("", wordWrap=True)

        self.buttons = QDialogButtonBox()
        accept = QDialogButtonBox.ButtonRole.AcceptRole
        self.export_button = self.buttons.addButton("Export", accept)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.export_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)

        top = fill(QHBoxLayout(), (form, 1), self.preview)
        fill(QVBoxLayout(self), top, self.progress, self.status, self.buttons)

        self.format_box.currentIndexChanged.connect(self._format_changed)
        for box in (self.width_box, self.height_box):
            box.editingFinished.connect(self.update_preview)
        for combo in (self.view_box, self.theme_box, self.direction_box):
            combo.currentIndexChanged.connect(self.update_preview)
        self.update_preview()

    @staticmethod
    def _seconds(value: float, limits: tuple[float, float]) -> QDoubleSpinBox:
        low, high = limits
        return QDoubleSpinBox(minimum=low, maximum=high, singleStep=0.1, decimals=2,
                              suffix=" s", value=value)

    # ------------------------------------------------------------------ options

    def _suggested_path(self, fmt: Format) -> str:
        stem = self.doc.path.stem if self.doc.path else "lesson"
        folder = self.doc.path.parent if self.doc.path else Path.home()
        return _named(folder, stem, fmt)

    def _format_changed(self, index: int) -> None:
        current = Path(self.path_edit.text().rstrip("/"))
        stem = current.stem
        for tag in {f.tag for f in FORMATS if f.tag}:
            stem = stem.removesuffix(tag)
        self.path_edit.setText(_named(current.parent, stem or "lesson", FORMATS[index]))

    def ask_replace(self, path: Path) -> bool:
        """Whether an existing ``path`` may be replaced (Export never does so unasked)."""
        SB = QMessageBox.StandardButton
        text = f"{path.name} already exists in {path.parent}. Replace it?"
        return plain_box(self, QMessageBox.Icon.Question, "Replace file?", text, SB.Yes | SB.No,
                         SB.No) == SB.Yes

    def _browse(self) -> None:
        suffix = FORMATS[self.format_box.currentIndex()].suffix
        if suffix == "/":
            path = QFileDialog.getExistingDirectory(self, "Export into folder")
            path = path and path.rstrip("/") + "/"
        else:
            path, _ = QFileDialog.getSaveFileName(
                self, "Export animation", self.path_edit.text(), f"*{suffix}"
            )
        if path:
            self.path_edit.setText(path)

    @property
    def direction(self) -> Direction:
        return Direction(self.direction_box.currentText())

    def tangents(self) -> dict[str, Any]:
        """The player's forward-mode tangents when exporting forward (empty: e₀)."""
        if self.direction is Direction.FORWARD and self.player is not None:
            return self.player.tangents
        return {}

    def arguments(self, graph_file: str, tangents_file: str | None = None) -> list[str]:
        """The ``main.py export`` arguments for the options as set (``tangents_file``: where
        :meth:`start` saved :meth:`tangents`)."""
        extra = FORMATS[self.format_box.currentIndex()].extra
        return [
            "export", graph_file, "--all", "--out", self.path_edit.text(),
            "--size", f"{self.width_box.value()}x{self.height_box.value()}",
            "--hold", f"{self.hold_box.value():g}",
            "--transition", f"{self.transition_box.value():g}",
            "--fps", str(self.fps_box.value()),
            "--view", self.view_box.currentText(),
            "--theme", self.theme_box.currentText(),
            *(("--forward",) if self.forward_box.isChecked() else ()),
            "--direction", self.direction.value,
            *(("--tangents", tangents_file) if tangents_file else ()),
            *extra, "--progress",
        ]  # fmt: skip

    def update_preview(self) -> None:
        """The first step (forward done, backward about to start) at the chosen size."""
        size = (self.width_box.value(), self.height_box.value())
        start = timeline_of(self.doc.graph, self.doc.results, self.doc.live_groups()).forward_length
        with using(self.theme_box.currentText()):
            image = render_frame(self.doc, start, size, View(self.view_box.currentText()),
                                 self.direction, self.tangents())  # fmt: skip
        pixmap = QPixmap.fromImage(image).scaledToWidth(
            PREVIEW_WIDTH, Qt.TransformationMode.SmoothTransformation
        )
        self.preview.setPixmap(pixmap)

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        return self.process is not None

    def start(self) -> None:
        """Snapshot the document and start the child process."""
        if self.running:
            return
        out = self.path_edit.text()
        if not out.endswith("/") and Path(out).is_file() and not self.ask_replace(Path(out)):
            self.status.setText(f"Not exported: {Path(out).name} kept")
            return
        fd, name = tempfile.mkstemp(prefix="export-", suffix=SUFFIX)
        os.close(fd)
        self._snapshot = Path(name)
        save(self._snapshot, self.doc.to_file())
        tangents = self.tangents()
        if tangents:
            self._tangents_file = self._snapshot.with_suffix(".tangents.json")
            write_tangents(self._tangents_file, tangents)
        process = QProcess(self)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("QT_QPA_PLATFORM", "offscreen")
        process.setProcessEnvironment(env)
        process.readyReadStandardOutput.connect(self._read_progress)
        process.readyReadStandardError.connect(self._read_errors)
        process.finished.connect(self._finished)
        self.process = process
        self._stderr = ""
        self._cancelled = False
        folder = FORMATS[self.format_box.currentIndex()].suffix == "/"
        self._file = None if folder else Path(self.path_edit.text())
        self.progress.setRange(0, 0)  # busy until the first report
        self.status.setText("Exporting…")
        self.export_button.setEnabled(False)
        hand_over = None if self._tangents_file is None else str(self._tangents_file)
        process.start(
            sys.executable, [str(MAIN_PY), *self.arguments(str(self._snapshot), hand_over)]
        )

    def cancel(self) -> None:
        """Stop a running export (nothing is left behind), or close the dialog."""
        if self.process is None:
            self.reject()
            return
        self._cancelled = True
        self.status.setText("Cancelling…")
        self.process.terminate()

    def _read_progress(self) -> None:
        assert self.process is not None
        text = bytes(self.process.readAllStandardOutput().data()).decode(errors="replace")
        for done, total in PROGRESS.findall(text):
            self.progress.setRange(0, int(total))
            self.progress.setValue(int(done))

    def _read_errors(self) -> None:
        assert self.process is not None
        self._stderr += bytes(self.process.readAllStandardError().data()).decode(errors="replace")

    def _finished(self, code: int, status: QProcess.ExitStatus) -> None:
        self._read_errors()
        ok = status == QProcess.ExitStatus.NormalExit and code == 0
        for temp in (self._snapshot, self._tangents_file):
            if temp is not None:
                temp.unlink(missing_ok=True)
        self._tangents_file = None
        self.process = None
        self.export_button.setEnabled(True)
        if ok:
            message = f"Exported {Path(self.path_edit.text().rstrip('/')).name}"
        else:
            message = CANCELLED if self._cancelled else self._failure()
            if self._cancelled and self._file is not None:
                remove_stale_temps(self._file)  # in case the child died before its cleanup
        self.progress.setRange(0, 1)
        self.progress.setValue(int(ok))  # full when done, empty when not
        self.status.setText(message)
        self.finished_export.emit(ok, message)

    def _failure(self) -> str:
        """The child's own one-line error (its last stderr line), without the file name."""
        lines = [ln for ln in self._stderr.splitlines() if ln.strip()]
        if not lines:
            return "Export stopped: nothing was written"
        return re.sub(r"^error: [^:]*: ", "", lines[-1])


def _named(folder: Path, stem: str, fmt: Format) -> str:
    """``folder/stem.gif``, ``folder/stem-handout.pdf``, or ``folder/stem-frames/`` for a
    folder of PNGs."""
    if fmt.suffix == "/":
        return f"{folder / (stem + fmt.tag)}/"
    return str(folder / f"{stem}{fmt.tag}{fmt.suffix}")
