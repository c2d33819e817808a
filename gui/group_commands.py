"""Undoable group edits: group a selection (Ctrl+G), ungroup, collapse or expand.

Each command swaps the document's list of groups for another and back, so undo
restores exactly the groups (and their collapsed state) that were there. A group
collapsed by the command covers its members' place: the boxes there that are not
its own are pushed out of its way (``place``: the canvas's rule for it, given the new
groups and the group just collapsed), in the same command, so undo puts them back.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from engine.errors import GraphError
from engine.graph import fresh_id
from engine.groups import Group, check_group

from .commands import SwapEdit
from .document import GraphDocument, Point

#: New positions for the boxes a collapsed group would cover (groups, the one collapsed).
Place = Callable[[list[Group], str], dict[str, Point]]


class SetGroups(SwapEdit):
    """Replace the document's groups (the base of every group edit), and move the boxes
    ``place`` says a group collapsed here would cover."""

    view_only = True

    def __init__(self, doc: GraphDocument, groups: list[Group], text: str,
                 place: Place | None = None, collapsed: str | None = None) -> None:
        super().__init__(doc, text)
        moves = place(groups, collapsed) if place is not None and collapsed is not None else {}
        back = {n: doc.positions[n] for n in moves if n in doc.positions}
        self.old = (copy.deepcopy(doc.groups), back)
        self.new = (groups, moves)

    def put(self, state: tuple[list[Group], dict[str, Point]]) -> None:
        groups, moves = state
        if moves:
            self.doc.move_nodes(moves)
        self.doc.set_groups(copy.deepcopy(groups))


def group_nodes(doc: GraphDocument, selection: list[str], place: Place | None = None) -> SetGroups:
    """The command grouping the selected op nodes (leaves in the selection stay outside),
    collapsed.

    Raises GraphError when the selection cannot be a group (see engine.groups).
    """
    members = [n for n in doc.graph.nodes if n in set(selection) and not doc.graph.nodes[n].is_leaf]
    check_group(doc.graph, members, doc.groups)
    taken = {g.id for g in doc.groups} | set(doc.graph.nodes)
    gid = fresh_id("group", taken)
    return SetGroups(doc, [*doc.groups, Group(gid, members)], f"Group {len(members)} nodes",
                     place, gid)


def ungroup(doc: GraphDocument, gid: str) -> SetGroups:
    if not any(g.id == gid for g in doc.groups):
        raise GraphError(f"no group named {gid!r}")
    return SetGroups(doc, [g for g in doc.groups if g.id != gid], f"Ungroup {gid}")


def set_collapsed(
    doc: GraphDocument, gid: str, collapsed: bool, place: Place | None = None
) -> SetGroups:
    groups = copy.deepcopy(doc.groups)
    for g in groups:
        if g.id == gid:
            g.collapsed = collapsed
            return SetGroups(doc, groups, f"{'Collapse' if collapsed else 'Expand'} {gid}",
                             place, gid if collapsed else None)
    raise GraphError(f"no group named {gid!r}")
