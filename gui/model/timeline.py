"""Frame = f(results, position): what the canvas and panels show at one point of playback.

Pure Python (no Qt), so stepping back, seeking, exporting a frame headless and
testing "the label at step k says J = [1, 0, 0]ᵀ" all call the same function.

The timeline has ``len(forward order) + len(trace) + 1`` positions:

- 0: forward not run (no values shown);
- 1..F: the forward pass, values appearing node by node (F: forward done);
- F + k for k in 1..n: backward step k of n has just been applied (F + n: backward done).

In the forward direction (forward mode, :class:`Direction`) the steps after F are a
forward-mode pass's edges instead (:class:`engine.forward_mode.ForwardStep`, ``J·t``
into the consumer) and ``Frame.grads`` holds every node's tangent so far: the same
positions, frames and views, another producer of steps.

Building a frame costs O(1): its values, gradients and finished edges are views
onto indexes the timeline builds once (a lookup is a binary search), not copies
of everything so far, so playing a trace of n steps is O(n), not O(n²).
:meth:`Timeline.changes` says which nodes and edges differ between two frames,
so a view redraws only those.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from engine.errors import visible
from engine.forward_mode import ForwardStep, ForwardTrace
from engine.graph import Graph
from engine.groups import Group, GroupStep, PlayStep, playback_steps
from engine.trace import Step, fan_ins

from .formatting import count
from .results import Results

EdgeKey = tuple[str, str, int]  # (operand, consumer, operand index)


class Phase(Enum):
    NO_FORWARD = "forward not run"
    FORWARD = "forward"
    FORWARD_DONE = "forward done"
    BACKWARD = "backward"
    BACKWARD_DONE = "backward done"
    TANGENT = "forward mode"
    TANGENT_DONE = "forward mode done"


class Direction(Enum):
    """What the steps after the forward pass are: reverse mode (vᵀJ, outputs to
    inputs) or forward mode (J·t, inputs to outputs)."""

    REVERSE = "reverse"
    FORWARD = "forward"


#: Any step a timeline plays.
AnyStep = PlayStep | ForwardStep


@dataclass(frozen=True)
class Frame:
    """Everything a view needs to draw one moment; views compute nothing themselves."""

    position: int
    length: int  # number of positions (the last is length - 1)
    phase: Phase
    status: str  # the state in words, as the player's toolbar and exports show it
    k: int  # backward steps applied
    n: int  # backward steps in all
    shown_values: AbstractSet[str]
    grads: Mapping[str, np.ndarray] = field(default_factory=dict)
    active: Step | None = None  # the step applied last (highlighted), if in backward
    done_edges: AbstractSet[EdgeKey] = frozenset()
    fan_in: Mapping[str, int] = field(default_factory=dict)
    #: Quiz mode: quantities of the active step (or forward node) still to be predicted
    #: ("jacobian", "vjp", "accumulated", "forward"; gui.model.quiz.Hidden values) and
    #: the question asked. Views show "?" for those and the question instead of the numbers.
    hidden: frozenset[str] = frozenset()
    question: str = ""
    timeline: Timeline | None = field(default=None, compare=False, repr=False)
    #: A collapsed group played as one step (``active`` is None then).
    active_group: GroupStep | None = None
    #: Forward direction: the forward-mode step applied last (``grads`` are tangents then).
    tangent_step: ForwardStep | None = None

    @property
    def edge_step(self) -> Step | ForwardStep | None:
        """The step on the highlighted edge, in either direction."""
        return self.active if self.active is not None else self.tangent_step

    @property
    def active_edge(self) -> EdgeKey | None:
        s = self.edge_step
        return None if s is None else (s.operand, s.consumer, s.operand_index)


class _Prefix(AbstractSet[Any]):
    """The first ``count`` items of an ordered sequence, as a set (no copy)."""

    def __init__(self, items: Sequence[Any], index: Mapping[Any, int], count: int) -> None:
        self._items, self._index, self._count = items, index, count

    def __contains__(self, item: object) -> bool:
        i = self._index.get(item)
        return i is not None and i < self._count

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items[: self._count])

    def __len__(self) -> int:
        return self._count

    @classmethod
    def _from_iterable(cls, it: Any) -> frozenset[Any]:
        return frozenset(it)


class _GradsAt(Mapping[str, np.ndarray]):
    """Every node's gradient after ``k`` backward steps, looked up on demand (no copy)."""

    def __init__(self, timeline: Timeline, k: int) -> None:
        self._tl, self._k = timeline, k

    def __getitem__(self, nid: str) -> np.ndarray:
        tl = self._tl
        updates = tl._updates.get(nid)
        if updates:
            j = bisect_right(updates, self._k - 1)
            if j:
                s = tl.steps[updates[j - 1]]
                return s.accumulated[nid] if isinstance(s, GroupStep) else s.accumulated
        return tl.start_grads[nid]

    def __iter__(self) -> Iterator[str]:
        tl = self._tl
        return iter(
            {n: None for n in tl.start_grads}
            | {n: None for s in tl.steps[: self._k] for n in _receivers(s)}
        )

    def __len__(self) -> int:
        return sum(1 for _ in self)


