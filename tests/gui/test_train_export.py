"""``main.py export --all --train N`` (issue 30): after the backward pass, the update act.
The handout's last page is the update with its numbers and the loss over N steps; every
other format ends with two more pictures, the first step's update on the graph and the
loss curve, whose points are engine.train's losses; a graph without a train block is a
one-line refusal."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pypdf
import pytest
from PIL import Image

from engine.examples import EXAMPLES_DIR
from engine.fileformat import load
from engine.train import Trainer
from gui.export.cli import main as export_main
from gui.model import colours
from support import decoded

FIT_LINE = EXAMPLES_DIR / "fit_line.bpgraph"
STEPS = 20
#: The lesson of fit_line in pictures without --train, cut from step to step (title,
#: start, 4 steps, end), and the update act's two.
LESSON, ACT = 1 + 1 + 4 + 1, 2
CUT = ["--transition", "0"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = export_main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_handout_ends_with_the_update(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "fit.pdf"
    code, err = run([EXAMPLES_DIR / "fit_line.bpgraph", "--all", "--train", "200",
                     "--out", out], capsys)
    assert code == 0, err
    pages = [" ".join(p.extract_text().split()) for p in pypdf.PdfReader(out).pages]
    last = pages[-1]
    assert last.startswith("After the backward pass, the update (sgd)")
    assert "w ← 0 − 0.1 · (−8.08) = 0.808" in last and "b ← 0 − 0.1 · (−6.08) = 0.608" in last
    assert "After 200 steps: loss = 0.0144 (target 0.02)" in last
    assert not any("the update" in p for p in pages[:-1])


@pytest.mark.parametrize(
    ("file", "extra", "message"),
    [
        ("seed1_square_sum", ["--out", "x.pdf"], "--train needs a graph with a train block"),
        ("fit_line", ["--out", "x.pdf", "--train", "0"], "--train must be a number of steps"),
    ],
)
def test_train_refusals(qapp, tmp_path: Path, capsys, file: str, extra: list[str],  # noqa: ANN001
                        message: str) -> None:
    args = [EXAMPLES_DIR / f"{file}.bpgraph", "--all", "--train", "5", *extra]
    args = [str(tmp_path / a) if str(a).startswith("x.") else a for a in args]
    code, err = run(args, capsys)
    assert code == 2 and message in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def engine_losses() -> list[float]:
    """fit_line's losses over STEPS steps, straight from engine.train."""
    gf = load(FIT_LINE)
    assert gf.train is not None
    trainer = Trainer(gf.graph, gf.train)
    return [trainer.step().loss for _ in range(STEPS)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, qapp) -> dict[str, Path]:  # noqa: ANN001
    """fit_line with --train 20 in every format but the PDF (and the PNGs without it)."""
    folder = tmp_path_factory.mktemp("train")
    outs = {s: folder / f"fit{s}" for s in (".gif", ".apng", ".webp", ".mp4", ".html")}
    outs["/"] = folder / "frames"
    for out in outs.values():
        target = f"{out}/" if out.name == "frames" else str(out)
        args = [str(FIT_LINE), "--all", *CUT, "--train", str(STEPS), "--out", target]
        assert export_main(args) == 0
    outs["plain"] = folder / "plain"
    assert export_main([str(FIT_LINE), "--all", *CUT, "--out", f"{outs['plain']}/"]) == 0
    return outs


def pictures(path: Path) -> list[np.ndarray]:
    if path.is_dir():
        return [np.asarray(Image.open(f).convert("RGB")) for f in sorted(path.iterdir())]
    return decoded(path)


def curve(html: str) -> list[tuple[float, float]]:
    """The loss card's polyline in the web page's last slide (QSvgGenerator's SVG)."""
    slide = html[html.rindex('<section class="slide loss"'):]
    points = re.findall(r'<polyline[^>]*points="([^"]*)"', slide)[-1].split()
    return [(float(x), float(y)) for x, y in (pt.split(",") for pt in points)]


