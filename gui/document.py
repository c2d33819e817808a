"""GraphDocument: the engine graph plus layout and file state, and its latest results.

Views never change the graph directly: they push a command (``gui.commands``)
onto ``undo_stack``, the command calls the methods below, and the document
recomputes and emits signals that the views repaint from. The mathematics is
all in ``engine``; this object only decides *when* to run it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack
from shiboken6 import isValid

from engine.autodiff import Forward, backward, forward, trace_after_edit
from engine.collector import collector_paused
from engine.errors import GraphError
from engine.fileformat import GraphFile
from engine.graph import Graph, Node, Removed, fresh_id
from engine.groups import Group, check_group
from engine.layout_keys import clamp, point

from .model.results import Results

if TYPE_CHECKING:
    from engine.captured import CapturedTrace
    from engine.train import TrainSpec

    from .model.train_view import TrainState

Point = tuple[float, float]


@dataclass(frozen=True)
class NodeSnapshot:
    """Everything needed to put a removed node back (for undo, cut and paste)."""

    removed: Removed
    position: Point
    extra: dict[str, Any]


@dataclass
class _Pending:
    """What a group of edits changed, announced once when the group ends."""

    structure: bool = False
    nodes: list[str] = field(default_factory=list)
    backward: bool = False
    recompute: bool = False
    #: The nodes the edits changed or reconnected (None: not known, anything may
    #: have changed); what changes with them follows from the graph (Results.changed).
    touched: set[str] | None = field(default_factory=set)


class GraphDocument(QObject):
    """One open graph. Emits ``structureChanged`` for nodes/edges added or removed,
    ``nodeChanged(id)`` for an edited node, ``positionsChanged(ids)`` for moves,
    ``backwardChanged`` for the output/v, ``resultsChanged`` after every recompute,
    and ``fileChanged`` when the path, title or modified flag changes.

    One command is one change: edits made inside :meth:`edit` (every bulk method
    and every composite command uses it) emit each signal at most once and
    recompute once, when the outermost group ends."""

    structureChanged = Signal()
    nodeChanged = Signal(str)
    positionsChanged = Signal(list)
    backwardChanged = Signal()
    resultsChanged = Signal()
    fileChanged = Signal()
    groupsChanged = Signal()
    trainChanged = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.graph = Graph()
        self.positions: dict[str, Point] = {}
        self.node_extra: dict[str, dict[str, Any]] = {}
        self.output: str | None = None
        self.gradient: np.ndarray | None = None
        self.title = ""
        self.description = ""
        self.extra: dict[str, Any] = {}
        self.path: Path | None = None
        self.prior_grads: dict[str, np.ndarray] = {}  # .grad from earlier calls
        self.groups: list[Group] = []  # engine.groups; edited by gui.group_commands
        #: A captured PyTorch pass, shown read-only: its results are the trace, never rerun.
        self.captured: tuple[CapturedTrace, Forward] | None = None
        self.train: TrainSpec | None = None  # engine.train; edited by gui.train_commands
        self.train_state: TrainState | None = None  # the run so far (gui.model.train_view)
        self._depth = 0
        self._pending = _Pending()
        self.recompute_count = 0  # how often the engine ran (one per command)
        self.results = Results(forward(self.graph))
        #: The graph the last results were computed on (None: a captured pass), so an
        #: edit that names what it touched recomputes only that (:meth:`_reach`).
        self._computed_on: Graph | None = None
        self.recompute()

    def __del__(self) -> None:
        """Delete the undo history while every command is whole, before the collector
        takes a discarded document apart (a closed window's, a test's).

        The document, its stack and the commands (each holds the document) are one
        reference cycle. shiboken6 6.11 clears a pushed command's wrapper by handing
        the C++ command back to Python, which deletes it while the stack still lists
        it; the stack's destructor then deleted it again (a segfault in
        ``QUndoStack::clear``, whenever the collector reached two commands before
        their document). Finalizers run before the collector clears anything, and on
        plain release too: emptied here, the stack deletes each command once, and its
        signals are blocked so no view hears about it mid-collection."""
        stack = self.__dict__.get("undo_stack")
        if stack is not None and isValid(stack):
            stack.blockSignals(True)
            stack.clear()

    # ------------------------------------------------------------------ file state

    @property
    def modified(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def display_name(self) -> str:
        return self.path.name if self.path else "Untitled"

    def _clean_changed(self, _clean: bool) -> None:
        self.fileChanged.emit()

    def load(self, gf: GraphFile, path: Path | None) -> None:
        """Replace the whole document with a loaded file (not an undoable edit)."""
        # Everything that could fail comes before the first change (the loader has
        # checked the positions already): a refused file leaves the document as it was.
        node_extra = {k: dict(v) for k, v in gf.node_extra.items()}
        positions = {
            nid: point(extra.pop("position"), "position")
            for nid, extra in node_extra.items()
            if "position" in extra
        }
        self._replace(gf.graph, positions, gf.output, gf.gradient, list(gf.groups), path)
        self.node_extra = node_extra
        self.title, self.description = gf.title, gf.description
        self.extra = dict(gf.extra)
        self.train = gf.train
        self._announce_load()

    def load_trace(self, trace: CapturedTrace, path: Path | None) -> None:
        """Show a captured PyTorch pass, read-only: its modules are collapsed groups."""
        from engine.captured import as_graph  # loaded with the trace, not at start-up

        shown = as_graph(trace)
        self._replace(shown.graph, {}, trace.output, trace.gradient, shown.groups, path)
        self.captured = (trace, shown.forward)
        self._announce_load()

    @property
    def read_only(self) -> bool:
        """A captured trace: nothing edits it (the engine did not compute it)."""
        return self.captured is not None

    def _replace(
        self,
        graph: Graph,
        positions: dict[str, Point],
        output: str | None,
        gradient: np.ndarray | None,
        groups: list[Group],
        path: Path | None,
    ) -> None:
        self.undo_stack.clear()
        self.graph, self.positions, self.groups, self.path = graph, positions, groups, path
        self.output, self.gradient = output, gradient
        self.node_extra, self.title, self.description, self.extra = {}, "", "", {}
        self.prior_grads = {}
        self.captured = None
        self.train, self.train_state = None, None

    def _announce_load(self) -> None:
        self.undo_stack.setClean()
        self.fileChanged.emit()
        self._pending.structure = self._pending.backward = True
        self.recompute()
        self.groupsChanged.emit()
        self.trainChanged.emit()

    def to_file(self) -> GraphFile:
        """The document as a v1 graph file, node positions included."""
        node_extra = {nid: dict(self.node_extra.get(nid, {})) for nid in self.graph.nodes}
        for nid, (x, y) in self.positions.items():
            if nid in node_extra:  # within what the loader accepts, so the file reopens
                node_extra[nid]["position"] = [round(clamp(x), 2), round(clamp(y), 2)]
        return GraphFile(
            graph=self.graph,
            output=self.output,
            gradient=self.gradient,
            title=self.title,
            description=self.description,
            extra=dict(self.extra),
            node_extra=node_extra,
            groups=self.live_groups(),
            train=self.train,
        )

    def set_groups(self, groups: list[Group]) -> None:
        """Replace the groups (group commands only)."""
        self.groups = groups
        self.groupsChanged.emit()

    def set_train(self, spec: TrainSpec | None) -> None:
        """Replace the train block (train commands only); no maths depends on it."""
        self.train = spec
        self.trainChanged.emit()

    def set_training(self, values: dict[str, np.ndarray], state: TrainState | None) -> None:
        """A training step (or its undo, or Reset): the parameters' values and the run's
        state, as one change."""
        with self.edit():  # the state first: views redrawn for the new results read it
            self.train_state = state
            for nid, value in values.items():
                self.set_value(nid, value)
        self.trainChanged.emit()

    def live_groups(self) -> list[Group]:
        """The groups as they stand after edits: deleted members dropped, and a group
        an edit broke (emptied, no longer convex, overlapping) left out."""
        if self.read_only:  # nothing edits a captured graph: its modules were checked
            return [Group(g.id, list(g.members), g.title, g.collapsed) for g in self.groups]
        out: list[Group] = []
        for g in self.groups:
            members = [m for m in g.members if m in self.graph.nodes]
            try:
                check_group(self.graph, members, out)
            except GraphError:
                continue
            out.append(Group(g.id, members, g.title, g.collapsed))
        return out

    def mark_saved(self, path: Path) -> None:
        self.path = path
        self.undo_stack.setClean()
        self.fileChanged.emit()

    def set_description(self, text: str) -> None:
        """The file's description (its notes); no recompute: no maths depends on it."""
        self.description = text
        self.fileChanged.emit()

    def unique_id(self, base: str, numbered: bool = False) -> str:
        """``base`` if free, else ``base2``, ``base3``, ... (names users can read);
        ``numbered``: from 1 as textbooks name variables, ``x1``, ``x2``, ..."""
        return fresh_id(f"{base}1" if numbered else base, self.graph)

    def gradient_fitting(self, output: str | None) -> np.ndarray | None:
        """The current ``v`` if it still fits ``output``'s shape, else None.

        Choosing another output keeps ``v`` only then: a ``v`` for another shape
        means nothing there.
        """
        value = self.results.forward.values.get(output) if output else None
        v = self.gradient
        if v is None or value is None or v.shape != value.shape:
            return None
        return v

    # ------------------------------------------------------------------ edits (commands only)

    def add_node(
        self,
        id: str,
        op: str,
        position: Point,
        attrs: dict[str, Any] | None = None,
        value: Any = None,
        requires_grad: bool = True,
    ) -> Node:
        node = self.graph.add_node(id, op, attrs=attrs, value=value, requires_grad=requires_grad)
        self.positions[id] = position
        self._structure_edited([id])
        return node

    def remove_node(self, id: str) -> NodeSnapshot:
        return self.remove_nodes([id])[0]

    def remove_nodes(self, ids: list[str]) -> list[NodeSnapshot]:
        """Remove several nodes as one change (one recompute, one refresh);
        :meth:`restore_nodes` of the snapshots, last first, gives back this exact graph."""
        with self.edit():
            snaps = [
                NodeSnapshot(
                    removed=removed,
                    position=self.positions.pop(removed.node.id, (0.0, 0.0)),
                    extra=self.node_extra.pop(removed.node.id, {}),
                )
                for removed in self.graph.remove_nodes(ids)
            ]
            if any(snap.removed.node.id == self.output for snap in snaps):
                self.output = None
                self._pending.backward = True
            self._structure_edited(c for snap in snaps for c, _i in snap.removed.consumers)
            return snaps

    def restore_nodes(self, snaps: list[NodeSnapshot]) -> None:
        """Put several nodes back (undo of a delete, paste, duplicate) as one change;
        an undone delete's nodes go back where they stood (node and step order)."""
        with self.edit():
            self.graph.restore_nodes(snap.removed for snap in snaps)
            for snap in snaps:
                nid = snap.removed.node.id
                self.positions[nid] = snap.position
                if snap.extra:
                    self.node_extra[nid] = dict(snap.extra)
            self._structure_edited(
                n for snap in snaps
                for n in (snap.removed.node.id, *(c for c, _i in snap.removed.consumers))
            )

    def connect_operand(self, src: str, dst: str, index: int) -> None:
        self.graph.connect(src, dst, index)
        self._structure_edited([dst])

    def disconnect_operand(self, dst: str, index: int) -> str | None:
        src = self.graph.disconnect(dst, index)
        self._structure_edited([dst])
        return src

    def rename(self, old: str, new: str) -> None:
        self.graph.rename(old, new)
        for table in (self.positions, self.node_extra):
            if old in table:
                table[new] = table.pop(old)  # type: ignore[assignment]  # each table to itself
        if self.output == old:
            self.output = new
            self._pending.backward = True
        self._structure_edited()

    def set_value(self, id: str, value: Any) -> None:
        self.graph.set_value(id, value)
        self._node_edited(id)

    def set_attrs(self, id: str, attrs: dict[str, Any]) -> None:
        self.graph.set_attrs(id, attrs)
        self._node_edited(id)

    def set_requires_grad(self, id: str, flag: bool) -> None:
        self.graph.set_requires_grad(id, flag)
        self._node_edited(id)

    def move_nodes(self, positions: dict[str, Point]) -> None:
        self.positions.update(positions)
        with collector_paused():  # moving thousands of boxes re-routes their edges
            self.positionsChanged.emit(list(positions))

    def replace_graph(
        self,
        graph: Graph,
        positions: dict[str, Point],
        output: str | None,
        gradient: np.ndarray | None,
    ) -> None:
        """Swap in a whole graph (the code dock's apply, and its undo): one change."""
        with self.edit():
            self.graph = graph
            self.positions = dict(positions)
            self.node_extra = {k: v for k, v in self.node_extra.items() if k in graph.nodes}
            self.output = output
            self.gradient = None if gradient is None else np.array(gradient, dtype=np.float64)
            self.prior_grads = {}
            self._pending.structure = self._pending.backward = True
            self.recompute()

    def set_backward(self, output: str | None, gradient: np.ndarray | None) -> None:
        self.output = output
        self.gradient = None if gradient is None else np.array(gradient, dtype=np.float64)
        self.prior_grads = {}
        self._pending.backward = True
        self.recompute()

    # ------------------------------------------------------------------ .grad accumulation

    def backward_again(self) -> None:
        """Run backward once more, adding into the leaves' ``.grad`` as PyTorch does."""
        trace = self.results.trace
        if trace is None:
            return
        self.prior_grads = trace.held_grads
        self.recompute()

    def zero_grad(self) -> None:
        self.prior_grads = {}
        self.recompute()

    # ------------------------------------------------------------------ recompute

    @contextmanager
    def edit(self) -> Iterator[None]:
        """Group edits into one change: signals and the recompute wait for the end.

        Groups nest; the outermost one announces what changed (structure, edited
        nodes, the backward choice) once each, then recomputes once.
        """
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._flush()

    def _flush(self) -> None:
        """Recompute first, then announce: views that add items for new nodes can size
        them from the new results at once (edges are routed around final sizes)."""
        pending, self._pending = self._pending, _Pending()
        with collector_paused():  # views build and drop many items: no GC passes meanwhile
            if pending.recompute:
                self._recompute_now(None if pending.backward else pending.touched)
            if pending.structure:
                self.structureChanged.emit()
            for nid in dict.fromkeys(pending.nodes):
                if nid in self.graph:
                    self.nodeChanged.emit(nid)
            if pending.backward:
                self.backwardChanged.emit()
            if pending.recompute:
                self.resultsChanged.emit()

    def recompute(self, touched: Iterable[str] | None = None) -> None:
        """Forward, then backward from the chosen output (once, at the end of a group).
        ``touched``: the only nodes the edit changed (None: not known)."""
        pending = self._pending
        pending.recompute = True
        if touched is None or pending.touched is None:
            pending.touched = None
        else:
            pending.touched.update(touched)
        if self._depth == 0:
            self._flush()

    def _recompute_now(self, touched: set[str] | None) -> None:
        """Forward, then backward from the chosen output; results replace the old ones
        (``resultsChanged`` follows once the other changes are announced)."""
        self.recompute_count += 1
        if self.captured is not None:
            trace, fwd = self.captured
            self.results = Results(fwd, trace)
            self._computed_on = None
            return
        reach = self._reach(touched)
        earlier = self.results
        if reach is None:
            fwd = forward(self.graph)
        else:
            fwd = forward(self.graph, earlier.forward, reach)
        self._computed_on = self.graph
        changed = None if reach is None or self.output in reach else frozenset(reach)
        results = Results(fwd, changed=changed, replaced=weakref.ref(earlier))
        if self.output is None:
            results.backward_error = GraphError("choose an output node to run backward from")
        elif changed is not None and earlier.trace is not None and not self.prior_grads:
            results.trace = trace_after_edit(earlier.trace, fwd)
        else:
            try:
                results.trace = backward(
                    self.graph, fwd, self.output, self.gradient, prior=self.prior_grads
                )
            except GraphError as exc:
                results.backward_error = exc
            except Exception as exc:  # an engine bug: shown like any other, never escaping
                # (it would leave a half-loaded document behind File > Open)
                text = f"backward failed inside the engine: {type(exc).__name__}: {exc}"
                results.backward_error = GraphError(text.splitlines()[0], self.output)
        self.results = results

    def _reach(self, touched: set[str] | None) -> set[str] | None:
        """What edits of ``touched`` change: those nodes and everything downstream of
        them; the rest reads as the last results say (see :attr:`Results.changed`: when
        the output is not among them, neither are its value, ``v`` or any gradient).
        None when nothing is known, or the last results are not of this graph."""
        if touched is None or self._computed_on is not self.graph:
            return None
        return self.graph.downstream(n for n in touched if n in self.graph)

    def _structure_edited(self, touched: Iterable[str] | None = None) -> None:
        self._forget_prior_grads()
        self._pending.structure = True
        self.recompute(touched)

    def _node_edited(self, id: str) -> None:
        self._forget_prior_grads()
        self._pending.nodes.append(id)
        self.recompute([id])

    def _forget_prior_grads(self) -> None:
        """An edit forgets the ``.grad`` accumulated by earlier backward calls: every
        gradient changes then, not only the edited nodes' (nothing stays as it was)."""
        if self.prior_grads:
            self._pending.touched = None
        self.prior_grads = {}
