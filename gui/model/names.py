"""Names the app shows or exchanges, one copy each: the app's name and its MIME types.

(The graph file suffix is the file format's: ``engine.fileformat.SUFFIX``.)
"""

from __future__ import annotations

APP_NAME = "Backprop Studio"
#: Drag-and-drop of an op name from the palette onto the canvas.
MIME_OP = "application/x-backprop-op"
#: Copied nodes on the clipboard (a graph file fragment).
MIME_NODES = "application/x-backprop-nodes"