#: A module's step names this many of the nodes it sends gradients to in the status line.
STATUS_INPUTS = 3


def _step_words(step: AnyStep) -> str:
    if isinstance(step, Step):
        return f"{step.consumer} → {step.operand}"
    if isinstance(step, ForwardStep):
        return f"{step.operand} → {step.consumer}"
    shown = ", ".join(step.inputs[:STATUS_INPUTS])
    more = len(step.inputs) - STATUS_INPUTS
    if more > 0:  # a resnet stage sends to 18 parameters: the status stays one line
        shown += f" and {more} more"
    name = visible(step.group.title or step.group.id)  # free text: nothing reorders it
    return f"{name} ({count(step.edges, 'edge')}) → {shown}"


def _receivers(step: AnyStep) -> list[str]:
    """The nodes a step adds a gradient (or a tangent) into: its operand, a group's
    inputs, or a forward-mode step's consumer."""
    if isinstance(step, ForwardStep):
        return [step.consumer]
    return [step.operand] if isinstance(step, Step) else list(step.vjps)


def _edge_key(step: AnyStep) -> EdgeKey:
    """The edge a step crosses; a group step crosses none of the canvas's edges."""
    if not isinstance(step, GroupStep):
        return (step.operand, step.consumer, step.operand_index)
    return (step.group.id, step.group.id, -1)


class _LastOf:
    """A one-entry memo of ``build(steps)`` by the list's identity and length: the
    timeline an edit outside the output's cone builds plays the very list of steps the
    last one did (:func:`engine.autodiff.trace_after_edit` shares it), so what the steps
    say is indexed once, not again on every add (~0.3 ms at 250 steps). What it holds
    is only read (each timeline copies the steps themselves)."""

    def __init__(self, build: Callable[[Sequence[Any]], Any]) -> None:
        self._build = build
        self._key: tuple[Sequence[Any], int] | None = None
        self._value: Any = None

    def __call__(self, steps: Sequence[Any]) -> Any:
        key = self._key
        if key is None or key[0] is not steps or key[1] != len(steps):
            self._key, self._value = (steps, len(steps)), self._build(steps)
        return self._value


@dataclass(frozen=True)
class _StepIndex:
    """What a list of played steps says, for :class:`Timeline` (see there)."""

    contribution: list[int]
    senders: dict[str, list[str]]
    edge_keys: list[EdgeKey]
    edge_index: dict[EdgeKey, int]
    updates: dict[str, tuple[int, ...]]


def _build_index(steps: Sequence[AnyStep]) -> _StepIndex:
    contribution: list[int] = []
    senders: dict[str, list[str]] = {}
    for s in steps:
        if not isinstance(s, Step):
            contribution.append(0)
            continue
        sent = senders.setdefault(s.operand, [])
        sent.append(s.consumer)
        contribution.append(len(sent))
    edge_keys = [_edge_key(s) for s in steps]
    updates: dict[str, list[int]] = {}
    for i, s in enumerate(steps):
        for n in _receivers(s):
            updates.setdefault(n, []).append(i)
    # Kept as tuples of ints, which the collector leaves alone (a list per operand
    # was thousands of objects for it to scan after opening a big file).
    return _StepIndex(contribution, senders, edge_keys,
                      {key: i for i, key in enumerate(edge_keys)},
                      {n: tuple(v) for n, v in updates.items()})


