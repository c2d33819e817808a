"""``main.py export TRACE.bptrace``: a captured pass exports like a graph file, every
format decoding to one picture per step the player plays (modules as one step each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui.export import main as export_main
from support import captured_mlp, torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")

STEPS = 5  # the MLP's modules collapsed: Linear, Tanh, Linear as one step each, plus the loss
PICTURES = 2 + STEPS + 1  # title and end cards, k = 0..n


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return captured_mlp(tmp_path_factory.mktemp("export") / "mlp.bptrace")


def _export(trace: Path, out: Path | str, *flags: str) -> None:
    args = [str(trace), *flags, "--out", str(out), "--size", "400x225"]
    assert export_main(args) == 0


def test_one_frame_png_and_svg(trace: Path, tmp_path: Path) -> None:
    from PIL import Image

    _export(trace, tmp_path / "k3.png", "--step", "3")
    with Image.open(tmp_path / "k3.png") as im:
        assert im.size == (400, 225)
    _export(trace, tmp_path / "k3.svg", "--step", "3")
    assert b"<svg" in (tmp_path / "k3.svg").read_bytes()[:400]


def test_a_step_past_the_end_is_one_line(trace: Path, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert export_main([str(trace), "--step", "99", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: {trace}: --step 99 is past the end: this graph has {STEPS} "
                   f"backward steps (use 0..{STEPS} or 'end')")


@pytest.mark.parametrize("suffix", [".gif", ".apng", ".webp"])
def test_animations_hold_one_picture_per_step(trace: Path, tmp_path: Path, suffix: str) -> None:
    from PIL import Image

    out = tmp_path / f"lesson{suffix}"
    _export(trace, out, "--all", "--transition", "0")
    with Image.open(out) as im:
        assert im.n_frames == PICTURES


def test_folder_video_pdf_and_page(trace: Path, tmp_path: Path) -> None:
    import av
    from pypdf import PdfReader

    _export(trace, f"{tmp_path}/frames/", "--all", "--transition", "0")
    assert len(list((tmp_path / "frames").glob("*.png"))) == PICTURES
    _export(trace, tmp_path / "lesson.mp4", "--all", "--transition", "0")
    with av.open(str(tmp_path / "lesson.mp4")) as c:
        assert sum(1 for _ in c.decode(video=0)) >= PICTURES
    _export(trace, tmp_path / "lesson.pdf", "--all")
    text = "".join(p.extract_text() for p in PdfReader(tmp_path / "lesson.pdf").pages)
    assert "Linear" in text and "Addmm" in text
    _export(trace, tmp_path / "lesson.html", "--all")
    page = (tmp_path / "lesson.html").read_text("utf-8")
    assert page.count("2 · Linear") >= 1 and "Addmm" in page
