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

import numpy as np

from .autodiff import Forward
from .errors import GraphError
from .graph import CAPTURED_OP, Graph
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


def _ordered(graph: Graph, ids: Iterable[str]) -> list[str]:
    """``ids`` in the graph's own node order (the file's order), so results are stable."""
    wanted = set(ids)
    return [n for n in graph.nodes if n in wanted]


def inputs_of(graph: Graph, members: Iterable[str]) -> list[str]:
    """The nodes outside the group that feed a member, in node order."""
    inside = set(members)
    feeding = {s for m in inside for s in graph.nodes[m].inputs if s is not None}
    return _ordered(graph, feeding - inside)


def outputs_of(graph: Graph, members: Iterable[str]) -> list[str]:
    """The members used outside the group, or by nothing at all, in node order."""
    inside = set(members)
    used_outside: set[str] = set()
    used: set[str] = set()
    for nid, node in graph.nodes.items():
        for s in node.inputs:
            if s in inside:
                used.add(s)
                if nid not in inside:
                    used_outside.add(s)
    return _ordered(graph, used_outside | (inside - used))


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
    below = _reach(inside, graph.consumers)
    above = _reach(inside, lambda n: [s for s in graph.nodes[n].inputs if s is not None])
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
    graph: Graph, fwd: Forward, members: Sequence[str], upstream: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Gradients at the group's inputs from ``upstream`` at its outputs, through members only."""
    inside = set(members)
    grads = {k: np.asarray(v, dtype=np.float64) for k, v in upstream.items()}
    sources: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for cid in reversed(fwd.order):
            if cid not in inside or cid not in grads:
                continue
            node = graph.nodes[cid]
            xs = [fwd.values[s] for s in node.inputs]
            out = fwd.values[cid]
            for i, src in enumerate(node.inputs):
                if src not in fwd.requires_grad:
                    continue
                vjp = np.asarray(OPS[node.op].vjp(i, grads[cid], xs, out, node.attrs), np.float64)
                target = grads if src in inside else sources
                target[src] = vjp if src not in target else target[src] + vjp
    return sources


def local_jacobian(
    graph: Graph, fwd: Forward, group: Group, limit: int = JACOBIAN_LIMIT
) -> np.ndarray | None:
    """``∂(outputs)/∂(inputs)`` of the group: rows are the outputs' elements side by side,
    columns the inputs' elements (node order, row-major); None above ``limit`` entries,
    or for a captured PyTorch module (its members have no op record to pull back through)."""
    if any(graph.nodes[m].op == CAPTURED_OP for m in group.members):
        return None
    ins, outs = inputs_of(graph, group.members), outputs_of(graph, group.members)
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
            got = _pull_back(graph, fwd, group.members, {o: basis.reshape(shape)})
            col = 0
            for x, n in zip(ins, in_sizes, strict=True):
                if x in got:
                    jac[row, col : col + n] = got[x].ravel()
                col += n
            row += 1
    return jac


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


PlayStep = Step | GroupStep


def collapsed_roots(groups: Iterable[Group]) -> list[Group]:
    """The collapsed groups not inside another collapsed group (these play as one step)."""
    groups = list(groups)
    roots = []
    for g in groups:
        if not g.collapsed:
            continue
        mine = set(g.members)
        if any(o is not g and o.collapsed and mine < set(o.members) for o in groups):
            continue
        roots.append(g)
    return roots


def playback_steps(graph: Graph, trace: Trace, groups: Iterable[Group]) -> list[PlayStep]:
    """The trace's steps with each outermost collapsed group replaced by one step.

    The group's step goes where its members' first step was, or after the last step
    that feeds one of its outputs from outside if that comes later; the leaf
    gradients it delivers are the same sums the expanded steps would make.
    """
    steps: list[PlayStep] = list(trace.steps)
    for g in collapsed_roots(groups):
        inside = set(g.members)
        ins, outs = inputs_of(graph, inside), outputs_of(graph, inside)
        dropped = [i for i, s in enumerate(steps) if isinstance(s, Step) and s.consumer in inside]
        if not dropped:
            continue  # no gradient flows through this group
        feeding = [i for i, s in enumerate(steps) if _feeds(s, set(outs), inside)]
        at = max(dropped[0], feeding[-1] + 1 if feeding else 0)
        upstream = {o: trace.grads[o] for o in outs if trace.grads.get(o) is not None}
        vjps = _sent_out(trace.steps, inside)
        step = GroupStep(g, ins, outs, upstream, {x: vjps[x] for x in ins if x in vjps})
        step.edges = sum(1 for s in trace.steps if s.consumer in inside)
        skip = set(dropped)
        rebuilt: list[PlayStep] = []
        for i, s in enumerate(steps):
            if i == at:
                rebuilt.append(step)
            if i not in skip:
                rebuilt.append(s)
        if at >= len(steps):
            rebuilt.append(step)
        steps = rebuilt
    return _accumulate(steps, trace) if len(steps) != len(trace.steps) else steps


def _sent_out(steps: Iterable[Step], inside: set[str]) -> dict[str, np.ndarray]:
    """What the members' own steps send to nodes outside the group, summed in step order:
    the group's vjps, from the very steps it stands for (an engine pass or a captured one)."""
    out: dict[str, np.ndarray] = {}
    for s in steps:
        if s.consumer in inside and s.operand not in inside:
            out[s.operand] = s.vjp if s.operand not in out else out[s.operand] + s.vjp
    return out


def _feeds(step: PlayStep, outs: set[str], inside: set[str]) -> bool:
    """Does ``step`` deliver a gradient into one of a group's outputs from outside it?"""
    if isinstance(step, Step):
        return step.operand in outs and step.consumer not in inside
    return bool(set(step.inputs) & outs)


def _accumulate(steps: list[PlayStep], trace: Trace) -> list[PlayStep]:
    """Every step's before/accumulated in the new order (a group step moves sums around)."""
    held: dict[str, np.ndarray] = {}
    seen: set[str] = set()
    for s in trace.steps:  # what each node held before its first step (earlier .grad)
        if s.operand not in seen:
            seen.add(s.operand)
            if s.before is not None:
                held[s.operand] = s.before
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
