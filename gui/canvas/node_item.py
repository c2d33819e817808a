"""A node box: title band, value, shape and gradient, with its ports and error badge.

The scene hands each box a :class:`NodeContent` (plain strings it already
formatted); the box only lays those strings out, once, into ``QStaticText`` and
rectangles. Painting then draws precomputed glyph runs, and with
``DeviceCoordinateCache`` an unchanged box is a pixmap blit, so a canvas of
hundreds of nodes repaints in a few milliseconds. A box whose content did not
change is not laid out again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import inf

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QStaticText,
    QTransform,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QStyle,
    QStyleOptionGraphicsItem,
    QWidget,
)

from ..model.node_box import BoxStyle, NodeContent, ValueState
from ..model.semantic_zoom import (
    ACTIVE_GROW,
    MIN_EXTRA_SHARE,
    MIN_SCREEN_PT,
    CompactLine,
    MinZooms,
    compact_lines,
    compact_min_zoom,
    compact_rows,
    fitting_chars,
    is_compact,
    name_growth,
    room_chars,
    shortened,
)
from ..qt_override import reported, reported_or
from ..theme import THEME, name_font
from . import box_renders
from .port_item import UNIT, PortItem, cfont, cline, port_style

#: Point size of a box's values and gradients (its main text) at zoom 1.
BOX_PT = 10.0
#: Below this zoom level text is unreadable anyway: draw boxes and bands only.
TEXT_LOD = 0.33
#: Below this, a box is a few pixels: no shadow, no rounded corners, no ports.
FAR_LOD = 0.15
#: A box's bounds reach this far (scene units) past its sides: the ports, the thick
#: highlight border, the shadow.
BOUNDS_MARGIN = 8.0
#: Ports are drawn at least this wide on screen (pixels), within the bounds' margin.
MIN_PORT_PX = 10.0
#: A box's texts start this far in from its left side, and stop as far from its right
#: (scene units at zoom 1, times UNIT).
PAD = 11.0


@dataclass
class _Fonts:
    scale: float
    title: QFont
    pill: QFont
    mono: QFont
    small: QFont
    fm_title: QFontMetricsF
    fm_pill: QFontMetricsF
    fm_mono: QFontMetricsF
    fm_small: QFontMetricsF
    title_h: float = 0.0  # height of the title band
    title_y: float = 0.0  # top of the title text in the band
    pill_h: float = 0.0
    line: float = 0.0  # mono line spacing
    small_drop: float = 0.0  # small text next to mono text shares its baseline


_fonts_cache: list[_Fonts] = []


def fonts() -> _Fonts:
    """The node fonts and metrics for the current theme scale (built once per scale)."""
    if _fonts_cache and _fonts_cache[0].scale == UNIT:
        return _fonts_cache[0]
    title, pill = cfont(10.5, bold=True), cfont(7.5, bold=True)
    mono, small = cfont(BOX_PT, mono=True), cfont(8.5)
    f = _Fonts(
        UNIT, title, pill, mono, small,
        QFontMetricsF(title), QFontMetricsF(pill), QFontMetricsF(mono), QFontMetricsF(small),
    )
    f.title_h = f.fm_title.height() + 12.0 * UNIT
    f.title_y = (f.title_h - f.fm_title.height()) / 2
    f.pill_h = f.fm_pill.height() + 3.0 * UNIT
    f.line = f.fm_mono.lineSpacing()
    f.small_drop = f.fm_mono.ascent() - f.fm_small.ascent()
    _fonts_cache[:] = [f]
    _widths.clear()  # keyed by metrics objects, which were just replaced
    _measured.clear()  # measured with them
    _pitches.clear()
    _learn_pitch(f.fm_mono)
    return f


@dataclass
class _CompactFonts:
    name: QFont
    mono: QFont
    fm_name: QFontMetricsF
    fm_mono: QFontMetricsF
    #: :data:`BESIDE_GAP`'s width at :data:`COMPACT_REF_PT` (the layout and the paint).
    beside_gap: float


#: Compact text is measured at this size and scaled (widths grow with the size).
COMPACT_REF_PT = 10.0
#: Between a compact box's value and gradient written side by side.
BESIDE_GAP = "  "
_compact_cache: list[_CompactFonts] = []


def compact_fonts() -> _CompactFonts:
    """The compact form's fonts at :data:`COMPACT_REF_PT` (built once). The name is in
    the theme's name face (:func:`gui.theme.name_font`): its 1, l and I, 0 and O
    differ at a glance, which a short name such as ``y1`` read from the back of a room
    needs."""
    if not _compact_cache:
        name = name_font(COMPACT_REF_PT * UNIT)
        mono = cfont(COMPACT_REF_PT, mono=True)
        fm_mono = QFontMetricsF(mono)
        _learn_pitch(fm_mono)
        _compact_cache.append(_CompactFonts(name, mono, QFontMetricsF(name), fm_mono,
                                            fm_mono.horizontalAdvance(BESIDE_GAP)))
    return _compact_cache[0]


_widths: dict[tuple[int, str], float] = {}
#: What decides a box's width, by the texts it was measured from, in the fonts of the
#: current scale (see NodeItem._measure_fixed; emptied with _widths).
_measured: dict[tuple, tuple[float, float, float, int]] = {}
#: For a fixed-pitch font (by its metrics' ``id``): the one advance its printable
#: ASCII characters share, and the characters learnt to have it or not. Values and
#: gradients, each a new text, are then measured by their length (Qt sums the same
#: advances, exactly).
_pitches: dict[int, tuple[float, set[str], set[str]]] = {}


def _learn_pitch(fm: QFontMetricsF) -> None:
    ascii_chars = [chr(c) for c in range(32, 127)]
    widths = {fm.horizontalAdvance(c) for c in ascii_chars}
    if len(widths) == 1:
        _pitches[id(fm)] = (widths.pop(), set(ascii_chars), set())


def _pitch_width(fm: QFontMetricsF, text: str) -> float | None:
    """``text``'s advance as its length times the font's pitch, when every character
    has that advance (None: measure it)."""
    pitch = _pitches.get(id(fm))
    if pitch is None:
        return None
    one, same, differ = pitch
    if not same.issuperset(text):
        for ch in set(text) - same:
            if ch in differ or not ch.isprintable() or fm.horizontalAdvance(ch) != one:
                differ.add(ch)
                return None
            same.add(ch)
    return len(text) * one


def advance(fm: QFontMetricsF, text: str) -> float:
    """``fm.horizontalAdvance(text)``, cached: the same words recur in every box. In a
    fixed-pitch font, text of characters known to have its pitch is measured by its
    length without an entry (values and gradients: new texts, each met once or twice)."""
    pitch = _pitches.get(id(fm))
    if pitch is not None and pitch[1].issuperset(text):
        return len(text) * pitch[0]
    key = (id(fm), text)
    w = _widths.get(key)
    if w is None:
        if len(_widths) > 50_000:
            _widths.clear()
        w = _pitch_width(fm, text)
        if w is None:
            w = fm.horizontalAdvance(text)
        _widths[key] = w
    return w


def _lines_width(fm: QFontMetricsF, text: str) -> float:
    if "\n" not in text:  # most texts are one line
        return advance(fm, text)
    pitch = _pitches.get(id(fm))
    if pitch is not None and pitch[1].issuperset(text.replace("\n", " ")):
        return max(map(len, text.split("\n"))) * pitch[0]  # (as advance: its longest line)
    return max(advance(fm, line) for line in text.split("\n"))


def static_text(text: str) -> QStaticText:
    st = QStaticText(text)
    st.setTextFormat(Qt.TextFormat.PlainText)
    st.setPerformanceHint(QStaticText.PerformanceHint.AggressiveCaching)
    return st


@dataclass
class _Run:
    """Some text placed in the box; glyph runs are built on the first paint that
    shows text (a box seen only from far away never builds them)."""

    text: str
    font: QFont
    colour: QColor
    pos: QPointF
    spacing: float = 0.0
    statics: list[QStaticText] | None = None

    def draw(self, painter: QPainter) -> None:
        if self.statics is None:
            self.statics = [static_text(line) for line in self.text.split("\n")]
        painter.setFont(self.font)
        painter.setPen(self.colour)
        x, y = self.pos.x(), self.pos.y()
        for st in self.statics:
            painter.drawStaticText(QPointF(x, y), st)
            y += self.spacing


@dataclass
class _Pill:
    rect: QRectF
    text: str
    fill: QColor
    colour: QColor
    text_width: float
    static: QStaticText | None = None


_bands: dict[tuple[float, float, float], QPainterPath] = {}


def _band(width: float, height: float, radius: float) -> QPainterPath:
    """The title band: a rectangle with the box's rounded top corners (shared)."""
    key = (round(width, 1), round(height, 1), radius)
    path = _bands.get(key)
    if path is None:
        band = QPainterPath()
        band.addRoundedRect(QRectF(0, 0, key[0], key[1] + radius), radius, radius)
        clip = QPainterPath()
        clip.addRect(QRectF(0, 0, key[0], key[1]))
        path = _bands[key] = band.intersected(clip)
        if len(_bands) > 4096:
            _bands.clear()
    return path


