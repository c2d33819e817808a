"""Whole-lesson exports: decode what was written and check it against the lesson's plan.

Seed example 2 (15 backward steps) is written in every animated format at
1280x720 into tests/artifacts/ for a reviewer to look at; Pillow and PyAV read
each file back: one picture per step plus the title and end cards, pictures that
differ where the steps differ, the size asked for.
"""

from __future__ import annotations

import os
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from engine import app_signature
from gui.export.options import ExportError, LessonOptions, lesson_kind
from gui.export.writers import write_lesson
from gui.model.lesson import Timing, backward_call, plan
from support import decoded

ROOT = Path(__file__).resolve().parents[2]
SEED2 = ROOT / "assets" / "examples" / "seed2_stack_vjp.bpgraph"
STEPS = 15  # seed example 2: one step per edge of its backward pass
CUT = Timing(transition=0.0)  # one picture per step


def seed2_doc(qapp):  # noqa: ANN001, ANN201
    from gui.export.render import load_document

    return load_document(SEED2)


def maker(path: Path) -> str:
    """The app the file names as its maker, read back by PyAV (MP4) or Pillow."""
    if path.suffix == ".mp4":
        with av.open(str(path)) as c:
            return str(c.metadata["comment"])
    with Image.open(path) as im:
        if path.suffix == ".webp":
            return str(im.getexif()[0x0131])  # EXIF Software
        if path.suffix == ".gif":
            return bytes(im.info["comment"]).decode()
        return str(im.info["Software"])  # the APNG's tEXt chunk


def test_plan_counts_steps_cards_and_transitions() -> None:
    timing = Timing(hold=1.0, fps=10, transition=0.3)
    shots = plan(forward_length=10, end=10 + STEPS, timing=timing, forward=False)
    assert [s.kind for s in (shots[0], shots[-1])] == ["title", "end"]
    assert len(shots) == 2 + 1 + STEPS * (1 + 3)
    held = [s for s in shots if s.kind == "frame" and s.held]
    assert [s.position for s in held] == list(range(10, 11 + STEPS))
    moving = [s.pulse for s in shots if not s.held]
    assert moving[:3] == [0.25, 0.5, 0.75] and all(
        s.duration_ms == 100 for s in shots if not s.held
    )
    with_forward = plan(10, 10 + STEPS, CUT, forward=True)
    assert [s.position for s in with_forward[1:10]] == list(range(1, 10))


def test_backward_call_reads_like_pytorch() -> None:
    assert (
        backward_call("y", np.array([0.1, 0.2, 0.3]))
        == "y.backward(gradient=tensor([0.1, 0.2, 0.3]))"
    )
    assert backward_call("z", np.array(1.0)) == "z.backward()"
    assert backward_call("y", np.ones((2, 2))) == "y.backward(gradient=tensor([[1, 1], [1, 1]]))"


@pytest.mark.parametrize("suffix", [".gif", ".apng", ".webp", ".mp4"])
def test_seed2_every_format_one_picture_per_step(
    qapp,
    artifacts_dir: str,  # noqa: ANN001
    suffix: str,
) -> None:
    out = Path(artifacts_dir) / f"lesson_seed2{suffix}"
    options = LessonOptions(kind=lesson_kind(str(out)), size=(1280, 720), timing=CUT)
    write_lesson(seed2_doc(qapp), out, options)
    pictures = decoded(out)
    assert len(pictures) == STEPS + 1 + 2  # steps, "backward 0 of 15", title and end cards
    assert all(p.shape == (720, 1280, 3) for p in pictures)
    for a, b in zip(pictures, pictures[1:], strict=False):  # every step changes the picture
        assert np.abs(a.astype(int) - b.astype(int)).max() > 40
    assert not [f for f in os.listdir(artifacts_dir) if f.endswith(".partial")]
    assert maker(out) == app_signature()  # named like the PNG, PDF and HTML exports


