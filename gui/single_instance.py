"""One running app per user: a second launch hands its files to the first.

Opening a file from the file manager while the app runs starts a second process; it
connects to the first one's local socket (a Unix socket, a named pipe on Windows),
sends the files' absolute paths and exits, and the first opens each in a new window
of its own. Nothing in an open window is touched, so its unsaved changes stay. If no
app answers (none runs, or it hangs), the second process opens the files itself.

The channel is named after the user and the settings store (``QSettings().fileName()``):
test runs, whose settings live in a throw-away folder, never reach a user's app.
On macOS a file opened from the Finder arrives as a ``QFileOpenEvent`` instead
(:class:`FileOpenFilter`).
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
from collections.abc import Callable

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from .desktop import APP_ID
from .qt_override import reported_or

#: Milliseconds to reach a running app and for its answer before opening here instead.
CONNECT_MS, ANSWER_MS = 500, 10_000

Opener = Callable[[list[str]], list[str]]


def channel_name() -> str:
    """This user's and settings store's channel (short: Unix sockets have a path limit)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid()) if hasattr(os, "getuid") else ""
    key = f"{user}\n{QSettings().fileName()}".encode()
    return f"{APP_ID}-{hashlib.sha1(key).hexdigest()[:12]}"


def hand_over(paths: list[str]) -> list[str] | None:
    """Send ``paths`` (absolute) to a running app: the errors it reports (one line each),
    or None when no app took them (then open them here)."""
    socket = QLocalSocket()
    socket.connectToServer(channel_name())
    if not socket.waitForConnected(CONNECT_MS):
        return None
    message = json.dumps({"open": [os.path.abspath(p) for p in paths]}).encode() + b"\n"
    socket.write(QByteArray(message))
    socket.flush()
    answer = b""
    while not answer.endswith(b"\n") and socket.waitForReadyRead(ANSWER_MS):
        answer += bytes(socket.readAll().data())
    socket.disconnectFromServer()
    try:
        errors = json.loads(answer)["errors"]
    except (ValueError, KeyError, TypeError):
        return None  # no proper answer: open them here rather than maybe lose them
    return [str(e) for e in errors] if isinstance(errors, list) else None


class InstanceServer(QObject):
    """The running app's end: opens what later launches send, with ``opener(paths)``
    (which returns the one-line errors to send back)."""

    def __init__(self, opener: Opener, name: str | None = None) -> None:
        super().__init__()
        self.opener = opener
        self.name = name or channel_name()
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Start listening; a socket left by an app that crashed is removed first (its
        name answered no connection, or :func:`hand_over` would have reached it)."""
        if self.server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)
        return self.server.listen(self.name)

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        while (socket := self.server.nextPendingConnection()) is not None:
            socket.setProperty("buffer", b"")
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        data = socket.property("buffer") + bytes(socket.readAll().data())
        socket.setProperty("buffer", data)
        if not data.endswith(b"\n"):
            return
        try:
            paths = json.loads(data)["open"]
            ok = isinstance(paths, list) and all(isinstance(p, str) for p in paths)
        except (ValueError, KeyError, TypeError):
            ok = False
        errors = self.opener(paths) if ok else ["error: not a request this app understands"]
        socket.write(QByteArray(json.dumps({"errors": errors}).encode() + b"\n"))
        socket.flush()


class FileOpenFilter(QObject):
    """macOS: a file opened from the Finder while the app runs (``QEvent.FileOpen``)."""

    def __init__(self, opener: Opener) -> None:
        super().__init__()
        self.opener = opener

    @reported_or(bool)
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.FileOpen and isinstance(event, QFileOpenEvent):
            self.opener([event.file()])
            return True
        return super().eventFilter(watched, event)