def _pills_of(c: NodeContent) -> list[tuple[str, QColor, QColor]]:
    """The pills in a box's title band: text, fill and ink."""
    pills = []
    if c.is_output:
        pills.append(("output", THEME.output_fill, THEME.grad_text))
    if c.marker:
        ink = THEME.port_out if c.style is BoxStyle.INPUT else THEME.text_muted
        pills.append((c.marker, THEME.paper, ink))
    return pills


def _pill_width(f: _Fonts, text: str) -> float:
    return advance(f.fm_pill, text) + 10.0 * UNIT


def _grad_label_width(f: _Fonts, c: NodeContent) -> float:
    """The "grad" (or "tan") label before the gradient, with its gap."""
    return advance(f.fm_small, c.grad_title) + 6.0 * UNIT


#: The THEME colour of the title band (and the compact box's tint) by box style, read
#: when painting: View > Theme changes it.
BAND = {
    BoxStyle.OP: "title_op",
    BoxStyle.INPUT: "title_input",
    BoxStyle.CONST: "title_const",
}


def band_colour(style: BoxStyle) -> QColor:
    """The title band's colour of a box of ``style`` in the theme in use."""
    colour: QColor = getattr(THEME, BAND[style])
    return colour


class ErrorBadge(QGraphicsItem):
    """A red circle with "!" on the node's corner; hovering shows the error message."""

    def __init__(self, parent: QGraphicsItem) -> None:
        super().__init__(parent)
        self.setZValue(3)
        self.setAcceptHoverEvents(True)
        self.setCursor(Qt.CursorShape.WhatsThisCursor)

    @property
    def radius(self) -> float:
        return 9.0 * UNIT

    @reported_or(QRectF)
    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        r = self.radius + 1
        return QRectF(-r, -r, 2 * r, 2 * r)

    @reported
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        r = self.radius
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(THEME.paper, cline(1.5)))
        painter.setBrush(THEME.error)
        painter.drawEllipse(QPointF(0, 0), r, r)
        painter.setPen(THEME.paper)
        painter.setFont(cfont(10.0, bold=True))
        painter.drawText(QRectF(-r, -r, 2 * r, 2 * r), Qt.AlignmentFlag.AlignCenter, "!")


