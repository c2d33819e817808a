"""Exporting frames: the same widgets rendered off screen, and ``main.py export``.

The images for seed example 2 at step 0, a middle step and the end are left in
tests/artifacts/ for a reviewer to look at. The command is run as a user would,
in a subprocess with QT_QPA_PLATFORM unset, to prove it needs no display.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from engine.fileformat import load, save
from gui.document import GraphDocument
from gui.export import parse_size, parse_step, render_frame, save_frame

ROOT = Path(__file__).resolve().parents[2]
SEED2 = ROOT / "assets" / "examples" / "seed2_stack_vjp.bpgraph"


def seed2_file(tmp_path: Path) -> Path:
    """The shipped example, or (while it is missing) the same graph saved from code."""
    if SEED2.exists():
        return SEED2
    from test_player import seed2_doc  # same folder

    path = tmp_path / "seed2.bpgraph"
    save(path, seed2_doc().to_file())
    return path


def seed2_doc(tmp_path: Path) -> GraphDocument:
    path = seed2_file(tmp_path)
    doc = GraphDocument()
    doc.load(load(path, partial=True), path)
    return doc


def pixels(image: QImage) -> bytes:
    return bytes(image.constBits())


def run_export(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.run(
        [sys.executable, "main.py", "export", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def test_render_frame_three_moments(qapp, tmp_path: Path, artifacts_dir: str) -> None:  # noqa: ANN001
    doc = seed2_doc(tmp_path)
    from gui.model.timeline import Timeline

    tl = Timeline(doc.results)
    shots = {}
    for name, position in (("step0", tl.position_of_step(0)), ("step7", tl.position_of_step(7)),
                           ("end", None)):
        image = render_frame(doc, position, (1280, 720))
        assert (image.width(), image.height()) == (1280, 720)
        assert image.save(os.path.join(artifacts_dir, f"export_seed2_{name}.png"))
        shots[name] = pixels(image)
    assert len(set(shots.values())) == 3


def test_save_frame_png_and_svg(qapp, tmp_path: Path, artifacts_dir: str) -> None:  # noqa: ANN001
    doc = seed2_doc(tmp_path)
    png, svg = tmp_path / "f.png", Path(artifacts_dir) / "export_seed2_end.svg"
    save_frame(doc, None, png, (800, 600))
    save_frame(doc, None, svg, (1280, 720))
    assert QImage(str(png)).size().width() == 800
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert "backward done" in text  # the description names the frame
    from gui.export import ExportError

    with pytest.raises(ExportError):
        save_frame(doc, None, tmp_path / "f.gif")


def test_parse_arguments() -> None:
    from gui.export import ExportError

    assert parse_size("1280x720") == (1280, 720)
    assert parse_size(None) == (1280, 720)
    assert parse_step("end") is None and parse_step("3") == 3
    for bad in ("12", "0x0", "99999x10", "axb"):
        with pytest.raises(ExportError):
            parse_size(bad)
    for bad in ("-1", "x", "1.5", ""):
        with pytest.raises(ExportError):
            parse_step(bad)


def test_export_command_gives_three_different_images(tmp_path: Path, artifacts_dir: str) -> None:
    src = seed2_file(tmp_path)
    images = []
    for step in ("0", "7", "end"):
        out = Path(artifacts_dir) / f"cli_seed2_step_{step}.png"
        if out.exists():
            out.unlink()
        done = run_export(str(src), "--step", step, "--out", str(out), "--size", "1280x720")
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        image = QImage(str(out))
        assert (image.width(), image.height()) == (1280, 720)
        images.append(pixels(image))
    assert len(set(images)) == 3


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["{missing}", "--step", "0"], "no such file"),
        (["{broken}", "--step", "0"], "not valid JSON"),
        (["{seed2}", "--step", "x"], "--step must be"),
        (["{seed2}", "--step", "-1"], "--step must be"),
        (["{seed2}", "--step", "99"], "past the end"),
        (["{seed2}", "--step", "1", "--size", "12x"], "--size must look like"),
        (["{seed2}", "--step", "1", "--size", "50x50"], "out of range"),
        (["{seed2}"], "one of the arguments --step --all is required"),
    ],
)
def test_export_command_bad_input(tmp_path: Path, args: list[str], says: str) -> None:
    broken = tmp_path / "broken.bpgraph"
    broken.write_text("{not json", encoding="utf-8")
    names = {"missing": str(tmp_path / "nope.bpgraph"), "broken": str(broken),
             "seed2": str(seed2_file(tmp_path))}
    argv = [a.format(**names) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "x.png")]
    done = run_export(*argv)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {argv[0]}: ")
    assert says in lines[0]
    assert "Traceback" not in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["broken.bpgraph"]  # nothing written, no leftovers


def test_export_all_command_writes_a_gif(tmp_path: Path) -> None:
    out = tmp_path / "lesson.gif"
    done = run_export(str(seed2_file(tmp_path)), "--all", "--out", str(out), "--size", "480x270",
                      "--transition", "0", "--forward", "--view", "canvas", "--progress")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[-1] == f"progress: {len(lines)}/{len(lines)}"
    from PIL import Image

    with Image.open(out) as im:
        assert im.size == (480, 270)
        assert im.n_frames == len(lines) == 2 + 9 + 16  # cards, forward nodes 1..9, k = 0..15
