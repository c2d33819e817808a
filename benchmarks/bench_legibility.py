"""Can a class read the canvas? Export frames and let an OCR engine try.

Every shipped example is exported at its first, middle and last backward step,
1280x720, ``--view canvas`` (the canvas alone, camera following the step, as
``main.py export`` does), then read by the tesseract OCR engine (Debian's
``tesseract-ocr``). Graphs of up to 20 nodes count every node; bigger ones the
active edge's neighbourhood (consumer, operand, and the nodes one edge away from
either), which is what the camera frames.

How a frame is read. The whole frame, always: nothing is cropped and the engine is
not told where the boxes are or which names to expect. It is read twice and what
both readings find is pooled:

1. as exported, with page layouts 11 (sparse text) and 4 (a single column), as the
   first version of this script did;
2. prepared as tesseract's own guide to image quality ("ImproveQuality") recommends,
   because its accuracy drops sharply for text below about 20-30 pixels of capital
   height and the canvas's names are 12-19 pt, about 12-19 px, on a 1280x720 frame:
   rescaled 2x with a Lanczos filter; binarised (grey levels above 160 become white,
   the rest black: the dark text stays, the light grid lines and box tints that
   break tesseract's layout analysis go); given a white border; then read with page
   layouts 11, 4 and 6 (a single block).

Each layout skips some lone short words the others find, and the prepared frame
loses some the plain one keeps (a bold mono ``0`` read as ``6`` when enlarged), hence
the pooling. A node name counts as read when the engine returns it exactly (case and
underscores aside) as the first word of a line: a box's title or compact name starts
with it, so a name that only appears inside another box's formula does not count.
The sparse layout joins the words of boxes side by side into one line, so a line is
also cut where two words are further apart than 1.5 times the text height (inside a
box, words are one space apart), and a mark with no letter or digit (an edge's end
read as a dash) does not start a line. No fuzzy matching: ``yl`` is not ``y1``.

``--unprocessed`` applies the first version's rule alone (the frame as exported,
layouts 11 and 4, a line is what tesseract calls one), to compare with figures
measured before; ``--frames DIR`` keeps the exported frames to look at.

The same is done for random layered graphs of 10 to 60 nodes (fixed seeds, the
generator of ``bench_gui.py``, laid out by the app as a file without positions is).

Prints ``name: value`` lines: ``canvas_names_read_pct`` over all the examples' frames,
one ``canvas_names_read_pct[<example>]`` per example, then
``canvas_names_read_pct_random`` over the random graphs' frames and one
``canvas_names_read_pct_random[<n>_nodes]`` per random graph.

Then the presentation figures, from the window in presentation mode at 1280x720 (what
the projector shows): ``writeup_body_px`` and ``writeup_sub_px``, the median pixel
sizes the chain-rule panel sets its body text and its sub- and superscripts at (read
from the laid-out text, per character, subscripts at the share Qt draws them:
:func:`gui.panels.chain_rule.text_px`) over every example's first, middle and last
step, targets 22 and 15 (``writeup_body_px_min`` and ``writeup_sub_px_min``: the
smallest); and ``label_covers_step_boxes``, the number of frames (every backward step of
every example and random graph) whose shown edge label intersects either of the step's
two boxes, target 0 (``label_frames``: how many frames were looked at).

Then the collapsed modules of three captured PyTorch models (a two-layer MLP with
cross-entropy, a small CNN, a transformer-style block: the tests' ``support.captured_*``;
needs torch): each module's one
step exported as above, ``module_caption_read_pct``: the share of the active module's
caption lines shown (its path · class, edge count, inputs, outputs; zoomed out, the
title alone) that the engine reads whole, somewhere in one of its lines (normalised as
names are); one
``module_caption_read_pct[<model>]`` per model. ``--modules`` prints these alone.
Deterministic: the same code gives the same figures. A figure, not a test.

    python benchmarks/bench_legibility.py [--unprocessed] [--frames DIR] [--no-ocr] [--modules]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image, ImageOps  # noqa: E402
from PySide6.QtCore import QStandardPaths  # noqa: E402

from benchmarks.bench_gui import layered_graph  # noqa: E402
from engine.examples import list_examples  # noqa: E402
from engine.fileformat import GraphFile, load  # noqa: E402
from gui.application import ensure_app  # noqa: E402
from gui.document import GraphDocument  # noqa: E402
from gui.export import render_frame  # noqa: E402
from gui.model.camera import neighbourhood  # noqa: E402
from gui.model.timeline import Timeline  # noqa: E402

SIZE = (1280, 720)
#: Graphs up to this many nodes must show every name; bigger ones the neighbourhood.
WHOLE_GRAPH_NODES = 20
#: Node counts of the random graphs (each also its generator's seed).
RANDOM_SIZES = (10, 20, 30, 40, 50, 60)


class Reading(NamedTuple):
    """One way of preparing the whole frame and reading it (see the module docstring)."""

    #: tesseract page segmentation modes read.
    page_modes: tuple[str, ...]
    #: Rescale factor (Lanczos); 1 reads the frame as exported.
    upscale: int = 1
    #: Grey levels above this become white, the rest black; None: no binarisation.
    paper_above: int | None = None
    #: White border added around the (rescaled) frame, in pixels.
    border_px: int = 0


class Rule(NamedTuple):
    """The readings whose line starts are pooled, and how a line is cut."""

    readings: tuple[Reading, ...]
    #: Words on one line further apart than this many text heights start a new line,
    #: and marks without a letter or digit (an edge's stroke read as a dash) are not
    #: words; None: a line is what tesseract calls one, its first token its start.
    box_gap: float | None


#: The frame as exported (sparse text, a single column), and tesseract's documented
#: preparation (2x, binarised, a border; sparse text, a single column, a single block).
PREPARED = Rule(
    (
        Reading(("11", "4")),
        Reading(("11", "4", "6"), upscale=2, paper_above=160, border_px=20),
    ),
    box_gap=1.5,
)
#: The first version's rule: the frame as exported, sparse text and a single column.
UNPROCESSED = Rule((Reading(("11", "4")),), box_gap=None)


def _norm(word: str) -> str:
    return re.sub(r"[^0-9a-z]", "", word.lower())


def prepare(png: Path, reading: Reading) -> Path:
    """The whole frame as ``reading`` has tesseract read it (``png`` itself when it
    asks for no preparation)."""
    if reading.upscale == 1 and reading.paper_above is None and not reading.border_px:
        return png
    image = Image.open(png).convert("L")
    if reading.upscale != 1:
        size = (image.width * reading.upscale, image.height * reading.upscale)
        image = image.resize(size, Image.Resampling.LANCZOS)
    if reading.paper_above is not None:
        cut = reading.paper_above
        image = image.point(lambda v: 255 if v > cut else 0)
    image = ImageOps.expand(image, border=reading.border_px, fill=255)
    out = png.with_name(f"{png.stem}-prepared.png")
    image.save(out)
    return out


def line_starts(tsv: str, box_gap: float | None) -> set[str]:
    """The first word of every line of tesseract's ``tsv`` output, normalised, the
    part before a ``=`` it is glued to; ``box_gap`` as :attr:`Rule.box_gap`."""
    lines: dict[tuple[str, ...], list[tuple[int, int, int, str]]] = {}
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or not cols[11].strip():
            continue
        left, width, height = int(cols[6]), int(cols[8]), int(cols[9])
        lines.setdefault(tuple(cols[2:5]), []).append((left, width, height, cols[11]))
    starts: set[str] = set()
    for words in lines.values():
        words.sort()
        prev = None
        starting = True
        for left, width, height, text in words:
            if prev is not None and box_gap is not None:
                starting |= left - (prev[0] + prev[1]) > box_gap * max(height, prev[2])
            if starting and (box_gap is None or re.search(r"[0-9A-Za-z]", text)):
                starts.add(_norm(text.split("=")[0]))
                starting = False
            prev = (left, width, height)
    return starts


def ocr_tsvs(png: Path, rule: Rule = PREPARED) -> list[str]:
    """tesseract's tsv output for the frame ``png``, one per reading and page layout."""
    out = []
    for reading in rule.readings:
        image = prepare(png, reading)
        for psm in reading.page_modes:
            out.append(subprocess.run(
                ["tesseract", str(image), "-", "--psm", psm, "tsv"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout)
    return out


def ocr_line_starts(png: Path, rule: Rule = PREPARED) -> set[str]:
    """The line starts tesseract finds in the frame ``png``, pooled over the rule's
    readings and their page layouts."""
    starts: set[str] = set()
    for tsv in ocr_tsvs(png, rule):
        starts |= line_starts(tsv, rule.box_gap)
    return starts


def ocr_lines(png: Path, rule: Rule = PREPARED) -> list[str]:
    """Every line tesseract finds in the frame ``png`` (its words joined, normalised),
    pooled over the rule's readings and their page layouts."""
    lines: list[str] = []
    for tsv in ocr_tsvs(png, rule):
        words: dict[tuple[str, ...], list[tuple[int, str]]] = {}
        for row in tsv.splitlines()[1:]:
            cols = row.split("\t")
            if len(cols) >= 12 and cols[11].strip():
                words.setdefault(tuple(cols[2:5]), []).append((int(cols[6]), cols[11]))
        lines += [_norm("".join(w for _x, w in sorted(line))) for line in words.values()]
    return lines


def frames_of(timeline: Timeline) -> list[int]:
    """Timeline positions of the first, middle and last backward step."""
    n = len(timeline.steps)
    if n == 0:
        return [timeline.end]
    ks = sorted({1, (n + 1) // 2, n})
    return [timeline.position_of_step(k) for k in ks]


def expected_names(doc: GraphDocument, timeline: Timeline, position: int) -> list[str]:
    graph = doc.graph
    if len(graph.nodes) <= WHOLE_GRAPH_NODES:
        return list(graph.nodes)
    frame = timeline.frame(position)
    if frame.active is None:
        return list(graph.nodes)
    edges = [(a, b) for a, b, _i in graph.edges()]
    return neighbourhood(edges, frame.active.operand, frame.active.consumer)


def measure(doc: GraphDocument, stem: str, folder: Path, rule: Rule = PREPARED) -> tuple[int, int]:
    """(names read, names expected) over the document's frames."""
    timeline = Timeline(doc.results)
    read = total = 0
    for position in frames_of(timeline):
        png = folder / f"{stem}-{position}.png"
        render_frame(doc, position, SIZE, view="canvas").save(str(png), "PNG")
        starts = ocr_line_starts(png, rule)
        names = expected_names(doc, timeline, position)
        read += sum(1 for n in names if _norm(n) in starts)
        total += len(names)
    return read, total


def example_document(path: Path) -> GraphDocument:
    doc = GraphDocument()
    doc.load(load(path, partial=True), path)
    return doc


def random_document(n_nodes: int) -> GraphDocument:
    """A random layered graph of about ``n_nodes`` nodes, without positions (the
    canvas lays it out when it is first shown, as for such a file)."""
    graph, output = layered_graph(n_nodes, seed=n_nodes)
    doc = GraphDocument()
    doc.load(GraphFile(graph=graph, output=output), None)
    return doc


def report(name: str, results: dict[str, tuple[int, int]]) -> None:
    """The overall share, then one per document."""
    read = sum(r for r, _t in results.values())
    total = sum(t for _r, t in results.values())
    print(f"{name}: {100.0 * read / max(total, 1):.1f}")
    for key, (r, t) in results.items():
        print(f"{name}[{key}]: {100.0 * r / max(t, 1):.1f}")


def presentation_window() -> Any:
    """The main window in presentation mode at 1280x720 (settings: see :func:`main`)."""
    from PySide6.QtWidgets import QApplication

    from gui.main_window import MainWindow

    win = MainWindow()
    win.resize(*SIZE)
    win.show()
    win.canvas.animations_enabled = False
    win.enter_presentation()
    win.showNormal()
    win.resize(*SIZE)
    QApplication.processEvents()
    return win


def show_step(win: Any, doc: GraphDocument, k: int) -> None:
    """Open ``doc``'s file in ``win`` (once) and show backward step ``k``."""
    from PySide6.QtWidgets import QApplication

    if win.doc.graph is not doc.graph:
        win.doc.load(doc.to_file(), None)
    win.player.seek(win.player.timeline.position_of_step(k))
    QApplication.processEvents()


def writeup_px(win: Any, docs: list[GraphDocument]) -> tuple[list[float], list[float]]:
    """Every character's pixel size in the chain-rule panel (body, sub- and superscripts)
    at each document's first, middle and last step."""
    from gui.panels.chain_rule import text_px

    body: list[float] = []
    subs: list[float] = []
    for doc in docs:
        n = len(Timeline(doc.results).steps)
        for k in sorted({1, (n + 1) // 2, n}) if n else []:
            show_step(win, doc, k)
            win.chain_rule.text()  # the deferred render, now
            b, s = text_px(win.chain_rule.browser.document())
            body += b
            subs += s
    return body, subs


def label_covers(win: Any, docs: list[GraphDocument]) -> tuple[int, int]:
    """(frames whose shown edge label intersects the step's consumer or operand box,
    frames looked at), over every backward step of each document."""
    covered = frames = 0
    for doc in docs:
        for k in range(1, len(Timeline(doc.results).steps) + 1):
            show_step(win, doc, k)
            canvas, step = win.canvas.canvas, win.player.frame.active
            if step is None or not canvas.label.isVisible():
                continue
            frames += 1
            label = canvas.label.sceneBoundingRect()
            boxes = [canvas.nodes[n].scene_rect() for n in (step.consumer, step.operand)]
            covered += any(label.intersects(box) for box in boxes)
    return covered, frames


def presentation_figures() -> None:
    """Print the write-up's sizes and the label's overlaps (see the module docstring)."""
    win = presentation_window()
    examples = [example_document(path) for path, _title in list_examples()]
    body, subs = writeup_px(win, examples)
    print(f"writeup_body_px: {statistics.median(body):.1f}")
    print(f"writeup_body_px_min: {min(body):.1f}")
    print(f"writeup_sub_px: {statistics.median(subs):.1f}")
    print(f"writeup_sub_px_min: {min(subs):.1f}")
    covered, frames = label_covers(win, examples + [random_document(n) for n in RANDOM_SIZES])
    print(f"label_covers_step_boxes: {covered}")
    print(f"label_frames: {frames}")
    win.close()


def captured_models(folder: Path) -> dict[str, Path]:
    """The three captured models the tests play (tests/support.py), saved in ``folder``
    (empty when torch is not installed)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import support

    if support.torch is None:
        return {}
    return {"mlp": support.captured_mlp(folder / "mlp.bptrace"),
            "cnn": support.captured_cnn(folder / "cnn.bptrace"),
            "block": support.captured_block(folder / "block.bptrace")}


def module_captions_read(path: Path, folder: Path, rule: Rule = PREPARED) -> tuple[int, int]:
    """(caption lines read, caption lines shown) over every collapsed module's step of
    the captured trace at ``path``, exported as ``main.py export --view canvas`` does."""
    from engine import tracefile
    from gui.canvas.group_frames import BODY_PT
    from gui.export.frame_sheet import frame_sheet
    from gui.model.semantic_zoom import is_compact

    doc = GraphDocument()
    doc.load_trace(tracefile.load(path), path)
    read = total = 0
    with frame_sheet(doc, SIZE, "canvas") as sheet:
        timeline = sheet.player.timeline
        for k in range(1, len(timeline.steps) + 1):
            position = timeline.position_of_step(k)
            sheet.show_position(position)
            group = sheet.player.frame.active_group
            if group is None:
                continue
            frame = sheet.group_frames.frames[group.group.id]
            shown = [frame.title.text()]  # zoomed out, the title alone (compact)
            if not is_compact(sheet.canvas.zoom(), BODY_PT, frame.least_pt()):
                shown += frame.caption.text().split("\n")
            png = folder / f"{path.stem}-module-{k}.png"
            sheet.image().save(str(png), "PNG")
            lines = ocr_lines(png, rule)
            read += sum(1 for ln in shown if any(_norm(ln) in got for got in lines))
            total += len(shown)
    return read, total


def module_figures(folder: Path, rule: Rule = PREPARED) -> None:
    """Print how much of the collapsed modules' captions tesseract reads."""
    traces = captured_models(folder)
    if not traces:
        print("module_caption_read_pct: skipped (torch is not installed)")
        return
    report("module_caption_read_pct",
           {name: module_captions_read(p, folder, rule) for name, p in traces.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Read exported canvas frames with tesseract.")
    parser.add_argument(
        "--unprocessed",
        action="store_true",
        help="read the frames as exported (the first version's rule, for comparison)",
    )
    parser.add_argument("--frames", type=Path, help="keep the exported frames in this folder")
    parser.add_argument("--no-ocr", action="store_true", help="only the presentation figures")
    parser.add_argument("--modules", action="store_true", help="only the module caption figures")
    args = parser.parse_args(argv)
    # never the user's own settings and autosaves; here, not in the functions the test
    # suite calls, where it would move every later test out of the suite's own sandbox
    # (into ~/.qttest, shared by every suite running on the machine)
    QStandardPaths.setTestModeEnabled(True)
    if args.no_ocr:
        ensure_app()
        presentation_figures()
        return 0
    rule = UNPROCESSED if args.unprocessed else PREPARED
    if shutil.which("tesseract") is None:
        print(
            "error: tesseract not found (Debian/Ubuntu: apt-get install tesseract-ocr)",
            file=sys.stderr,
        )
        return 2
    ensure_app()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.frames or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if args.modules:
            module_figures(folder, rule)
            return 0
        examples = {
            path.stem: measure(example_document(path), path.stem, folder, rule)
            for path, _title in list_examples()
        }
        report("canvas_names_read_pct", examples)
        randoms = {}
        for n in RANDOM_SIZES:
            doc = random_document(n)
            key = f"{len(doc.graph.nodes)}_nodes"
            randoms[key] = measure(doc, f"random-{n}", folder, rule)
        report("canvas_names_read_pct_random", randoms)
        module_figures(folder, rule)
    presentation_figures()
    return 0


if __name__ == "__main__":
    sys.exit(main())