_NO_PEN = QPen(Qt.PenStyle.NoPen)
_NO_BAND = QPainterPath()
_BOX_FLAGS = (
    QGraphicsItem.GraphicsItemFlag.ItemIsMovable | QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
)
BOX_CACHE = QGraphicsItem.CacheMode.DeviceCoordinateCache


class NodeItem(QGraphicsRectItem):
    """One node box. ``pos()`` is its top-left corner, the same as ``doc.positions``.

    A rect item only so that Qt computes its bounding rectangle in C++: with the
    device-coordinate cache, repainting an unchanged box then runs no Python at
    all. The ports are drawn here too (into the same cached pixmap); the port
    items only catch the mouse and draw themselves while hovered.
    """

    #: Slotted: the wrapper keeps its state without an instance dict, one object fewer
    #: per box for the collector (5,000 per 5,000-node open).
    __slots__ = (
        "node_id", "content", "highlight_consumer", "hover_port", "_connected", "_ports",
        "badge", "_w", "_h", "_runs", "_pills", "_fan_pill", "_grad_rect", "_title_h",
        "_band", "_radius", "_ports_key", "_tooltip", "_placed", "_min_zooms",
        "_drawn_scale", "_stand_in_pt",
    )

    #: Size of a box whose content has not arrived yet (the scene sets it at once).
    PLACEHOLDER = QRectF(0, 0, 172, 84)

    def __init__(self, node_id: str, content: NodeContent | None = None) -> None:
        super().__init__()
        self.node_id = node_id
        self.content = content
        self.setPen(_NO_PEN)
        self.highlight_consumer = False
        self.hover_port: PortItem | None = None
        # No ItemSendsGeometryChanges/itemChange: a Python itemChange runs for every
        # flag, child and selection change of thousands of items. The scene moves
        # boxes itself, and the view reports the boxes a mouse drag moved.
        self.setFlags(_BOX_FLAGS)
        self.setCacheMode(BOX_CACHE)
        self.setZValue(1)
        #: The operand ports' plugged-in flags; the port objects are made when first
        #: asked for (:attr:`in_ports`), as few boxes ever are: fewer objects per open.
        self._connected: tuple[bool, ...] = ()
        self._ports: tuple[list[PortItem], PortItem] | None = None
        self.badge: ErrorBadge | None = None
        #: The box's size (its rectangle's top-left is 0, 0), kept as two floats.
        self._w, self._h = self.PLACEHOLDER.width(), self.PLACEHOLDER.height()
        self._set_bounds()
        #: Empty (shared) until the first full paint places the texts.
        self._runs: list[_Run] | tuple[()] = ()
        self._pills: list[_Pill] | tuple[()] = ()
        self._fan_pill: _Pill | None = None
        self._grad_rect: QRectF | None = None
        self._title_h = 0.0
        self._band = _NO_BAND  # (made by _place_texts; shared until then, never changed)
        self._radius = 7.0
        self._ports_key: tuple[int, float, float, float] | None = None
        self._tooltip = ""
        self._placed = False  # the texts and pills placed for the content (_place_texts)
        #: compact_min_zooms's answer and what it was computed from (see there).
        self._min_zooms: tuple[tuple, MinZooms] | None = None
        #: The scale (the transform's 2x2 part) of the box's last drawing.
        self._drawn_scale: tuple[float, ...] = ()
        #: A stand-in's canvas's smallest text size (see draw_ahead); None: a canvas's box.
        self._stand_in_pt: float | None = None
        if content is not None:
            self._relayout()

    # ------------------------------------------------------------------ content

    def set_content(self, content: NodeContent) -> None:
        """Show new content; unchanged content costs one comparison, no layout."""
        if content == self.content:
            return
        self.content = content
        self._relayout()

    @property
    def in_ports(self) -> list[PortItem]:
        """The operand ports, in order (made on the first call)."""
        return self._port_items()[0]

    @property
    def out_port(self) -> PortItem:
        """The output port (made on the first call, with the operand ports)."""
        return self._port_items()[1]

    def _port_items(self) -> tuple[list[PortItem], PortItem]:
        if self._ports is None:
            out = PortItem(self, self.node_id, True, 0)
            out.setPos(*self._port_offset(True, 0))
            self._ports = (self._make_in_ports(), out)
        return self._ports

    def _make_in_ports(self) -> list[PortItem]:
        ports = []
        for i, flag in enumerate(self._connected):
            port = PortItem(self, self.node_id, False, i)
            port.set_connected(flag)
            port.setPos(*self._port_offset(False, i))
            ports.append(port)
        return ports

    def set_input_ports(self, connected: list[bool]) -> bool:
        """One operand port per entry (True: an edge is plugged in); True when the
        number of ports changed (so the ports moved)."""
        changed = len(connected) != len(self._connected)
        # New ports start unplugged: a changed count compares the flags with that.
        old = (False,) * len(connected) if changed else self._connected
        self._connected = tuple(connected)
        if changed:
            if self._ports is not None:  # new port objects, as their places change
                self._ports = (self._make_in_ports(), self._ports[1])
            if self.content is not None:
                self._relayout()
        elif self._ports is not None:
            for port, flag in zip(self._ports[0], connected, strict=True):
                port.set_connected(flag)
        if old != self._connected:
            self.update()  # the ports are drawn in the box's cached pixmap
        return changed

    def set_consumer_highlight(self, flag: bool) -> None:
        """The consumer of the active backward step: a lighter outline."""
        if flag != self.highlight_consumer:
            self.highlight_consumer = flag
            self._set_bounds()  # an active step's box may grow, drawn compact
            self.update()

    def set_hover_port(self, port: PortItem | None) -> None:
        """Draw ``port`` enlarged (the mouse is over it); None: no port is."""
        if port is not self.hover_port:
            self.hover_port = port
            self.update()

    def restyle(self) -> None:
        """Lay everything out again (the theme's scale or colours changed)."""
        if self.content is not None:
            self._relayout()

    @property
    def size(self) -> tuple[float, float]:
        return (self._w, self._h)

    def _box(self) -> QRectF:
        """The box's rectangle in its own coordinates (made when asked)."""
        return QRectF(0, 0, self._w, self._h)

    def scene_rect(self) -> QRectF:
        return QRectF(self.x(), self.y(), self._w, self._h)

    def scene_coords(self) -> tuple[float, float, float, float]:
        """:meth:`scene_rect` as (left, top, right, bottom) floats (the grid files a
        new graph's boxes from them, without a rectangle per box)."""
        x, y = self.x(), self.y()
        return (x, y, x + self._w, y + self._h)

    def port_pos(self, is_output: bool, index: int = 0) -> QPointF:
        """Scene position of a port's centre (cheap: no item lookup)."""
        return QPointF(*self.port_xy(is_output, index))

    def port_xy(self, is_output: bool, index: int = 0) -> tuple[float, float]:
        """:meth:`port_pos` as two floats (routing thousands of edges makes no points)."""
        if is_output or index < len(self._connected):
            dx, dy = self._port_offset(is_output, index)
        else:
            dx, dy = 0.0, self._h / 2
        return (self.x() + dx, self.y() + dy)

    def _port_offset(self, is_output: bool, index: int) -> tuple[float, float]:
        """A port's centre in the box's coordinates: on the body's sides, as placed
        for the box's layout (:meth:`_place_children`; 0, 0 before any)."""
        if self._ports_key is None:
            return (0.0, 0.0)
        n, width, height, top = self._ports_key
        if is_output:
            return (float(width), float(top + (height - top) / 2))
        return (0.0, float(top + (height - top) * (index + 0.5) / n))

    # ------------------------------------------------------------------ layout

    def _relayout(self) -> None:
        """Measure the content, size the box and place its ports; the texts and pills
        are placed when the box is first painted in full (:meth:`_place_texts`): a big
        file opens zoomed out, where no box paints its own text, and its boxes take
        their content twice (live, then the frame the player opens at)."""
        c = self.content
        assert c is not None
        f, s = fonts(), UNIT
        fixed, label_w, reserve_w, reserve_lines = self._measure_fixed(c)
        grad_w, grad_lines = reserve_w, reserve_lines
        if c.grad is not None:
            grad_w = max(grad_w, _lines_width(f.fm_mono, c.grad))
            grad_lines = max(grad_lines, c.grad.count("\n") + 1)
        width = max(fixed, label_w + grad_w if grad_lines else 0.0) + 2 * PAD * s
        line, title_h = f.line, f.title_h
        value_lines = c.value.count("\n") + 1
        body = 16.0 * s + value_lines * line + (6.0 * s + grad_lines * line if grad_lines else 0)
        body = max(body, 22.0 * s * max(len(self._connected), 1) + 6.0 * s, 30.0 * s)
        height = title_h + body
        self._w, self._h = width, height
        self._set_bounds()
        self._title_h = title_h
        self._radius = 7.0 * s
        self._placed = False
        self._place_children(c, width, height)
        self.update()

    @staticmethod
    def _measure_fixed(c: NodeContent) -> tuple[float, float, float, int]:
        """What decides the box's width except the gradient it shows now: the widest of
        title and pills, value and shape (``fixed``); the gradient's label and fan-in
        marker (``label_w``); the widest and tallest gradient it may show. Kept by
        those texts (:data:`_measured`): a step, and the frame a file opens at, change
        only the gradient; a file opened again, or boxes deleted and brought back,
        show the same texts."""
        f, s = fonts(), UNIT
        key = (c.title, c.is_output, c.marker, c.shape, c.value, c.grad_title,
               c.reserve_grad, c.fan_in, c.reserve_fan_in)
        measured = _measured.get(key)
        if measured is not None:
            return measured
        gap = 8.0 * s
        pills = _pills_of(c)
        shape_w = advance(f.fm_small, c.shape) if c.shape else 0.0
        fan_n = max(c.fan_in, c.reserve_fan_in)
        fan_w = advance(f.fm_pill, f"fan-in ×{fan_n}") + 10.0 * s if fan_n > 1 else 0.0
        fixed = max(
            150.0 * s,
            advance(f.fm_title, c.title) + sum(_pill_width(f, t) for t, _, _ in pills)
            + gap * len(pills),
            _lines_width(f.fm_mono, c.value) + (shape_w + 2 * gap if c.shape else 0.0),
        )
        label_w = _grad_label_width(f, c) + (fan_w + gap if fan_w else 0.0)
        reserve_w = max((_lines_width(f.fm_mono, t) for t in c.reserve_grad), default=0.0)
        reserve_lines = max((t.count("\n") + 1 for t in c.reserve_grad), default=0)
        measured = (fixed, label_w, reserve_w, reserve_lines)
        if len(_measured) > 50_000:
            _measured.clear()
        _measured[key] = measured
        return measured

    def _place_texts(self) -> None:
        """Place the title band, every text run and pill for the box's size (once per
        content, on the first full paint)."""
        c = self.content
        assert c is not None
        self._placed = True
        f, s = fonts(), UNIT
        pad, gap = PAD * s, 8.0 * s
        width, title_h = self._w, self._title_h
        self._band = _band(width, title_h, self._radius)

        # title text and pills, right-aligned in the band
        self._runs = runs = [_Run(c.title, f.title, THEME.text, QPointF(pad, f.title_y))]
        pills: list[_Pill] = []
        self._pills = pills
        x = width - pad
        for text, fill, colour in _pills_of(c):
            w = _pill_width(f, text)
            x -= w
            rect = QRectF(x, (title_h - f.pill_h) / 2, w, f.pill_h)
            pills.append(_Pill(rect, text, fill, colour, w - 10.0 * s))
            x -= gap

        # value and shape
        y = title_h + 8.0 * s
        colour = THEME.value_text if c.value_state is ValueState.VALUE else THEME.text_muted
        runs.append(_Run(c.value, f.mono, colour, QPointF(pad, y), f.line))
        if c.shape:
            shape_w = advance(f.fm_small, c.shape)
            runs.append(_Run(c.shape, f.small, THEME.text_muted,
                             QPointF(width - pad - shape_w, y + f.small_drop)))
        y += (c.value.count("\n") + 1) * f.line + 6.0 * s
        self._place_grad(c, y, width, _grad_label_width(f, c), runs)

    def _place_grad(self, c: NodeContent, y: float, width: float, label_w: float,
                    runs: list[_Run]) -> None:
        """The "grad" row: red, highlighted while it receives ``grad += vjp``."""
        f, s, pad = fonts(), UNIT, PAD * UNIT
        self._grad_rect = None
        self._fan_pill = None
        if c.grad is None:
            return
        at = QPointF(pad, y + f.small_drop)
        runs.append(_Run(c.grad_title, f.small, THEME.grad_text, at))
        runs.append(_Run(c.grad, f.mono, THEME.grad_text, QPointF(pad + label_w, y), f.line))
        if not c.grad_active:
            return
        lines = c.grad.count("\n") + 1
        self._grad_rect = QRectF(pad - 4 * s, y - 2 * s,
                                 label_w + _lines_width(f.fm_mono, c.grad) + 8 * s,
                                 lines * f.line + 4 * s)
        if c.fan_in > 1:
            text = f"fan-in ×{c.fan_in}"
            tw = advance(f.fm_pill, text)
            rect = QRectF(width - pad - tw - 10.0 * s, y + (f.line - f.pill_h) / 2,
                          tw + 10.0 * s, f.pill_h)
            self._fan_pill = _Pill(rect, text, THEME.edge_active, THEME.paper, tw)

    def _place_children(self, c: NodeContent, width: float, height: float) -> None:
        """Ports on the body's edges, the error badge on the corner, the tooltip."""
        key = (len(self._connected), width, height, self._title_h)
        if key != self._ports_key:
            self._ports_key = key
            if self._ports is not None:
                ins, out = self._ports
                for i, port in enumerate(ins):
                    port.setPos(*self._port_offset(False, i))
                out.setPos(*self._port_offset(True, 0))
        if c.error:
            if self.badge is None:
                self.badge = ErrorBadge(self)
            self.badge.setPos(width - 2 * UNIT, 2 * UNIT)
            self.badge.setToolTip(c.error)
        elif self.badge is not None:
            self.badge.setParentItem(None)  # type: ignore[arg-type]
            if self.badge.scene() is not None:
                self.badge.scene().removeItem(self.badge)
            self.badge = None
        if c.tooltip != self._tooltip:
            self._tooltip = c.tooltip
            self.setToolTip(c.tooltip)

    # ------------------------------------------------------------------ painting

    def _set_bounds(self) -> None:
        m = BOUNDS_MARGIN * UNIT  # room for the ports, the thick highlight border, the shadow
        grow = ACTIVE_GROW * self._h / 2 if self._in_step() else 0.0
        self.setRect(self._box().adjusted(-m, -m - grow, m, m + grow))

    def min_screen_pt(self) -> float:
        """The smallest on-screen text size the canvas showing this box accepts."""
        if self._stand_in_pt is not None:
            return self._stand_in_pt
        return getattr(self.scene(), "min_text_pt", MIN_SCREEN_PT)

    def compact_form(self, zoom: float) -> list[tuple[CompactLine, float]] | None:
        """At ``zoom``, the compact form's lines with their point sizes (scene), or None
        when the full box is readable (see :mod:`gui.model.semantic_zoom`)."""
        layout = self._compact_layout(zoom)
        return None if layout is None else layout[0]

    def _compact_layout(
        self, zoom: float
    ) -> tuple[list[tuple[CompactLine, float]], QRectF] | None:
        """:meth:`compact_form` and the rectangle it is drawn in: the box, or, for the
        active step's boxes, the box grown (up to :data:`ACTIVE_GROW`, about its
        middle) so that their names keep the size the other boxes' names grow to."""
        c = self.content
        if c is None or not is_compact(zoom, BOX_PT, self.min_screen_pt()):
            return None
        floor = self.min_screen_pt() / zoom  # the size a line is shown at, room allowing
        lines, widths, line, room = self._compact_metrics(MIN_EXTRA_SHARE * floor, floor)
        in_step = self._in_step()
        rect = self._box()
        if in_step:
            grow = min(name_growth(zoom, self.min_screen_pt(), widths, line, room),
                       ACTIVE_GROW * rect.height())
            rect.adjust(0, -grow / 2, 0, grow / 2)
            room = (room[0], room[1] + grow)
        gap = compact_fonts().beside_gap / COMPACT_REF_PT
        sizes, beside = compact_rows(zoom, self.min_screen_pt(), widths, line, room, gap,
                                     name_first=in_step)
        if beside:  # the value first: "8  grad 0 → 2", never "grad 0 → 2  8"
            value, grad = sorted(lines[1:], key=lambda ln: ln.kind != "value")
            lines[1:] = [value, replace(grad, beside=True)]
        return list(zip(lines, sizes, strict=True)), rect

    def compact_min_zooms(self) -> MinZooms:
        """The smallest zooms at which the compact form stays legible at the canvas's
        minimum text size (see :class:`~gui.model.semantic_zoom.MinZooms`).

        Kept per box by what it depends on: the camera asks for every box's twice a
        frame while following, and measuring them all was 86 % of a followed step."""
        key = (self.content, self._in_step(), self._w, self._h,
               self.min_screen_pt(), id(compact_fonts()))
        if self._min_zooms is None or self._min_zooms[0] != key:
            self._min_zooms = (key, self._measure_min_zooms())
        return self._min_zooms[1]

    def _measure_min_zooms(self) -> MinZooms:
        _lines, widths, line, room = self._compact_metrics()
        pt = self.min_screen_pt()
        number = compact_min_zoom(pt, widths, line, room, with_next=True)
        if not self._in_step():
            name = compact_min_zoom(pt, widths, line, room)
            return MinZooms(name, name, number)
        _lines, cut_widths, _line, _room = self._compact_metrics(inf)  # its shortest cut
        return MinZooms(number, compact_min_zoom(pt, cut_widths, line, room, with_next=True),
                        number)

    def _in_step(self) -> bool:
        """This box takes part in the active step (its gradient is what changes)."""
        c = self.content
        return c is not None and (c.grad_active or self.highlight_consumer)

    def _compact_metrics(
        self, fit_pt: float | None = None, shown_pt: float | None = None
    ) -> tuple[list[CompactLine], list[float], float, tuple[float, float]]:
        """Compact lines, their widths and the line height at 1 pt, and the room.

        ``fit_pt``: an active box's gradient line too wide for its box at this scene size
        (the smallest a line is shown) is cut to fit (``inf``: to its shortest cut), as
        :func:`~gui.model.semantic_zoom.fitting_chars` says, rather than left out.
        ``shown_pt``: the size the lines are shown at when there is room; lines are cut
        only past the characters the box's width holds at it (the camera, asking
        without it, plans for the usual cut)."""
        c = self.content
        assert c is not None
        in_step = self._in_step()
        f = compact_fonts()
        room = (self._w - 16.0 * UNIT, self._h - 6.0 * UNIT)
        chars = 0 if shown_pt is None else room_chars(
            room[0], advance(f.fm_mono, "0") / COMPACT_REF_PT, shown_pt)
        lines = compact_lines(
            self.node_id, c.value, c.grad, grad_first=in_step, chars=chars, grad_title=c.grad_title
        )
        widths = [advance(f.fm_mono if ln.kind != "name" else f.fm_name, ln.text)
                  / COMPACT_REF_PT for ln in lines]
        line = f.fm_mono.lineSpacing() / COMPACT_REF_PT
        if in_step and fit_pt is not None and lines[1].kind == "grad":
            text = lines[1].text
            chars = fitting_chars(len(text), widths[1], fit_pt, room[0])
            if chars < len(text):
                lines[1] = replace(lines[1], text=shortened(text, chars))
                widths[1] = advance(f.fm_mono, lines[1].text) / COMPACT_REF_PT
        return lines, widths, line, room

    def far_look(self) -> tuple[float, float, float, float, float, QColor]:
        """What the box shows from far away: its rectangle in scene coordinates (x, y,
        width, height), its band's height (the band is the rectangle's top) and the
        band's colour (the scene's far-away painter batches them)."""
        assert self.content is not None
        return (self.x(), self.y(), self._w, self._h, self._title_h,
                band_colour(self.content.style))

    def _paint_compact(self, painter: QPainter, lines: list[tuple[CompactLine, float]],
                       rect: QRectF) -> None:
        """Name and value (and the gradient being received) large, centred in the box.

        Each line is laid out at :data:`COMPACT_REF_PT`, where its width was measured,
        and scaled to its size, so it is drawn as wide as :func:`compact_sizes` fitted it
        into the box. Set to a small point size instead, a font is laid out with advances
        rounded to its whole pixels: up to 8 % wider, which ran a long value into the
        box's sides, where the edges plug in, so an edge seemed to run into the text."""
        f = compact_fonts()
        per_pt = f.fm_mono.lineSpacing() / COMPACT_REF_PT
        rows: list[list[tuple[CompactLine, float]]] = []
        for ln, pt in lines:
            if pt >= 1.0:
                if ln.beside and rows:
                    rows[-1].append((ln, pt))
                else:
                    rows.append([(ln, pt)])
        y = rect.top() + (rect.height() - per_pt * sum(row[0][1] for row in rows)) / 2
        colours = {"name": THEME.text, "value": THEME.value_text, "grad": THEME.grad_text}
        gap = f.beside_gap
        for row in rows:
            pt = row[0][1]
            k = pt / COMPACT_REF_PT
            widths = [advance(f.fm_name if ln.kind == "name" else f.fm_mono, ln.text)
                      for ln, _pt in row]
            x = (rect.width() / k - sum(widths) - gap * (len(row) - 1)) / 2
            painter.save()
            painter.translate(0, y)
            painter.scale(k, k)
            for (ln, _pt), width in zip(row, widths, strict=True):
                painter.setFont(f.name if ln.kind == "name" else f.mono)
                painter.setPen(colours[ln.kind])
                painter.drawText(QRectF(x, 0, width, per_pt * COMPACT_REF_PT),
                                 Qt.AlignmentFlag.AlignCenter,
                                 ln.text)
                x += width + gap
            painter.restore()
            y += per_pt * pt

    def _paint_ports(self, painter: QPainter, lod: float) -> None:
        """The ports, at least :data:`MIN_PORT_PX` wide on screen (as far as the box's
        margin allows): a compact box shown small keeps showing where to connect."""
        ports = self._ports  # none made: none is hovered (no port objects are made here)
        looks = [(False, i, flag, ports is not None and ports[0][i] is self.hover_port)
                 for i, flag in enumerate(self._connected)]
        looks.append((True, 0, False, ports is not None and ports[1] is self.hover_port))
        for is_output, index, connected, hover in looks:
            rect, pen, brush = port_style(is_output, connected or is_output or hover, hover)
            r = min(max(rect.width(), MIN_PORT_PX / lod), 2 * BOUNDS_MARGIN * UNIT) / 2
            painter.setPen(pen)
            painter.setBrush(brush)
            painter.drawEllipse(QPointF(*self._port_offset(is_output, index)), r, r)

    @reported
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        """Fill Qt's cache of the box with a picture drawn before for the same look
        (:mod:`.box_renders`), or draw it. Only a look change is looked up and kept: a
        zoom redraws every box in view at a scale that is never met again exactly."""
        if self.content is None:
            return
        t = painter.worldTransform()
        scale = (t.m11(), t.m12(), t.m21(), t.m22())
        zoomed, self._drawn_scale = scale != self._drawn_scale, scale
        device = None if zoomed else box_renders.device_key(painter, self.boundingRect())
        if device is None:
            self._paint(painter, option)
        else:
            box_renders.draw(painter, (device, self._look(option)),
                             lambda into: self._paint(into, option))

    def _look(self, option: QStyleOptionGraphicsItem) -> tuple:
        """Everything :meth:`_paint` reads but the painter: the same look draws the
        same pixels."""
        hover = self.hover_port
        return (self.node_id, self.content, self.highlight_consumer, self._connected,
                None if hover is None else (hover.is_output, hover.index),
                bool(option.state & QStyle.StateFlag.State_Selected), self._w, self._h,
                self.min_screen_pt(), THEME.name, THEME.scale, THEME.high_contrast,
                id(fonts()), id(compact_fonts()))

    def draw_ahead(self, content: NodeContent, consumer: bool, world: QTransform,
                   window: QRect, ratio: float, hints: QPainter.RenderHint) -> None:
        """Keep the picture the box will be drawn with once it shows ``content`` (and the
        consumer's outline when ``consumer``), at item-to-device transform ``world`` into
        ``window`` (see :func:`.box_renders.draw_ahead`; none when it falls outside): the
        next step's boxes drawn in idle time, that step then copies them. Drawn by a
        stand-in taking that content (this box keeps showing its own), whose look is the
        one this box will have; this box's next drawing at ``world``'s scale is then
        looked up, when a picture was kept (a box hovered draws nothing ahead: its port's
        look is its own)."""
        if self.hover_port is not None:
            return
        stand_in = NodeItem(self.node_id)
        stand_in._stand_in_pt = self.min_screen_pt()
        stand_in.set_input_ports(list(self._connected))
        stand_in.set_consumer_highlight(consumer)
        stand_in.set_content(content)
        option = QStyleOptionGraphicsItem()
        if self.isSelected():
            option.state |= QStyle.StateFlag.State_Selected
        if box_renders.draw_ahead(stand_in._look(option), stand_in.boundingRect(), world,
                                  window, ratio, hints, lambda into: stand_in._paint(into, option)):
            self._drawn_scale = (world.m11(), world.m12(), world.m21(), world.m22())

    def _paint(self, painter: QPainter, option: QStyleOptionGraphicsItem) -> None:
        c, s, r = self.content, UNIT, self._radius
        if c is None:
            return
        rect = self._box()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        band = band_colour(c.style)
        layout = self._compact_layout(lod) if lod >= FAR_LOD else None
        compact = None
        if layout is not None:
            compact, rect = layout
        if lod < FAR_LOD:  # a few pixels on screen: a box with its band, nothing finer
            painter.setPen(QPen(THEME.node_selected if selected else THEME.node_border, 0))
            painter.setBrush(THEME.node_fill)
            painter.drawRect(rect)
            painter.fillRect(QRectF(0, 0, rect.width(), self._title_h), band)
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)

        # soft shadow
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(THEME.node_shadow)
        painter.drawRoundedRect(rect.translated(1.5 * s, 2.5 * s), r, r)

        fill = THEME.grad_active_fill if c.grad_active else THEME.node_fill
        painter.setBrush(fill)
        painter.drawRoundedRect(rect, r, r)
        if compact is None:
            if not self._placed:
                self._place_texts()
            painter.setBrush(band)
            painter.drawPath(self._band)
            painter.setPen(QPen(THEME.node_border.lighter(130), cline(1.0)))
            painter.drawLine(QPointF(0, self._title_h), QPointF(rect.width(), self._title_h))
        elif c.style is not BoxStyle.OP:  # leaves keep their colour: a tint over the whole box
            painter.setBrush(band)
            painter.drawRoundedRect(rect, r, r)

        if c.grad_active:
            pen = QPen(THEME.edge_active, cline(3.0))
        elif selected:
            pen = QPen(THEME.node_selected, cline(2.5))
        elif c.error:
            pen = QPen(THEME.error, cline(2.0))
        elif self.highlight_consumer:
            pen = QPen(THEME.edge_active.lighter(140), cline(2.0))
        else:
            pen = QPen(THEME.node_border, cline(1.2))
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(rect, r, r)
        if selected and c.grad_active:  # both: keep the selection visible inside
            painter.setPen(QPen(THEME.node_selected, cline(1.5)))
            painter.drawRoundedRect(rect.adjusted(3 * s, 3 * s, -3 * s, -3 * s), r - 2, r - 2)
        if compact is not None:
            self._paint_compact(painter, compact, rect)
        self._paint_ports(painter, lod)
        if compact is not None:
            return

        if lod < TEXT_LOD:
            return
        if self._grad_rect is not None:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(THEME.grad_active_mark)
            painter.drawRoundedRect(self._grad_rect, 4 * s, 4 * s)
        f = fonts()
        painter.setFont(f.pill)
        for pill in [*self._pills, *([self._fan_pill] if self._fan_pill else [])]:
            painter.setPen(QPen(pill.colour, cline(1.0)))
            painter.setBrush(pill.fill)
            painter.drawRoundedRect(pill.rect, pill.rect.height() / 2, pill.rect.height() / 2)
            tw, th = pill.text_width, f.fm_pill.height()
            if pill.static is None:
                pill.static = static_text(pill.text)
            painter.drawStaticText(
                QPointF(pill.rect.center().x() - tw / 2, pill.rect.center().y() - th / 2),
                pill.static,
            )
        for run in self._runs:
            run.draw(painter)

