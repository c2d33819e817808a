"""Check our gradients against PyTorch: run the exported script in a separate process.

PyTorch stays optional: nothing here imports it. The script (our own export, with
``retain_grad()`` on every non-leaf that requires grad) runs under the same Python
in a child process; a footer prints each node's ``.grad`` as one JSON line that we
read back and hold beside the engine's gradient, node by node.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from dataclasses import dataclass

import numpy as np

from .autodiff import backward, forward
from .graph import Graph

MARKER = "BACKPROP-STUDIO-GRADS "
#: Agreement as the tests demand it (float64 on both sides).
RTOL = 1e-12
ATOL = 1e-12


class TorchCheckError(Exception):
    """PyTorch could not run the script; ``str`` is one line saying why."""


@dataclass(frozen=True)
class Comparison:
    """One node: our gradient, PyTorch's, and whether they agree."""

    node: str
    ours: np.ndarray | None
    theirs: np.ndarray | None
    agree: bool


def torch_available() -> bool:
    """True when PyTorch can be imported by this Python (without importing it here)."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def checking_script(graph: Graph, output: str, gradient: np.ndarray | None) -> str:
    """The exported script plus a footer that prints every ``.grad`` as one JSON line."""
    # Lazy: the window imports this module at start-up (torch_available), the exporter
    # only when a check runs.
    from .pytorch_export import export_script, python_names

    names = python_names(graph)
    script = export_script(graph, output, gradient, retain_grads=True)
    kept = [n for n in graph.nodes if not graph.nodes[n].is_leaf or graph.nodes[n].wants_grad]
    entries = ", ".join(
        f"{json.dumps(n)}: (None if {names[n]}.grad is None else {names[n]}.grad.tolist())"
        for n in kept
    )
    return script + f"\nimport json\nprint({MARKER!r} + json.dumps({{{entries}}}))\n"


#: How the checking script is run: ``-I`` (isolated): no current folder on sys.path, no
#: PYTHON* variables, no user site, so a torch.py beside the graph is never what
#: "import torch" finds; the script comes on standard input. Run it in an empty folder.
ISOLATED_ARGS = ("-I", "-")


def run_with_torch(
    graph: Graph, output: str, gradient: np.ndarray | None, timeout: float = 120.0
) -> dict[str, np.ndarray | None]:
    """Each node's ``.grad`` as PyTorch computes it (leaves, and retained non-leaves)."""
    import subprocess  # only here: the app imports this module at start-up

    script = checking_script(graph, output, gradient)
    try:
        with tempfile.TemporaryDirectory(prefix="backprop-check-") as folder:
            proc = subprocess.run(
                [sys.executable, *ISOLATED_ARGS],
                input=script.encode("utf-8"),
                capture_output=True,
                cwd=folder,
                timeout=timeout,
                check=False,
            )
    except subprocess.TimeoutExpired:
        raise TorchCheckError(f"PyTorch did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise TorchCheckError(f"cannot start Python: {exc.strerror or exc}") from None
    out, err = (b.decode("utf-8", "replace") for b in (proc.stdout, proc.stderr))
    return torch_grads(out, err, proc.returncode)


def torch_grads(stdout: str, stderr: str, returncode: int) -> dict[str, np.ndarray | None]:
    """The gradients a run of :func:`checking_script` printed, or its last error line
    (a caller that runs the script itself, in the background, reads its output here)."""
    for line in stdout.splitlines():
        if line.startswith(MARKER):
            raw = json.loads(line[len(MARKER) :])
            return {
                k: None if v is None else np.asarray(v, dtype=np.float64) for k, v in raw.items()
            }
    lines = [s for s in stderr.strip().splitlines() if s.strip()]
    raise TorchCheckError(lines[-1] if lines else f"PyTorch exited with status {returncode}")


def compare_with_torch(
    graph: Graph, output: str, gradient: np.ndarray | None, timeout: float = 120.0
) -> list[Comparison]:
    """Our gradient beside PyTorch's for every node PyTorch reports, in graph order."""
    return compare_grads(graph, output, gradient, run_with_torch(graph, output, gradient, timeout))


def compare_grads(
    graph: Graph,
    output: str,
    gradient: np.ndarray | None,
    theirs: dict[str, np.ndarray | None],
) -> list[Comparison]:
    """Our gradient beside ``theirs`` (PyTorch's) for every node it reports, in graph order."""
    trace = backward(graph, forward(graph), output, gradient)
    rows = []
    for nid in graph.nodes:
        if nid not in theirs:
            continue
        ours, got = trace.grads.get(nid), theirs[nid]
        if ours is None or got is None:
            # PyTorch leaves .grad None off the output's path; we send nothing there either
            agree = (ours is None or not np.any(ours)) and (got is None or not np.any(got))
        else:
            agree = ours.shape == got.shape and bool(
                np.allclose(ours, got, rtol=RTOL, atol=ATOL, equal_nan=True)
            )
        rows.append(Comparison(nid, ours, got, agree))
    return rows


__all__ = [
    "Comparison",
    "TorchCheckError",
    "checking_script",
    "compare_grads",
    "compare_with_torch",
    "run_with_torch",
    "torch_available",
    "torch_grads",
]
