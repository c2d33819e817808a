"""Forward mode (JVP) recorded as data: one step per edge, inputs to outputs.

The mirror of :func:`engine.autodiff.backward`: the user sets a tangent ``u`` on
the inputs (as ``torch.func.jvp`` takes one tangent per primal), and each edge
pushes its operand's tangent through the consumer's local Jacobian, ``J·t``, using
the op table's ``jvp``. A node fed by several operands sums what they send, as a
node used several times sums gradients in reverse mode. The player animates the
list edge by edge; :func:`pass_counts` says why reverse mode wins for a loss.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .autodiff import Forward
from .errors import GradientError, GraphError, shape_text
from .graph import Graph, as_tensor
from .ops import LEAF_OPS, OPS
from .trace import JACOBIAN_LIMIT


@dataclass(frozen=True, slots=True)
class ForwardStep:
    """One edge of forward mode, operand -> consumer, in the order it ran.

    ``tangent`` is the operand's tangent, ``jvp`` this edge's share ``J·tangent`` of
    the consumer's tangent, ``before``/``accumulated`` the consumer's tangent before
    and after adding it (None before: nothing yet).
    """

    operand: str
    consumer: str
    operand_index: int
    tangent: np.ndarray
    jvp: np.ndarray
    before: np.ndarray | None
    accumulated: np.ndarray
    op: str
    xs: tuple[np.ndarray, ...]
    out: np.ndarray
    attrs: Mapping[str, Any]

    def push(self, t: np.ndarray) -> np.ndarray:
        """``J·t`` through this edge (the other operands held fixed)."""
        ts: list[np.ndarray | None] = [None] * len(self.xs)
        ts[self.operand_index] = t
        return np.asarray(
            OPS[self.op].jvp(ts, self.xs, self.out, dict(self.attrs)), dtype=np.float64
        )

    def jacobian(self, limit: int = JACOBIAN_LIMIT) -> np.ndarray | None:
        """d(consumer)/d(operand) as a 2-D matrix, column j = J·e_j; None above ``limit``."""
        x = self.xs[self.operand_index]
        m, n = int(self.out.size), int(x.size)
        if m * n > limit:
            return None
        jac = np.empty((m, n))
        basis = np.zeros(n)
        with np.errstate(all="ignore"):
            for j in range(n):
                basis[j] = 1.0
                jac[:, j] = self.push(basis.reshape(x.shape)).ravel()
                basis[j] = 0.0
        return jac


@dataclass
class ForwardTrace:
    """A forward-mode pass: the input tangents, the steps in order, every node's tangent."""

    inputs: dict[str, np.ndarray]
    steps: list[ForwardStep] = field(default_factory=list)
    tangents: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.steps)


def tangent_inputs(graph: Graph, fwd: Forward) -> list[str]:
    """The inputs a tangent can be set on: those that require grad, in forward order."""
    return [n for n in fwd.order if graph.nodes[n].wants_grad and n in fwd.values]


def check_tangents(
    graph: Graph, fwd: Forward, tangents: Mapping[str, Any]
) -> dict[str, np.ndarray]:
    """The tangents as arrays, checked the way ``torch.func.jvp`` checks them: one per
    input that requires grad, each shaped like its input."""
    allowed = set(tangent_inputs(graph, fwd))
    out: dict[str, np.ndarray] = {}
    for name, t in tangents.items():
        if name not in graph:
            raise GraphError(f"no node named {name!r} to set a tangent on")
        if name not in allowed:
            raise GradientError("is not an input that requires grad: it takes no tangent", name)
        try:
            u = as_tensor(t)
        except (TypeError, ValueError):
            raise GradientError(
                "a tangent must be a number or a nested list of numbers", name
            ) from None
        shape = fwd.values[name].shape
        if u.shape != shape:
            raise GradientError(
                f"the tangent has shape {shape_text(u.shape)} but the input "
                f"has shape {shape_text(shape)}",
                name,
            )
        out[name] = u
    return out


def one_hot(graph: Graph, fwd: Forward, k: int) -> dict[str, np.ndarray]:
    """``u = e_k`` over all inputs' elements side by side (row-major, forward order), so
    the output tangent is column ``k`` of the end-to-end Jacobian."""
    leaves = tangent_inputs(graph, fwd)
    total = sum(int(fwd.values[x].size) for x in leaves)
    if not 0 <= k < total:
        raise GraphError(f"one-hot index {k} is out of range: the inputs have {total} elements")
    out, start = {}, 0
    for x in leaves:
        value = fwd.values[x]
        u = np.zeros(value.size)
        if start <= k < start + value.size:
            u[k - start] = 1.0
        out[x] = u.reshape(value.shape)
        start += value.size
    return out


def ones(graph: Graph, fwd: Forward) -> dict[str, np.ndarray]:
    """``u = 1`` on every input that requires grad."""
    return {x: np.ones(fwd.values[x].shape) for x in tangent_inputs(graph, fwd)}


def jvp(graph: Graph, fwd: Forward, tangents: Mapping[str, Any]) -> ForwardTrace:
    """Push the tangents forward through every edge; record each edge as a step.

    Inputs without a tangent carry none (like constants); a node receives a tangent
    only through operands that carry one.
    """
    inputs = check_tangents(graph, fwd, tangents)
    trace = ForwardTrace(inputs=inputs, tangents=dict(inputs))
    tans, values = trace.tangents, fwd.values
    with np.errstate(all="ignore"):
        for cid in fwd.order:
            node = graph.nodes[cid]
            if node.op in LEAF_OPS or cid not in values:
                continue
            operands = cast(list[str], node.inputs)  # all connected: the node has a value
            xs = tuple(values[s] for s in operands)
            out = values[cid]
            for i, src in enumerate(operands):
                t = tans.get(src)
                if t is None:
                    continue
                ts: list[np.ndarray | None] = [None] * len(xs)
                ts[i] = t
                share = np.asarray(OPS[node.op].jvp(ts, xs, out, node.attrs), dtype=np.float64)
                before = tans.get(cid)
                after = share if before is None else before + share
                tans[cid] = after
                trace.steps.append(
                    ForwardStep(
                        src, cid, i, t, share, before, after, node.op, xs, out, dict(node.attrs)
                    )
                )
    return trace


@dataclass(frozen=True)
class PassCounts:
    """The cost of the full Jacobian ``∂output/∂inputs`` in each mode."""

    output: str
    input_elements: int  # forward passes: one per input element (a column each)
    output_elements: int  # reverse passes: one per output element (a row each)

    @property
    def forward_passes(self) -> int:
        return self.input_elements

    @property
    def reverse_passes(self) -> int:
        return self.output_elements

    def words(self) -> str:
        f, r = self.forward_passes, self.reverse_passes
        if r < f:
            verdict = "reverse mode is cheaper here"
        elif f < r:
            verdict = "forward mode is cheaper here"
        else:
            verdict = "both cost the same here"
        return (
            f"The full Jacobian of {self.output} needs {f} forward pass{'es' if f != 1 else ''}"
            f" (one per input element: a column each) or {r} reverse pass"
            f"{'es' if r != 1 else ''} (one per output element: a row each): {verdict}."
        )


def pass_counts(graph: Graph, fwd: Forward, output: str) -> PassCounts:
    """How many passes of each mode build ``∂output/∂inputs`` (inputs that lead to it)."""
    if output not in fwd.values:
        raise GraphError("has no value: nothing to differentiate", output)
    upstream = graph.ancestors(output)
    n = sum(int(fwd.values[x].size) for x in tangent_inputs(graph, fwd) if x in upstream)
    return PassCounts(output, n, int(math.prod(fwd.values[output].shape)))
