"""Points along an edge by its flattened polyline (gui.canvas.edge_item.ArcLength): the
label's samples, the arrow and the pulse use it instead of Qt's percentAtLength, so it
must land where Qt does."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QPainterPath

from gui.canvas.edge_item import ArcLength, bezier

FRACTIONS = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)


@pytest.mark.parametrize("ends", [((0, 0), (400, 120)), ((300, 50), (-200, 400)),
                                  ((0, 0), (10, 0))])
def test_points_match_qt_within_a_fraction_of_a_unit(ends) -> None:  # noqa: ANN001
    path = bezier(QPointF(*ends[0]), QPointF(*ends[1]))
    arc = ArcLength(path)
    for f, (x, y) in zip(FRACTIONS, arc.points(FRACTIONS), strict=True):
        qt = path.pointAtPercent(path.percentAtLength(path.length() * f))
        assert math.hypot(x - qt.x(), y - qt.y()) < 0.5, f


def test_direction_is_the_tangent_qt_gives() -> None:
    path = bezier(QPointF(0, 0), QPointF(400, 120))
    dx, dy = ArcLength(path).direction(0.5)
    angle = math.radians(path.angleAtPercent(path.percentAtLength(path.length() * 0.5)))
    assert dx == pytest.approx(math.cos(angle), abs=0.02)
    assert dy == pytest.approx(-math.sin(angle), abs=0.02)  # Qt's angles turn y up


def test_paths_of_no_length_answer_a_point_as_qt_does() -> None:
    at_one_point = QPainterPath(QPointF(5, 6))
    at_one_point.lineTo(5, 6)
    assert ArcLength(at_one_point).points((0.2, 0.8)) == [(5.0, 6.0), (5.0, 6.0)]
    assert ArcLength(QPainterPath()).points((0.5,)) == [(0.0, 0.0)]
