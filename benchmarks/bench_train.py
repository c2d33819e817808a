"""Training benchmark: one training step against the forward + backward it contains.

Run ``python benchmarks/bench_train.py``; it prints ``name: value`` lines.
Targets: ``train_step_1000_ms`` (one zero_grad + forward + backward + Adam update on
bench_engine's 1,000-node scalar DAG, its 50 inputs the parameters, no animation)
within 1.5x of ``forward_backward_1000_ms`` (the engine's forward + backward alone,
measured interleaved in the same run; ``train_step_ratio`` is the quotient); and
``loss_curve_repaint_10k_ms`` (the Train panel's loss curve appending one point and
repainting, at 10,000 points) under 16.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import run_engine, scalar_dag  # noqa: E402

from engine.allocator import retain_freed_memory  # noqa: E402
from engine.train import Trainer, TrainSpec  # noqa: E402


def _ms(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def train_figures(n_nodes: int, reps: int) -> tuple[float, float]:
    """Median ms of a training step and of forward + backward, interleaved."""
    g, out = scalar_dag(n_nodes)
    trainer = Trainer(g, TrainSpec(loss=out, optimizer="adam", lr=1e-3))
    for _ in range(3):
        trainer.step()
        run_engine(g, out)
    gc.collect()
    steps, passes = [], []
    for _ in range(reps):
        steps.append(_ms(trainer.step))
        passes.append(_ms(lambda: run_engine(g, out)))
    return statistics.median(steps), statistics.median(passes)


def curve_figure(points: int, reps: int) -> float:
    """Median ms for the loss curve to take one more point and repaint, at ``points``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from gui.panels.train import LossCurve

    app = QApplication.instance() or QApplication([])
    curve = LossCurve()
    curve.resize(600, 300)
    curve.show()
    losses = list(1.0 / (1.0 + 0.01 * __import__("numpy").arange(points)))
    curve.set_losses(losses)
    app.processEvents()
    times = []
    for k in range(reps):
        start = time.perf_counter()
        losses.append(losses[-1] * 0.999)
        curve.set_losses(losses)
        curve.grab()  # the repaint, done now
        times.append((time.perf_counter() - start) * 1000.0)
        if k == 0:
            times.clear()  # the first paint builds caches
    curve.close()
    return statistics.median(times) if times else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30, help="timed runs per figure")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks the script")
    args = parser.parse_args(argv)
    retain_freed_memory()
    n_nodes, points, reps = (120, 200, 2) if args.quick else (1000, 10_000, args.reps)
    step_ms, fb_ms = train_figures(n_nodes, reps)
    print(f"train_step_1000_ms: {step_ms:.3f}")
    print(f"forward_backward_1000_ms: {fb_ms:.3f}")
    print(f"train_step_ratio: {step_ms / fb_ms:.3f}")
    print(f"loss_curve_repaint_10k_ms: {curve_figure(points, reps + 1):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
