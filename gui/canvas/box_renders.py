"""Box pictures drawn before, by their whole look, so that a box returning to a look
it had (a step replayed back or forth, a consumer losing its highlight) is a blit.

Qt's ``DeviceCoordinateCache`` keeps one pixmap per item and draws it again whenever
the item changes; stepping back and forth redraws the same few boxes the same way
each time (about 0.4 ms a box). Here the item still has Qt's cache, and its paint,
when Qt asks it to fill that cache, copies a picture drawn before for the same look
and the same device transform instead of drawing. A picture is made exactly as Qt
makes its cache's: a transparent pixmap of the cache's size and pixel ratio, the
painter's render hints and its transform (the item's fractional offset in the
pixmap included), so what the copy puts in Qt's pixmap is what drawing would have.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QPainter, QPixmap

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
    ``key`` includes) with the picture of ``key``, drawn by ``render`` unless kept;
    True when it was kept (nothing was drawn)."""
    picture = _pictures.get(key)
    kept = picture is not None
    if picture is None:
        picture = _picture(painter, render)
        _keep(key, picture)
    else:
        _pictures.move_to_end(key)
    painter.save()
    painter.resetTransform()
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
    painter.drawPixmap(0, 0, picture)
    painter.restore()
    return kept


def _picture(like: QPainter, render: Callable[[QPainter], None]) -> QPixmap:
    """What ``render`` draws, made as Qt makes an item's device cache for ``like``."""
    device = like.device()
    assert device is not None
    picture = QPixmap(device.width(), device.height())
    picture.setDevicePixelRatio(device.devicePixelRatioF())
    picture.fill(Qt.GlobalColor.transparent)
    painter = QPainter(picture)
    painter.setRenderHints(painter.renderHints(), False)
    painter.setRenderHints(like.renderHints(), True)
    painter.setWorldTransform(like.worldTransform(), True)
    try:
        render(painter)
    finally:
        painter.end()
    return picture


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
