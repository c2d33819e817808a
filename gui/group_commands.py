"""Undoable group edits: group a selection (Ctrl+G), ungroup, collapse or expand.

Each command swaps the document's list of groups for another and back, so undo
restores exactly the groups (and their collapsed state) that were there.
"""

from __future__ import annotations

import copy

from engine.errors import GraphError
from engine.graph import fresh_id
from engine.groups import Group, check_group

from .commands import EditCommand
from .document import GraphDocument


class SetGroups(EditCommand):
    """Replace the document's groups (the base of every group edit)."""

    view_only = True

    def __init__(self, doc: GraphDocument, groups: list[Group], text: str) -> None:
        super().__init__(doc, text)
        self.before = copy.deepcopy(doc.groups)
        self.after = groups

    def redo(self) -> None:
        self.doc.set_groups(copy.deepcopy(self.after))

    def undo(self) -> None:
        self.doc.set_groups(copy.deepcopy(self.before))


def group_nodes(doc: GraphDocument, selection: list[str]) -> SetGroups:
    """The command grouping the selected op nodes (leaves in the selection stay outside).

    Raises GraphError when the selection cannot be a group (see engine.groups).
    """
    members = [n for n in doc.graph.nodes if n in set(selection) and not doc.graph.nodes[n].is_leaf]
    check_group(doc.graph, members, doc.groups)
    taken = {g.id for g in doc.groups} | set(doc.graph.nodes)
    gid = fresh_id("group", taken)
    return SetGroups(doc, [*doc.groups, Group(gid, members)], f"Group {len(members)} nodes")


def ungroup(doc: GraphDocument, gid: str) -> SetGroups:
    if not any(g.id == gid for g in doc.groups):
        raise GraphError(f"no group named {gid!r}")
    return SetGroups(doc, [g for g in doc.groups if g.id != gid], f"Ungroup {gid}")


def set_collapsed(doc: GraphDocument, gid: str, collapsed: bool) -> SetGroups:
    groups = copy.deepcopy(doc.groups)
    for g in groups:
        if g.id == gid:
            g.collapsed = collapsed
            return SetGroups(doc, groups, f"{'Collapse' if collapsed else 'Expand'} {gid}")
    raise GraphError(f"no group named {gid!r}")
