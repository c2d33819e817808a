"""The whole-lesson formats are one table (gui.export.options.FORMATS): the dialog's list,
``--out``'s suffixes and the kinds the writers dispatch on all read it."""

from __future__ import annotations

from pathlib import Path

from gui.export.cli import USAGE
from gui.export.options import FORMATS, LESSON_SUFFIXES, Kind, lesson_kind


def test_every_kind_is_offered_and_its_suffix_selects_it(tmp_path: Path) -> None:
    assert {f.kind for f in FORMATS} == set(Kind)
    for f in FORMATS:
        out = f"{tmp_path}/" if f.suffix == "/" else str(tmp_path / f"lesson{f.suffix}")
        assert lesson_kind(out) is f.kind, f.label


def test_the_usage_line_names_every_suffix() -> None:
    assert LESSON_SUFFIXES == (".gif", ".apng", ".webp", ".mp4", ".pdf", ".html")
    assert all(s in USAGE for s in LESSON_SUFFIXES)
