"""Capture benchmark: recording a real PyTorch backward pass, and replaying a trace.

Run ``python benchmarks/bench_capture.py``; it prints one ``name: value`` line per
figure. Targets:

- ``capture_mlp1000_ratio`` <= 15: the median time of :func:`engine.capture.capture`
  over the median time of a plain ``backward()`` on the same 1,000-node MLP (200
  Linear+ReLU layers, width 32, batch 8, float64), interleaved in the same run. The
  capture does the same backward plus the walk, the hooks and the float64 copies.
- ``capture_mlp1000_mb`` <= 20: the peak memory the capture allocates (tracemalloc:
  the recorded arrays and steps).
- ``open_trace_5000_s`` < 2: a 5,000-node trace file to the first painted frame of the
  viewer, grouped by module.
- ``player_step_trace_5000_ms`` < 33: one step forward in that viewer, repainted.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from engine.capture import capture  # noqa: E402


def mlp(depth: int, width: int) -> Any:
    layers: list[Any] = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).double()


def capture_figures(repeats: int) -> dict[str, float]:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = mlp(200, 32)
    x = torch.randn(8, 32, dtype=torch.float64)
    plain, captured = [], []
    for _ in range(repeats):
        out = model(x).sum()
        gc.collect()
        t = time.perf_counter()
        out.backward()
        plain.append(time.perf_counter() - t)
        model.zero_grad(set_to_none=True)
        out = model(x).sum()
        gc.collect()
        t = time.perf_counter()
        trace = capture(out, names=model)
        captured.append(time.perf_counter() - t)
        del trace
        model.zero_grad(set_to_none=True)
    out = model(x).sum()
    gc.collect()
    tracemalloc.start()
    trace = capture(out, names=model)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(trace.steps) >= 1000
    return {
        "capture_mlp1000_ratio": statistics.median(captured) / statistics.median(plain),
        "capture_mlp1000_mb": peak / 2**20,
    }


def trace_5000(folder: Path) -> Path:
    """A 5,000-node trace: 1,000 Linear+ReLU layers (width 4, batch 2), saved."""

    torch.manual_seed(1)
    model = mlp(1000, 4)
    trace = capture(model(torch.randn(2, 4, dtype=torch.float64)).sum(), names=model)
    path = folder / "mlp5000.bptrace"
    trace.save(path)
    return path


def viewer_figures(repeats: int) -> dict[str, float]:
    from gui.trace_viewer import open_trace

    from gui.application import ensure_app

    app = ensure_app()
    with tempfile.TemporaryDirectory() as folder:
        path = trace_5000(Path(folder))
        gc.collect()
        t = time.perf_counter()
        window = open_trace(path)
        window.show()
        app.processEvents()
        window.canvas.viewport().repaint()  # the first painted frame
        opened = time.perf_counter() - t
    nodes = len(window.view.trace.nodes)
    assert nodes >= 5000, nodes
    times = []
    for k in range(repeats * 10):
        t = time.perf_counter()
        window.seek(k)
        window.canvas.viewport().repaint()
        times.append(time.perf_counter() - t)
    window.close()
    return {
        "open_trace_5000_s": opened,
        "player_step_trace_5000_ms": statistics.median(times) * 1e3,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    figures = capture_figures(args.repeats)
    figures.update(viewer_figures(args.repeats))
    for name, value in figures.items():
        print(f"{name}: {value:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
