"""Every colour the app shows, by role and theme, as hex strings: the one place a colour is written.

No Qt here, so the HTML the view model writes (chain rule, summaries, exports) can
use it headless. :mod:`gui.theme` builds its QColors from these same strings, so
the canvas, the panels and the HTML always agree; ``tests/test_colours.py`` fails
if a colour literal appears anywhere else, and ``tests/test_theme_contrast.py`` if a
pair of :data:`TEXT_PAIRS` reads below :data:`MIN_CONTRAST` in any theme.

A role is read as ``colours.TEXT``: the colour of the theme in use (:func:`use`;
``light`` until asked). The themes are one table, :data:`THEMES`, with the same roles
in each (one row a role); a few roles are another role by definition (:data:`ALIASES`).
"""

from __future__ import annotations

#: The theme exports and first launches use.
DEFAULT = "light"

#: Each role's colour in each theme, one row a role (so no theme can lack one), in the
#: order of :data:`THEMES`: ``light``, the app's own look; ``dark``, for a dark desk;
#: ``projector``, black on white with saturated marks, for a washed-out beamer.
_ROLES: dict[str, tuple[str, str, str]] = {
    # Paper and ink.
    "PAPER": ("#ffffff", "#20242c", "#ffffff"),  # node boxes, panel and exported-page backgrounds
    "PANEL": ("#f3f4f6", "#272b33", "#ffffff"),  # docks, tool bars and the window around the canvas
    "PAGE": ("#f4f6fa", "#181b21", "#ffffff"),  # around the panes of the HTML player
    "HEADER": ("#eef1f6", "#2c313b", "#e4e4e4"),  # table heads, export headers
    "RULE": ("#c9ccd3", "#4a505c", "#555555"),  # thin borders of tables and panes
    "TEXT": ("#1d2230", "#e8eaef", "#000000"),
    "TEXT_MUTED": ("#5b6270", "#aab1be", "#333333"),
    "SHADOW": ("#000000", "#000000", "#000000"),  # drawn translucent under boxes and edge labels
    # The canvas.
    "BACKGROUND": ("#f7f7f4", "#16191e", "#ffffff"),
    "GRID_MINOR": ("#ebebe6", "#1e2228", "#efefef"),
    "GRID_MAJOR": ("#dcdcd5", "#282d35", "#d4d4d4"),
    "NODE_BORDER": ("#8a8f98", "#747c8b", "#000000"),
    "NODE_SELECTED": ("#2f6fdf", "#5b9bff", "#0047c2"),
    "TITLE_OP": ("#e9eef7", "#2c3648", "#d3e2ff"),  # op nodes
    "TITLE_INPUT": ("#dff3e4", "#1f3a2a", "#c6efd0"),  # leaves that require grad
    "TITLE_CONST": ("#ececec", "#31343b", "#dedede"),  # constants and inputs that need no grad
    "OUTPUT_FILL": ("#fde8e6", "#4a2623", "#ffd3cd"),  # the "output" pill
    "GRAD_ACTIVE_FILL": ("#fff6ef", "#33291f", "#fff0bf"),  # the box whose gradient accumulates
    "GRAD_ACTIVE_MARK": ("#fde3df", "#4a2724", "#ffd3cd"),  # behind the gradient line of that box
    "EDGE": ("#7d8591", "#8d95a3", "#333333"),
    "EDGE_DONE": ("#e8a33d", "#e8a33d", "#c76d00"),  # edges the backward pass has crossed
    "EDGE_ACTIVE": ("#d93025", "#ff5a4e", "#d40000"),
    "PULSE": ("#ff6a3d", "#ff7a50", "#ff3d00"),
    "PORT_IN": ("#4a90d9", "#5aa0ea", "#0057d9"),
    "PORT_OUT": ("#3c9d5d", "#4cb06d", "#00802b"),
    "GROUP_BORDER": ("#6a4fb3", "#a58bf0", "#4b0fb3"),  # the frame around a group's members
    "GROUP_FILL": ("#efe9fb", "#2a2640", "#ebe2ff"),  # its fill (opaque when collapsed)
    # What the numbers are: gradients red, local Jacobians blue, tangents green.
    "GRAD_TEXT": ("#b3261e", "#ff9088", "#a80000"),
    "JACOBIAN": ("#1f4e9c", "#8fb8ff", "#0030a0"),
    "TANGENT": ("#2e6b3a", "#82d48e", "#005c1a"),
    # Messages.
    "ERROR": ("#d93025", "#ff5a4e", "#d40000"),
    "ERROR_MARK": ("#f9d6d5", "#5a2a28", "#ffc7c2"),  # behind a line of code that does not import
    "NOTE_FILL": ("#fff4f2", "#3a2322", "#fff0ee"),  # the canvas's refusal note
    "NOTE_TEXT": ("#8c1d18", "#ffb4ab", "#850000"),
    "RIGHT": ("#2e7d32", "#82d48e", "#006b1f"),  # a quiz answer the engine agrees with
    # Gradient check rows, by status (engine.gradcheck.Status values).
    "CHECK_OK": ("#d7f0dc", "#1f3f27", "#c9ecd1"),
    "CHECK_CLOSE": ("#fbe8c3", "#4a3b17", "#fbe2b0"),
    "CHECK_BAD": ("#f6cdca", "#4f2422", "#f6c4c0"),
    "CHECK_KINK": ("#e6dcf5", "#3a2f52", "#e0d3f5"),
    "CHECK_UNDEFINED": ("#e3e3e3", "#34373d", "#dcdcdc"),
}
#: Each theme's colour per role.
THEMES: dict[str, dict[str, str]] = {
    name: {role: row[i] for role, row in _ROLES.items()}
    for i, name in enumerate(("light", "dark", "projector"))
}

#: Roles that are another role in every theme.
ALIASES = {
    "ERROR_TEXT": "GRAD_TEXT",  # one-line error messages under fields
    "WRONG": "GRAD_TEXT",  # a quiz answer the engine disagrees with
}

# Not per theme: the heat map and the plots' lines carry meaning by hue, the same
# on any ground. Jacobian heat maps: negative, zero, positive.
DIVERGING = ("#2166ac", "#f7f7f7", "#b2182b")
# Train mode's plots: the loss, then one line per parameter (Okabe-Ito, colour-blind safe).
SERIES = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9")

_current = [DEFAULT]


def use(name: str) -> None:
    """Make ``name`` (a key of :data:`THEMES`) the theme every role is read from."""
    if name not in THEMES:
        raise ValueError(f"unknown theme {name!r}: one of {', '.join(THEMES)}")
    _current[0] = name


def current() -> str:
    """The name of the theme in use."""
    return _current[0]


def colour(role: str, theme: str | None = None) -> str:
    """The hex colour of ``role`` in ``theme`` (default: the one in use)."""
    return THEMES[theme or _current[0]][ALIASES.get(role, role)]


def __getattr__(role: str) -> str:
    """``colours.TEXT``: the role's colour in the theme in use."""
    if role.isupper() and ALIASES.get(role, role) in THEMES[DEFAULT]:
        return colour(role)
    raise AttributeError(f"module {__name__!r} has no attribute {role!r}")

