"""``main.py export FILE --direction forward``: forward mode's steps exported like the
backward pass's, one picture per step in every format; one-line refusals where forward
mode does not apply (a captured trace, the worksheet, the update act)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui.export import main as export_main
from gui.model.timeline import timeline_of
from gui.player import forward_pass
from support import captured_mlp, decoded, torch

GRAPH = Path(__file__).resolve().parents[2] / "assets" / "examples" / "seed1_square_sum.bpgraph"


def _steps() -> int:
    from gui.export.render import load_document

    doc = load_document(GRAPH)
    return len(timeline_of(doc.graph, doc.results, [], forward_pass(doc)).steps)


def _export(out: Path | str, *flags: str) -> int:
    args = [str(GRAPH), *flags, "--direction", "forward", "--out", str(out), "--size", "400x225"]
    return export_main(args)


def test_every_format_holds_one_picture_per_forward_step(tmp_path: Path) -> None:
    from pypdf import PdfReader

    n = _steps()
    assert n >= 2
    pictures = 2 + n + 1  # title and end cards, k = 0..n
    for suffix in (".gif", ".apng", ".webp", ".mp4"):
        assert _export(tmp_path / f"l{suffix}", "--all", "--transition", "0") == 0
        got = len(decoded(tmp_path / f"l{suffix}"))
        assert got == pictures if suffix != ".mp4" else got >= pictures, suffix
    assert _export(f"{tmp_path}/frames/", "--all", "--transition", "0") == 0
    assert len(list((tmp_path / "frames").glob("*.png"))) == pictures
    assert _export(tmp_path / "l.pdf", "--all") == 0
    text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(tmp_path / "l.pdf").pages)
    assert all(f"Forward step {k} of {n}" in text for k in range(1, n + 1))
    assert "Backward" not in text and "Forward mode done" in text
    assert _export(tmp_path / "l.html", "--all") == 0
    page = (tmp_path / "l.html").read_text("utf-8")
    assert all(f"Forward step {k} of {n}" in page for k in range(1, n + 1))


def test_one_frame_and_its_refusals(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from PIL import Image

    n = _steps()
    assert _export(tmp_path / "k1.png", "--step", "1") == 0
    with Image.open(tmp_path / "k1.png") as im:
        assert im.size == (400, 225)
    assert _export(tmp_path / "x.png", "--step", str(n + 1)) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: {GRAPH}: --step {n + 1} is past the end: this graph has {n} "
                   f"forward-mode steps (use 0..{n} or 'end')")
    assert _export(tmp_path / "w.pdf", "--all", "--worksheet") == 2
    assert "\n" not in capsys.readouterr().err.strip()
    assert not (tmp_path / "w.pdf").exists()


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_a_captured_trace_refuses_the_forward_direction_in_one_line(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    trace = captured_mlp(tmp_path / "mlp.bptrace")
    for flags in (["--step", "1", "--out", str(tmp_path / "f.png")],
                  ["--all", "--out", str(tmp_path / "f.gif")]):
        assert export_main([str(trace), *flags, "--direction", "forward"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"error: {trace}: --direction forward: ") and "\n" not in err
        assert "captured trace" in err
    assert not list(tmp_path.glob("f.*"))


def test_copy_frame_in_the_forward_direction_is_the_frame_on_screen(qtbot) -> None:  # noqa: ANN001
    """Copy Frame (and Export Image) render the player's direction and tangents."""
    import numpy as np
    from PySide6.QtGui import QGuiApplication

    from gui.export import render_frame
    from gui.main_window import MainWindow
    from gui.model.timeline import Direction

    w = MainWindow()
    qtbot.addWidget(w)
    assert w.files.load_path(GRAPH)
    w.player.set_tangents({"x": [0.0, 1.0, 0.0]})
    w.player.set_direction(Direction.FORWARD)
    w.player.seek(w.player.timeline.position_of_step(1))
    w.copy_frame()
    copied = QGuiApplication.clipboard().image()
    size = (copied.width(), copied.height())
    forward = render_frame(w.doc, w.player.position, size, direction=Direction.FORWARD,
                           tangents={"x": np.array([0.0, 1.0, 0.0])})
    assert copied.convertToFormat(forward.format()) == forward
    assert render_frame(w.doc, w.player.position, size) != forward  # not the backward step
