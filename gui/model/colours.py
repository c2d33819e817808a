"""Every colour the app shows, by role, as hex strings: the one place a colour is written.

No Qt here, so the HTML the view model writes (chain rule, summaries, exports) can
use it headless. :mod:`gui.theme` builds its QColors from these same strings, so
the canvas, the panels and the HTML always agree; ``tests/test_colours.py`` fails
if a colour literal appears anywhere else.
"""

from __future__ import annotations

# Paper and ink.
PAPER = "#ffffff"  # node boxes, panel and exported-page backgrounds
PAGE = "#f4f6fa"  # around the panes of the HTML player
HEADER = "#eef1f6"  # table heads, export headers
RULE = "#c9ccd3"  # thin borders of tables and panes
TEXT = "#1d2230"
TEXT_MUTED = "#5b6270"
SHADOW = "#000000"  # drawn translucent under boxes and edge labels

# The canvas.
BACKGROUND = "#f7f7f4"
GRID_MINOR = "#ebebe6"
GRID_MAJOR = "#dcdcd5"
NODE_BORDER = "#8a8f98"
NODE_SELECTED = "#2f6fdf"
TITLE_OP = "#e9eef7"  # op nodes
TITLE_INPUT = "#dff3e4"  # leaves that require grad
TITLE_CONST = "#ececec"  # constants and inputs that need no grad
OUTPUT_FILL = "#fde8e6"  # the "output" pill
GRAD_ACTIVE_FILL = "#fff6ef"  # the box whose gradient is being accumulated
GRAD_ACTIVE_MARK = "#fde3df"  # behind the gradient line of that box
EDGE = "#7d8591"
EDGE_DONE = "#e8a33d"  # edges the backward pass has crossed
EDGE_ACTIVE = "#d93025"
PULSE = "#ff6a3d"
PORT_IN = "#4a90d9"
PORT_OUT = "#3c9d5d"
# Groups: the frame around the members, and its fill (opaque when collapsed).
GROUP_BORDER = "#6a4fb3"
GROUP_FILL = "#efe9fb"

# What the numbers are: gradients red, local Jacobians blue, tangents green.
GRAD_TEXT = "#b3261e"
JACOBIAN = "#1f4e9c"
TANGENT = "#2e6b3a"
# Jacobian heat maps: negative, zero, positive.
DIVERGING = ("#2166ac", "#f7f7f7", "#b2182b")
# Train mode's plots: the loss, then one line per parameter (Okabe-Ito, colour-blind safe).
SERIES = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9")

# Messages.
ERROR = "#d93025"
ERROR_TEXT = GRAD_TEXT  # one-line error messages under fields
ERROR_MARK = "#f9d6d5"  # behind a line of code that does not import
NOTE_FILL = "#fff4f2"  # the canvas's refusal note
NOTE_TEXT = "#8c1d18"
RIGHT = "#2e7d32"  # a quiz answer the engine agrees with
WRONG = GRAD_TEXT

# Gradient check rows, by status (engine.gradcheck.Status values).
CHECK_OK = "#d7f0dc"
CHECK_CLOSE = "#fbe8c3"
CHECK_BAD = "#f6cdca"
CHECK_KINK = "#e6dcf5"
CHECK_UNDEFINED = "#e3e3e3"
