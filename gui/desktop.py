"""``backprop-studio --install-desktop`` / ``--uninstall-desktop``: a Linux desktop citizen.

Writes, for this user only and under ``$XDG_DATA_HOME`` (default ``~/.local/share``),
what the freedesktop conventions ask for a double-click on a file to open the app:

- ``applications/backprop-studio.desktop``: the menu entry, ``Exec`` the command that
  ran this (so a venv's install works without being on PATH), ``MimeType`` both types;
- ``mime/packages/backprop-studio.xml``: ``application/x-bpgraph`` (``*.bpgraph``) and
  ``application/x-bptrace`` (``*.bptrace``), with the app's icon;
- ``icons/hicolor/scalable/apps/backprop-studio.svg``: the icon (``assets/icon.svg``).

The list of files written is kept in ``backprop-studio/desktop-manifest.json`` beside
them, so uninstalling removes exactly those (and the folders the install created, when
empty), nothing else. ``update-mime-database`` and ``update-desktop-database`` refresh
the caches when they are installed; without them the files are still right and the
desktop picks them up at its next scan. No Qt here: this runs before any window.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from engine import APP_NAME

ICON_FILE = Path(__file__).resolve().parent.parent / "assets" / "icon.svg"
APP_ID = "backprop-studio"
#: Each file kind's MIME type: suffix, type, what the file manager calls it.
MIME_TYPES = (
    (".bpgraph", "application/x-bpgraph", f"{APP_NAME} graph"),
    (".bptrace", "application/x-bptrace", f"{APP_NAME} backward-pass trace"),
)
MANIFEST = Path(APP_ID) / "desktop-manifest.json"


def data_home() -> Path:
    """``$XDG_DATA_HOME``, or ``~/.local/share`` when it is unset or not absolute."""
    value = os.environ.get("XDG_DATA_HOME", "")
    return Path(value) if os.path.isabs(value) else Path.home() / ".local" / "share"


def launch_command() -> list[str]:
    """The command that opens the app: the ``backprop-studio`` script that is running,
    else this Python with the checkout's ``main.py``."""
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if script is not None and script.name == APP_ID and script.is_file():
        return [str(script)]
    return [sys.executable, str(Path(__file__).resolve().parent.parent / "main.py")]


def exec_quote(arg: str) -> str:
    """One argument of a desktop entry's ``Exec`` key, quoted as the specification says
    (reserved characters inside double quotes, with ``"`` `` ` `` ``$`` ``\\`` escaped),
    then ``%`` doubled and backslashes doubled again for the string-value level."""
    if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
        quoted = arg
    else:
        quoted = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    return quoted.replace("%", "%%").replace("\\", "\\\\")


def desktop_entry(command: list[str]) -> str:
    types = ";".join(mime for _suffix, mime, _name in MIME_TYPES)
    return (
        "[Desktop Entry]\nType=Application\n"
        f"Name={APP_NAME}\n"
        "Comment=Reverse-mode automatic differentiation, made visible\n"
        f"Exec={' '.join(exec_quote(a) for a in command)} %F\n"
        f"Icon={APP_ID}\nTerminal=false\nCategories=Education;Science;Math;\n"
        f"MimeType={types};\n"
    )


def mime_package() -> str:
    types = "".join(
        f'  <mime-type type="{mime}">\n    <comment>{name}</comment>\n'
        f'    <sub-class-of type="application/json"/>\n    <icon name="{APP_ID}"/>\n'
        f'    <glob pattern="*{suffix}"/>\n  </mime-type>\n'
        for suffix, mime, name in MIME_TYPES
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">\n'
        f"{types}</mime-info>\n"
    )


def planned_files(home: Path) -> dict[Path, bytes]:
    """Every file the install writes, by path, with its content."""
    return {
        home / "applications" / f"{APP_ID}.desktop": desktop_entry(launch_command()).encode(),
        home / "mime" / "packages" / f"{APP_ID}.xml": mime_package().encode(),
        home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg": ICON_FILE.read_bytes(),
    }


def install(home: Path) -> list[Path]:
    """Write the entry, MIME types and icon under ``home``; the files written."""
    created: list[Path] = []
    files = planned_files(home)
    for path, data in files.items():
        for folder in reversed([*path.parents]):
            if not folder.exists() and home in (folder, *folder.parents):
                folder.mkdir()
                created.append(folder)
        path.write_bytes(data)
    manifest = home / MANIFEST
    if not manifest.parent.exists():
        manifest.parent.mkdir(parents=True)
        created.append(manifest.parent)
    old = _read_manifest(manifest)
    folders = [*old.get("folders", []), *(str(f) for f in created)]
    manifest.write_text(
        json.dumps({"files": [str(p) for p in files], "folders": folders}, indent=1),
        encoding="utf-8",
    )
    _refresh(home)
    return [*files, manifest]


def uninstall(home: Path) -> list[Path]:
    """Remove what :func:`install` wrote under ``home`` (per its manifest); the files removed."""
    manifest = home / MANIFEST
    recorded = _read_manifest(manifest)
    removed = []
    for name in recorded.get("files", []):
        path = Path(name)
        if path.is_file():
            path.unlink()
            removed.append(path)
    if manifest.is_file():
        manifest.unlink()
        removed.append(manifest)
    for name in sorted(recorded.get("folders", []), key=len, reverse=True):
        folder = Path(name)
        if folder.is_dir() and _only_caches(home, folder):
            shutil.rmtree(folder)
    _refresh(home)
    return removed


def _only_caches(home: Path, folder: Path) -> bool:
    """Whether a folder the install created holds nothing but what the cache tools
    generate from our files (then it goes with them): ``mime/`` without ``packages/``,
    ``applications/`` with only ``mimeinfo.cache``."""
    left = {p.name for p in folder.iterdir()}
    if folder == home / "mime":
        return "packages" not in left
    if folder == home / "applications":
        return left <= {"mimeinfo.cache"}
    return not left


def _read_manifest(path: Path) -> dict[str, list[str]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _refresh(home: Path) -> None:
    """Rebuild the MIME and desktop caches where the tools are installed (optional)."""
    import subprocess  # cold: only here (the app imports this module for its icon)

    tools = (("update-mime-database", "mime"), ("update-desktop-database", "applications"))
    for tool, folder in tools:
        exe = shutil.which(tool)
        if exe is not None and (home / folder).is_dir():
            subprocess.run([exe, str(home / folder)], capture_output=True, check=False)


def main(option: str) -> int:
    """``--install-desktop`` or ``--uninstall-desktop``: one line per file, exit 0 (2: not
    a freedesktop system)."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        print(f"error: {option} is for Linux desktops; the README says how to associate "
              "the files on macOS and Windows", file=sys.stderr)
        return 2
    home = data_home()
    try:
        paths = install(home) if option == "--install-desktop" else uninstall(home)
    except OSError as exc:
        print(f"error: {exc.filename or home}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    verb = "wrote" if option == "--install-desktop" else "removed"
    for path in paths:
        print(f"{verb} {path}")
    if not paths:
        print("nothing to remove: --install-desktop wrote nothing here")
    return 0
