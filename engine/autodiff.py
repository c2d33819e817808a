"""Forward evaluation and reverse-mode backward over a :class:`~engine.graph.Graph`.

``backward`` is one walk in reverse topological order; with ``record`` it keeps
a :class:`~engine.trace.Step` per edge, which is all the GUI ever animates.
Rules follow ``torch.Tensor.backward(gradient=v)``: implicit ``v = 1`` only for
one-element outputs, ``v`` must match the output's shape, gradients of a node
used several times are summed, and nothing flows toward what needs no grad.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .collector import collector_paused
from .errors import ArityError, GradientError, GraphError, ShapeError, shape_text
from .graph import Graph, arity_problem, as_tensor
from .ops import LEAF_OPS, OPS
from .ops.record import OpShapeError
from .trace import JACOBIAN_LIMIT, EdgeContext, Step, Trace, accumulate


@dataclass
class Forward:
    """Every computable node's value; ``errors`` holds each node that failed itself.

    A node downstream of a failure has no value and no error of its own: the badge
    belongs where the problem is.
    """

    values: dict[str, np.ndarray] = field(default_factory=dict)
    errors: dict[str, GraphError] = field(default_factory=dict)
    requires_grad: set[str] = field(default_factory=set)
    order: list[str] = field(default_factory=list)

    def nonfinite(self) -> list[str]:
        """Nodes whose value holds NaN or inf (worth a warning, never a crash)."""
        return [k for k, v in self.values.items() if not np.isfinite(v).all()]


def _operand_error(graph: Graph, node_id: str) -> GraphError | None:
    node = graph.nodes[node_id]
    problem = arity_problem(node.op, node.inputs)
    return None if problem is None else ArityError(problem, node_id)


def forward(graph: Graph) -> Forward:
    """Evaluate every node in topological order, collecting per-node errors."""
    result = Forward(order=graph.topological_order())
    values, req, errors, nodes = result.values, result.requires_grad, result.errors, graph.nodes
    ndarray, f64 = np.ndarray, np.float64
    with np.errstate(all="ignore"), collector_paused():
        for nid in result.order:
            node = nodes[nid]
            name = node.op
            if name in LEAF_OPS:
                values[nid] = node.value
                if node.requires_grad and name == "input":
                    req.add(nid)
                continue
            inputs = node.inputs
            op = OPS[name]
            if not inputs or None in inputs or (op.arity is not None and len(inputs) != op.arity):
                error = _operand_error(graph, nid)
                if error is not None:
                    errors[nid] = error
                    continue
            try:
                xs = [values[s] for s in inputs]
            except KeyError:
                continue  # blocked by an upstream error, reported there
            try:
                out = op.forward(xs, node.attrs)
            except Exception as exc:  # numpy's own message is the fallback
                errors[nid] = _shape_error(nid, name, xs, node.attrs, exc)
                continue
            if type(out) is not ndarray or out.dtype != f64:
                out = np.asarray(out, dtype=f64)  # numpy hands back scalars for 0-D results
            values[nid] = out
            for s in inputs:
                if s in req:
                    req.add(nid)
                    break
    return result


def _shape_error(
    nid: str, op: str, xs: list[np.ndarray], attrs: dict, exc: Exception
) -> GraphError:
    try:
        OPS[op].check([x.shape for x in xs], attrs)
    except OpShapeError as err:
        return ShapeError(str(err), nid)
    shapes = ", ".join(shape_text(x.shape) for x in xs)
    return ShapeError(f"{op} failed on shapes {shapes}: {exc}", nid)


def _first_error(graph: Graph, fwd: Forward, output: str) -> GraphError | None:
    if output in fwd.values:
        return None
    if output in fwd.errors:
        return fwd.errors[output]
    upstream = graph.ancestors(output)
    for nid in fwd.order:
        if nid in upstream and nid in fwd.errors:
            return fwd.errors[nid]
    return GraphError("has no value", output)


def seed_gradient(graph: Graph, fwd: Forward, output: str, gradient: Any = None) -> np.ndarray:
    """The ``v`` that starts backward, checked the way PyTorch checks it."""
    if output not in graph:
        raise GraphError(f"no node named {output!r} to run backward from")
    error = _first_error(graph, fwd, output)
    if error is not None:
        raise error
    shape = fwd.values[output].shape
    requires_grad = output in fwd.requires_grad
    if gradient is None or not requires_grad:
        check_gradient(output, shape, None, requires_grad)
        return np.ones(shape)
    v = _as_gradient(output, gradient)
    check_gradient(output, shape, v.shape, requires_grad)
    return v


def _as_gradient(output: str, gradient: Any) -> np.ndarray:
    try:
        return as_tensor(gradient)
    except (TypeError, ValueError):
        raise GradientError(
            "the gradient v must be a number or a nested list of numbers", output
        ) from None


def check_gradient(
    output: str,
    shape: tuple[int, ...],
    gradient_shape: tuple[int, ...] | None,
    requires_grad: bool,
) -> None:
    """PyTorch's checks on ``output.backward(gradient)``, from shapes alone, so the file
    loader can refuse a bad ``v`` before anything is computed."""
    if not requires_grad:
        raise GradientError(
            "does not require grad: no input that requires grad leads to it", output
        )
    if gradient_shape is None:
        if math.prod(shape) != 1:
            raise GradientError(
                f"grad can be implicitly created only for scalar outputs; this output has "
                f"shape {shape_text(shape)}, so give a gradient v of that shape",
                output,
            )
    elif gradient_shape != shape:
        raise GradientError(
            f"the gradient v has shape {shape_text(gradient_shape)} but the output has shape "
            f"{shape_text(shape)}",
            output,
        )


def _propagate(
    graph: Graph,
    fwd: Forward,
    output: str,
    v: np.ndarray,
    prior: dict[str, np.ndarray] | None,
    steps: list[Step] | None,
) -> dict[str, np.ndarray]:
    """The reverse walk. Appends one step per edge to ``steps`` when given.

    Only nodes that received a gradient send one on, so the walk touches exactly
    the ancestors of ``output`` that require grad; ``prior`` (earlier ``.grad`` of
    leaves) becomes the ``before`` of the first step into each such leaf.
    """
    nodes, values, req = graph.nodes, fwd.values, fwd.requires_grad
    earlier: dict[str, np.ndarray] = {}
    if prior:
        for leaf, g in prior.items():
            node = nodes.get(leaf)
            value = values.get(leaf)
            if node is not None and node.is_leaf and leaf in req and value is not None:
                if g.shape == value.shape:
                    earlier[leaf] = g
    grads: dict[str, np.ndarray] = {output: v if output not in earlier else earlier[output] + v}
    order = fwd.order
    try:
        upto = order.index(output) + 1  # nothing after the output in the order feeds it
    except ValueError:
        upto = len(order)
    ndarray, f64 = np.ndarray, np.float64
    record = steps is not None
    owned: set[str] = set()  # operands whose gradient is a buffer made here (summed in place)
    last: dict[str, Step] = {}  # operand -> the latest step into it
    with np.errstate(all="ignore"), collector_paused():
        for k in range(upto - 1, -1, -1):
            cid = order[k]
            g = grads.get(cid)
            if g is None or cid not in req:
                continue
            node = nodes[cid]
            if node.op in LEAF_OPS:
                continue
            op = OPS[node.op]
            inputs = node.inputs
            xs = [values[s] for s in inputs]
            out = values[cid]
            attrs = node.attrs
            vjp_of = op.vjp
            ctx = EdgeContext(node.op, xs, out, attrs) if record else None
            for i, src in enumerate(inputs):
                if src not in req:
                    continue
                vjp = vjp_of(i, g, xs, out, attrs)
                if type(vjp) is not ndarray or vjp.dtype != f64:
                    vjp = np.asarray(vjp, dtype=f64)
                before = grads.get(src)
                if before is None and earlier:
                    before = earlier.get(src)
                if before is None or (before.ndim == 0 and vjp.ndim == 0):
                    # kept whole: a first gradient, or scalars (nothing worth not keeping)
                    if before is None:
                        after = vjp
                    else:  # a float add, as accumulate() does
                        after = np.asarray(float(before) + float(vjp))
                    grads[src] = after
                    if record:
                        step = Step(cid, src, i, g, vjp, before, after, ctx)
                        steps.append(step)
                        if vjp.ndim:  # a later lazy step may follow it
                            last[src] = step
                    continue
                if src in owned and before.shape == vjp.shape:
                    after = np.add(before, vjp, out=before)  # our own buffer: sum in place
                else:
                    after = accumulate(before, vjp)
                    if after.ndim:
                        owned.add(src)
                grads[src] = after
                if record:  # lazy: the partial sums are not kept (see Step)
                    prev = last.get(src)
                    prior_grad = before if prev is None else None
                    last[src] = step = Step(cid, src, i, g, None, prior_grad, None, ctx, prev)
                    steps.append(step)
    for src, step in last.items():  # the final sums are kept anyway: no need to redo them
        if step._accumulated is None:  # noqa: SLF001 - filled in by its maker
            step._accumulated = grads[src]  # noqa: SLF001
    return grads


def backward(
    graph: Graph,
    fwd: Forward,
    output: str,
    gradient: Any = None,
    prior: dict[str, np.ndarray] | None = None,
) -> Trace:
    """Run ``output.backward(gradient)`` and record every edge as a step.

    ``prior`` is the leaves' ``.grad`` from earlier calls (an earlier trace's
    :attr:`~engine.trace.Trace.held_grads`): the new gradients are added to it, as
    PyTorch accumulates into ``.grad``. A ``.grad`` of another shape than the leaf's
    value, or of a leaf that no longer requires grad, is dropped.
    """
    v = seed_gradient(graph, fwd, output, gradient)
    trace = Trace(output=output, gradient=v)
    grads = _propagate(graph, fwd, output, v, prior, trace.steps)
    for nid in fwd.order:
        trace.grads[nid] = grads.get(nid)
    trace.leaves = [n for n in fwd.order if graph.nodes[n].wants_grad]
    return trace


def end_to_end_jacobian(
    graph: Graph,
    fwd: Forward,
    output: str,
    wrt: list[str],
    limit: int = JACOBIAN_LIMIT,
) -> np.ndarray | None:
    """d(output)/d(wrt leaves): rows are output elements, columns the leaves' elements
    side by side (row-major). Built by pulling back each basis vector, so it is the
    composition of the edge Jacobians; None above ``limit`` entries."""
    if output not in graph:
        raise GraphError(f"no node named {output!r} to differentiate")
    error = _first_error(graph, fwd, output)
    if error is not None:
        raise error
    for w in wrt:
        if w not in graph:
            raise GraphError(f"no node named {w!r} to differentiate with respect to")
        error = _first_error(graph, fwd, w)
        if error is not None:
            raise error
    out_shape = fwd.values[output].shape
    m = int(np.prod(out_shape))
    sizes = [int(fwd.values[w].size) for w in wrt]
    if m * sum(sizes) > limit:
        return None
    jac = np.zeros((m, sum(sizes)))
    basis = np.zeros(m)
    for r in range(m):
        basis[r] = 1.0
        grads = _propagate(graph, fwd, output, basis.reshape(out_shape).copy(), None, None)
        basis[r] = 0.0
        col = 0
        for w, n in zip(wrt, sizes, strict=True):
            if grads.get(w) is not None:
                jac[r, col : col + n] = grads[w].ravel()
            col += n
    return jac
