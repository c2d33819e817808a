"""The node-name face: bundled with its licence, installed with the package, used by
the canvas's compact names, and a clean fallback when its file cannot be loaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QByteArray
from PySide6.QtGui import QFont, QFontInfo, QFontMetricsF, QPainterPath, QRawFont

from gui import theme
from gui.canvas.node_item import compact_fonts
from gui.name_zero import plain_narrow_zero

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


def _glyph_paths(data: bytes, chars: str) -> list[QPainterPath]:
    raw = QRawFont(QByteArray(data), 100.0)
    return [raw.pathForGlyph(raw.glyphIndexesForString(c)[0]) for c in chars]


def test_the_name_zero_is_a_plain_oval_narrower_than_o(qapp) -> None:  # noqa: ANN001
    """The face the canvas really draws names in: its 0 has no dot (a ring: two
    contours, not three) and is at most 0.82 of O's width, as tall as O."""
    raw = QRawFont.fromFont(compact_fonts().name)
    zero, o = (raw.pathForGlyph(raw.glyphIndexesForString(c)[0]) for c in "0O")
    assert len(zero.toSubpathPolygons()) == 2
    assert len(o.toSubpathPolygons()) == 2
    assert zero.boundingRect().width() <= 0.82 * o.boundingRect().width()
    assert zero.boundingRect().height() == pytest.approx(o.boundingRect().height(), rel=0.01)
    assert zero.boundingRect().center().x() == pytest.approx(o.boundingRect().center().x(), abs=1)


def test_redrawing_the_zero_changes_no_other_glyph_and_no_width(qapp) -> None:  # noqa: ANN001
    before = theme.NAME_FONT_FILE.read_bytes()
    after = plain_narrow_zero(before)
    chars = "abcxyzOQD1lI_89"
    for old, new in zip(_glyph_paths(before, chars), _glyph_paths(after, chars), strict=True):
        assert old == new
    zero_before, zero_after = _glyph_paths(before, "0") + _glyph_paths(after, "0")
    assert len(zero_before.toSubpathPolygons()) == 3  # the upstream dotted zero
    assert zero_after != zero_before
    widths = [QRawFont(QByteArray(d), 100.0).averageCharWidth() for d in (before, after)]
    assert widths[0] == widths[1]  # still monospaced: every advance as before
    raw = QRawFont(QByteArray(after), 100.0)
    advances = raw.advancesForGlyphIndexes(raw.glyphIndexesForString("0O1a"))
    assert len({round(a.x(), 3) for a in advances}) == 1


def test_a_face_without_a_dotted_zero_is_loaded_as_it_is(qapp, monkeypatch, tmp_path) -> None:  # noqa: ANN001
    """Only a ring with a dot is redrawn; anything else is refused with a ValueError
    and name_family loads such a file unchanged."""
    plain = plain_narrow_zero(theme.NAME_FONT_FILE.read_bytes())
    with pytest.raises(ValueError):
        plain_narrow_zero(plain)
    with pytest.raises(ValueError):
        plain_narrow_zero(b"not a font at all, but long enough to read a header from")
    path = tmp_path / "Plain.ttf"
    path.write_bytes(plain)
    monkeypatch.setattr(theme, "NAME_FONT_FILE", path)
    monkeypatch.setattr(theme, "_name_family", [])
    assert theme.name_family() == "JetBrains Mono NL"
