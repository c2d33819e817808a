"""Help > About: the version, the licences of what ships with the app, and where it keeps
the user's settings and autosaves (the two places a user looks for when moving machines
or after a crash).

The licences come from the installed packages' own metadata, so the list follows
pyproject.toml's dependencies (and theirs) without a copy of either here.
"""

from __future__ import annotations

import html
import re
from importlib import metadata

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from engine import APP_NAME, DISTRIBUTION, app_version

from .files import autosave_dir
from .layouts import fill
from .theme import NAME_FONT_FILE

FONT_LICENCE = NAME_FONT_FILE.parent / "OFL.txt"


def _requirement_name(requirement: str) -> str | None:
    """The distribution a requirement line names, or None for one with a marker (an extra's,
    or one platform's: ``; extra == "test"``, ``; sys_platform == "win32"``)."""
    if ";" in requirement:
        return None
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    return match.group(0) if match else None


def licence_of(dist: metadata.Distribution) -> str:
    """A distribution's licence in one line: its SPDX expression, else a short License
    field, else its licence classifiers."""
    meta = dist.metadata
    expression = meta.get("License-Expression")  # type: ignore[attr-defined]
    if expression:
        return expression
    field = (meta.get("License") or "").strip()  # type: ignore[attr-defined]
    if field and "\n" not in field and len(field) < 80:
        return field
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or []
                   if c.startswith("License ::")]
    return ", ".join(classifiers) or "see the package's metadata"


def dependencies() -> list[tuple[str, str, str]]:
    """(name, version, licence) of every installed runtime dependency, theirs included,
    and of PyTorch when it is installed (optional: capture and the gradient check)."""
    try:
        todo = [n for r in metadata.requires(DISTRIBUTION) or [] if (n := _requirement_name(r))]
    except metadata.PackageNotFoundError:  # a checkout run without pip install
        todo = []
    todo.append("torch")
    found: dict[str, tuple[str, str, str]] = {}
    while todo:
        name = todo.pop(0)
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = (dist.metadata["Name"], dist.version, licence_of(dist))
        todo += [n for r in dist.requires or [] if (n := _requirement_name(r))]
    return sorted(found.values(), key=lambda t: t[0].lower())


def about_html() -> str:
    """The dialog's text, every value escaped here."""
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(n)}</td><td>{e(v)}</td><td>{e(lic)}</td></tr>"
        for n, v, lic in dependencies()
    )
    try:
        font_licence = FONT_LICENCE.read_text(encoding="utf-8")
    except OSError as exc:
        font_licence = f"(cannot read {FONT_LICENCE}: {exc.strerror})"
    return (
        f"<h2>{e(APP_NAME)} {e(app_version())}</h2>"
        "<p>Reverse-mode automatic differentiation, made visible: build a graph, choose the "
        "output and the gradient <i>v</i>, and watch <i>v</i>ᵀJ flow back edge by edge, as "
        "<code>y.backward(gradient=v)</code> computes it in PyTorch.</p>"
        "<h3>Where your things are</h3>"
        f"<p>Settings: <code>{e(QSettings().fileName())}</code><br>"
        f"Autosaves of unsaved work: <code>{e(str(autosave_dir()))}</code></p>"
        "<h3>Licences</h3>"
        "<p>The names on the canvas are drawn in JetBrains Mono NL ExtraBold, bundled under "
        "the SIL Open Font License 1.1 (below). The app runs on:</p>"
        f'<table cellspacing="0" cellpadding="3"><tr><th align="left">Package</th>'
        f'<th align="left">Version</th><th align="left">Licence</th></tr>{rows}</table>'
        f"<h3>SIL Open Font License 1.1</h3><pre>{e(font_licence)}</pre>"
    )


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"About {APP_NAME}")
        self.text = QTextBrowser(self, openExternalLinks=True)
        self.text.setHtml(about_html())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        fill(QVBoxLayout(self), self.text, buttons)
        self.resize(640, 600)
