"""Can a class read the canvas? Export frames and let an OCR engine try.

Every shipped example is exported at its first, middle and last backward step,
1280x720, ``--view canvas`` (the canvas alone, camera following the step, as
``main.py export`` does), then read by the tesseract OCR engine (Debian's
``tesseract-ocr``). A node name counts as read when it is the first word of a line
the engine found (a box's title or compact name starts with it), so a name that
only appears inside another box's formula does not count. Graphs of up to 20 nodes
count every node; bigger ones the active edge's neighbourhood (consumer, operand,
and the nodes one edge away from either), which is what the camera frames.

The same is done for random layered graphs of 10 to 60 nodes (fixed seeds, the
generator of ``bench_gui.py``, laid out by the app as a file without positions is).

Prints ``name: value`` lines: ``canvas_names_read_pct`` over all the examples' frames,
one ``canvas_names_read_pct[<example>]`` per example, then
``canvas_names_read_pct_random`` over the random graphs' frames and one
``canvas_names_read_pct_random[<n>_nodes]`` per random graph. Deterministic: the same
code gives the same figures. A figure, not a test.

    python benchmarks/bench_legibility.py
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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
#: tesseract page segmentation modes read: sparse text, a single column.
PAGE_MODES = ("11", "4")


def _norm(word: str) -> str:
    return re.sub(r"[^0-9a-z]", "", word.lower())


def ocr_line_starts(png: Path) -> set[str]:
    """The first word of every line tesseract finds in ``png``, normalised; the union
    of two page layouts (sparse text, and a single column of lines), since tesseract
    drops a lone short word such as ``x`` in one or the other."""
    starts: set[str] = set()
    for psm in PAGE_MODES:
        out = subprocess.run(
            ["tesseract", str(png), "-", "--psm", psm, "tsv"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        seen_lines: set[tuple[str, ...]] = set()
        for row in out.splitlines()[1:]:
            cols = row.split("\t")
            if len(cols) < 12 or not cols[11].strip():
                continue
            line = tuple(cols[2:5])  # block, paragraph, line
            if line not in seen_lines:
                seen_lines.add(line)
                starts.add(_norm(cols[11].split("=")[0]))
    return starts


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


def measure(doc: GraphDocument, stem: str, folder: Path) -> tuple[int, int]:
    """(names read, names expected) over the document's frames."""
    timeline = Timeline(doc.results)
    read = total = 0
    for position in frames_of(timeline):
        png = folder / f"{stem}-{position}.png"
        render_frame(doc, position, SIZE, view="canvas").save(str(png), "PNG")
        starts = ocr_line_starts(png)
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


def main() -> int:
    if shutil.which("tesseract") is None:
        print(
            "error: tesseract not found (Debian/Ubuntu: apt-get install tesseract-ocr)",
            file=sys.stderr,
        )
        return 2
    ensure_app()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        examples = {
            path.stem: measure(example_document(path), path.stem, folder)
            for path, _title in list_examples()
        }
        report("canvas_names_read_pct", examples)
        randoms = {}
        for n in RANDOM_SIZES:
            doc = random_document(n)
            key = f"{len(doc.graph.nodes)}_nodes"
            randoms[key] = measure(doc, f"random-{n}", folder)
        report("canvas_names_read_pct_random", randoms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
