"""Colours, fonts and the presentation scale, in one place.

Everything that paints asks here, so presentation mode (bigger fonts, thicker
lines, higher contrast) is one switch rather than a hunt through the views.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QFont


@dataclass
class Theme:
    """The look of the canvas and panels; ``scale`` multiplies fonts and line widths."""

    scale: float = 1.0
    high_contrast: bool = False

    background = QColor("#f7f7f4")
    grid_minor = QColor("#ebebe6")
    grid_major = QColor("#dcdcd5")
    node_fill = QColor("#ffffff")
    node_border = QColor("#8a8f98")
    node_selected = QColor("#2f6fdf")
    title_op = QColor("#e9eef7")  # op nodes
    title_input = QColor("#dff3e4")  # leaves that require grad
    title_const = QColor("#ececec")  # constants and inputs that need no grad
    text = QColor("#1d2230")
    text_muted = QColor("#5b6270")
    value_text = QColor("#1d2230")
    grad_text = QColor("#b3261e")  # gradients are red everywhere
    error = QColor("#d93025")
    edge = QColor("#7d8591")
    edge_done = QColor("#e8a33d")  # edges the backward pass has crossed
    edge_active = QColor("#d93025")
    pulse = QColor("#ff6a3d")
    port_in = QColor("#4a90d9")
    port_out = QColor("#3c9d5d")
    # Gradient check rows, by status (engine.gradcheck.Status values).
    check_ok = QColor("#d7f0dc")
    check_close = QColor("#fbe8c3")
    check_bad = QColor("#f6cdca")
    check_kink = QColor("#e6dcf5")
    check_undefined = QColor("#e3e3e3")
    # Groups: the frame around the members, and its fill (opaque when collapsed).
    group_border = QColor("#6a4fb3")
    group_fill = QColor("#efe9fb")

    def font(self, size: float = 10.0, bold: bool = False, mono: bool = False) -> QFont:
        f = QFont("DejaVu Sans Mono" if mono else "DejaVu Sans")
        f.setPointSizeF(size * self.scale)
        f.setBold(bold)
        return f

    def line(self, width: float = 1.5) -> float:
        return width * self.scale * (1.5 if self.high_contrast else 1.0)


#: The app's single theme; presentation mode changes ``scale`` and ``high_contrast``.
THEME = Theme()

#: Point size of the chain-rule panel's text before ``THEME.scale``: the canvas camera
#: zooms so box text is at least this large on screen.
CHAIN_RULE_PT = 12.0

#: The font scale used in presentation mode unless the user chose another (persisted).
PRESENTATION_SCALE = 1.6
