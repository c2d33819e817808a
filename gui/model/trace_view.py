"""What the trace viewer shows of a captured backward pass: grouped boxes, their
places, and the steps to play, as plain data (no Qt).

A real model has thousands of autograd nodes; the viewer groups them by the
``nn.Module`` they belong to (``layers.0``, ``attn``, ...). A collapsed group is one
box; its inner steps play as one summarised step (the gradient coming in, the
gradients leaving), and expanding it brings its nodes and their steps back. The
frame is a function of (view, k), as in the graph player: stepping back is indexing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.captured import CapturedTrace
from engine.trace import Step

GROUP = "group:"  # item ids of collapsed groups: "group:layers.0"


@dataclass(frozen=True, slots=True)
class Item:
    """One box: a node, or a collapsed group of nodes (``members``, forward order)."""

    id: str
    title: str
    subtitle: str
    members: tuple[str, ...]
    x: float = 0.0
    y: float = 0.0

    @property
    def is_group(self) -> bool:
        return self.id.startswith(GROUP)


@dataclass(frozen=True, slots=True)
class ShownStep:
    """One step of playback: ``steps[first:last]`` of the trace, between two boxes.

    A single edge has one step; a collapsed group's inner run has several, and
    ``source == target`` (the group itself).
    """

    first: int
    last: int
    source: str
    target: str

    @property
    def summarised(self) -> bool:
        return self.last - self.first > 1 or self.source == self.target


@dataclass
class TraceView:
    """The trace, which groups are expanded, and what follows from that."""

    trace: CapturedTrace
    expanded: set[str] = field(default_factory=set)
    items: dict[str, Item] = field(default_factory=dict)
    item_of: dict[str, str] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)
    shown: list[ShownStep] = field(default_factory=list)

    #: Box spacing in scene units.
    COLUMN = 210.0
    ROW = 80.0

    def __post_init__(self) -> None:
        self.rebuild()

    def groups(self) -> list[str]:
        return self.trace.modules()

    def toggle(self, item_id: str) -> bool:
        """Expand a collapsed group, or collapse the group a node belongs to."""
        if item_id.startswith(GROUP):
            self.expanded.add(item_id[len(GROUP) :])
        else:
            module = self.trace.nodes[item_id].module if item_id in self.trace.nodes else ""
            if module not in self.expanded:
                return False
            self.expanded.discard(module)
        self.rebuild()
        return True

    def rebuild(self) -> None:
        """Boxes, their places (columns by depth from the leaves), edges and playback."""
        nodes = self.trace.nodes
        members: dict[str, list[str]] = {}
        for nid, info in nodes.items():
            key = GROUP + info.module if info.module and info.module not in self.expanded else nid
            members.setdefault(key, []).append(nid)
        self.item_of = {nid: key for key, ms in members.items() for nid in ms}
        depth: dict[str, int] = {}
        edges: dict[tuple[str, str], None] = {}
        for nid, info in nodes.items():  # forward order: operands first
            me = self.item_of[nid]
            d = depth.get(me, 0)
            for pair in info.inputs:
                if pair is None:
                    continue
                src = self.item_of[pair[0]]
                if src != me:
                    edges[(src, me)] = None
                    d = max(d, depth.get(src, 0) + 1)
            depth[me] = d
        boundary = self._boundary()
        rows: dict[int, int] = {}
        self.items = {}
        for key, ms in members.items():
            col = depth[key]
            row = rows.get(col, 0)
            rows[col] = row + 1
            if key.startswith(GROUP):
                title = key[len(GROUP) :]
                sub = f"{len(ms)} nodes\n{boundary.get(key, 'no gradient crosses it')}"
            else:
                info = nodes[key]
                title = key
                sub = info.kind if info.kind != "AccumulateGrad" else "leaf"
            self.items[key] = Item(key, title, sub, tuple(ms), col * self.COLUMN, row * self.ROW)
        self.edges = list(edges)
        self.shown = self._playback()

    def _boundary(self) -> dict[str, str]:
        """Each collapsed group's gradients in and out, by shape: what arrives at its
        nodes from outside and what its nodes send out."""
        ins: dict[str, dict[tuple[int, ...], None]] = {}
        outs: dict[str, dict[tuple[int, ...], None]] = {}
        for s in self.trace.steps:
            src, dst = self.item_of[s.consumer], self.item_of[s.operand]
            if src != dst:
                ins.setdefault(dst, {})[s.vjp.shape] = None
                outs.setdefault(src, {})[s.vjp.shape] = None
        output = self.item_of[self.trace.output]
        ins.setdefault(output, {})[self.trace.gradient.shape] = None
        return {
            key: f"∇in {_shapes(ins.get(key))} ∇out {_shapes(outs.get(key))}"
            for key in set(ins) | set(outs)
            if key.startswith(GROUP)
        }

    def _playback(self) -> list[ShownStep]:
        """The trace's steps in PyTorch's order; consecutive steps inside one collapsed
        group become one summarised step."""
        shown: list[ShownStep] = []
        item_of = self.item_of
        for k, s in enumerate(self.trace.steps):
            src, dst = item_of[s.consumer], item_of[s.operand]
            inside = src == dst
            if inside and shown:
                last = shown[-1]
                if last.source == last.target == src and last.last == k:
                    shown[-1] = ShownStep(last.first, k + 1, src, src)
                    continue
            shown.append(ShownStep(k, k + 1, src, dst))
        return shown

    def steps_of(self, k: int) -> list[Step]:
        s = self.shown[k]
        return self.trace.steps[s.first : s.last]

    def received(self, k: int) -> set[str]:
        """Boxes that hold a gradient once shown step ``k`` has run (k = -1: only the output)."""
        got = {self.item_of[self.trace.output]}
        if k >= 0:
            last = self.shown[k].last
            got.update(self.item_of[s.operand] for s in self.trace.steps[:last])
        return got

    def step_at(self, trace_step: int) -> int:
        """The shown step that holds the trace's step ``trace_step``."""
        lo, hi = 0, len(self.shown) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if self.shown[mid].last <= trace_step:
                lo = mid + 1
            else:
                hi = mid
        return lo


