"""Lesson export figures: each is a whole ``main.py export --all`` process, as a user runs it.

    .venv/bin/python benchmarks/bench_export.py [name ...]

Prints one ``name: value`` line per figure:

- ``gif_seed2_s``: seed example 2, every step (with the default transitions), 1280x720
  GIF. Target < 5.
- ``mp4_1000_steps_s``: a 1,000-step backward pass (a chain of 1,000 unary ops) to a
  1280x720 MP4, one picture per step (``--transition 0``). Target < 60.
- ``mp4_1000_steps_peak_mb`` and ``mp4_250_steps_peak_mb``: the peak resident memory of
  those processes; equal within noise when frames are streamed, not held.
- ``mp4_render_frame_ms``: painting one picture of that MP4 (200 steps of the chain), the
  median; beside it ``mp4_encode_frame_ms``, its floor: H.264-encoding one (the same
  settings), measured one after the other in the same run. Target: render <= 2x encode.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED2 = ROOT / "assets" / "examples" / "seed2_stack_vjp.bpgraph"
UNARY = ("sin", "tanh", "cos", "sigmoid")


def chain_file(steps: int, folder: Path) -> Path:
    """A graph file whose backward pass has exactly ``steps`` steps: x then ``steps``
    unary ops in a row, the last one the output."""
    from engine.fileformat import GraphFile, save
    from engine.graph import Graph

    g = Graph()
    g.add_node("x", "input", value=0.5)
    prev = "x"
    for i in range(steps):
        nid = f"n{i + 1}"
        g.add_node(nid, UNARY[i % len(UNARY)], [prev])
        prev = nid
    path = folder / f"chain_{steps}.bpgraph"
    save(path, GraphFile(graph=g, output=prev, title=f"A chain of {steps} ops"))
    return path


def run_export(*args: str) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one ``main.py export`` process."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "export", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory
    seconds = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"export failed: {child.stderr.read().decode().strip()}")
    return seconds, usage.ru_maxrss / 1024.0


def gif_seed2_s(folder: Path) -> float:
    return run_export(
        str(SEED2), "--all", "--out", str(folder / "seed2.gif"), "--size", "1280x720"
    )[0]


def _mp4_chain(folder: Path, steps: int) -> tuple[float, float]:
    return run_export(
        str(chain_file(steps, folder)),
        "--all",
        "--out",
        str(folder / f"chain_{steps}.mp4"),
        "--size",
        "1280x720",
        "--transition",
        "0",
    )


def mp4_1000_steps_s(folder: Path) -> float:
    return _mp4_chain(folder, 1000)[0]


def mp4_1000_steps_peak_mb(folder: Path) -> float:
    return _mp4_chain(folder, 1000)[1]


def mp4_250_steps_peak_mb(folder: Path) -> float:
    return _mp4_chain(folder, 250)[1]


def mp4_frame_ms(folder: Path, steps: int = 200) -> dict[str, float]:
    """Per picture of the MP4 export, in this process: the painting (the lesson renderer,
    as ``export --all`` runs it) and, one after the other, the H.264 encoding of what was
    painted (``write_animation``'s settings), each the median over the pictures."""
    from fractions import Fraction

    import av
    import numpy as np

    from gui.export.animation import even_size, h264_stream, to_array
    from gui.export.cli import lesson_options
    from gui.export.render import lesson_renderer, load_document

    out = folder / "frames.mp4"
    doc = load_document(chain_file(steps, folder))
    options = lesson_options(str(out), size="1280x720", transition=0)
    renders, encodes = [], []
    with lesson_renderer(doc, options) as renderer, av.open(str(out), mode="w") as container:
        w, h = even_size(renderer.size)
        stream = h264_stream(container, renderer.size, options.timing.fps)
        pictures = renderer.images()
        t = 0
        while True:
            t0 = time.perf_counter()
            shot_img = next(pictures, None)
            if shot_img is None:
                break
            t1 = time.perf_counter()
            frame = av.VideoFrame.from_ndarray(
                np.ascontiguousarray(to_array(shot_img[1])[:h, :w]), format="bgra")
            frame.pts, frame.time_base = t, Fraction(1, 1000)
            t += shot_img[0].duration_ms
            for packet in stream.encode(frame):
                container.mux(packet)
            renders.append(t1 - t0)
            encodes.append(time.perf_counter() - t1)
        for packet in stream.encode(None):  # the encoder's delayed pictures: its cost too
            container.mux(packet)
    return {"mp4_render_frame_ms": statistics.median(renders) * 1e3,
            "mp4_encode_frame_ms": statistics.median(encodes) * 1e3}


FIGURES: dict[str, Callable[[Path], float]] = {
    "gif_seed2_s": gif_seed2_s,
    "mp4_1000_steps_s": mp4_1000_steps_s,
    "mp4_250_steps_peak_mb": mp4_250_steps_peak_mb,
    "mp4_1000_steps_peak_mb": mp4_1000_steps_peak_mb,
}
#: Figures that print a floor beside them (each measured in this process).
PAIRED: dict[str, Callable[[Path], dict[str, float]]] = {"mp4_render_frame_ms": mp4_frame_ms}


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in FIGURES and n not in PAIRED]
    if unknown:
        print(
            f"unknown figure(s): {', '.join(unknown)}; known: {', '.join([*FIGURES, *PAIRED])}",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or [*FIGURES, *PAIRED]:
            if name in PAIRED:
                for figure, value in PAIRED[name](Path(tmp)).items():
                    print(f"{figure}: {value:.2f}", flush=True)
            else:
                print(f"{name}: {FIGURES[name](Path(tmp)):.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
