"""The maths of Backprop Studio: graphs, ops, forward and backward passes, files. No Qt here.

``APP_NAME`` lives here because the engine's own messages name the app whose file a
user opened (``not a Backprop Studio graph: ...``) and the engine may not import gui/.
"""

APP_NAME = "Backprop Studio"