def describe(view: TraceView, k: int) -> str:
    """The step panel's text (plain): the edge, or the summary of a group's inner run."""
    s = view.shown[k]
    steps = view.steps_of(k)
    head = f"Step {k + 1} of {len(view.shown)}"
    if s.summarised:
        group = view.items[s.source].title
        first, last = steps[0], steps[-1]
        inner = ", ".join(f"{x.consumer} → {x.operand}" for x in steps[:6])
        more = f", … ({len(steps) - 6} more)" if len(steps) > 6 else ""
        return (
            f"{head}: inside {group}, {len(steps)} step{'s' if len(steps) > 1 else ''} "
            "(double-click the box to expand)\n"
            f"gradient in:  {_brief(first.upstream)}\n"
            f"gradient out: {_brief(last.accumulated)} into {last.operand}\n"
            f"steps: {inner}{more}"
        )
    (step,) = steps
    jac = step.jacobian()
    lines = [
        f"{head}: {step.consumer} → {step.operand} (operand {step.operand_index})",
        f"upstream {_brief(step.upstream)}",
        f"J: {_brief(jac) if jac is not None else step.structure()}",
        f"vjp = upstream · J = {_brief(step.vjp)}",
    ]
    if step.before is None:
        lines.append(f"{step.operand}.grad = {_brief(step.accumulated)}")
    else:
        lines.append(f"{step.operand}.grad += vjp → {_brief(step.accumulated)}")
    return "\n".join(lines)


def _shapes(shapes: dict[tuple[int, ...], None] | None) -> str:
    if not shapes:
        return "-"
    text = " ".join(str(list(s)) for s in list(shapes)[:2])
    return text + (" …" if len(shapes) > 2 else "")


def _brief(a: np.ndarray) -> str:
    """A tensor in one short line: small ones in full, big ones by shape and a few values."""
    a = np.asarray(a)
    if a.size <= 8:
        text = np.array2string(
            a.ravel() if a.ndim > 1 else a, precision=4, separator=", ", max_line_width=10**6
        )
        return text if a.ndim <= 1 else f"{text} (shape {a.shape})"
    head = ", ".join(f"{v:.4g}" for v in a.ravel()[:4])
    return f"shape {tuple(a.shape)}: [{head}, …] (|max| {np.abs(a).max():.4g})"
