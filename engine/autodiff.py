"""Forward evaluation and reverse-mode backward over a :class:`~engine.graph.Graph`.

``backward`` is one walk in reverse topological order; with ``record`` it keeps
a :class:`~engine.trace.Step` per edge, which is all the GUI ever animates.
Rules follow ``torch.Tensor.backward(gradient=v)``: implicit ``v = 1`` only for
one-element outputs, ``v`` must match the output's shape, gradients of a node
used several times are summed, and nothing flows toward what needs no grad.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .collector import collector_paused
from .errors import ArityError, GradientError, GraphError, ShapeError, shape_text
from .graph import Graph, as_tensor
from .ops import LEAF_OPS, OPS
from .ops.record import OpShapeError
from .program import Program, program_of
from .trace import JACOBIAN_LIMIT, StepRecord, Trace, accumulate

#: float64's dtype: numpy's own dtypes are singletons, so an identity test tells
#: (comparing ``dtype != np.float64`` converts the scalar type on every call).
F64 = np.dtype(np.float64)
#: Values of at most this many elements are tested for NaN and inf together.
SMALL_VALUE = 64


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
    #: The program this ran and its values and requires-grad flags by slot, which
    #: backward reads instead of the dicts when it runs the same program.
    program: Program | None = field(default=None, repr=False, compare=False)
    slot_values: list[np.ndarray | None] = field(default_factory=list, repr=False, compare=False)
    slot_requires_grad: list[bool] = field(default_factory=list, repr=False, compare=False)

    def nonfinite(self) -> list[str]:
        """Nodes whose value holds NaN or inf (worth a warning, never a crash), in order.

        The small values (most nodes) are tested together first, and are almost always
        all finite: a test per node was most of the window's problem line on an edit.
        Big ones are tested each, never copied together."""
        values = self.values
        small = [v.ravel() for v in values.values() if v.size <= SMALL_VALUE]
        if small and not np.isfinite(np.concatenate(small)).all():
            suspects = list(values.items())
        else:
            suspects = [(k, v) for k, v in values.items() if v.size > SMALL_VALUE]
        return [k for k, v in suspects if not np.isfinite(v).all()]


def forward(graph: Graph, earlier: Forward | None = None,
            changed: Collection[str] = ()) -> Forward:
    """Evaluate every node in topological order, collecting per-node errors.

    ``earlier``: a forward pass over this graph before an edit that changed only the
    nodes in ``changed`` and everything downstream of them (``changed`` must hold
    those too). Every other op node reads the same operands as then, so its value,
    error and requires-grad flag are taken from ``earlier`` instead of computed again
    (the same numbers: an add from the palette recomputed all 200 nodes for one)."""
    program = program_of(graph)
    order = program.order
    vals: list[np.ndarray | None] = [None] * len(order)
    req = [False] * len(order)
    errors: dict[str, GraphError] = {}
    clean = True  # no node failed yet: no operand can be missing
    ndarray, f64 = np.ndarray, F64
    if earlier is not None:
        was_values, was_errors, was_req = earlier.values, earlier.errors, earlier.requires_grad
    with np.errstate(all="ignore"), collector_paused():
        for s, node in program.leaves:
            vals[s] = node.value
            if node.requires_grad and node.op == "input":
                req[s] = True
        for s, node, op, operands, count, problem in program.instructions:
            if earlier is not None and node.id not in changed:
                nid = node.id
                vals[s] = was_values.get(nid)
                req[s] = nid in was_req
                if nid in was_errors:
                    errors[nid] = was_errors[nid]
                    clean = False
                continue
            if problem is not None:
                errors[node.id] = ArityError(problem, node.id)
                clean = False
                continue
            if count == 1:  # spelt out: a comprehension is a function call
                xs = [vals[operands[0]]]
            elif count == 2:
                p, q = operands
                xs = [vals[p], vals[q]]
            else:
                xs = [vals[i] for i in operands]
            if not clean and any(x is None for x in xs):
                continue  # blocked by an upstream error, reported there
            try:
                out = op.forward(cast(list[np.ndarray], xs), node.attrs)  # None: skipped
            except Exception as exc:  # numpy's own message is the fallback
                errors[node.id] = _shape_error(node.id, node.op, cast(list, xs), node.attrs, exc)
                clean = False
                continue
            if type(out) is not ndarray or out.dtype is not f64:
                out = np.asarray(out, dtype=f64)  # numpy hands back scalars for 0-D results
            vals[s] = out
            for i in operands:
                if req[i]:
                    req[s] = True
                    break
    return Forward(
        values={order[s]: v for s, v in enumerate(vals) if v is not None},
        errors=errors,
        requires_grad={order[s] for s, r in enumerate(req) if r},
        order=list(order),
        program=program,
        slot_values=vals,
        slot_requires_grad=req,
    )


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


def _slots(graph: Graph, fwd: Forward) -> tuple[Program, list, list[bool]]:
    """The graph's program with the forward's values and requires-grad flags by slot
    (read from its dicts when the forward ran another program: the graph was edited)."""
    program = program_of(graph)
    if fwd.program is program:
        return program, fwd.slot_values, fwd.slot_requires_grad
    values, req = fwd.values, fwd.requires_grad
    return program, [values.get(n) for n in program.order], [n in req for n in program.order]


def _fresh(vjp: np.ndarray, g: np.ndarray, xs: Sequence[np.ndarray], out: np.ndarray) -> bool:
    """Whether ``vjp`` is a buffer its VJP just made (not a view, not the upstream
    gradient or a value passed through), so a step recorded lazily, which keeps no
    VJP, leaves it free to hold the sum."""
    if vjp.base is not None or vjp is g or vjp is out:
        return False
    for x in xs:  # a loop, not all() over a generator: this runs on most fan-ins
        if vjp is x:
            return False
    return True


def _earlier(
    graph: Graph,
    program: Program,
    values: list[np.ndarray | None],
    req: list[bool],
    prior: dict[str, np.ndarray],
) -> dict[int, np.ndarray]:
    """Slot -> the earlier ``.grad`` of each leaf that requires grad and still has that
    gradient's shape (the rest start from nothing, as PyTorch's would after a reshape)."""
    earlier: dict[int, np.ndarray] = {}
    for leaf, held in prior.items():
        s = program.slot.get(leaf)
        if s is None or not req[s] or graph.nodes[leaf].op not in LEAF_OPS:
            continue
        value = values[s]
        if value is not None and held.shape == value.shape:
            earlier[s] = held
    return earlier


def _sum_into(
    before: np.ndarray,
    vjp: np.ndarray,
    src: int,
    owned: set[int],
    g: np.ndarray,
    xs: Sequence[np.ndarray],
    out: np.ndarray,
) -> np.ndarray:
    """``before + vjp`` for a fan-in, in place where a buffer is free: ``before`` when it
    is one made here (``owned``), else a fresh ``vjp`` (which then becomes owned)."""
    if src in owned and before.shape == vjp.shape:
        return np.add(before, vjp, out=before)  # our own buffer: sum in place
    if before.shape == vjp.shape and _fresh(vjp, g, xs, out):
        owned.add(src)
        return np.add(before, vjp, out=vjp)  # the same bits as before + vjp
    after = accumulate(before, vjp)
    if after.ndim:
        owned.add(src)
    return after


def _propagate(
    graph: Graph,
    fwd: Forward,
    output: str,
    v: np.ndarray,
    prior: dict[str, np.ndarray] | None,
    record: StepRecord | None,
) -> tuple[Program, list[np.ndarray | None]]:
    """The reverse walk; returns the program walked and every slot's gradient. Adds
    one step per edge to ``record`` when given.

    Only nodes that received a gradient send one on, so the walk touches exactly
    the ancestors of ``output`` that require grad; ``prior`` (earlier ``.grad`` of
    leaves) becomes the ``before`` of the first step into each such leaf.
    """
    program, values, req = _slots(graph, fwd)
    earlier = _earlier(graph, program, values, req, prior) if prior else {}
    top = program.slot[output]
    grads: list[np.ndarray | None] = [None] * len(program.order)
    grads[top] = v if top not in earlier else earlier[top] + v
    ndarray, f64 = np.ndarray, F64
    steps = record.steps if record is not None else None
    contexts = record.contexts if record is not None else None
    owned: set[int] = set()  # operands whose gradient is a buffer made here (summed in place)
    last: dict[int, int] = {}  # operand -> index of the latest step into it
    made, ctx = 0, -1  # steps and contexts recorded so far (the latest context's index)
    with np.errstate(all="ignore"), collector_paused():
        for cid, node, op, operands, count, _ in program.instructions_reversed():
            g = grads[cid]  # None after the output in the order: nothing there feeds it
            if g is None or not req[cid]:
                continue
            # A tuple: the step's context keeps it, and the collector leaves a tuple of
            # arrays alone (a list per node was one more object for it, per open).
            xs: tuple[np.ndarray, ...]
            if count == 1:  # spelt out, as in forward
                xs = (values[operands[0]],)
            elif count == 2:
                p, q = operands
                xs = (values[p], values[q])
            else:
                xs = tuple([values[s] for s in operands])
            out = values[cid]
            attrs = node.attrs
            vjp_of = op.vjp
            if contexts is not None:
                ctx += 1
                contexts.append((node.op, xs, out, attrs))
            i = -1
            for src in operands:
                i += 1
                if not req[src]:
                    continue
                vjp = vjp_of(i, g, xs, out, attrs)
                if type(vjp) is not ndarray or vjp.dtype is not f64:
                    vjp = np.asarray(vjp, dtype=f64)
                before = grads[src]
                if before is None and earlier:
                    before = earlier.get(src)
                if before is None or (before.ndim == 0 and vjp.ndim == 0):
                    # kept whole: a first gradient, or scalars (nothing worth not keeping)
                    after = vjp if before is None else accumulate(before, vjp)
                    grads[src] = after
                    if steps is not None:
                        if vjp.ndim:  # a later lazy step may follow it
                            last[src] = made
                        steps.append((cid, src, i, g, vjp, before, after, ctx, -1))
                        made += 1
                    continue
                grads[src] = _sum_into(before, vjp, src, owned, g, xs, out)
                if steps is not None:  # lazy: the partial sums are not kept (see Step)
                    prev = last.get(src, -1)
                    last[src] = made
                    prior_grad = before if prev < 0 else None
                    steps.append((cid, src, i, g, None, prior_grad, None, ctx, prev))
                    made += 1
    if record is not None:  # the final sums are kept anyway: no need to redo them
        record.finals = [(k, grads[src]) for src, k in last.items()]
    return program, grads


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
    record = StepRecord()
    program, grads = _propagate(graph, fwd, output, v, prior, record)
    record.names = program.order
    trace = Trace(output=output, gradient=v, record=record)
    slot_of = program.slot
    if fwd.program is program:
        trace.grads = dict(zip(fwd.order, grads, strict=True))
    else:
        trace.grads = {n: grads[slot_of[n]] if n in slot_of else None for n in fwd.order}
    trace.leaves = [program.order[s] for s, node in program.leaves if node.wants_grad]
    return trace


def trace_after_edit(earlier: Trace, fwd: Forward) -> Trace:
    """The trace :func:`backward` would record over ``fwd``, when the edit since
    ``earlier`` changed nothing the output depends on and no ``.grad`` was held (a node
    added from the palette, a value set on a branch backward never reaches): the same
    steps and gradients, shared; only the graph's other nodes are listed anew (no
    gradient reaches them)."""
    trace = Trace(output=earlier.output, gradient=earlier.gradient)
    trace.steps = earlier.steps  # made once, then read by both
    grads = earlier.grads
    trace.grads = {n: grads.get(n) for n in fwd.order}
    program = fwd.program
    assert program is not None  # a pass forward() ran
    trace.leaves = [program.order[s] for s, node in program.leaves if node.wants_grad]
    return trace


#: Elements the end-to-end Jacobian's backward passes may touch in all (about a second).
E2E_WORK_LIMIT = 50_000_000


def end_to_end_jacobian(
    graph: Graph,
    fwd: Forward,
    output: str,
    wrt: list[str],
    limit: int = JACOBIAN_LIMIT,
    work_limit: int = E2E_WORK_LIMIT,
    seeded: dict[str, np.ndarray | None] | None = None,
) -> np.ndarray | None:
    """d(output)/d(wrt leaves): rows are output elements, columns the leaves' elements
    side by side (row-major). Built by pulling back each basis vector, so it is the
    composition of the edge Jacobians; None above ``limit`` entries, or when its
    backward passes (one per output element) would touch more than ``work_limit``
    elements in all: a 4,096-element output over 10^7-element intermediates is
    small as a Jacobian but hours of work.

    ``seeded``: the gradients a backward pass from ``output`` seeded with ones and
    nothing earlier added left at the nodes (a trace's ``grads``, when its ``v`` is
    ones and no ``.grad`` accumulated). A one-element output's only basis vector is
    that seed: the pass is J's one row, not run again (the same numbers: the same
    walk on the same seed)."""
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
    if m * sum(int(v.size) for v in fwd.values.values() if v is not None) > work_limit:
        return None
    jac = np.zeros((m, sum(sizes)))
    if m == 1 and seeded is not None:
        _fill_row(jac[0], [seeded.get(w) for w in wrt], sizes)
        return jac
    basis = np.zeros(m)
    for r in range(m):
        basis[r] = 1.0
        program, grads = _propagate(graph, fwd, output, basis.reshape(out_shape).copy(), None, None)
        basis[r] = 0.0
        _fill_row(jac[r], [grads[program.slot[w]] for w in wrt], sizes)
    return jac


def _fill_row(row: np.ndarray, grads: list[np.ndarray | None], sizes: list[int]) -> None:
    """One row of the end-to-end Jacobian: each leaf's gradient in its columns, side by
    side (zeros where none flowed)."""
    col = 0
    for g, n in zip(grads, sizes, strict=True):
        if g is not None:
            row[col : col + n] = g.ravel()
        col += n
