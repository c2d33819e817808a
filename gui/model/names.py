"""Names the app exchanges, one copy each: its MIME types.

(The app's name is ``engine.APP_NAME``, which the engine's messages use too; the graph
file suffix is the file format's: ``engine.fileformat.SUFFIX``.)
"""

from __future__ import annotations

#: Drag-and-drop of an op name from the palette onto the canvas.
MIME_OP = "application/x-backprop-op"
#: Copied nodes on the clipboard (a graph file fragment).
MIME_NODES = "application/x-backprop-nodes"
