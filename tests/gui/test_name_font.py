"""The node-name face: bundled with its licence, installed with the package, used by
the canvas's compact names, and a clean fallback when its file cannot be loaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QFont, QFontInfo, QFontMetricsF

from gui import theme
from gui.canvas.node_item import compact_fonts

ROOT = Path(__file__).resolve().parents[2]


def test_compact_names_are_drawn_in_the_bundled_face(qapp) -> None:  # noqa: ANN001
    font = compact_fonts().name
    info = QFontInfo(font)  # the face Qt really matched, not just the one asked for
    assert info.family() == "JetBrains Mono NL"
    assert info.styleName() == "ExtraBold"
    fm = QFontMetricsF(font)
    chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
    assert all(fm.inFont(c) for c in chars)
    # as wide as the face before it (the fallback), so compact names keep their sizes
    before = QFont(theme.FALLBACK_NAME_FAMILY)
    before.setPointSizeF(font.pointSizeF())
    before.setBold(True)
    width = QFontMetricsF(before).horizontalAdvance("y1_part")
    assert fm.horizontalAdvance("y1_part") == pytest.approx(width, rel=0.01)


def test_the_face_ships_with_its_licence() -> None:
    assert theme.NAME_FONT_FILE.is_file()
    licence = (theme.NAME_FONT_FILE.parent / "OFL.txt").read_text(encoding="utf-8")
    assert "JetBrains Mono" in licence
    assert "SIL Open Font License, Version 1.1" in licence


@pytest.mark.parametrize("content", [None, b"not a font"])
def test_a_missing_or_broken_face_falls_back(qapp, monkeypatch, tmp_path, content) -> None:  # noqa: ANN001
    path = tmp_path / "Name.ttf"
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setattr(theme, "NAME_FONT_FILE", path)
    monkeypatch.setattr(theme, "_name_family", [])
    assert theme.name_family() == theme.FALLBACK_NAME_FAMILY


def test_the_package_installs_the_face_and_the_examples(tmp_path) -> None:
    """Building the package from the project's files (setuptools' build_py, as a wheel
    or an install does) copies the face, its licence and the examples where
    gui.theme and engine.examples look for them."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "main.py"):
        shutil.copy(ROOT / name, src / name)
    for folder in ("engine", "gui", "assets"):
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    build = [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py"]
    subprocess.run([*build, "-d", str(out)], cwd=src, check=True, capture_output=True)
    font = theme.NAME_FONT_FILE.relative_to(ROOT)
    for path in (font, font.parent / "OFL.txt", Path("assets/examples/seed1_square_sum.bpgraph")):
        assert (out / path).is_file(), path
