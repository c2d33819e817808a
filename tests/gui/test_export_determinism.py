"""The same file exports the same bytes in every run.

Python salts the hash of strings anew in each process, so anything that iterates a set
of node ids or edge keys into what Qt draws (the order items are added in, hence how
crossing edges of one look stack) changes pixels from one run to the next: a teacher's
re-exported slide, a lesson checked into a repository, a test comparing frames.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import Qt

from engine.fileformat import GraphFile, save
from gui.canvas.edge_item import EdgeItem
from gui.document import GraphDocument
from support import script

ROOT = Path(__file__).resolve().parents[2]


def _layered() -> GraphFile:
    graph, output = script("bench_gui").layered_graph(100, seed=100)
    return GraphFile(graph=graph, output=output)


def test_edges_stack_in_the_graphs_order(shown_canvas) -> None:  # noqa: ANN001
    doc = GraphDocument()
    doc.load(_layered(), None)
    view = shown_canvas(doc, (900, 600))
    order = Qt.SortOrder.AscendingOrder
    stacked = [i.key for i in view.canvas.items(order=order) if isinstance(i, EdgeItem)]
    assert sorted(stacked, key=list(doc.graph.edges()).index) == stacked


def test_a_file_exports_the_same_pixels_under_any_hash_seed(tmp_path: Path) -> None:
    file = tmp_path / "layered.bpgraph"
    save(file, _layered())
    frames = []
    for seed in ("1", "2"):
        out = tmp_path / f"end-{seed}.png"
        env = dict(os.environ, PYTHONHASHSEED=seed, QT_QPA_PLATFORM="offscreen")
        subprocess.run([sys.executable, "main.py", "export", str(file), "--step", "end",
                        "--out", str(out)], cwd=ROOT, env=env, check=True, capture_output=True)
        frames.append(out.read_bytes())
    assert frames[0] == frames[1]