def test_web_page_ends_with_the_update_and_engine_losses(exported: dict[str, Path]) -> None:
    html = exported[".html"].read_text(encoding="utf-8")
    kinds = re.findall(r'<section class="slide ([a-z-]+)"', html)
    assert kinds == ["card-slide", *["frame"] * 5, "card-slide", "update", "loss"]
    update = html[html.index('<section class="slide update"'):html.index('class="slide loss"')]
    assert "then the update: training step 1 (sgd)" in update
    # in the text in full; on the box, drawn small at the export's zoom, summarised
    # (semantic zoom: the value reached, at the canvas's minimum text size)
    assert update.count("w ← 0 − 0.1 · (−8.08) = 0.808") == 1
    assert update.count("b ← 0 − 0.1 · (−6.08) = 0.608") == 1
    assert update.count("w ← 0.808") == 1 and update.count("b ← 0.608") == 1
    losses = engine_losses()
    assert f"After {STEPS} steps: loss = {losses[-1]:.4g} (target 0.02)" in html
    # The drawn points are engine.train's losses on a log scale, evenly spaced.
    points = curve(html)
    assert len(points) == STEPS
    ys = [y for _, y in points]
    top, bottom = min(ys), max(ys)
    logs = [math.log10(x) for x in losses]
    lo, hi = min(logs), max(logs)
    for (x, y), v, k in zip(points, logs, range(STEPS), strict=True):
        assert (bottom - y) / (bottom - top) == pytest.approx((v - lo) / (hi - lo), abs=2e-4)
        expected_x = points[0][0] + (points[-1][0] - points[0][0]) * k / (STEPS - 1)
        assert x == pytest.approx(expected_x, abs=0.01)  # six digits in the SVG


@pytest.mark.parametrize("fmt", [".gif", ".apng", ".webp", ".mp4", "/"])
def test_every_format_ends_with_the_update_act(exported: dict[str, Path], fmt: str) -> None:
    got = pictures(exported[fmt])
    reference = pictures(exported["/"])  # lossless, numbered: the lesson as painted
    plain = pictures(exported["plain"])
    assert len(plain) == LESSON and len(got) == LESSON + ACT
    assert got[0].shape == (720, 1280, 3)
    lossy = fmt in (".gif", ".mp4")
    for i in range(-3, 0):  # the end card, then the update act, in order
        diff = np.abs(got[i].astype(int) - reference[i].astype(int)).mean()
        assert diff < (4.0 if lossy else 1e-9), (i, diff)
    assert np.array_equal(reference[LESSON - 1], plain[-1])  # the backward's lesson unchanged
    update, loss = reference[-2], reference[-1]
    assert np.abs(update.astype(int) - reference[-3].astype(int)).mean() > 5  # not the card
    # Every vertex of the loss curve (placed from engine.train's losses) is drawn in red.
    red = np.array([int(colours.EDGE_ACTIVE[i:i + 2], 16) for i in (1, 3, 5)])
    html = exported[".html"].read_text(encoding="utf-8")
    frame = got[-1] if not lossy else loss
    for x, y in curve(html):
        patch = frame[round(y) - 1:round(y) + 2, round(x) - 1:round(x) + 2].reshape(-1, 3)
        assert np.abs(patch.astype(int) - red).sum(axis=1).min() < 60, (x, y)


def test_exported_act_changes_each_box_when_the_pulse_reaches_it(qapp) -> None:  # noqa: ANN001
    """With transitions, the update act's pictures show the pulse on its way to each
    parameter; a box shows its new value from the picture the pulse has reached it in
    (the frame model's ``shown_values``), the held picture every new value."""
    from gui.export.options import Kind, LessonOptions
    from gui.export.render import graph_document, lesson_renderer
    from gui.model.formatting import format_tensor
    from gui.model.lesson import ShotKind, Timing
    from gui.model.update_act import DONE, UpdateFrame, shown_values

    doc = graph_document(load(FIT_LINE))
    options = LessonOptions(Kind.PNG_SEQUENCE, timing=Timing(transition=0.2), train=STEPS)
    with lesson_renderer(doc, options) as renderer:
        act = [s for s in renderer.shots if s.kind is ShotKind.UPDATE]
        assert len(act) == 2 * 2 + 1  # w, then b, two pictures each on the way; held
        images = []
        for shot in act:
            images.append(renderer.image(shot))
            copy, sheet, marks = renderer._trained  # noqa: SLF001 - what the picture shows
            frame = DONE if shot.held else UpdateFrame(shot.position, shot.pulse)
            want = shown_values(marks.updates(), frame)
            boxes = sheet.canvas.canvas.nodes
            assert {p: boxes[p].content.value for p in want} == {
                p: format_tensor(v) for p, v in want.items()
            }
            assert marks.pulse.isVisible() == (not shot.held)
        assert [boxes[p].content.value for p in ("w", "b")] == ["0.808", "0.608"]
        assert float(copy.graph.nodes["w"].value) == 0.0  # the copy keeps the update's inputs
    pixels = [bytes(img.constBits()) for img in images]
    assert all(a != b for a, b in zip(pixels, pixels[1:], strict=False))  # the pulse moves