def test_mp4_plays_in_slide_software_and_keeps_time(qapp, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "odd.mp4"
    timing = Timing(hold=0.5, fps=10, transition=0.2, title=1.0, end=2.0)
    write_lesson(seed2_doc(qapp), out, LessonOptions("mp4", (641, 361), timing))
    with av.open(str(out)) as c:
        s = c.streams.video[0]
        assert (s.codec_context.name, s.format.name) == ("h264", "yuv420p")
        assert (s.width, s.height) == (640, 360)  # even sides
        frames = list(c.decode(video=0))
    assert len(frames) == 2 + 1 + STEPS * 3
    starts = [float(f.time) for f in frames]
    assert starts[1] == pytest.approx(1.0) and starts[2] == pytest.approx(1.5)
    assert starts[3] - starts[2] == pytest.approx(0.1)


def test_transitions_move_the_pulse_and_apng_keeps_durations(qapp, tmp_path: Path) -> None:  # noqa: ANN001
    out = tmp_path / "t.apng"
    timing = Timing(hold=1.0, fps=10, transition=0.2)
    write_lesson(seed2_doc(qapp), out, LessonOptions("apng", (640, 360), timing))
    pictures = decoded(out)
    assert len(pictures) == 2 + 1 + STEPS * 3
    assert len({p.tobytes() for p in pictures}) == len(pictures)
    with Image.open(out) as im:
        durations = []
        for i in range(im.n_frames):
            im.seek(i)
            durations.append(im.info["duration"])
    assert durations[:5] == [3000, 1000, 100, 100, 1000]


def test_png_sequence_is_numbered(qapp, tmp_path: Path) -> None:  # noqa: ANN001
    folder = tmp_path / "frames"
    write_lesson(seed2_doc(qapp), folder, LessonOptions(lesson_kind(f"{folder}/"), (400, 300), CUT))
    names = sorted(os.listdir(folder))
    assert names == [f"frame_{i:04d}.png" for i in range(1, STEPS + 4)]
    assert Image.open(folder / names[0]).size == (400, 300)
    assert os.listdir(tmp_path) == ["frames"]


def test_failure_leaves_nothing_behind(qapp, tmp_path: Path) -> None:  # noqa: ANN001
    def stop(done: int, total: int) -> None:
        if done == 5:
            raise KeyboardInterrupt

    for kind, name in (("gif", "x.gif"), ("mp4", "x.mp4"), ("png-sequence", "seq")):
        with pytest.raises(KeyboardInterrupt):
            write_lesson(
                seed2_doc(qapp), tmp_path / name, LessonOptions(kind, (320, 240), CUT), stop
            )
    assert os.listdir(tmp_path) == []


def test_lesson_kind_refuses_unknown_suffixes(tmp_path: Path) -> None:
    assert lesson_kind(str(tmp_path / "a.GIF")) == "gif"
    assert lesson_kind(f"{tmp_path}/frames/") == "png-sequence"
    for bad in ("a.avi", "a", "a.png"):
        with pytest.raises(ExportError, match="--out must end in"):
            lesson_kind(str(tmp_path / bad))
    with pytest.raises(ExportError, match="does not exist"):
        lesson_kind(str(tmp_path / "nope" / "a.gif"))


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--out", "{tmp}/x.avi"], "--out must end in"),
        (["--out", "{tmp}/no/x.gif"], "does not exist"),
        (["--out", "{tmp}/x.gif", "--size", "1x"], "--size must look like"),
        (["--out", "{tmp}/x.gif", "--fps", "0"], "--fps 0 is out of range"),
        (["--out", "{tmp}/x.gif", "--hold", "z"], "--hold must be"),
        (["--out", "{tmp}/x.gif", "--worksheet"], "--worksheet is for"),
        (["--out", "{tmp}/x.gif", "--view", "wide"], "invalid choice"),
        (["--out", "{tmp}/x.gif", "--step", "1"], "not allowed with"),
        (["--out", "{tmp}/x.gif", "--transition", "-1"], "out of range"),
    ],
)
def test_export_all_bad_input_one_line_exit_2(
    qapp,
    tmp_path: Path,
    capsys,  # noqa: ANN001
    args: list[str],
    says: str,
) -> None:
    from gui.export.cli import main

    argv = [str(SEED2), "--all", *(a.format(tmp=tmp_path) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {SEED2}: ") and says in err[0]
    assert os.listdir(tmp_path) == []


def test_export_all_missing_file(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from gui.export.cli import main

    assert main([str(tmp_path / "nope.bpgraph"), "--all", "--out", str(tmp_path / "x.gif")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "no such file" in err[0]
    assert os.listdir(tmp_path) == []
