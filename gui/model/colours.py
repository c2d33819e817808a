"""Every colour the app shows, by role and theme, as hex strings: the one place a colour is written.

No Qt here, so the HTML the view model writes (chain rule, summaries, exports) can
use it headless. :mod:`gui.theme` builds its QColors from these same strings, so
the canvas, the panels and the HTML always agree; ``tests/test_colours.py`` fails
if a colour literal appears anywhere else, and ``tests/test_theme_contrast.py`` if a
pair of :data:`TEXT_PAIRS` reads below :data:`MIN_CONTRAST` in any theme.

A role is read as ``colours.TEXT``: the colour of the theme in use (:func:`use`;
``light`` until asked). The themes are one table, :data:`THEMES`, with the same roles
in each; a few roles are another role by definition (:data:`ALIASES`).
"""

from __future__ import annotations

#: The theme exports and first launches use.
DEFAULT = "light"

#: Each theme's colour per role. ``light``: the app's own look; ``dark``: for a dark
#: desk; ``projector``: black on white with saturated marks, for a washed-out beamer.
THEMES: dict[str, dict[str, str]] = {
    "light": {
        # Paper and ink.
        "PAPER": "#ffffff",  # node boxes, panel and exported-page backgrounds
        "PANEL": "#f3f4f6",  # docks, tool bars and the window around the canvas
        "PAGE": "#f4f6fa",  # around the panes of the HTML player
        "HEADER": "#eef1f6",  # table heads, export headers
        "RULE": "#c9ccd3",  # thin borders of tables and panes
        "TEXT": "#1d2230",
        "TEXT_MUTED": "#5b6270",
        "SHADOW": "#000000",  # drawn translucent under boxes and edge labels
        # The canvas.
        "BACKGROUND": "#f7f7f4",
        "GRID_MINOR": "#ebebe6",
        "GRID_MAJOR": "#dcdcd5",
        "NODE_BORDER": "#8a8f98",
        "NODE_SELECTED": "#2f6fdf",
        "TITLE_OP": "#e9eef7",  # op nodes
        "TITLE_INPUT": "#dff3e4",  # leaves that require grad
        "TITLE_CONST": "#ececec",  # constants and inputs that need no grad
        "OUTPUT_FILL": "#fde8e6",  # the "output" pill
        "GRAD_ACTIVE_FILL": "#fff6ef",  # the box whose gradient is being accumulated
        "GRAD_ACTIVE_MARK": "#fde3df",  # behind the gradient line of that box
        "EDGE": "#7d8591",
        "EDGE_DONE": "#e8a33d",  # edges the backward pass has crossed
        "EDGE_ACTIVE": "#d93025",
        "PULSE": "#ff6a3d",
        "PORT_IN": "#4a90d9",
        "PORT_OUT": "#3c9d5d",
        "GROUP_BORDER": "#6a4fb3",  # the frame around a group's members
        "GROUP_FILL": "#efe9fb",  # its fill (opaque when collapsed)
        # What the numbers are: gradients red, local Jacobians blue, tangents green.
        "GRAD_TEXT": "#b3261e",
        "JACOBIAN": "#1f4e9c",
        "TANGENT": "#2e6b3a",
        # Messages.
        "ERROR": "#d93025",
        "ERROR_MARK": "#f9d6d5",  # behind a line of code that does not import
        "NOTE_FILL": "#fff4f2",  # the canvas's refusal note
        "NOTE_TEXT": "#8c1d18",
        "RIGHT": "#2e7d32",  # a quiz answer the engine agrees with
        # Gradient check rows, by status (engine.gradcheck.Status values).
        "CHECK_OK": "#d7f0dc",
        "CHECK_CLOSE": "#fbe8c3",
        "CHECK_BAD": "#f6cdca",
        "CHECK_KINK": "#e6dcf5",
        "CHECK_UNDEFINED": "#e3e3e3",
    },
    "dark": {
        "PAPER": "#20242c",
        "PANEL": "#272b33",
        "PAGE": "#181b21",
        "HEADER": "#2c313b",
        "RULE": "#4a505c",
        "TEXT": "#e8eaef",
        "TEXT_MUTED": "#aab1be",
        "SHADOW": "#000000",
        "BACKGROUND": "#16191e",
        "GRID_MINOR": "#1e2228",
        "GRID_MAJOR": "#282d35",
        "NODE_BORDER": "#747c8b",
        "NODE_SELECTED": "#5b9bff",
        "TITLE_OP": "#2c3648",
        "TITLE_INPUT": "#1f3a2a",
        "TITLE_CONST": "#31343b",
        "OUTPUT_FILL": "#4a2623",
        "GRAD_ACTIVE_FILL": "#33291f",
        "GRAD_ACTIVE_MARK": "#4a2724",
        "EDGE": "#8d95a3",
        "EDGE_DONE": "#e8a33d",
        "EDGE_ACTIVE": "#ff5a4e",
        "PULSE": "#ff7a50",
        "PORT_IN": "#5aa0ea",
        "PORT_OUT": "#4cb06d",
        "GROUP_BORDER": "#a58bf0",
        "GROUP_FILL": "#2a2640",
        "GRAD_TEXT": "#ff9088",
        "JACOBIAN": "#8fb8ff",
        "TANGENT": "#82d48e",
        "ERROR": "#ff5a4e",
        "ERROR_MARK": "#5a2a28",
        "NOTE_FILL": "#3a2322",
        "NOTE_TEXT": "#ffb4ab",
        "RIGHT": "#82d48e",
        "CHECK_OK": "#1f3f27",
        "CHECK_CLOSE": "#4a3b17",
        "CHECK_BAD": "#4f2422",
        "CHECK_KINK": "#3a2f52",
        "CHECK_UNDEFINED": "#34373d",
    },
    "projector": {
        "PAPER": "#ffffff",
        "PANEL": "#ffffff",
        "PAGE": "#ffffff",
        "HEADER": "#e4e4e4",
        "RULE": "#555555",
        "TEXT": "#000000",
        "TEXT_MUTED": "#333333",
        "SHADOW": "#000000",
        "BACKGROUND": "#ffffff",
        "GRID_MINOR": "#efefef",
        "GRID_MAJOR": "#d4d4d4",
        "NODE_BORDER": "#000000",
        "NODE_SELECTED": "#0047c2",
        "TITLE_OP": "#d3e2ff",
        "TITLE_INPUT": "#c6efd0",
        "TITLE_CONST": "#dedede",
        "OUTPUT_FILL": "#ffd3cd",
        "GRAD_ACTIVE_FILL": "#fff0bf",
        "GRAD_ACTIVE_MARK": "#ffd3cd",
        "EDGE": "#333333",
        "EDGE_DONE": "#c76d00",
        "EDGE_ACTIVE": "#d40000",
        "PULSE": "#ff3d00",
        "PORT_IN": "#0057d9",
        "PORT_OUT": "#00802b",
        "GROUP_BORDER": "#4b0fb3",
        "GROUP_FILL": "#ebe2ff",
        "GRAD_TEXT": "#a80000",
        "JACOBIAN": "#0030a0",
        "TANGENT": "#005c1a",
        "ERROR": "#d40000",
        "ERROR_MARK": "#ffc7c2",
        "NOTE_FILL": "#fff0ee",
        "NOTE_TEXT": "#850000",
        "RIGHT": "#006b1f",
        "CHECK_OK": "#c9ecd1",
        "CHECK_CLOSE": "#fbe2b0",
        "CHECK_BAD": "#f6c4c0",
        "CHECK_KINK": "#e0d3f5",
        "CHECK_UNDEFINED": "#dcdcdc",
    },
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

