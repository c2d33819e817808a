"""Every edit a user can make, as a QUndoCommand that calls document methods only.

Commands are checked before they are pushed (:func:`push` returns the reason
an edit is refused), so a refused edit never reaches the undo stack and the
document is never half-changed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtGui import QUndoCommand

from engine.errors import GraphError
from engine.graph import MAX_NODES, as_tensor, id_problem
from engine.ops import validate_attrs

from .document import GraphDocument, NodeSnapshot, Point
from .model.formatting import count
from .qt_override import reported, reported_or

#: Why a captured trace refuses an edit (the banner and the status bar say it).
READ_ONLY = (
    "a captured PyTorch trace is read-only: PyTorch computed it, so it cannot be edited "
    "(build or import a graph to edit)"
)


class EditCommand(QUndoCommand):
    """Base: ``check()`` raises GraphError for an edit that must be refused. Qt calls redo
    and undo, guarded here once; they run the edit's bodies, ``_do`` and ``_undo``.

    ``view_only``: the command changes how the graph is shown (places, groups), not
    the mathematics, so a read-only captured trace takes it too."""

    view_only = False

    def __init__(self, doc: GraphDocument, text: str) -> None:
        super().__init__(text)
        self.doc = doc

    def check(self) -> None:
        """Raise GraphError if this edit cannot be applied to the document as it is."""

    @reported
    def redo(self) -> None:
        self._do()

    @reported
    def undo(self) -> None:
        self._undo()

    def _do(self) -> None:
        raise NotImplementedError

    def _undo(self) -> None:
        raise NotImplementedError


class SwapEdit(EditCommand):
    """An edit between two states of one thing: redo puts ``new``, undo puts ``old``
    back, through the one document call :meth:`put` makes."""

    old: Any
    new: Any

    def put(self, state: Any) -> None:
        raise NotImplementedError

    def _do(self) -> None:
        self.put(self.new)

    def _undo(self) -> None:
        self.put(self.old)


def push(doc: GraphDocument, cmd: EditCommand) -> GraphError | None:
    """Apply ``cmd`` through the undo stack, or return why it is refused."""
    if doc.read_only and not cmd.view_only:
        return GraphError(READ_ONLY)
    try:
        cmd.check()
    except GraphError as exc:
        return exc
    doc.undo_stack.push(cmd)
    return None


def check_room(doc: GraphDocument, new: int) -> None:
    """Refuse an edit that would give the graph more nodes than a file may hold."""
    if len(doc.graph.nodes) + new > MAX_NODES:
        raise GraphError(f"a graph may have at most {MAX_NODES:,} nodes")


class Composite(EditCommand):
    """Several edits as one undo step and one change: one recompute, one refresh.

    A refused part refuses the whole (nothing is applied).
    """

    def __init__(self, doc: GraphDocument, text: str, parts: list[EditCommand]) -> None:
        super().__init__(doc, text)
        self.parts = parts

    def check(self) -> None:
        # The builders below make parts that touch distinct things, so checking each
        # against the document as it is now is enough.
        for part in self.parts:
            part.check()

    def _do(self) -> None:
        with self.doc.edit():
            for part in self.parts:
                part._do()

    def _undo(self) -> None:
        with self.doc.edit():
            for part in reversed(self.parts):
                part._undo()


def delete_selection(
    doc: GraphDocument, ids: list[str], edges: list[tuple[str, str, int]]
) -> EditCommand | None:
    """Delete nodes and edges (edges touching a deleted node go with it): one undo step.

    None when there is nothing to delete.
    """
    gone = set(ids)
    edges = [k for k in edges if k[0] not in gone and k[1] not in gone]
    parts: list[EditCommand] = [
        Disconnect(doc, dst, index) for _src, dst, index in sorted(edges, key=lambda k: -k[2])
    ]
    if ids:
        parts.append(RemoveNodes(doc, ids))
    if len(parts) <= 1:
        return parts[0] if parts else None
    words = [count(len(ids), "node")] if ids else []
    words += [count(len(edges), "edge")] if edges else []
    return Composite(doc, "Delete " + " and ".join(words), parts)


def move_edge(
    doc: GraphDocument, dst: str, index: int, target: tuple[str, str, int] | None
) -> EditCommand:
    """Unplug operand port ``index`` of ``dst`` and, when ``target`` (operand, consumer,
    index) is given, plug that link instead: one undo step."""
    if target is None:
        return Composite(doc, "Disconnect", [Disconnect(doc, dst, index)])
    # Checking the connect with the old link still there is enough: a path from the
    # target back to the operand never runs through the link being unplugged.
    return Composite(doc, "Move edge", [Disconnect(doc, dst, index), Connect(doc, *target)])


def set_output(doc: GraphDocument, nid: str) -> EditCommand:
    """Make ``nid`` the backward output, keeping ``v`` only if its shape still fits."""
    return SetBackward(doc, nid, doc.gradient_fitting(nid))


def auto_layout(
    doc: GraphDocument, layout: dict[str, Point], corner: Point
) -> EditCommand | None:
    """Move every node to ``layout`` shifted so its top-left lands on ``corner`` (where the
    graph's boxes start now): one undo step, "Auto-layout"; None if nothing moves."""
    if not layout:
        return None
    x0 = min(x for x, _ in layout.values())
    y0 = min(y for _, y in layout.values())
    new = {
        n: (float(round(x - x0 + corner[0])), float(round(y - y0 + corner[1])))
        for n, (x, y) in layout.items()
    }
    old = {n: doc.positions.get(n, (0.0, 0.0)) for n in new}
    return None if new == old else MoveNodes(doc, old, new, text="Auto-layout")


class AddNode(EditCommand):
    def __init__(
        self,
        doc: GraphDocument,
        op: str,
        position: Point,
        id: str | None = None,
        attrs: dict[str, Any] | None = None,
        value: Any = None,
        requires_grad: bool = True,
    ) -> None:
        leaf = {"input": "x", "const": "c"}.get(op)
        node = id or (doc.unique_id(leaf, numbered=True) if leaf else doc.unique_id(op))
        super().__init__(doc, f"Add {op} {node!r}")
        self.node = node
        self.args = dict(op=op, position=position, attrs=attrs, value=value,
                         requires_grad=requires_grad)

    def check(self) -> None:
        if self.node in self.doc.graph:
            raise GraphError("this id is already used", self.node)
        check_room(self.doc, 1)

    def _do(self) -> None:
        self.doc.add_node(self.node, **self.args)

    def _undo(self) -> None:
        self.doc.remove_node(self.node)


class AddSubgraph(EditCommand):
    """Paste or duplicate: several nodes with the edges among them, as one undo step."""

    def __init__(self, doc: GraphDocument, snapshots: list[NodeSnapshot], text: str) -> None:
        super().__init__(doc, text)
        self.snapshots = snapshots

    def check(self) -> None:
        check_room(self.doc, len(self.snapshots))
        for snap in self.snapshots:
            if snap.removed.node.id in self.doc.graph:
                raise GraphError("this id is already used", snap.removed.node.id)

    def _do(self) -> None:
        self.doc.restore_nodes(self.snapshots)

    def _undo(self) -> None:
        self.doc.remove_nodes([snap.removed.node.id for snap in reversed(self.snapshots)])


class RemoveNodes(EditCommand):
    def __init__(self, doc: GraphDocument, ids: list[str]) -> None:
        super().__init__(doc, "Delete " + (f"{ids[0]!r}" if len(ids) == 1 else f"{len(ids)} nodes"))
        self.ids = list(ids)
        self.snapshots: list[NodeSnapshot] = []
        self.output = doc.output

    def _do(self) -> None:
        self.output = self.doc.output
        self.snapshots = self.doc.remove_nodes(self.ids)

    def _undo(self) -> None:
        with self.doc.edit():
            self.doc.restore_nodes(list(reversed(self.snapshots)))
            if self.output != self.doc.output:
                self.doc.set_backward(self.output, self.doc.gradient)


class Connect(EditCommand):
    def __init__(self, doc: GraphDocument, src: str, dst: str, index: int) -> None:
        super().__init__(doc, f"Connect {src!r} -> {dst!r}")
        self.src, self.dst, self.index = src, dst, index

    def check(self) -> None:
        self.doc.graph.check_connect(self.src, self.dst, self.index)

    def _do(self) -> None:
        self.doc.connect_operand(self.src, self.dst, self.index)

    def _undo(self) -> None:
        self.doc.disconnect_operand(self.dst, self.index)


class Disconnect(EditCommand):
    def __init__(self, doc: GraphDocument, dst: str, index: int) -> None:
        super().__init__(doc, f"Disconnect {dst!r} port {index}")
        self.dst, self.index = dst, index
        self.src: str | None = None

    def check(self) -> None:
        node = self.doc.graph.nodes.get(self.dst)
        if node is None or self.index >= len(node.inputs) or node.inputs[self.index] is None:
            raise GraphError(f"operand port {self.index} is not connected", self.dst)

    def _do(self) -> None:
        self.src = self.doc.disconnect_operand(self.dst, self.index)

    def _undo(self) -> None:
        if self.src is not None:
            self.doc.connect_operand(self.src, self.dst, self.index)


class Rename(EditCommand):
    def __init__(self, doc: GraphDocument, old: str, new: str) -> None:
        super().__init__(doc, f"Rename {old!r} to {new!r}")
        self.old, self.new = old, new.strip()

    def check(self) -> None:
        if not self.new:
            raise GraphError("a name cannot be empty", self.old)
        problem = id_problem(self.new)
        if problem is not None:
            raise GraphError(problem, self.old)
        if self.new != self.old and self.new in self.doc.graph:
            raise GraphError(f"the name {self.new!r} is already used", self.old)

    def _do(self) -> None:
        self.doc.rename(self.old, self.new)

    def _undo(self) -> None:
        self.doc.rename(self.new, self.old)


#: QUndoCommand's own merge id: a command with it merges with nothing.
NO_MERGE = -1


def _no_merge() -> int:
    """What a guarded ``id`` answers for a bug in it: merge with nothing."""
    return NO_MERGE


class SetValue(SwapEdit):
    """Edit a leaf's tensor. Consecutive edits of one node (scrubbing) merge into one step."""

    MERGE_ID = 1001

    def __init__(self, doc: GraphDocument, id: str, value: Any, merge: bool = False) -> None:
        super().__init__(doc, f"Edit value of {id!r}")
        self.node, self.merge = id, merge
        self.new = value
        self.old = doc.graph.nodes[id].value.copy() if id in doc.graph else None  # type: ignore[union-attr]

    def check(self) -> None:
        try:
            self.new = as_tensor(self.new)
        except (TypeError, ValueError):
            raise GraphError("the value must be a number or a rectangular list of numbers",
                             self.node) from None

    @reported_or(_no_merge)
    def id(self) -> int:  # Qt's merge id: scrubbing edits of one node merge
        return self.MERGE_ID if self.merge else NO_MERGE

    @reported_or(bool)
    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt API
        if not isinstance(other, SetValue) or other.node != self.node or not other.merge:
            return False
        self.new = other.new
        return True

    def put(self, state: Any) -> None:
        self.doc.set_value(self.node, state)


class SetAttrs(SwapEdit):
    def __init__(self, doc: GraphDocument, id: str, attrs: dict[str, Any]) -> None:
        super().__init__(doc, f"Edit {', '.join(attrs)} of {id!r}")
        self.node, self.new = id, dict(attrs)
        self.old = dict(doc.graph.nodes[id].attrs) if id in doc.graph else {}

    def check(self) -> None:
        node = self.doc.graph.nodes[self.node]
        try:
            validate_attrs(node.op, {**node.attrs, **self.new})
        except ValueError as exc:
            raise GraphError(str(exc), self.node) from None

    def put(self, state: dict[str, Any]) -> None:
        self.doc.set_attrs(self.node, state)


class SetRequiresGrad(SwapEdit):
    def __init__(self, doc: GraphDocument, id: str, flag: bool) -> None:
        super().__init__(doc, f"{'Require' if flag else 'Stop requiring'} grad on {id!r}")
        self.node, self.new, self.old = id, flag, not flag

    def put(self, state: bool) -> None:
        self.doc.set_requires_grad(self.node, state)


class MoveNodes(SwapEdit):
    """One drag (of one node or a selection) is one undo step."""

    view_only = True

    def __init__(self, doc: GraphDocument, old: dict[str, Point], new: dict[str, Point],
                 text: str = "Move") -> None:
        super().__init__(doc, text)
        self.old, self.new = dict(old), dict(new)

    def put(self, state: dict[str, Point]) -> None:
        self.doc.move_nodes(state)


class SetBackward(SwapEdit):
    """Choose the output node and the gradient ``v`` (None: implicit, scalar outputs only)."""

    def __init__(self, doc: GraphDocument, output: str | None, gradient: Any) -> None:
        super().__init__(doc, "Set backward output and v")
        self.new = (output, None if gradient is None else np.array(gradient, dtype=np.float64))
        self.old = (doc.output, doc.gradient)

    def check(self) -> None:
        if self.new[0] is not None and self.new[0] not in self.doc.graph:
            raise GraphError(f"no node named {self.new[0]!r}")

    def put(self, state: tuple[str | None, np.ndarray | None]) -> None:
        self.doc.set_backward(*state)


class SetDescription(SwapEdit):
    """Edit the file's description (the notes area); a burst of typing is one step."""

    MERGE_ID = 1009

    def __init__(self, doc: GraphDocument, text: str) -> None:
        super().__init__(doc, "Edit notes")
        self.old, self.new = doc.description, text

    @reported_or(_no_merge)
    def id(self) -> int:  # Qt's merge id: consecutive keystrokes merge
        return self.MERGE_ID

    @reported_or(bool)
    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt API
        if not isinstance(other, SetDescription):
            return False
        self.new = other.new
        return True

    def put(self, state: str) -> None:
        self.doc.set_description(state)
