"""View > Theme: Light, Dark and Projector restyle the window live, are remembered,
and exports are light unless ``--theme`` asks otherwise. Screenshots of each theme at
1280x720, in the window and in presentation mode, go to tests/artifacts/."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QSettings
from PySide6.QtGui import QImage, QPalette
from PySide6.QtWidgets import QApplication, QFileDialog

from engine.examples import EXAMPLES_DIR
from gui.canvas.node_item import NodeItem
from gui.export import cli
from gui.export.dialog import ExportAnimationDialog
from gui.main_window import THEME_KEY, MainWindow
from gui.model import colours
from gui.theme import THEME, application_palette
from support import contrast

SEED2 = EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"


@pytest.fixture(autouse=True)
def light_again():  # noqa: ANN201 - pytest fixture
    """Every other test expects the default theme: put it back whatever happens."""
    yield
    THEME.use(colours.DEFAULT)
    QApplication.setPalette(application_palette())


def _dominant(image: QImage, rect: QRect) -> str:
    """The commonest colour (``#rrggbb``) of ``image`` inside ``rect``, on a 3 px grid."""
    seen = Counter(
        image.pixelColor(x, y).name()
        for x in range(rect.left(), rect.right(), 3)
        for y in range(rect.top(), rect.bottom(), 3)
    )
    return seen.most_common(1)[0][0]


def _canvas_colours(win: MainWindow) -> tuple[str, str]:
    """(canvas background, a node box's fill) as drawn on screen now."""
    QApplication.processEvents()
    view = win.canvas
    image = view.viewport().grab().toImage()
    box = next(i for i in view.scene().items() if isinstance(i, NodeItem))
    rect = view.mapFromScene(box.sceneBoundingRect()).boundingRect()
    rect = rect.adjusted(4, rect.height() // 2, -4, -4) & image.rect()
    return _dominant(image, image.rect()), _dominant(image, rect)


def test_view_theme_restyles_live_and_is_remembered(
    make_window, tmp_path: Path, monkeypatch  # noqa: ANN001
) -> None:
    win = make_window(SEED2, size=(1280, 720))
    assert win.theme_actions["light"].isChecked()
    light_bg, light_box = _canvas_colours(win)
    assert light_bg == colours.THEMES["light"]["BACKGROUND"]

    win.theme_actions["dark"].trigger()
    assert [n for n, a in win.theme_actions.items() if a.isChecked()] == ["dark"]
    dark_bg, dark_box = _canvas_colours(win)
    assert dark_bg == colours.THEMES["dark"]["BACKGROUND"]
    assert dark_box != light_box
    # The panels draw on the theme's grounds: the inspector's hint reads at 4.5:1 or more.
    hint = win.inspector.node.hint
    ground = hint.palette().color(QPalette.ColorRole.Window).name()
    assert ground == colours.THEMES["dark"]["PANEL"]
    assert colours.THEMES["dark"]["TEXT_MUTED"] in hint.styleSheet()
    assert contrast(colours.THEMES["dark"]["TEXT_MUTED"], ground) >= 4.5
    formula = win.palette_panel.item("add").foreground(1).color().name()
    assert formula == colours.THEMES["dark"]["TEXT_MUTED"]
    # File > Export Image is light though the window is dark, which stays dark.
    target = tmp_path / "frame.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    win.named_actions["export"].trigger()
    image = QImage(str(target))
    light = colours.THEMES["light"]
    assert _dominant(image, image.rect()) in (light["BACKGROUND"], light["PAPER"])
    assert THEME.name == "dark" and _canvas_colours(win)[0] == dark_bg

    win.theme_actions["projector"].trigger()
    assert _canvas_colours(win)[0] == colours.THEMES["projector"]["BACKGROUND"]
    assert QSettings().value(THEME_KEY) == "projector"
    second = make_window(SEED2, size=(1280, 720))  # the next launch
    assert THEME.name == "projector" and second.theme_actions["projector"].isChecked()


def test_a_theme_change_recolours_the_module_frames(make_window, tmp_path: Path) -> None:  # noqa: ANN001
    """A captured model's module boxes take the new theme's fill, as the node boxes do
    (their frames were left in the old one: nothing they frame changes)."""
    from support import captured_mlp, torch

    if torch is None:
        pytest.skip("torch is not installed")
    win = make_window(captured_mlp(tmp_path / "mlp.bptrace"), size=(1280, 720))
    frames = win.teaching.group_frames.frames
    assert frames
    for name in ("dark", "light"):
        win.theme_actions[name].trigger()
        fill = colours.THEMES[name]["GROUP_FILL"].lower()
        assert {f.brush().color().name() for f in frames.values()} == {fill}, name


@pytest.mark.parametrize("theme", sorted(colours.THEMES))
def test_each_theme_screenshots(theme: str, make_window, artifacts_dir: str) -> None:  # noqa: ANN001
    """The window at seed 2's middle step; presentation mode on seed 2 and the classifier
    head at steps 1, middle and last."""
    for stem in ("seed2_stack_vjp", "classifier_head"):
        win = make_window(EXAMPLES_DIR / f"{stem}.bpgraph", size=(1280, 720))
        win.canvas.animations_enabled = False
        win.set_theme(theme)
        tl = win.player.timeline
        n = len(tl.steps)
        shots = [("window", (n + 1) // 2)] if stem.startswith("seed2") else []
        shots += [("presentation", k) for k in (1, (n + 1) // 2, n)]
        for mode, k in shots:
            if mode == "presentation" and not win.presenting:
                win.enter_presentation()
                win.showNormal()  # the offscreen screen is not 1280x720
                win.resize(1280, 720)
            win.player.seek(tl.position_of_step(k))
            QApplication.processEvents()
            win.canvas.refit()
            QApplication.processEvents()
            assert _canvas_colours(win)[0] == colours.THEMES[theme]["BACKGROUND"]
            name = f"theme-{theme}-{stem}-{mode}-step{k}.png"
            assert win.grab().save(os.path.join(artifacts_dir, name))
        win.leave_presentation()


def test_exports_are_light_unless_asked(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    def export(*extra: str) -> QImage:
        out = tmp_path / f"frame{len(list(tmp_path.iterdir()))}.png"
        assert cli.main([str(SEED2), "--step", "2", "--out", str(out), *extra]) == 0
        return QImage(str(out))

    default, light, dark = export(), export("--theme", "light"), export("--theme", "dark")
    assert default == light
    assert dark != default
    assert export("--theme", "projector") != default
    assert THEME.name == colours.DEFAULT  # the export put the theme back
    assert cli.main([str(SEED2), "--step", "2", "--out", str(tmp_path / "x.png"),
                     "--theme", "neon"]) == 2
    assert "invalid choice: 'neon'" in capsys.readouterr().err


def test_the_export_dialog_asks_for_a_theme_light_by_default(make_window) -> None:  # noqa: ANN001
    win = make_window(SEED2, size=(1280, 720))
    win.set_theme("dark")
    dialog = ExportAnimationDialog(win.doc, win)
    args = dialog.arguments("g.bpgraph")
    assert args[args.index("--theme") + 1] == "light"
    dialog.theme_box.setCurrentText("projector")
    args = dialog.arguments("g.bpgraph")
    assert args[args.index("--theme") + 1] == "projector"
    dialog.close()


def test_restyle_rewrites_the_sheets_given_under_its_root_only(qapp) -> None:  # noqa: ANN001
    """A theme change rewrites the sheet of each widget :func:`style` was given under
    the window (a dialog of the window's too), no other window's, and passes over one
    Qt has deleted (a page rebuilt) instead of crashing on it."""
    from PySide6.QtWidgets import QDialog, QLabel, QWidget
    from shiboken6 import delete

    from gui.theme import restyle, style

    window, other = QWidget(), QWidget()
    inside, gone = QLabel(QWidget(window)), QLabel(window)
    dialog = QDialog(window)
    in_dialog, elsewhere = QLabel(dialog), QLabel(other)
    sheet = lambda: f"color: {THEME.text.name()};"  # noqa: E731 - the colour of now
    for label in (inside, gone, in_dialog, elsewhere):
        style(label, sheet)
    light = sheet()
    delete(gone)  # (as Qt deletes a form row's widgets)
    THEME.use("dark")
    assert sheet() != light
    restyle(window)
    assert inside.styleSheet() == in_dialog.styleSheet() == sheet()
    assert elsewhere.styleSheet() == light
