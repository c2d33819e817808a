"""The gradient flow: how big each parameter's gradient came out, layer by layer.

The question PyTorch users ask first of a deep model ("does the gradient reach the
first layer?") is answered by one row per parameter in depth order (the order the
forward pass used them), with the figures practitioners compare: mean and largest
|gradient|, its norm, and the norm relative to the weight's. A parameter is flagged
*vanishing* when its mean |gradient| is below :data:`VANISHING` of the largest one's
and *exploding* when above :data:`EXPLODING` times the median.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .autodiff import backward, forward
from .captured import CapturedTrace, leaf_shape
from .errors import GraphError
from .fileformat import GraphFile
from .groups import Group

Shape = tuple[int, ...]

#: Vanishing: mean |gradient| below this fraction of the largest parameter's.
VANISHING = 1e-4
#: Exploding: mean |gradient| above this many times the median parameter's.
EXPLODING = 1e3


@dataclass(frozen=True, slots=True)
class FlowRow:
    """One parameter's gradient figures. ``ratio`` is ``‖grad‖ / ‖weight‖`` (inf for a
    zero weight, as in PyTorch; None when the weight's value is unknown); ``flag`` is
    ``"vanishing"``, ``"exploding"`` or ``""``, and ``reason`` says why in words."""

    name: str
    module: str
    shape: Shape
    mean_abs: float
    max_abs: float
    norm: float
    ratio: float | None
    flag: str = ""
    reason: str = ""


def _row(
    name: str, module: str, shape: Shape, grad: np.ndarray, weight_norm: float | None
) -> FlowRow:
    a = np.abs(np.asarray(grad, dtype=np.float64))
    norm = float(np.sqrt(np.sum(a * a)))
    if weight_norm is None:
        ratio = None
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = float(np.float64(norm) / np.float64(weight_norm))
    mean = float(a.mean()) if a.size else 0.0
    return FlowRow(name, module, shape, mean, float(a.max()) if a.size else 0.0, norm, ratio)


def flagged(rows: list[FlowRow]) -> list[FlowRow]:
    """``rows`` with their vanishing/exploding flags and reasons set."""
    if not rows:
        return []
    means = [r.mean_abs for r in rows]
    largest, median = max(means), float(np.median(means))
    out = []
    for r in rows:
        flag = reason = ""
        if largest > 0 and r.mean_abs < VANISHING * largest:
            flag = "vanishing"
            reason = (
                f"mean |gradient| {r.mean_abs:.3g} is below {VANISHING * largest:.3g} "
                f"({VANISHING:g} × the largest parameter's, {largest:.3g})"
            )
        elif median > 0 and r.mean_abs > EXPLODING * median:
            flag = "exploding"
            reason = (
                f"mean |gradient| {r.mean_abs:.3g} is above {EXPLODING * median:.3g} "
                f"({EXPLODING:g} × the median parameter's, {median:.3g})"
            )
        out.append(replace(r, flag=flag, reason=reason))
    return out


def trace_flow(trace: CapturedTrace) -> list[FlowRow]:
    """One row per leaf of a captured pass that received a gradient, in depth order."""
    rows = []
    for nid, info in trace.nodes.items():
        grad = trace.grads.get(nid)
        if not info.is_leaf or grad is None:
            continue
        weight = trace.weight_norms.get(nid)
        if weight is None and info.value is not None:
            weight = float(np.linalg.norm(np.ravel(info.value)))
        rows.append(_row(nid, info.module, leaf_shape(trace, nid), grad, weight))
    return flagged(rows)


def graph_flow(gf: GraphFile) -> list[FlowRow]:
    """The same for a graph file's leaves: its forward and ``output.backward(gradient)``
    run by the engine; a leaf's module is the innermost group it feeds (its id). Raises
    :class:`~engine.errors.GraphError` when the graph has no output or cannot run."""
    if gf.output is None:
        raise GraphError("the graph has no output to call backward() on")
    fwd = forward(gf.graph)
    trace = backward(gf.graph, fwd, gf.output, gf.gradient)
    depth = {n: i for i, n in enumerate(fwd.order)}
    rows = []
    for leaf in sorted(trace.leaves, key=lambda n: depth.get(n, math.inf)):
        grad = trace.grads.get(leaf)
        if grad is None:
            continue
        value = fwd.values[leaf]
        weight = float(np.linalg.norm(np.ravel(value)))
        rows.append(_row(leaf, _module_of(gf, leaf), tuple(value.shape), grad, weight))
    return flagged(rows)


def _module_of(gf: GraphFile, leaf: str) -> str:
    """The smallest group holding a consumer of ``leaf`` ("" for none)."""
    users = set(gf.graph.consumers(leaf))
    holding: list[Group] = [g for g in gf.groups if users & set(g.members)]
    return min(holding, key=lambda g: len(g.members)).id if holding else ""
