"""Engine benchmark: forward + backward with the full trace, against PyTorch.

Run ``python benchmarks/bench_engine.py``; it prints one ``name: value`` line per
figure. Targets: ``teaching_200_ms`` < 5, ``scalar_dag_1000_ratio_vs_torch`` <= 2,
``scalar_dag_10k_ratio_vs_torch`` and ``scalar_dag_100k_ratio_vs_torch`` <= 1.0,
``matrix_100_ratio_vs_torch`` <= 1.0. Each ratio divides the engine's median time
by PyTorch's median time for the same graph, measured interleaved in the same run.
PyTorch replays the graph from a precompiled list of calls (its forward and
``backward``); the engine runs :func:`engine.autodiff.forward` and
:func:`engine.autodiff.backward`, which records one step per edge (as tuples; the
:class:`~engine.trace.Step` objects are made when ``Trace.steps`` is first read, as the
player does once for all of them; only the ``*_steps_*`` figures read them). Each
graph's ratios: ``*_ratio_vs_torch`` to plain ``backward()``; ``*_hooks_ratio_vs_torch``
to PyTorch recording every edge's gradient and vjp with ``grad_fn`` hooks (the fair
peer of a recording backward); ``*_steps_ratio_vs_torch``, with ``Trace.steps`` made,
to that peer. ``scalar_dag_{engine,steps}_growth_1k_10k``: the exponent of N from 1k
to 10k nodes (target <= 1.1). The process
keeps freed memory for reuse as the app does (:mod:`engine.allocator`), for both sides.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # one BLAS/OpenMP thread on both sides unless told otherwise
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.allocator import retain_freed_memory  # noqa: E402
from engine.autodiff import backward, forward  # noqa: E402
from engine.graph import MAX_OPERANDS, Graph  # noqa: E402

try:
    import torch
except ImportError:  # the engine figures still print
    torch = None


# --------------------------------------------------------------------------- graphs


def _finish(g: Graph, rng: np.random.Generator, shapes: dict[str, tuple[int, ...]]) -> str:
    """Reduce every node nothing consumes to one scalar output; return its id.

    The scalars are summed by a tree of ``stack`` + ``sum`` nodes, each stacking at most
    :data:`~engine.graph.MAX_OPERANDS` operands (the most a node may have)."""
    sinks = [n for n in g.outputs() if g.nodes[n].op != "const"]
    scalars = []
    for s in sinks:
        if shapes[s] == ():
            scalars.append(s)
        else:
            g.add_node(f"r_{s}", "sum", [s])
            scalars.append(f"r_{s}")
    level = 0
    while len(scalars) > 1:
        sums = []
        for k in range(0, len(scalars), MAX_OPERANDS):
            nid = "out" if len(scalars) <= MAX_OPERANDS else f"sum{level}_{k // MAX_OPERANDS}"
            g.add_node(f"stack_{nid}", "stack", scalars[k : k + MAX_OPERANDS])
            g.add_node(nid, "sum", [f"stack_{nid}"])
            sums.append(nid)
        scalars = sums
        level += 1
    return scalars[0]


def teaching_graph(n_nodes: int = 200, seed: int = 0) -> tuple[Graph, str]:
    """A teaching-size graph: scalars, 3-vectors and 2x3 matrices, mixed ops."""
    rng = np.random.default_rng(seed)
    g = Graph(max_nodes=None)  # a benchmark graph, never saved
    shapes: dict[str, tuple[int, ...]] = {}
    kinds = [(), (3,), (2, 3)]
    for k in range(24):
        shape = kinds[k % 3]
        nid = f"x{k}"
        if k % 6 == 5:
            g.add_node(nid, "const", value=rng.uniform(0.5, 1.5, size=shape))
        else:
            g.add_node(nid, "input", value=rng.uniform(-1.0, 1.0, size=shape))
        shapes[nid] = shape
    unary = ["tanh", "sin", "sigmoid", "cos", "neg", "relu"]
    binary = ["add", "mul", "sub", "mul"]
    k = 0
    while True:
        ids = list(shapes)
        sinks = [s for s in g.outputs() if g.nodes[s].op != "const"]
        finishing = sum(1 for s in sinks if shapes[s] != ()) + 2
        if len(g) + finishing >= n_nodes:
            break
        nid = f"n{k}"
        k += 1
        dangling = [s for s in sinks if shapes[s] != () and s.startswith("n")]
        if dangling and rng.random() < 0.5:
            a = dangling[0]
        else:
            a = ids[int(rng.integers(max(0, len(ids) - 30), len(ids)))]
        r = rng.random()
        if r < 0.35:
            g.add_node(nid, str(rng.choice(unary)), [a])
            shapes[nid] = shapes[a]
        elif r < 0.85:
            fits = [b for b in ids[-40:] if _fits(shapes[a], shapes[b])]
            b = fits[int(rng.integers(len(fits)))]
            g.add_node(nid, str(rng.choice(binary)), [a, b])
            shapes[nid] = tuple(np.broadcast_shapes(shapes[a], shapes[b]))
        elif r < 0.93:
            op = "sum" if rng.random() < 0.5 else "mean"
            g.add_node(nid, op, [a])
            shapes[nid] = ()
        else:
            mats = [b for b in ids[-40:] if shapes[b] == (2, 3)]
            vecs = [b for b in ids[-40:] if shapes[b] == (3,)]
            if not mats or not vecs:
                g.add_node(nid, "tanh", [a])
                shapes[nid] = shapes[a]
                continue
            m, v = mats[int(rng.integers(len(mats)))], vecs[int(rng.integers(len(vecs)))]
            g.add_node(nid, "matmul", [m, v])
            shapes[nid] = (2,)
    return g, _finish(g, rng, shapes)


def _fits(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def scalar_dag(n_nodes: int = 1000, seed: int = 1) -> tuple[Graph, str]:
    """A random DAG of scalar ops, each reading from the 50 newest nodes."""
    rng = np.random.default_rng(seed)
    g = Graph(max_nodes=None)  # a benchmark graph, never saved
    shapes: dict[str, tuple[int, ...]] = {}
    for k in range(50):
        g.add_node(f"x{k}", "input", value=float(rng.uniform(-1.0, 1.0)))
        shapes[f"x{k}"] = ()
    unary = ["tanh", "sin", "sigmoid", "cos"]
    binary = ["add", "mul", "sub", "mul"]
    ids = list(shapes)
    sinks = dict.fromkeys(ids)  # nodes nothing consumes yet, kept as we go (not rescanned)
    k = 0
    while not (len(g) + 2 >= n_nodes and len(sinks) > 1):
        nid = f"n{k}"
        k += 1
        window = ids[-50:]
        a = window[int(rng.integers(len(window)))]
        if rng.random() < 0.4:
            operands = [a]
            g.add_node(nid, str(rng.choice(unary)), operands)
        else:
            b = window[int(rng.integers(len(window)))]
            operands = [a, b]
            g.add_node(nid, str(rng.choice(binary)), operands)
        for o in operands:
            sinks.pop(o, None)
        sinks[nid] = None
        shapes[nid] = ()
        ids.append(nid)
    return g, _finish(g, rng, shapes)


def matrix_graph(n_nodes: int = 100, size: int = 64, seed: int = 2) -> tuple[Graph, str]:
    """64x64 matrices in layers ``h' = tanh(W @ h + skip)``, summed at the end.

    ``W`` cycles through the leaves, ``skip`` is an earlier hidden node (fan-out)."""
    rng = np.random.default_rng(seed)
    g = Graph(max_nodes=None)  # a benchmark graph, never saved
    weights = []
    for k in range(10):
        g.add_node(f"w{k}", "input", value=rng.normal(size=(size, size)) / np.sqrt(size))
        weights.append(f"w{k}")
    hidden = [weights[-1]]
    k = 0
    while len(g) + 3 + 1 <= n_nodes:
        w, h = weights[k % len(weights)], hidden[-1]
        skip = hidden[int(rng.integers(len(hidden)))]
        g.add_node(f"m{k}", "matmul", [w, h])
        g.add_node(f"a{k}", "add", [f"m{k}", skip])
        g.add_node(f"h{k}", "tanh", [f"a{k}"])
        hidden.append(f"h{k}")
        k += 1
    while len(g) + 1 < n_nodes:
        g.add_node(f"t{len(g)}", "tanh", [hidden[-1]])
        hidden.append(f"t{len(g) - 1}")
    g.add_node("out", "sum", [hidden[-1]])
    return g, "out"


# --------------------------------------------------------------------------- runners


def run_engine(g: Graph, out: str) -> Any:
    fwd = forward(g)
    return backward(g, fwd, out)


def torch_runner(g: Graph, out: str, hooks: bool = False) -> Callable[[], dict[str, Any]]:
    """The same graph as a list of PyTorch calls: forward, then ``out.backward()``.

    The returned function hands back the leaf tensors (their ``.grad`` accumulates
    over calls, as the engine's does not: one call gives the gradients to compare).
    With ``hooks`` every node's ``grad_fn`` records, as the engine's trace does per
    edge, the gradient it received and the vjp it sent each operand (the fair peer of
    a recording backward: plain ``backward()`` keeps nothing of the pass)."""
    assert torch is not None
    order = g.topological_order()
    leaves = {}
    for nid in order:
        node = g.nodes[nid]
        if node.is_leaf:
            leaves[nid] = torch.tensor(
                node.value, dtype=torch.float64, requires_grad=node.wants_grad
            )
    fns = {
        "add": torch.add,
        "sub": torch.sub,
        "mul": torch.mul,
        "tanh": torch.tanh,
        "sin": torch.sin,
        "cos": torch.cos,
        "sigmoid": torch.sigmoid,
        "relu": torch.relu,
        "neg": torch.neg,
        "matmul": torch.matmul,
    }
    program: list[tuple[str, Callable[..., Any], list[str]]] = []
    for nid in order:
        node = g.nodes[nid]
        if node.is_leaf:
            continue
        if node.op in fns:
            program.append((nid, fns[node.op], list(node.inputs)))
        elif node.op in ("sum", "mean"):
            fn = getattr(torch, node.op)
            if node.attrs.get("dim") is not None or node.attrs.get("keepdim"):
                dim, keep = node.attrs.get("dim"), bool(node.attrs.get("keepdim"))
                fn = lambda x, fn=fn, dim=dim, keep=keep: fn(x, dim=dim, keepdim=keep)  # noqa: E731
            program.append((nid, fn, list(node.inputs)))
        elif node.op == "stack":
            dim = node.attrs.get("dim", 0)
            program.append((nid, lambda *xs, dim=dim: torch.stack(xs, dim), list(node.inputs)))
        else:
            raise KeyError(node.op)

    def run() -> dict[str, Any]:
        vals = dict(leaves)
        recorded: list[tuple[str, Any, Any]] = []
        for nid, fn, ins in program:
            vals[nid] = value = fn(*[vals[i] for i in ins])
            if hooks and value.grad_fn is not None:
                value.grad_fn.register_hook(
                    lambda sent, got, nid=nid: recorded.append((nid, sent, got))
                )
        vals[out].backward()
        return leaves

    return run


def _time(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def compare(g: Graph, out: str, reps: int, with_torch: bool) -> dict[str, float]:
    """Median ms of each side, runs interleaved after a warm-up: ``engine``; ``steps``,
    the engine with :attr:`Trace.steps <engine.trace.Trace.steps>` made as the player
    makes them; and with torch, ``torch`` (plain) and ``hooks`` (recording every edge)."""
    runners: dict[str, Callable[[], Any]] = {
        "engine": lambda: run_engine(g, out),
        "steps": lambda: run_engine(g, out).steps,
    }
    if with_torch:
        runners["torch"] = torch_runner(g, out)
        runners["hooks"] = torch_runner(g, out, hooks=True)
    for _ in range(3):
        for fn in runners.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in runners}
    gc.collect()
    for _ in range(reps):
        for name, fn in runners.items():
            times[name].append(_time(fn))
    return {name: statistics.median(t) for name, t in times.items()}


def print_sides(label: str, sides: dict[str, float]) -> None:
    """The engine's figures for one graph and, with torch, its ratios: to plain
    ``backward()``, to torch recording every edge with hooks (``hooks_``), and with the
    steps made as the player makes them (``steps_``)."""
    print(f"{label}_engine_ms: {sides['engine']:.3f}")
    print(f"{label}_steps_ms: {sides['steps']:.3f}")
    if "torch" in sides:
        print(f"{label}_torch_ms: {sides['torch']:.3f}")
        print(f"{label}_torch_hooks_ms: {sides['hooks']:.3f}")
        print(f"{label}_ratio_vs_torch: {sides['engine'] / sides['torch']:.3f}")
        print(f"{label}_hooks_ratio_vs_torch: {sides['engine'] / sides['hooks']:.3f}")
        print(f"{label}_steps_ratio_vs_torch: {sides['steps'] / sides['hooks']:.3f}")


def peak_memory_mb(g: Graph, out: str) -> float:
    gc.collect()
    tracemalloc.start()
    trace = run_engine(g, out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del trace
    return peak / 2**20


#: Graph sizes per figure: (teaching nodes, scalar DAG nodes, matrix nodes, matrix size,
#: the two big DAGs' nodes). ``--quick`` shrinks them to a smoke run the tests use.
SIZES = (200, 1000, 100, 64, (10_000, 100_000))
QUICK_SIZES = (40, 120, 10, 4, (400, 1500))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30, help="timed runs per figure")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch side")
    parser.add_argument(
        "--quick", action="store_true", help="tiny graphs, one run each: checks the script works"
    )
    args = parser.parse_args(argv)
    retain_freed_memory()  # as main.py does for the app and the command line
    with_torch = torch is not None and not args.no_torch
    if with_torch:
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    n_teach, n_scalar, n_matrix, size, big_sizes = QUICK_SIZES if args.quick else SIZES
    reps = 1 if args.quick else args.reps

    teach, teach_out = teaching_graph(n_teach)
    scalar, scalar_out = scalar_dag(n_scalar)
    matrix, matrix_out = matrix_graph(n_matrix, size)

    t_ms = compare(teach, teach_out, 1 if args.quick else max(reps, 50), False)["engine"]
    print(f"teaching_200_nodes: {len(teach)}")
    print(f"teaching_200_ms: {t_ms:.3f}")

    s_sides = compare(scalar, scalar_out, reps, with_torch)
    m_sides = compare(matrix, matrix_out, reps, with_torch)
    big = {}
    for label, n, n_reps in zip(("10k", "100k"), big_sizes, (max(1, reps // 3), 3), strict=True):
        graph, out = scalar_dag(n, seed=n)
        big[label] = (len(graph), compare(graph, out, min(reps, n_reps), with_torch))
    print(f"scalar_dag_1000_nodes: {len(scalar)}")
    print_sides("scalar_dag_1000", s_sides)
    print(f"matrix_100_nodes: {len(matrix)}")
    print_sides("matrix_100", m_sides)
    for label, (_n, sides) in big.items():
        print_sides(f"scalar_dag_{label}", sides)
    # Growth 1k -> 10k nodes as the exponent of N (target <= 1.1).
    n_10k, sides_10k = big["10k"]
    for side in ("engine", "steps"):
        exponent = np.log(sides_10k[side] / s_sides[side]) / np.log(n_10k / len(scalar))
        print(f"scalar_dag_{side}_growth_1k_10k: {exponent:.3f}")
    if not with_torch:
        why = "torch is not importable" if torch is None else "--no-torch"
        print(f"ratios_vs_torch: skipped ({why})")
    print(f"peak_mem_1000_mb: {peak_memory_mb(scalar, scalar_out):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
