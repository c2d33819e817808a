"""Box pictures drawn before, by their whole look, so that a box returning to a look
it had (a step replayed back or forth, a consumer losing its highlight) is a blit.

Qt's ``DeviceCoordinateCache`` keeps one pixmap per item and draws it again whenever
the item changes; stepping back and forth redraws the same few boxes the same way
each time (about 0.4 ms a box). Here the item still has Qt's cache, and its paint,
when Qt asks it to fill that cache, copies a picture drawn before for the same look
and the same device transform instead of drawing. A picture is a copy of Qt's cache
just after the box was drawn into it, kept by everything that decided its pixels
(the look, and the painter's transform with the item's fractional offset in the
pixmap, the pixmap's size and pixel ratio, the render hints): copied back into a
fresh (transparent) cache of that key, it puts there what drawing would have.

A step's new looks are drawn ahead, in idle time after the step before
(:func:`draw_ahead`): into a pixmap set up as Qt sets up the cache it will fill at the
same device transform, so that the step itself copies instead of drawing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import cast

import shiboken6
from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QPainter, QPixmap, QTransform

#: The pictures kept, in bytes (about 180 boxes at presentation size).
MAX_BYTES = 32 << 20
#: ``QPaintDevice.devType()`` of a pixmap (``QInternal::Pixmap``).
_PIXMAP = 2

_pictures: OrderedDict[Hashable, QPixmap] = OrderedDict()
_held = [0]  # their bytes


def device_key(painter: QPainter, bounds: QRectF) -> tuple | None:
    """What of ``painter`` decides the pixels of an item with ``bounds``, when it is
    filling Qt's device cache of that item (None otherwise: the item is drawn into a
    window, an image or part of a cache, where a copy would not blend the same way).

    Qt makes the cache the item's device rectangle grown by a pixel, and draws with the
    item's transform moved to that rectangle's corner: the bounds mapped by the painter
    are then the whole pixmap, which nothing else drawn into a pixmap is."""
    device = painter.device()
    if device is None or device.devType() != _PIXMAP or painter.hasClipping():
        return None
    ratio = device.devicePixelRatioF()
    w, h = device.width(), device.height()
    t = painter.worldTransform()
    inside = t.mapRect(bounds).toRect().adjusted(-1, -1, 1, 1)
    if inside != QRect(0, 0, round(w / ratio), round(h / ratio)):
        return None
    return (t.m11(), t.m12(), t.m13(), t.m21(), t.m22(), t.m23(), t.m31(), t.m32(), t.m33(),
            w, h, ratio, painter.renderHints())


def draw(painter: QPainter, key: Hashable, render: Callable[[QPainter], None]) -> bool:
    """Fill the cache ``painter`` draws into (see :func:`device_key`, whose answer
    ``key`` includes) with the picture of ``key`` when one is kept (True), or draw it
    with ``render`` and keep a copy of what it drew (False)."""
    picture = _pictures.get(key)
    if picture is None:
        render(painter)
        _keep(key, _pixmap(painter).copy())
        return False
    _pictures.move_to_end(key)
    painter.save()
    painter.resetTransform()
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
    painter.drawPixmap(0, 0, picture)
    painter.restore()
    return True


def draw_ahead(look: Hashable, bounds: QRectF, world: QTransform, window: QRect, ratio: float,
               hints: QPainter.RenderHint, render: Callable[[QPainter], None]) -> bool:
    """Keep the picture of ``look`` that Qt's device cache of an item with ``bounds``
    drawn at item-to-device transform ``world`` into ``window`` (its rectangle; ``ratio``,
    ``hints``: its own) would be filled with, unless kept already or the item is outside
    (Qt would not draw it). The pixmap and its painter are made as
    ``QGraphicsScene`` makes them (``drawItemHelper``, ``_q_paintIntoCache``): the item's
    device rectangle grown by a pixel, transparent, the transform moved to its corner,
    the state saved around the drawing; what it keeps is then what filling the cache
    would have put there (a key the cache would not have, and nothing is met again).
    True when the picture is kept (drawn now or before)."""
    corner = world.mapRect(bounds).toRect().adjusted(-1, -1, 1, 1)
    if corner.isEmpty() or not window.intersects(corner):
        return False
    pixmap = QPixmap(corner.size() * ratio)
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHints(painter.renderHints(), False)
    painter.setRenderHints(hints, True)
    painter.setWorldTransform(world * QTransform.fromTranslate(-corner.x(), -corner.y()), True)
    device = device_key(painter, bounds)
    key = (device, look)
    drawn = device is not None and key not in _pictures
    if drawn:
        painter.save()
        render(painter)
        painter.restore()
    painter.end()
    if drawn:
        _keep(key, pixmap)
    return device is not None


def _pixmap(painter: QPainter) -> QPixmap:
    """The pixmap ``painter`` draws into (its device, which :func:`device_key` found
    to be one): a copy of it is the picture, with nothing drawn twice."""
    device = painter.device()
    assert device is not None and device.devType() == _PIXMAP
    return cast(QPixmap, shiboken6.wrapInstance(shiboken6.getCppPointer(device)[0], QPixmap))


def _keep(key: Hashable, picture: QPixmap) -> None:
    _pictures[key] = picture
    _held[0] += _bytes(picture)
    while _held[0] > MAX_BYTES and len(_pictures) > 1:
        _key, old = _pictures.popitem(last=False)
        _held[0] -= _bytes(old)


def _bytes(picture: QPixmap) -> int:
    return picture.width() * picture.height() * 4


def clear() -> None:
    """Forget every picture (their looks are gone: the theme or its scale changed)."""
    _pictures.clear()
    _held[0] = 0
