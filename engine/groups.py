"""Groups: a block of nodes folded into one, with its own end-to-end Jacobian.

A group is a set of op nodes; its *inputs* are the nodes outside it that feed a
member, its *outputs* the members used outside it (or used by nothing: the
output of the graph). Its local Jacobian ``∂outputs/∂inputs`` is the composition
of its members' steps: each row is a basis vector pulled back through the members
alone, with the very VJPs the backward pass uses, so it can never disagree with
the expanded steps.

Groups nest (a group may hold another) but never partly overlap, and a group
must be convex (no path leaves it and comes back), so that during playback a
collapsed group can be one step: every gradient it needs has arrived before it
runs, and it hands its inputs exactly what its members' steps would have.

In a file, groups are the top-level ``"groups"`` list (format 1, minor version 1;
see docs/graph-format.md). Readers of minor version 0 ignore the key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from .autodiff import Forward
from .errors import GraphError
from .graph import CAPTURED_OP, Graph, id_problem
from .ops import OPS
from .trace import JACOBIAN_LIMIT, Step, Trace

#: The file-format minor version that added groups.
GROUPS_MINOR_VERSION = 1


@dataclass
class Group:
    """A named set of member nodes; ``collapsed`` groups play as one step."""

    id: str
    members: list[str]
    title: str = ""
    collapsed: bool = True

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "members": list(self.members)}
        if self.title:
            out["title"] = self.title
        out["collapsed"] = self.collapsed
        return out


#: Per graph (and its version): each node's place in the file order and in a topological
#: order. Kept, not recomputed per group: a captured model has a thousand groups.
_INDEX: WeakKeyDictionary[Graph, tuple[int, dict[str, int], dict[str, int]]] = (
    WeakKeyDictionary()
)


def _index(graph: Graph) -> tuple[int, dict[str, int], dict[str, int]]:
    cached = _INDEX.get(graph)
    if cached is None or cached[0] != graph.version:
        file_order = {n: i for i, n in enumerate(graph.nodes)}
        topo = {n: i for i, n in enumerate(graph.topological_order())}
        cached = _INDEX[graph] = (graph.version, file_order, topo)
    return cached


def _ordered(graph: Graph, ids: Iterable[str]) -> list[str]:
    """``ids`` in the graph's own node order (the file's order), so results are stable."""
    return sorted(set(ids), key=_index(graph)[1].__getitem__)


def inputs_of(graph: Graph, members: Iterable[str]) -> list[str]:
    """The nodes outside the group that feed a member, in node order."""
    inside = set(members)
    feeding = {s for m in inside for s in graph.nodes[m].inputs if s is not None}
    return _ordered(graph, feeding - inside)


def outputs_of(graph: Graph, members: Iterable[str]) -> list[str]:
    """The members used outside the group, or by nothing at all, in node order."""
    inside = set(members)
    out = set()
    for m in inside:
        consumers = graph.consumers(m)
        if not consumers or any(c not in inside for c in consumers):
            out.add(m)
    return _ordered(graph, out)


def check_group(graph: Graph, members: Sequence[str], others: Iterable[Group] = ()) -> None:
    """Refuse a group that cannot be one step: unknown or leaf members, a path that
    leaves it and comes back, or a partial overlap with another group."""
    if not members:
        raise GraphError("select at least one op node to group")
    for m in members:
        if m not in graph:
            raise GraphError(f"no node named {m!r} to group")
        if graph.nodes[m].is_leaf:
            raise GraphError("is a leaf: groups hold op nodes (their inputs stay outside)", m)
    inside = set(members)
    # A detour node lies between the members in any topological order: the walks stop
    # beyond them (a small module deep in a long model is checked in its own time).
    topo = _index(graph)[2]
    hi = max(topo[m] for m in inside)
    below = _reach(inside, lambda n: [c for c in graph.consumers(n) if topo[c] < hi])
    # every node on a path from a descendant back to a member is a descendant too
    above = _reach(
        inside, lambda n: [s for s in graph.nodes[n].inputs if s in below]
    )
    detour = _ordered(graph, (below & above) - inside)
    if detour:
        raise GraphError(
            f"a path leaves the group and comes back through {detour[0]!r}: "
            "a group must hold every node between its members"
        )
    for other in others:
        theirs = set(other.members)
        common = inside & theirs
        if common and not (inside <= theirs or theirs <= inside):
            raise GraphError(
                f"the selection partly overlaps group {other.id!r}: groups nest or stay apart"
            )
        if inside == theirs:
            raise GraphError(f"group {other.id!r} already holds exactly these nodes")


def _reach(starts: set[str], step: Callable[[str], Iterable[str]]) -> set[str]:
    """Every node one or more ``step`` moves from any of ``starts`` (one walk for all of
    them: a captured model's module holds hundreds of nodes)."""
    out: set[str] = set()
    todo = list(starts)
    while todo:
        for c in step(todo.pop()):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


# --------------------------------------------------------------------------- the local Jacobian


def _pull_back(
    graph: Graph,
    fwd: Forward,
    members: Sequence[str],
    upstream: Mapping[str, np.ndarray],
    every_input: bool = False,
) -> dict[str, np.ndarray]:
    """Gradients at the group's inputs from ``upstream`` at its outputs, through members only.

    Playback pulls back only into what requires grad, as the backward pass does; the
    Jacobian (``every_input``) also into constants, whose columns are true partials
    even though no gradient is delivered there."""
    inside = set(members)
    grads = {k: np.asarray(v, dtype=np.float64) for k, v in upstream.items()}
    sources: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for cid in reversed(fwd.order):
            if cid not in inside or cid not in grads:
                continue
            node = graph.nodes[cid]
            xs = [fwd.values[s] for s in node.inputs if s is not None]  # all: it has a value
            out = fwd.values[cid]
            for i, src in enumerate(node.inputs):
                if src is None or (not every_input and src not in fwd.requires_grad):
                    continue
                vjp = np.asarray(OPS[node.op].vjp(i, grads[cid], xs, out, node.attrs), np.float64)
                target = grads if src in inside else sources
                target[src] = vjp if src not in target else target[src] + vjp
    return sources


def local_jacobian(
    graph: Graph,
    fwd: Forward,
    group: Group,
    limit: int = JACOBIAN_LIMIT,
    outputs: Sequence[str] | None = None,
) -> np.ndarray | None:
    """``∂(outputs)/∂(inputs)`` of the group: rows are the outputs' elements side by side,
    columns the inputs' elements (node order, row-major); None above ``limit`` entries.

    ``outputs`` defaults to :func:`outputs_of`; a group step passes its own (which adds
    the backward's output when the group holds it). Columns of inputs that carry no
    gradient (see :func:`no_grad_inputs`) hold their true partials, never a false 0.
    None too for a captured PyTorch module (its members have no op record to pull back
    through: :func:`step_jacobian` pulls back through its steps)."""
    if any(graph.nodes[m].op == CAPTURED_OP for m in group.members):
        return None
    ins = inputs_of(graph, group.members)
    outs = list(outputs) if outputs is not None else outputs_of(graph, group.members)
    for n in ins + outs:
        if n not in fwd.values:
            raise GraphError("has no value: the group's Jacobian needs every value", n)
    in_sizes = [int(fwd.values[n].size) for n in ins]
    out_sizes = [int(fwd.values[n].size) for n in outs]
    m, k = sum(out_sizes), sum(in_sizes)
    if m * k > limit:
        return None
    jac = np.zeros((m, k))
    row = 0
    for o, size in zip(outs, out_sizes, strict=True):
        shape = fwd.values[o].shape
        for r in range(size):
            basis = np.zeros(size)
            basis[r] = 1.0
            got = _pull_back(graph, fwd, group.members, {o: basis.reshape(shape)}, True)
            col = 0
            for x, width in zip(ins, in_sizes, strict=True):
                if x in got:
                    jac[row, col : col + width] = got[x].ravel()
                col += width
            row += 1
    return jac


def no_grad_inputs(graph: Graph, fwd: Forward, group: Group) -> list[str]:
    """The group's inputs that do not require grad (constants, frozen leaves): their
    Jacobian columns are real partials, but no gradient flows into them."""
    return [x for x in inputs_of(graph, group.members) if x not in fwd.requires_grad]


# --------------------------------------------------------------------------- playback


@dataclass
class GroupStep:
    """A collapsed group played as one step: ``upstream`` at its outputs, times its
    local Jacobian, gives ``vjps`` at its inputs; ``before``/``accumulated`` per input."""

    group: Group
    inputs: list[str]
    outputs: list[str]
    upstream: dict[str, np.ndarray]
    vjps: dict[str, np.ndarray]
    before: dict[str, np.ndarray | None] = field(default_factory=dict)
    accumulated: dict[str, np.ndarray] = field(default_factory=dict)
    #: How many of the trace's edge steps this one step stands for.
    edges: int = 0
    #: Those steps, in the order they ran (a captured module's Jacobian pulls back
    #: through their contexts: its members have no op record).
    inner: list[Step] = field(default_factory=list)


def step_jacobian(
    graph: Graph, fwd: Forward, step: GroupStep, limit: int = JACOBIAN_LIMIT
) -> np.ndarray | None:
    """The group step's ``∂(outputs)/∂(inputs)`` (see :func:`local_jacobian`); for a
    captured module, each row an output basis vector pulled back through the module's
    own steps (PyTorch's VJPs, or the Jacobians a trace file kept), so that
    ``upstream · J`` is the module's outgoing vjp. None above ``limit`` entries (never
    built then), or when a loaded step kept no Jacobian to pull back through."""
    if not any(graph.nodes[m].op == CAPTURED_OP for m in step.group.members):
        return local_jacobian(graph, fwd, step.group, limit, step.outputs)
    out_shapes = [_shape_of(fwd, step.upstream, o) for o in step.outputs]
    in_shapes = [_shape_of(fwd, step.vjps, x) for x in step.inputs]
    if any(s is None for s in out_shapes + in_shapes):
        return None
    m = sum(int(np.prod(s)) for s in out_shapes if s is not None)
    k = sum(int(np.prod(s)) for s in in_shapes if s is not None)
    if m * k > limit:
        return None
    inside = set(step.group.members)
    rows = []
    try:
        with np.errstate(all="ignore"):
            for o, shape in zip(step.outputs, out_shapes, strict=True):
                assert shape is not None
                for r in range(int(np.prod(shape))):
                    basis = np.zeros(int(np.prod(shape)))
                    basis[r] = 1.0
                    grads = {o: basis.reshape(shape)}
                    got: dict[str, np.ndarray] = {}
                    for s in step.inner:
                        if s.consumer in grads:
                            v = np.asarray(s.context.pullback(s.operand_index, grads[s.consumer]))
                            _add(grads if s.operand in inside else got, s.operand, v)
                    pairs = zip(step.inputs, in_shapes, strict=True)
                    rows.append(np.concatenate(
                        [np.ravel(got[x]) if x in got else np.zeros(int(np.prod(sh or ())))
                         for x, sh in pairs]))
    except ValueError:  # a loaded step without its Jacobian
        return None
    return np.array(rows).reshape(m, k)


def _shape_of(
    fwd: Forward, arrays: Mapping[str, np.ndarray], nid: str
) -> tuple[int, ...] | None:
    """A node's shape, from the gradient the step holds for it or its forward value."""
    if nid in arrays:
        return tuple(np.shape(arrays[nid]))
    return tuple(fwd.values[nid].shape) if nid in fwd.values else None


PlayStep = Step | GroupStep


def collapsed_roots(groups: Iterable[Group]) -> list[Group]:
    """The collapsed groups not inside another collapsed group (these play as one step)."""
    collapsed = [(g, frozenset(g.members)) for g in groups if g.collapsed]
    # Groups nest or stay apart: one holding a member of g holds all of g.
    holder: dict[str, list[int]] = {}
    for i, (_g, mine) in enumerate(collapsed):
        for m in mine:
            holder.setdefault(m, []).append(i)
    roots = []
    for i, (g, mine) in enumerate(collapsed):
        first = next(iter(mine), None)
        others = holder.get(first, []) if first is not None else []
        if any(j != i and mine < collapsed[j][1] for j in others):
            continue
        roots.append(g)
    return roots


def _owners(outs: list[list[str]]) -> dict[str, list[int]]:
    """Node -> the groups (by index) it is an output of."""
    owners: dict[str, list[int]] = {}
    for k, names in enumerate(outs):
        for o in names:
            owners.setdefault(o, []).append(k)
    return owners


def playback_steps(graph: Graph, trace: Trace, groups: Iterable[Group]) -> list[PlayStep]:
    """The trace's steps with each outermost collapsed group replaced by one step.

    The group's step goes where its members' first step was, or after the last step
    that feeds one of its outputs from outside (an edge, or another group's step) if
    that comes later; the gradients it delivers are its members' own steps' sums. One
    pass over the steps for all the groups: a captured model has a thousand.
    """
    steps = trace.steps
    roots = collapsed_roots(groups)
    root_of = {m: k for k, g in enumerate(roots) for m in g.members}
    outs = [_step_outputs(graph, trace, set(g.members)) for g in roots]
    owners = _owners(outs)  # node -> the groups it is an output of
    first: dict[int, int] = {}
    fed: dict[int, int] = {}  # group -> the last edge step feeding one of its outputs
    edges = [0] * len(roots)
    inner: list[list[Step]] = [[] for _ in roots]
    sent: list[dict[str, np.ndarray]] = [{} for _ in roots]
    # The gradient arriving at each output from outside its group: the steps of consumers
    # outside it, plus the seed v at the backward's output. (An output's total .grad also
    # holds what other members send it, which the group's Jacobian already accounts for:
    # using the total would count that path twice.)
    arriving: list[dict[str, np.ndarray]] = [{} for _ in roots]
    for j in owners.get(trace.output, ()):
        arriving[j][trace.output] = np.asarray(trace.gradient, dtype=np.float64)
    for i, st in enumerate(steps):
        home = root_of.get(st.consumer)
        if home is not None:
            first.setdefault(home, i)
            edges[home] += 1
            inner[home].append(st)
            if root_of.get(st.operand) != home:
                _add(sent[home], st.operand, st.vjp)
        for j in owners.get(st.operand, ()):
            if j != home:
                fed[j] = i
                _add(arriving[j], st.operand, st.vjp)
    if not first:
        return list(steps)
    at = {k: max(i, fed.get(k, -1) + 1) for k, i in first.items()}
    made: dict[int, GroupStep] = {}
    for k in _feeding_order(graph, roots, owners, at):
        g, names = roots[k], outs[k]
        ins = inputs_of(graph, g.members)
        upstream = arriving[k]
        vjps = {x: sent[k][x] for x in ins if x in sent[k]}
        made[k] = GroupStep(g, ins, names, upstream, vjps, edges=edges[k], inner=inner[k])
        for x in ins:  # a group fed by this one's step plays after it
            for j in owners.get(x, ()):
                if j in at and j != k:
                    at[j] = max(at[j], at[k])
    placed: dict[int, list[GroupStep]] = {}
    for k, step in made.items():  # in feeding order: ties keep it
        placed.setdefault(min(at[k], len(steps)), []).append(step)
    rebuilt: list[PlayStep] = []
    for i, st in enumerate(steps):
        rebuilt.extend(placed.get(i, ()))
        if st.consumer not in root_of:
            rebuilt.append(st)
    rebuilt.extend(placed.get(len(steps), ()))
    return _accumulate(rebuilt, trace)


def _add(sums: dict[str, np.ndarray], node: str, vjp: np.ndarray) -> None:
    """Add ``vjp`` into ``sums[node]`` (a new array: the steps keep theirs)."""
    sums[node] = vjp if node not in sums else sums[node] + vjp


def _step_outputs(graph: Graph, trace: Trace, inside: set[str]) -> list[str]:
    """A group step's outputs: the group's, plus the backward's output when the group
    holds it (its seed enters there even if another member uses it)."""
    outs = set(outputs_of(graph, inside))
    if trace.output in inside:
        outs.add(trace.output)
    return _ordered(graph, outs)


def _feeding_order(
    graph: Graph, roots: list[Group], owners: dict[str, list[int]], at: dict[int, int]
) -> list[int]:
    """The groups with a step to play, each after every group whose step feeds one of
    its outputs (gradients run from the output back: a downstream group goes first)."""
    feeds: dict[int, set[int]] = {k: set() for k in at}
    for k in at:
        for x in inputs_of(graph, roots[k].members):
            for j in owners.get(x, ()):
                if j in at and j != k:
                    feeds[j].add(k)  # k's step delivers into j's output x
    order: list[int] = []
    done: set[int] = set()
    for k in sorted(at, key=at.__getitem__):
        todo = [k]
        while todo:
            n = todo[-1]
            if n in done:
                todo.pop()
                continue
            waiting = [j for j in feeds[n] if j not in done and j not in todo]
            if waiting:
                todo.extend(waiting)
            else:
                done.add(n)
                order.append(n)
                todo.pop()
    return order


def _accumulate(steps: list[PlayStep], trace: Trace) -> list[PlayStep]:
    """Every step's before/accumulated in the new order (a group step moves sums around)."""
    held: dict[str, np.ndarray] = {}
    seen: set[str] = set()
    for first in trace.steps:  # what each node held before its first step (earlier .grad)
        if first.operand not in seen:
            seen.add(first.operand)
            if first.before is not None:
                held[first.operand] = first.before
    out: list[PlayStep] = []
    for s in steps:
        if isinstance(s, Step):
            before = held.get(s.operand)
            held[s.operand] = s.vjp if before is None else before + s.vjp
            out.append(s.with_sums(before, held[s.operand]))
            continue
        for x, v in s.vjps.items():
            s.before[x] = held.get(x)
            held[x] = v if held.get(x) is None else held[x] + v
            s.accumulated[x] = held[x]
        out.append(s)
    return out


def delivered(steps: Sequence[PlayStep]) -> dict[str, np.ndarray]:
    """What the steps have delivered into each node by the end (its gradient)."""
    out: dict[str, np.ndarray] = {}
    for s in steps:
        if isinstance(s, Step):
            out[s.operand] = s.accumulated
        else:
            out.update(s.accumulated)
    return out


# --------------------------------------------------------------------------- files


def groups_from_json(value: Any, graph: Graph) -> list[Group]:
    """The file's ``"groups"`` list, checked; errors are one line naming the group."""
    if not isinstance(value, list):
        raise GraphError('"groups" must be a list of groups')
    out: list[Group] = []
    seen: set[str] = set()
    for entry in value:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or not entry["id"]:
            raise GraphError('each group needs an "id" (a non-empty string)')
        gid = entry["id"]
        problem = id_problem(gid)  # shown on the frame and in the write-ups, as a node id is
        if problem is not None:
            raise GraphError(f"group {gid!r}: {problem}")
        if gid in seen:
            raise GraphError(f"group {gid!r}: this id is used twice")
        seen.add(gid)
        members = entry.get("members")
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise GraphError(f'group {gid!r}: "members" must be a list of node ids')
        title, collapsed = entry.get("title", ""), entry.get("collapsed", True)
        if not isinstance(title, str) or not isinstance(collapsed, bool):
            raise GraphError(f'group {gid!r}: "title" is a string and "collapsed" true or false')
        try:
            check_group(graph, members, out)
        except GraphError as exc:
            raise GraphError(f"group {gid!r}: {exc}") from None
        out.append(Group(gid, list(members), title, collapsed))
    return out


def groups_to_json(groups: Iterable[Group]) -> list[dict[str, Any]]:
    return [g.to_json() for g in groups]
