"""A user's collapsed group box never covers a box outside it (no Qt): the boxes it
would hide are pushed out of its way, the least distance, and nothing else moves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import group_layout
from engine.group_layout import Box, clear_of_collapsed, collapsed_box
from engine.groups import Group, collapsed_roots
from engine.layout import Point, Size

MARGIN, CAPTION, GAP = 14.0, 18.0, 10.0


def _box(p: Point, s: Size) -> Box:
    return (p[0], p[1], p[0] + s[0], p[1] + s[1])


def _covered(positions: dict[str, Point], sizes: dict[str, Size], groups: list[Group]) -> list:
    """Every (group, box outside it) pair whose collapsed box and box share an area."""
    bad = []
    for g in collapsed_roots(groups):
        box = collapsed_box(positions, sizes, g.members, margin=MARGIN, caption=CAPTION)
        assert box is not None
        for n, p in positions.items():
            if n not in g.members and _meet(_box(p, sizes[n]), box):
                bad.append((g.id, n))
    return bad


def _apply(positions: dict[str, Point], sizes: dict[str, Size], groups: list[Group],
           first: str | None = None) -> dict[str, Point]:
    moves = clear_of_collapsed(positions, sizes, groups, margin=MARGIN, caption=CAPTION,
                               gap=GAP, first=first)
    return {**positions, **moves}


def test_a_box_between_members_is_pushed_out_and_the_group_stays() -> None:
    # a and c grouped; b sits between them, inside the group's box
    positions = {"a": (0.0, 0.0), "b": (120.0, 0.0), "c": (240.0, 0.0), "far": (900.0, 0.0)}
    sizes = {n: (100.0, 50.0) for n in positions}
    groups = [Group("g", ["a", "c"])]
    assert _covered(positions, sizes, groups) == [("g", "b")]
    moves = clear_of_collapsed(positions, sizes, groups, margin=MARGIN, caption=CAPTION, gap=GAP)
    assert list(moves) == ["b"]  # the members and the far box stay where they are
    after = {**positions, **moves}
    assert not _covered(after, sizes, groups)
    # the shortest way out: straight down, just past the box's bottom
    assert moves["b"] == (120.0, 50.0 + MARGIN + GAP)


def test_an_expanded_group_and_a_clear_layout_move_nothing() -> None:
    positions = {"a": (0.0, 0.0), "b": (120.0, 0.0), "c": (240.0, 0.0)}
    sizes = {n: (100.0, 50.0) for n in positions}
    assert clear_of_collapsed(positions, sizes, [Group("g", ["a", "c"], collapsed=False)],
                              margin=MARGIN, caption=CAPTION) == {}
    assert clear_of_collapsed(positions, sizes, [Group("g", ["a", "b"])],
                              margin=MARGIN, caption=CAPTION, gap=GAP) == {}


def test_two_collapsed_boxes_that_meet_part_the_later_moving_whole() -> None:
    positions = {"a": (0.0, 0.0), "b": (60.0, 20.0), "c": (150.0, 0.0), "d": (260.0, 30.0)}
    sizes = {n: (100.0, 50.0) for n in positions}
    groups = [Group("g1", ["a", "b"]), Group("g2", ["c", "d"])]
    after = _apply(positions, sizes, groups, first="g2")
    assert not _covered(after, sizes, groups)
    assert after["c"] == positions["c"] and after["d"] == positions["d"]  # just collapsed
    # g1 moved as one: its members keep their places relative to each other
    shift = (after["a"][0] - positions["a"][0], after["a"][1] - positions["a"][1])
    assert shift != (0.0, 0.0)
    assert after["b"] == (positions["b"][0] + shift[0], positions["b"][1] + shift[1])


def test_a_nested_collapsed_group_counts_as_its_outermost() -> None:
    positions = {"a": (0.0, 0.0), "b": (120.0, 0.0), "c": (240.0, 0.0)}
    sizes = {n: (100.0, 50.0) for n in positions}
    groups = [Group("inner", ["a"]), Group("outer", ["a", "b", "c"])]
    assert clear_of_collapsed(positions, sizes, groups, margin=MARGIN, caption=CAPTION) == {}


def test_a_box_pushed_to_touch_a_collapsed_box_is_not_covered_by_rounding() -> None:
    """Hypothesis found it: n10 pushed to touch g1's box landed 1e-14 inside it."""
    positions = {f"n{i}": (0.0, 0.0) for i in range(21)}
    positions.update(n2=(10.0, 0.0), n10=(44.1, 49.0), n13=(0.0, 135.0), n15=(0.0, 8.0))
    sizes = {n: (20.0, 20.0) for n in positions}
    sizes["n13"] = (71.0, 20.0)
    outer = [f"n{i}" for i in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 17, 18, 19, 20)]
    groups = [Group("g0", outer, collapsed=False), Group("g0.0", ["n2"]),
              Group("g1", ["n13", "n15"])]
    after = _apply(positions, sizes, groups, first="g0")
    assert not _covered(after, sizes, groups)


@st.composite
def scenes(draw: st.DrawFn) -> tuple[dict[str, Point], dict[str, Size], list[Group], str]:
    n = draw(st.integers(2, 24))
    coord = st.floats(0.0, 800.0, allow_nan=False).map(lambda v: round(v, 1))
    side = st.floats(20.0, 160.0, allow_nan=False).map(lambda v: round(v, 1))
    positions = {f"n{i}": (draw(coord), draw(coord)) for i in range(n)}
    sizes = {f"n{i}": (draw(side), draw(side)) for i in range(n)}
    # disjoint groups of random members (not contiguous: boxes between them are common),
    # some collapsed, some nested inside another
    owner = draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    groups = []
    for k in range(4):
        members = [f"n{i}" for i in range(n) if owner[i] == k]
        if members:
            groups.append(Group(f"g{k}", members, collapsed=draw(st.booleans())))
            if len(members) > 1 and draw(st.booleans()):
                groups.append(Group(f"g{k}.0", members[:1], collapsed=draw(st.booleans())))
    first = draw(st.sampled_from([g.id for g in groups] or ["none"]))
    return positions, sizes, groups, first


@settings(max_examples=200, deadline=None)
@given(scenes())
def test_no_collapsed_box_covers_a_box_outside_it(scene) -> None:  # noqa: ANN001
    positions, sizes, groups, first = scene
    after = _apply(positions, sizes, groups, first)
    assert not _covered(after, sizes, groups)
    # members of a collapsed group move together, and a box only moves if it must
    for g in collapsed_roots(groups):
        shifts = {(after[m][0] - positions[m][0], after[m][1] - positions[m][1])
                  for m in g.members}
        assert len({(round(x, 6), round(y, 6)) for x, y in shifts}) == 1
    boxes = [collapsed_box(positions, sizes, g.members, margin=MARGIN, caption=CAPTION)
             for g in collapsed_roots(groups)]
    apart = all(not _meet(a, b) for i, a in enumerate(boxes) for b in boxes[:i])
    if apart and not _covered(positions, sizes, groups):
        assert after == positions


def _meet(a: Box | None, b: Box | None) -> bool:
    assert a is not None and b is not None
    return group_layout._meet(a, b)
