"""Copy, cut, paste and duplicate a selection of nodes, edges inside it included.

A copied selection is a list of :class:`NodeSnapshot` in topological order whose
operand links point only inside the selection (links from outside become empty
ports), so pasting is one :class:`AddSubgraph` command: one undo step, ids made
unique by renaming (``x`` -> ``x2``), links remapped to the new names, positions
offset so the copy does not hide the original. The snapshot also goes to the
system clipboard as graph-file JSON, so a selection can be pasted into another
window or read as text.
"""

from __future__ import annotations

import atexit
import copy
import functools
from dataclasses import dataclass

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication

from engine.errors import GraphError
from engine.fileformat import FileFormatError, GraphFile, dumps, loads
from engine.graph import Graph, Removed, fresh_id
from engine.layout_keys import point

from .commands import AddSubgraph, RemoveNodes, push
from .document import GraphDocument, NodeSnapshot, Point
from .model.names import MIME_NODES

#: How far each paste or duplicate lands from the one before (scene units).
PASTE_OFFSET = (40.0, 40.0)


def snapshot_selection(doc: GraphDocument, ids: list[str]) -> list[NodeSnapshot]:
    """The selected nodes as snapshots, in topological order, links kept inside only."""
    chosen = set(ids) & set(doc.graph.nodes)
    order = [n for n in doc.graph.topological_order() if n in chosen]
    snaps = []
    for nid in order:
        node = doc.graph.nodes[nid].copy()
        node.inputs = [s if s in chosen else None for s in node.inputs]
        node.trim_empty_ports()
        extra = copy.deepcopy(doc.node_extra[nid]) if nid in doc.node_extra else {}
        snaps.append(NodeSnapshot(Removed(node, []), doc.positions.get(nid, (0.0, 0.0)), extra))
    return snaps


def renamed_copy(
    doc: GraphDocument, snaps: list[NodeSnapshot], offset: Point
) -> tuple[list[NodeSnapshot], dict[str, str]]:
    """``snaps`` with ids free in ``doc``, links remapped and positions moved by ``offset``.

    Returns the new snapshots and the old -> new id mapping.
    """
    taken = set(doc.graph.nodes)
    mapping: dict[str, str] = {}
    for snap in snaps:
        new = fresh_id(snap.removed.node.id, taken)
        mapping[snap.removed.node.id] = new
        taken.add(new)
    out = []
    for snap in snaps:
        node = snap.removed.node.copy()
        node.id = mapping[node.id]
        node.inputs = [mapping.get(s) if s is not None else None for s in node.inputs]
        x, y = snap.position
        extra = copy.deepcopy(snap.extra) if snap.extra else {}
        out.append(NodeSnapshot(Removed(node, []), (x + offset[0], y + offset[1]), extra))
    return out, mapping


def _to_json(snaps: list[NodeSnapshot]) -> str | None:
    """The snapshots as a graph file's text (None if the file format is unavailable)."""
    try:
        graph = Graph()
        for snap in snaps:
            n = snap.removed.node
            graph.add_node(n.id, n.op, inputs=list(n.inputs), attrs=dict(n.attrs),
                           value=n.value, requires_grad=n.requires_grad)
        extra = {s.removed.node.id: {**s.extra, "position": list(s.position)} for s in snaps}
        return dumps(GraphFile(graph=graph, node_extra=extra))
    except Exception:  # the clipboard text is a convenience; copying still works without it
        return None


def snapshots_from_json(text: str) -> list[NodeSnapshot]:
    """A selection from graph-file text (another window's copy); raises FileFormatError,
    whose one line says what is wrong, before anything is pasted."""
    gf = loads(text, partial=True)
    snaps = []
    for nid in gf.graph.topological_order():
        extra = dict(gf.node_extra.get(nid, {}))
        pos = point(extra.pop("position", [0.0, 0.0]), "position")  # checked by the loader
        node = gf.graph.nodes[nid].copy()
        snaps.append(NodeSnapshot(Removed(node, []), pos, extra))
    return snaps


@functools.cache
def _clear_at_exit() -> None:
    """Empty our system clipboard entry before Python shuts down (registered once).

    Qt destroys the clipboard's QMimeData in its own exit handler, after Python
    has finalised; a Python-made QMimeData then crashes the process on exit.
    """

    def clear() -> None:
        clip = QGuiApplication.clipboard() if QGuiApplication.instance() else None
        mime = clip.mimeData() if clip is not None else None
        if mime is not None and mime.hasFormat(MIME_NODES):  # still ours
            assert clip is not None  # it gave the mime data
            clip.clear()

    atexit.register(clear)


@dataclass
class Clipboard:
    """The app's clipboard: the last copied selection, plus how often it was pasted."""

    snapshots: list[NodeSnapshot] | None = None
    pastes: int = 0

    def copy(self, doc: GraphDocument, ids: list[str]) -> int:
        """Copy the selected nodes; returns how many were copied."""
        snaps = snapshot_selection(doc, ids)
        if not snaps:
            return 0
        self.snapshots, self.pastes = snaps, 0
        text = _to_json(snaps)
        clip = QGuiApplication.clipboard()
        if text is not None and clip is not None:
            mime = QMimeData()
            mime.setData(MIME_NODES, text.encode("utf-8"))
            mime.setText(text)
            clip.setMimeData(mime)
            _clear_at_exit()
        return len(snaps)

    def cut(self, doc: GraphDocument, ids: list[str]) -> GraphError | None:
        """Copy, then delete the selection as one undoable edit."""
        if not self.copy(doc, ids):
            return None
        self.pastes = -1  # pasting a cut puts it back where it was
        present = [s.removed.node.id for s in self.snapshots or []]
        return push(doc, RemoveNodes(doc, present))

    def paste(self, doc: GraphDocument) -> list[str] | GraphError:
        """Paste the clipboard; returns the new ids (select them) or why it was refused."""
        snaps = self.snapshots
        clip = QGuiApplication.clipboard()
        mime = clip.mimeData() if clip is not None else None
        if mime is not None and mime.hasFormat(MIME_NODES) and not clip.ownsClipboard():
            try:
                text = bytes(mime.data(MIME_NODES).data()).decode("utf-8")
                snaps = snapshots_from_json(text) or snaps
            except (UnicodeDecodeError, FileFormatError) as exc:
                return GraphError(f"cannot paste: {exc}")
        if not snaps:
            return []
        self.pastes += 1
        k = max(self.pastes, 0)
        offset = (PASTE_OFFSET[0] * k, PASTE_OFFSET[1] * k)
        return paste_snapshots(doc, snaps, offset, "Paste")

    def duplicate(self, doc: GraphDocument, ids: list[str]) -> list[str] | GraphError:
        """Copy and paste in one step (the clipboard is left alone)."""
        snaps = snapshot_selection(doc, ids)
        if not snaps:
            return []
        return paste_snapshots(doc, snaps, PASTE_OFFSET, "Duplicate")


def paste_snapshots(
    doc: GraphDocument, snaps: list[NodeSnapshot], offset: Point, verb: str
) -> list[str] | GraphError:
    """Add renamed copies of ``snaps`` as one undo step; the new ids, or the refusal."""
    new, mapping = renamed_copy(doc, snaps, offset)
    n = len(new)
    text = f"{verb} " + (repr(new[0].removed.node.id) if n == 1 else f"{n} nodes")
    error = push(doc, AddSubgraph(doc, new, text))
    if error is not None:
        return error
    return [mapping[s.removed.node.id] for s in snaps]
