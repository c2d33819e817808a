"""The maths of Backprop Studio: graphs, ops, forward and backward passes, files. No Qt here.

``APP_NAME`` lives here because the engine's own messages name the app whose file a
user opened (``not a Backprop Studio graph: ...``) and the engine may not import gui/.
"""

APP_NAME = "Backprop Studio"

#: The distribution whose metadata carries the version (pyproject.toml's [project] name).
DISTRIBUTION = "backprop-studio"


def app_version() -> str:
    """The installed version, from the package metadata (one copy: pyproject.toml); a
    checkout run without ``pip install`` has none and says so."""
    from importlib import metadata  # lazy: the engine's import stays light

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def app_signature() -> str:
    """``Backprop Studio 0.1.0``: what ``--version`` prints and exports name as their maker."""
    return f"{APP_NAME} {app_version()}"
