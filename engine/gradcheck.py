"""Gradient check: the engine's gradient beside central finite differences, element by element.

So students can see the numbers are not magic: for every input element ``x_j`` the
scalar ``L = <v, output>`` is evaluated at ``x_j ± h`` and ``(L(x+h) - L(x-h)) / 2h``
is set beside the engine's ``∂L/∂x_j``. The same check works on one op node, with
``L = <w, op(operands)>`` and ``w`` the gradient arriving at that node, which
tests that op's VJP alone.

Where a function has no derivative (relu or abs at 0, log at 0, ...) finite
differences straddle the kink and disagree with any gradient, so a check that
only compared numbers would report a false failure, or, worse, pass by luck.
Two guards say so instead: the op table's known kinks are looked for in the
operand values (:func:`kinks`), and every element's two one-sided slopes are
compared at ``h`` and ``h/2`` (a kink leaves a jump that does not shrink with
``h``; a smooth function's gap halves).

A check must never pass what it cannot see, nor fail what is right. Each element
states its *resolution*: the rounding floor of the finite difference (the forward's
own rounding error over the step) plus the relative tolerance. A difference the
floor hides is "cannot tell at this scale", never "agrees"; a floor set by values
far larger than ``L`` (``(x + 1e10) - 1e10``) is cancellation and said so. An
element whose slopes disagree at ``h`` is retried at smaller steps before any
verdict: a curvature the step cannot follow (``sin(1e5·x)``, ``1/x`` near 0) is
"step too large for this curvature", and only a jump that stays is a kink.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from .autodiff import Forward, backward, forward, seed_gradient
from .errors import GraphError
from .graph import Graph
from .ops import LEAF_OPS, OPS
from .ops.record import Attrs

#: Relative tolerance for "agrees" (on top of the finite differences' rounding floor).
RTOL = 1e-6
#: Above this relative error the mismatch is shown as a failure, below it as close.
CLOSE = 1e-3
#: At most this many elements are perturbed per check (each costs four evaluations).
MAX_ELEMENTS = 2000


def step_for(dtype: np.dtype | type = np.float64) -> float:
    """The base step ``h`` for a dtype: the cube root of its machine epsilon.

    Central differences err by ``h²·f'''/6`` (truncation) plus ``ε·|L|/h``
    (rounding); ``h = ∛ε`` balances the two (float64: 6.1e-6, float32: 4.9e-3).
    The step used for an element ``x`` is ``h·max(1, |x|)``.
    """
    return float(np.cbrt(np.finfo(dtype).eps))


class Status(Enum):
    OK = "agrees"
    CLOSE = "close"
    MISMATCH = "mismatch"
    KINK = "not differentiable here"
    UNDEFINED = "not finite"
    UNRESOLVED = "cannot tell at this scale"
    CANCELLED = "cannot tell: the forward cancels"
    CURVATURE = "step too large for this curvature"


#: How much smaller each retry's step is, and how many retries there are (down to h/4096).
RETRY_FACTOR = 8
RETRIES = 4


@dataclass(frozen=True)
class ElementCheck:
    """One input element: the engine's value, the finite difference and how they compare."""

    node: str
    index: tuple[int, ...]
    analytic: float
    numeric: float
    abs_error: float
    rel_error: float
    status: Status
    note: str = ""
    #: Below this |engine - finite difference| the check cannot tell the two apart.
    resolution: float = np.nan

    @property
    def label(self) -> str:
        if not self.index:
            return self.node
        return f"{self.node}[{', '.join(str(i) for i in self.index)}]"


@dataclass(frozen=True)
class Kink:
    """A node whose operand sits where its op has no derivative."""

    node: str
    message: str


@dataclass
class GradCheck:
    """The result of one check: what was checked, each element, and the kinks found."""

    target: str  # "graph" or the id of the node checked locally
    description: str
    step: str
    elements: list[ElementCheck] = field(default_factory=list)
    kinks: list[Kink] = field(default_factory=list)
    skipped: int = 0  # elements beyond MAX_ELEMENTS, not perturbed

    @property
    def worst(self) -> ElementCheck | None:
        finite = [
            e for e in self.elements if e.status in (Status.OK, Status.CLOSE, Status.MISMATCH)
        ]
        return max(finite, key=lambda e: e.rel_error, default=None)

    def count(self, status: Status) -> int:
        return sum(1 for e in self.elements if e.status is status)

    @property
    def passed(self) -> bool:
        """Every element agrees (a kink or a non-finite value is not a pass)."""
        return bool(self.elements) and all(e.status is Status.OK for e in self.elements)

    def summary(self) -> str:
        """One line: how many elements agree, the worst relative error, kinks named."""
        n = len(self.elements)
        parts = [f"{self.count(Status.OK)} of {n} element{'s' if n != 1 else ''} agree"]
        worst = self.worst
        if worst is not None:
            parts.append(f"worst relative error {worst.rel_error:.1e} ({worst.label})")
        for status in list(Status)[1:]:
            if self.count(status):
                parts.append(f"{self.count(status)} {status.value}")
        if self.skipped:
            parts.append(f"{self.skipped} more not checked")
        text = "; ".join(parts)
        if self.kinks:
            text += ". " + " ".join(f"node {k.node!r}: {k.message}." for k in self.kinks)
        return text


# --------------------------------------------------------------------------- known kinks


def node_kinks(op: str, xs: list[np.ndarray], attrs: Attrs | None = None) -> str | None:
    """Words for why ``op`` has no derivative at these operands and attributes (its
    record's ``kinks``), or None."""
    kinks = OPS[op].kinks if op in OPS else None
    if kinks is None:
        return None
    count = int(np.count_nonzero(kinks.where(xs, attrs or {})))
    if not count:
        return None
    return f"{kinks.words}; {count} element{' sits' if count == 1 else 's sit'} there"


def kinks(graph: Graph, fwd: Forward, nodes: set[str] | None = None) -> list[Kink]:
    """Every op node (of ``nodes``, default all) whose operands sit on a known kink."""
    found = []
    for nid in fwd.order:
        node = graph.nodes[nid]
        if node.op in LEAF_OPS or nid not in fwd.requires_grad or nid not in fwd.values:
            continue
        if nodes is not None and nid not in nodes:
            continue
        xs = [fwd.values[s] for s in node.inputs if s is not None]
        message = node_kinks(node.op, xs, node.attrs)
        if message is not None:
            found.append(Kink(nid, message))
    return found


# --------------------------------------------------------------------------- the comparison


@dataclass(frozen=True)
class _Probe:
    """``L`` around one element at step ``h``: the central difference, the one-sided
    slopes' jump, and the rounding floor (the forward's error over the step)."""

    h: float
    numeric: float
    jump: float
    left: float
    right: float
    noise: float
    finite: bool


def _probe(at: Callable[[float], float], f0: float, h: float, rounding: float) -> _Probe:
    fp, fm, fp2, fm2 = at(h), at(-h), at(h / 2), at(-h / 2)
    gap = (fp - f0) / h - (f0 - fm) / h  # one-sided slopes: right minus left
    gap2 = (fp2 - f0) / (h / 2) - (f0 - fm2) / (h / 2)
    finfo = np.finfo(np.float64)
    # a value's rounding is eps relative, but never below the subnormal spacing: a tiny
    # ``v`` (5e-324) makes L itself subnormal, where eps·|L| underflows to 0
    ulp = max(float(finfo.eps) * max(abs(f0), abs(fp), abs(fm)), float(finfo.smallest_subnormal))
    noise = 8 * (ulp + rounding) / h
    return _Probe(
        h,
        (fp - fm) / (2 * h),
        2 * gap2 - gap,  # the part of the gap that does not shrink with h
        (f0 - fm) / h,
        (fp - f0) / h,
        noise,
        bool(np.isfinite([fp, fm, fp2, fm2]).all()),
    )


def _is_kink(p: _Probe, scale: float) -> bool:
    """A jump in the slopes well above rounding, relative to the slopes themselves (so
    a tiny ``v`` through relu at 0 is still a kink)."""
    scale = max(scale, abs(p.left), abs(p.right))
    return abs(p.jump) > 1e-4 * scale + 16 * p.noise


def _verdict(
    name: str, idx: tuple[int, ...], a: float, p: _Probe, f0: float, rounding: float
) -> ElementCheck:
    """Compare at one (smooth) probe: agrees only where the floor lets it see."""
    abs_error = abs(a - p.numeric)
    scale = max(abs(a), abs(p.numeric))
    rel_error = abs_error / scale if scale > 0 else 0.0
    resolution = RTOL * scale + p.noise
    note = ""
    if abs_error > resolution:
        status = Status.CLOSE if rel_error <= CLOSE else Status.MISMATCH
    elif abs_error == 0.0 or p.noise <= CLOSE * scale:  # the floor is well below it
        status = Status.OK
    elif rounding > 4 * float(np.finfo(np.float64).eps) * max(abs(f0), 1e-300):
        status = Status.CANCELLED
        note = (
            f"values far larger than L round by ±{rounding:.1g}, which at h = {p.h:.1g} "
            f"hides any difference below {resolution:.1g}"
        )
    else:
        status = Status.UNRESOLVED
        note = f"the finite difference resolves only differences above {resolution:.1g}"
    return ElementCheck(name, idx, a, p.numeric, abs_error, rel_error, status, note, resolution)


def _compare(
    name: str,
    x: np.ndarray,
    analytic: np.ndarray,
    evaluate: Callable[[np.ndarray], float],
    budget: int,
    rounding: float = 0.0,
) -> tuple[list[ElementCheck], int]:
    """Perturb each element of ``x`` (``evaluate`` maps a perturbed copy to ``L``);
    ``rounding`` is the forward's own rounding error in ``L`` (see :func:`rounding_of`)."""
    h0 = step_for(x.dtype)
    out = []
    flat_analytic = np.broadcast_to(analytic, x.shape).ravel()
    n = min(x.size, budget)
    f0 = evaluate(x)
    for j in range(n):
        index = np.unravel_index(j, x.shape) if x.ndim else ()
        xj = float(x.flat[j])

        def at(delta: float, j: int = j, xj: float = xj) -> float:
            y = x.copy()
            y.flat[j] = xj + delta
            return evaluate(y)

        a = float(flat_analytic[j])
        idx = tuple(int(i) for i in index)
        first = _probe(at, f0, h0 * max(1.0, abs(xj)), rounding)
        if not (first.finite and np.isfinite([f0, a]).all()):
            out.append(
                ElementCheck(
                    name,
                    idx,
                    a,
                    first.numeric,
                    np.nan,
                    np.nan,
                    Status.UNDEFINED,
                    "a value or gradient here is NaN or infinite",
                )
            )
            continue
        out.append(_settle(name, idx, a, at, f0, first, rounding))
    return out, x.size - n


def _settle(
    name: str,
    idx: tuple[int, ...],
    a: float,
    at: Callable[[float], float],
    f0: float,
    first: _Probe,
    rounding: float,
) -> ElementCheck:
    """The verdict at ``first``'s step, or, where its slopes jump or it disagrees, at
    the first smaller step that follows the curvature (a kink jumps at every step)."""
    scale = max(abs(a), abs(first.numeric))
    kinked = _is_kink(first, scale)
    if not kinked:
        check = _verdict(name, idx, a, first, f0, rounding)
        if check.status not in (Status.CLOSE, Status.MISMATCH):
            return check
    last, smooth = first, None
    for k in range(1, RETRIES + 1):
        p = _probe(at, f0, first.h / RETRY_FACTOR**k, rounding)
        if not p.finite:
            break
        last = p
        if _is_kink(p, max(abs(a), abs(p.numeric))):
            continue
        words = f"step too large for this curvature at h = {first.h:.1g}: "
        check = _verdict(name, idx, a, p, f0, rounding)
        smooth = ElementCheck(
            **{**check.__dict__, "note": _join(words + f"checked at h = {p.h:.1g}", check.note)}
        )
        if check.status not in (Status.CLOSE, Status.MISMATCH):
            return smooth
    if not kinked:
        return _verdict(name, idx, a, first, f0, rounding)
    if smooth is not None:  # smooth at a smaller step, and still off: a real difference
        return smooth
    abs_error = abs(a - first.numeric)
    rel_error = abs_error / scale if scale > 0 else 0.0
    if abs(last.jump) * RETRY_FACTOR < abs(first.jump):  # shrinking: curvature, not a kink
        note = f"the slopes still jump at h = {last.h:.1g}"
        status = Status.CURVATURE
    else:
        note = f"slope {first.left:.4g} from the left, {first.right:.4g} from the right"
        status = Status.KINK
    return ElementCheck(name, idx, a, first.numeric, abs_error, rel_error, status, note)


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def rounding_of(values: Any, grads: Any) -> float:
    """The forward's rounding error in ``L``, to first order: every computed value
    rounds by ``ε·|value|``, which reaches ``L`` times its gradient (non-finite terms
    left out; the inputs are exact, so callers pass computed nodes only)."""
    eps = float(np.finfo(np.float64).eps)
    total = 0.0
    with np.errstate(all="ignore"):
        for value, grad in zip(values, grads, strict=True):
            if grad is None:
                continue
            terms = np.abs(np.asarray(value) * np.asarray(grad))
            total += float(np.sum(terms[np.isfinite(terms)]))
    return eps * total


def _step_words(dtype: np.dtype | type = np.float64) -> str:
    return (
        f"central differences (L(x+h) - L(x-h)) / 2h with h = {step_for(dtype):.2g}·max(1, |x|)"
        f" for {np.dtype(dtype).name} (the cube root of its machine epsilon); agrees: "
        f"|engine - finite difference| ≤ {RTOL:g}·max(|engine|, |fd|) + the rounding floor"
    )


def check_graph(
    graph: Graph, output: str, gradient: Any = None, wrt: list[str] | None = None
) -> GradCheck:
    """``output.backward(gradient)`` against finite differences of ``L = <v, output>``.

    ``wrt`` (default: every input that requires grad) limits the leaves perturbed.
    Raises :class:`~engine.errors.GraphError` when backward cannot run at all.
    """
    fwd = forward(graph)
    v = seed_gradient(graph, fwd, output, gradient)
    trace = backward(graph, fwd, output, v)
    leaves = trace.leaves if wrt is None else wrt
    for leaf in leaves:
        if leaf not in graph or not graph.nodes[leaf].wants_grad:
            raise GraphError("is not an input that requires grad: nothing to check", leaf)
    work = graph.copy()
    upstream = graph.ancestors(output) | {output}
    found = kinks(graph, fwd, upstream)
    names = ", ".join(leaves) or "no inputs"
    vtext = "v" if gradient is not None else "1"
    result = GradCheck(
        "graph", f"L = <{vtext}, {output}> with respect to {names}", _step_words(), kinks=found
    )
    budget = MAX_ELEMENTS
    nodes = [n for n in fwd.order if n in fwd.values and not graph.nodes[n].is_leaf]
    rounding = rounding_of([fwd.values[n] for n in nodes], [trace.grads.get(n) for n in nodes])
    for leaf in leaves:
        node = work.nodes[leaf]
        original = node.value
        assert original is not None  # an input holds its value

        def evaluate(y: np.ndarray, node: Any = node) -> float:
            node.value = y
            values = forward(work).values
            return float(np.sum(v * values[output])) if output in values else np.nan

        grad = trace.grads.get(leaf)
        analytic = np.zeros(original.shape) if grad is None else grad
        try:
            with np.errstate(all="ignore"):
                checked, skipped = _compare(leaf, original, analytic, evaluate, budget, rounding)
        finally:
            node.value = original
        result.elements += checked
        result.skipped += skipped
        budget = max(0, budget - len(checked))
    return result


def check_node(graph: Graph, node_id: str, upstream: np.ndarray | None = None) -> GradCheck:
    """One op node's VJP against finite differences of ``L = <w, op(operands)>``.

    ``w`` is ``upstream`` (the gradient arriving at the node) or ones. A leaf has no
    VJP of its own: pass it to :func:`check_graph` as ``wrt`` instead.
    """
    if node_id not in graph:
        raise GraphError(f"no node named {node_id!r} to check")
    node = graph.nodes[node_id]
    if node.op in LEAF_OPS:
        raise GraphError("is a leaf: it has no backward rule of its own to check", node_id)
    fwd = forward(graph)
    if node_id not in fwd.values:
        error = fwd.errors.get(node_id)
        raise error if error is not None else GraphError("has no value", node_id)
    op = OPS[node.op]
    xs = [fwd.values[s] for s in node.inputs if s is not None]
    out = fwd.values[node_id]
    w = np.ones(out.shape) if upstream is None else np.asarray(upstream, dtype=np.float64)
    if w.shape != out.shape:
        raise GraphError(
            f"the upstream gradient has shape {w.shape}, the node {out.shape}", node_id
        )
    message = node_kinks(node.op, xs, node.attrs)
    found = [Kink(node_id, message)] if message is not None else []
    wtext = "w" if upstream is not None else "1"
    result = GradCheck(
        node_id, f"{node.op}'s backward rule: L = <{wtext}, {node_id}>", _step_words(), kinks=found
    )
    budget = MAX_ELEMENTS
    for i, src in enumerate(node.inputs):
        if src is None:
            continue
        name = src if node.inputs.count(src) == 1 else f"{src} (operand {i})"

        def evaluate(y: np.ndarray, i: int = i) -> float:
            args = list(xs)
            args[i] = y
            return float(np.sum(w * op.forward(args, node.attrs)))

        with np.errstate(all="ignore"):
            analytic = np.asarray(op.vjp(i, w, xs, out, node.attrs), dtype=np.float64)
            rounding = rounding_of([out], [w])
            checked, skipped = _compare(name, xs[i], analytic, evaluate, budget, rounding)
        result.elements += checked
        result.skipped += skipped
        budget = max(0, budget - len(checked))
    return result