def _build_befores(steps: Sequence[Step]) -> dict[str, np.ndarray]:
    """What each operand held before its first step, where it held anything (only an
    operand's first step says so)."""
    befores: dict[str, np.ndarray] = {}
    seen: set[str] = set()
    for s in steps:
        if s.operand not in seen:
            seen.add(s.operand)
            if s.before is not None:
                befores[s.operand] = s.before
    return befores


_index_of = _LastOf(_build_index)
_fan_ins = _LastOf(fan_ins)
_befores = _LastOf(_build_befores)


@dataclass(frozen=True)
class Changes:
    """What differs between two frames of one timeline: the views redraw only these."""

    nodes: frozenset[str]
    edges: frozenset[EdgeKey]


class Timeline:
    """The positions of one document's results; :meth:`frame` is pure in (results, p)."""

    def __init__(
        self,
        results: Results,
        steps: list[PlayStep] | None = None,
        tangents: ForwardTrace | None = None,
    ) -> None:
        """``steps``: the steps to play when they are not the trace's own (collapsed groups
        as one step each, from :func:`engine.groups.playback_steps`); ``tangents``: play
        this forward-mode pass instead (the forward direction)."""
        self.results = results
        fwd = results.forward
        self.forward_order = [n for n in fwd.order if n in fwd.values]
        self.tangents = tangents
        self.direction = Direction.REVERSE if tangents is None else Direction.FORWARD
        trace = results.trace if tangents is None else None
        played: Sequence[AnyStep]
        if tangents is not None:
            played = tangents.steps
        elif steps is not None:
            played = steps
        else:
            played = trace.steps if trace is not None else []
        self.steps: list[AnyStep] = [*played]
        self.fan_in: dict[str, int] = _fan_ins(trace.steps) if trace is not None else {}
        index = _index_of(played)
        # Per step: how many of its operand's contributions it completes (1-based);
        # per operand: who sends it a vjp, in order. Read by the chain-rule write-up.
        self._contribution, self._senders = index.contribution, index.senders
        self._forward_index = {n: i for i, n in enumerate(self.forward_order)}
        self._edge_keys, self._edge_index = index.edge_keys, index.edge_index
        self._updates = index.updates  # operand -> indexes of its steps
        self.start_grads: dict[str, np.ndarray] = dict(tangents.inputs) if tangents else {}
        if trace is not None:
            start = trace.grads[trace.output]
            if start is not None:  # backward seeds the output with v: always there
                self.start_grads[trace.output] = start
            for operand, before in _befores(trace.steps).items():
                if operand not in self.start_grads:
                    self.start_grads[operand] = before

    @property
    def forward_length(self) -> int:
        return len(self.forward_order)

    @property
    def length(self) -> int:
        return self.forward_length + len(self.steps) + 1

    @property
    def end(self) -> int:
        return self.length - 1

    def contribution(self, k: int) -> int:
        """Which of its operand's contributions step ``k`` (1-based) is: 1 for the first."""
        return self._contribution[k - 1]

    def senders(self, operand: str) -> list[str]:
        """The consumers that send ``operand`` a vjp, in step order."""
        return self._senders.get(operand, [])

    def update_steps(self, nid: str) -> Sequence[int]:
        """The steps (1-based k) that add into ``nid``'s gradient, in order: it is complete
        from the last one on (the gradient-flow panel fills as each parameter completes)."""
        return [i + 1 for i in self._updates.get(nid, ())]

    def position_of_step(self, k: int) -> int:
        """Timeline position after ``k`` backward steps (0: forward done)."""
        return self.forward_length + max(0, min(k, len(self.steps)))

    def _no_backward_text(self) -> str:
        error = self.results.backward_error
        return "forward done; no backward: " + (str(error) if error else "nothing to do")

    def frame(self, position: int) -> Frame:
        """The frame at ``position`` (clamped); O(1), whatever the position."""
        p = max(0, min(position, self.end))
        F, n = self.forward_length, len(self.steps)
        if self._in_forward(p):
            shown = _Prefix(self.forward_order, self._forward_index, p)
            if p == 0:
                phase, status = Phase.NO_FORWARD, "forward not run"
            elif p < F:
                phase = Phase.FORWARD
                status = f"forward: node {p} of {F} ({self.forward_order[p - 1]})"
            else:
                phase, status = Phase.FORWARD_DONE, self._no_backward_text()
            return Frame(
                p, self.length, phase, status, 0, n, shown, fan_in=self.fan_in, timeline=self
            )
        k = p - F
        mode = "backward" if self.tangents is None else "forward mode"
        if k == 0:
            phase, status = Phase.FORWARD_DONE, f"forward done; {mode} 0 of {n} steps"
        elif k < n:
            s = self.steps[k - 1]
            phase = Phase.BACKWARD if self.tangents is None else Phase.TANGENT
            status = f"{mode} step {k} of {n}: {_step_words(s)}"
        else:
            phase = Phase.BACKWARD_DONE if self.tangents is None else Phase.TANGENT_DONE
            status = f"{mode} done ({count(n, 'step')})"
        step = self.steps[k - 1] if k else None
        return Frame(
            position=p,
            length=self.length,
            phase=phase,
            status=status,
            k=k,
            n=n,
            shown_values=_Prefix(self.forward_order, self._forward_index, F),
            grads=_GradsAt(self, k),
            active=step if isinstance(step, Step) else None,
            active_group=step if isinstance(step, GroupStep) else None,
            tangent_step=step if isinstance(step, ForwardStep) else None,
            done_edges=_Prefix(self._edge_keys, self._edge_index, k),
            fan_in=self.fan_in,
            timeline=self,
        )

    def _in_forward(self, p: int) -> bool:
        F = self.forward_length
        return p < F or (p == F and self.results.trace is None and self.tangents is None)

    def changes(self, a: Frame, b: Frame) -> Changes | None:
        """The nodes and edges whose drawing differs between frames ``a`` and ``b`` of this
        timeline (or ``a`` of the timeline this one replaced, see :meth:`_after_edit`);
        None when everything may differ (another timeline, forward <-> backward)."""
        if a.timeline is not self or b.timeline is not self:
            return self._after_edit(a, b)
        fa, fb = self._in_forward(a.position), self._in_forward(b.position)
        if fa != fb:
            return None
        lo, hi = sorted((a.position, b.position))
        if fa:
            return Changes(frozenset(self.forward_order[lo:hi]), frozenset())
        F = self.forward_length
        steps = self.steps[lo - F : hi - F]
        nodes = {n for s in steps for n in _receivers(s)}
        edges = set(self._edge_keys[lo - F : hi - F])
        for f in (a, b):
            active = f.edge_step
            if active is not None:
                nodes.update((active.operand, active.consumer))
                edges.add(self._edge_keys[f.k - 1])
            if f.active_group is not None:
                nodes.update(f.active_group.inputs)
        return Changes(frozenset(nodes), frozenset(edges))


    def _after_edit(self, a: Frame, b: Frame) -> Changes | None:
        """``a`` of the timeline before an edit, ``b`` of this one after it: when the edit
        left the backward pass as it was (:meth:`Results.changed_since`) and both frames
        show every value at the same step, only the nodes the edit changed differ."""
        old = a.timeline
        if old is None or b.timeline is not self or old.tangents is not None or (
            self.tangents is not None
        ):
            return None
        changed = self.results.changed_since(old.results)
        if (
            changed is None
            or a.position < old.forward_length  # a forward frame: its values are a prefix
            or b.position < self.forward_length  # of an order the edit changed
            or (a.k, a.hidden, a.question) != (b.k, b.hidden, b.question)
            or old._edge_keys != self._edge_keys  # (collapsed groups play other steps)
        ):
            return None
        return Changes(changed, frozenset())


def timeline_of(
    graph: Graph, results: Results, groups: list[Group], tangents: ForwardTrace | None = None
) -> Timeline:
    """What plays for a document: its trace, each outermost collapsed group as one step
    (the player, every export and the CLI's ``--step K`` count the same steps); with
    ``tangents``, that forward-mode pass (the forward direction)."""
    if tangents is not None:
        return Timeline(results, tangents=tangents)
    trace = results.trace
    if trace is None or not any(g.collapsed for g in groups):
        return Timeline(results)
    return Timeline(results, playback_steps(graph, trace, groups))
