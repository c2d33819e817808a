"""Open, save, recent files and autosave for one window's document.

The rule this module exists for: no edit and no saved file is ever lost. So a
broken file is refused before the open document is touched, saving is atomic
(``engine.fileformat.save``), unsaved changes are confirmed before they would be
replaced, and an autosave copy of a modified document is kept in the app's data
folder and offered back after a crash.

The questions (save changes? recover? which file?) are asked through a *host*
(the main window), so tests replace one method instead of clicking dialogs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, QSettings, QStandardPaths, QTimer, Signal

from engine import APP_NAME
from engine.atomic_write import pid_alive
from engine.collector import collector_paused
from engine.examples import EXAMPLES_DIR
from engine.fileformat import (
    SUFFIX,
    TRACE_SUFFIX,
    FileFormatError,
    GraphFile,
    ReadOnlyTarget,
    load,
    save,
)

from .document import GraphDocument

if TYPE_CHECKING:
    from engine.captured import CapturedTrace

RECENT_KEY = "files/recent"
MAX_RECENT = 8
#: Periodic autosave while there are unsaved edits, and the quiet time after an edit.
AUTOSAVE_INTERVAL_MS = 30_000
AUTOSAVE_DEBOUNCE_MS = 3_000


@contextmanager
def arriving() -> Iterator[None]:
    """Read or show a file: its objects arrive and stay until another file replaces
    them, so no collection while they arrive (each one found nothing to free but cost
    5-10 % of opening a 5,000-node file), and one collection of the young generations
    when they are in (``settle``), not two passes over them soon after.

    Not frozen after (``gc.freeze``): that also froze the garbage of the windows and
    documents closed before, and freed it at some later collection, when Qt had
    already deleted what their wrappers pointed at (a segfault in the test suite)."""
    with collector_paused(settle=True):
        yield


def is_trace_path(path: str | os.PathLike[str]) -> bool:
    """A captured PyTorch pass (``.bptrace``), shown read-only, rather than a graph."""
    return str(path).lower().endswith(TRACE_SUFFIX)


class Answer(StrEnum):
    """What to do with unsaved changes before they would be replaced."""

    SAVE = "save"
    DISCARD = "discard"
    CANCEL = "cancel"


class DiskChange(StrEnum):
    """What to do when the file changed on disk since this window opened or saved it."""

    OVERWRITE = "overwrite"
    SAVE_AS = "save_as"
    RELOAD = "reload"
    CANCEL = "cancel"


#: A file's identity on disk: (mtime in ns, size, SHA-256 of its bytes).
Stamp = tuple[int, int, str]


def disk_stamp(path: Path) -> Stamp | None:
    """What :meth:`FileController.save_to` compares to see another program's save."""
    try:
        import hashlib  # lazy: OpenSSL loads on the first save or reopen, not at start-up

        info = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, digest)


class FileHost(Protocol):
    """What the controller asks of its window (each a dialog in the app, a stub in tests)."""

    def confirm_discard(self) -> Answer:
        """Save, discard or cancel: what to do with the document's unsaved changes."""
        ...

    def show_error(self, text: str) -> None: ...

    def ask_recover(self, text: str) -> bool: ...

    def ask_save_path(self, suggested: str) -> str | None: ...

    def ask_replace_read_only(self, name: str) -> bool:
        """Whether saving may replace ``name``, a read-only file."""
        ...

    def ask_changed_on_disk(self, name: str) -> DiskChange:
        """``name`` changed on disk since it was opened or saved here: what now?"""
        ...

    def ask_open_path(self) -> str | None: ...

    def view_state(self) -> dict[str, Any] | None: ...

    def apply_view_state(self, view: dict[str, Any] | None) -> None: ...


def autosave_dir() -> Path:
    """``<AppDataLocation>/autosave``: per user, outside any project folder."""
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".backprop-studio") / "autosave"


class FileController(QObject):
    """File commands for one document; ``message(str)`` goes to the status bar."""

    message = Signal(str)
    #: True: a file is about to replace the document; False: it has, or failed to
    #: (always sent, so nothing stays in its opening state after a refused file).
    opening = Signal(bool)
    #: A file was opened (not an edit): the lesson starts over at step 0.
    opened = Signal()
    recentChanged = Signal()

    _serial = 0

    def __init__(self, doc: GraphDocument, host: FileHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.host = host
        FileController._serial += 1
        self._session = f"{os.getpid()}-{FileController._serial}"
        #: The file last opened (an example too, which opens as a copy): where a later
        #: launch reopens when the document was never saved elsewhere.
        self.last_opened: Path | None = None
        self._dirty = False
        self._written: Path | None = None  # the autosave file this session last wrote
        #: The document's file as this window last read or wrote it (two-instance check).
        self._stamp: tuple[Path, Stamp] | None = None
        self._timer = QTimer(self, interval=AUTOSAVE_INTERVAL_MS)
        self._timer.timeout.connect(self.autosave_if_dirty)
        self._timer.start()
        self._debounce = QTimer(self, singleShot=True, interval=AUTOSAVE_DEBOUNCE_MS)
        self._debounce.timeout.connect(self.autosave_if_dirty)
        doc.undo_stack.indexChanged.connect(self._edited)
        doc.undo_stack.cleanChanged.connect(self._clean_changed)

    # ------------------------------------------------------------------ asking first

    def maybe_save(self) -> bool:
        """True when it is fine to replace the document (saved, discarded or unmodified)."""
        if not self.doc.modified or self.doc.read_only:  # a trace's groups are no edit
            return True
        answer = self.host.confirm_discard()
        if answer == Answer.SAVE:
            return self.save()
        return answer == Answer.DISCARD

    # ------------------------------------------------------------------ new / open

    def new_document(self) -> bool:
        if not self.maybe_save():
            return False
        self.remove_autosave()
        self.doc.load(GraphFile(), None)
        self.host.apply_view_state(None)
        return True

    def open_dialog(self) -> bool:
        """File > Open: a graph, or a captured ``.bptrace`` pass (shown read-only)."""
        path = self.host.ask_open_path()
        return self.open_path(path) if path else False

    def open_path(self, path: str | os.PathLike[str], example: bool = False,
                  ask: bool = True) -> bool:
        """Open ``path``; False if it is broken (the document is untouched) or the user
        cancels the question about unsaved changes (``ask``: else none is asked). The file
        is checked before asking."""
        gf = self._read(Path(path))
        if gf is None or (ask and not self.maybe_save()):
            return False
        self._apply(gf, Path(path), example)
        return True

    def load_path(self, path: str | os.PathLike[str], example: bool = False) -> bool:
        """Replace the document with a file without asking; a broken file changes nothing."""
        return self.open_path(path, example, ask=False)

    def open_loaded(self, gf: GraphFile | CapturedTrace, path: str | os.PathLike[str]) -> None:
        """Show a file already read (and so already checked) from ``path``."""
        self._apply(gf, Path(path), False)

    def _read(self, p: Path) -> GraphFile | CapturedTrace | None:
        """The file (a graph, or a captured ``.bptrace`` pass), validated, or None after
        telling the user (one line) what is wrong."""
        try:
            with arriving():  # parsing allocates, frees nothing: no GC passes
                if is_trace_path(p):
                    from engine import tracefile  # lazy: the trace reader loads with a trace

                    return tracefile.load(p)
                return load(p, partial=True)
        except FileFormatError as exc:
            self.host.show_error(f"Cannot open {p.name}: {exc}")
            if not p.exists():
                self._forget_recent(p)
        except Exception as exc:  # never a traceback for a file a user picked
            self.host.show_error(f"Cannot open {p.name}: {exc}".splitlines()[0])
        return None

    def _apply(self, gf: GraphFile | CapturedTrace, p: Path, example: bool) -> None:
        # A shipped example always opens as a copy, so Save never overwrites it.
        example = example or p.resolve().parent == Path(EXAMPLES_DIR).resolve()
        self.remove_autosave()
        self.last_opened = p.resolve()
        if not isinstance(gf, GraphFile):  # a captured trace
            with arriving():
                self.doc.load_trace(gf, p.resolve())
            self.host.apply_view_state(None)
            self.add_recent(p)
            self.message.emit(f"Opened {p.name} (a captured trace: read-only)")
            return
        gf.extra.pop("autosave", None)
        view = gf.extra.get("view")
        self.opening.emit(True)
        try:
            with arriving():  # thousands of boxes and edges arrive, none leave
                self.doc.load(gf, None if example else p.resolve())
        finally:
            self.opening.emit(False)
        self._remember_disk(None if example else p.resolve())
        self.host.apply_view_state(view if isinstance(view, dict) else None)
        if not example:
            self.add_recent(p)
        self.opened.emit()
        self.message.emit(f"Opened {p.name}")

    # ------------------------------------------------------------------ save

    def save(self) -> bool:
        if self.doc.path is None:
            return self.save_as()
        return self.save_to(self.doc.path)

    def save_as(self, path: str | os.PathLike[str] | None = None) -> bool:
        if path is None:
            suggested = str(self.doc.path) if self.doc.path else self._suggested_name()
            path = self.host.ask_save_path(suggested)
            if not path:
                return False
        p = Path(path)
        if not p.suffix:
            p = p.with_suffix(SUFFIX)
        return self.save_to(p)

    def _remember_disk(self, path: Path | None) -> None:
        stamp = None if path is None else disk_stamp(path)
        self._stamp = None if path is None or stamp is None else (path, stamp)

    def _changed_on_disk(self, path: Path) -> bool:
        """True when ``path`` is the file this window read or wrote last and someone
        else (another window, another program) has written it since."""
        if self._stamp is None or self._stamp[0] != path.resolve():
            return False
        now = disk_stamp(path)
        return now is not None and now != self._stamp[1]

    def save_to(self, path: Path) -> bool:
        if self._changed_on_disk(path):
            answer = self.host.ask_changed_on_disk(path.name)
            if answer == DiskChange.SAVE_AS:
                return self.save_as()
            if answer == DiskChange.RELOAD:
                return self.load_path(path)
            if answer != DiskChange.OVERWRITE:
                return False
        gf = self.doc.to_file()
        view = self.host.view_state()
        if view:
            gf.extra["view"] = view
        try:
            try:
                save(path, gf)
            except ReadOnlyTarget:
                if not self.host.ask_replace_read_only(path.name):
                    return False
                save(path, gf, replace_read_only=True)
        except Exception as exc:  # FileFormatError or OSError: one line, doc untouched
            self.host.show_error(f"Cannot save {path.name}: {exc}".splitlines()[0])
            return False
        self.remove_autosave()
        self.doc.mark_saved(path.resolve())
        self._remember_disk(path.resolve())
        self.add_recent(path)
        self.message.emit(f"Saved {path.name}")
        return True

    def _suggested_name(self) -> str:
        stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in self.doc.title.strip())
        return (stem.strip("_") or "untitled") + SUFFIX

    # ------------------------------------------------------------------ recent files

    def recent_files(self) -> list[Path]:
        raw: Any = QSettings().value(RECENT_KEY, [])
        if isinstance(raw, str):
            raw = [raw]
        return [Path(p) for p in (raw or []) if p][:MAX_RECENT]

    def add_recent(self, path: str | os.PathLike[str]) -> None:
        p = str(Path(path).resolve())
        items = [p] + [str(r) for r in self.recent_files() if str(r) != p]
        QSettings().setValue(RECENT_KEY, items[:MAX_RECENT])
        self.recentChanged.emit()

    def clear_recent(self) -> None:
        QSettings().remove(RECENT_KEY)
        self.recentChanged.emit()

    def _forget_recent(self, path: Path) -> None:
        p = str(path.resolve())
        items = [str(r) for r in self.recent_files() if str(r) != p]
        QSettings().setValue(RECENT_KEY, items)
        self.recentChanged.emit()

    # ------------------------------------------------------------------ autosave

    def autosave_path(self) -> Path:
        """Where this document's autosave goes: keyed by its file and this session."""
        if self.doc.path is not None:
            import hashlib  # lazy, as in disk_stamp

            digest = hashlib.sha1(str(self.doc.path).encode("utf-8")).hexdigest()[:10]
            name = f"{self.doc.path.stem}-{digest}-{self._session}"
        else:
            name = f"untitled-{self._session}"
        # Named by this session too: two windows (or two running copies of the app) on
        # the same file each keep their own copy and never remove each other's.
        return autosave_dir() / (name + SUFFIX)

    def _edited(self, _index: int) -> None:
        if self.doc.read_only:  # expanding a module changes nothing worth keeping
            return
        self._dirty = True
        self._debounce.start()

    def _clean_changed(self, clean: bool) -> None:
        if clean:
            self.remove_autosave()

    def autosave_if_dirty(self) -> None:
        if self._dirty:
            self.write_autosave()

    def write_autosave(self) -> Path | None:
        """Write the autosave copy now (atomically); None when there is nothing to keep."""
        self._dirty = False
        if not self.doc.modified:
            self.remove_autosave()
            return None
        target = self.autosave_path()
        if self._written is not None and self._written != target:
            self._written.unlink(missing_ok=True)  # the document was saved under a new name
        gf = self.doc.to_file()
        gf.extra["autosave"] = {
            "source": str(self.doc.path) if self.doc.path else None,
            "pid": os.getpid(),
        }
        view = self.host.view_state()
        if view:
            gf.extra["view"] = view
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            save(target, gf)
        except Exception as exc:  # an autosave failure must not interrupt editing
            self.message.emit(f"Autosave failed: {exc}".splitlines()[0])
            return None
        self._written = target
        return target

    def remove_autosave(self) -> None:
        self._dirty = False
        self._debounce.stop()
        for p in {self._written, self.autosave_path()}:
            if p is not None:
                p.unlink(missing_ok=True)
        self._written = None

    def shutdown(self) -> None:
        """The window is closing with the user's consent: drop the autosave copy."""
        self._timer.stop()
        self.remove_autosave()

    # ------------------------------------------------------------------ recovery

    def recoverable(self) -> list[tuple[Path, Path | None]]:
        """Autosaves left by sessions that ended without saving, newest first.

        Each is (autosave file, its source file or None). A leftover autosave is always
        unsaved work (saving removes it), so none is judged stale here: a source file
        changed later (a ``touch``, a checkout, a sync tool) is said in the question.
        """
        folder = autosave_dir()
        if not folder.is_dir():
            return []
        found = []
        for file in folder.glob("*" + SUFFIX):
            try:
                info = load(file, partial=True).extra.get("autosave") or {}
                stamp = file.stat().st_mtime
            except Exception:
                continue  # unreadable: leave it for a human, never crash on it
            pid, source = self._record(info)
            if pid is not None and pid_alive(pid):
                continue  # a running window's own copy
            found.append((stamp, file, source))
        found.sort(key=lambda t: t[0], reverse=True)
        return [(file, source) for _stamp, file, source in found]

    def _record(self, info: Any) -> tuple[int | None, Path | None]:
        """An autosave record checked like a graph file: (its process id or None, its
        source or None). The source counts only when it is a file this user opened or
        saved (a recent file): a record saying ``"/etc/passwd"`` is offered as untitled
        work, never as that file."""
        if not isinstance(info, dict):
            return None, None
        pid = info.get("pid")
        if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 2**31:
            pid = None
        raw = info.get("source")
        if not isinstance(raw, str) or not raw or "\0" in raw:
            return pid, None
        opened = {str(r) for r in self.recent_files()}
        return pid, Path(raw) if raw in opened else None

    def offer_recovery(self) -> bool:
        """Ask about each leftover autosave; load the first accepted one (as modified)."""
        for file, source in self.recoverable():
            if not self.host.ask_recover(recovery_question(file, source)):
                file.unlink(missing_ok=True)
                continue
            if not self.maybe_save():
                return False
            return self._recover(file, source)
        return False

    def _recover(self, file: Path, source: Path | None) -> bool:
        try:
            gf = load(file, partial=True)
        except Exception as exc:
            self.host.show_error(f"Cannot recover {file.name}: {exc}".splitlines()[0])
            return False
        gf.extra.pop("autosave", None)
        view = gf.extra.get("view")
        self.remove_autosave()
        self.doc.load(gf, source)
        self.doc.undo_stack.resetClean()  # recovered work is unsaved work
        self.host.apply_view_state(view if isinstance(view, dict) else None)
        self.write_autosave()  # under this session's name, before the old copy goes
        if file != self._written:
            file.unlink(missing_ok=True)
        self.message.emit(f"Recovered unsaved work on {source.name if source else 'Untitled'}")
        return True


def recovery_question(file: Path, source: Path | None) -> str:
    """The question for one leftover autosave, with both times when the source changed."""
    name = source.name if source else "an untitled graph"
    saved = file.stat().st_mtime
    text = f"{APP_NAME} closed without saving changes to {name} (autosaved {_when(saved)})."
    try:
        changed = source.stat().st_mtime if source is not None else None
    except OSError:
        changed = None
    if changed is not None and changed > saved:
        text += f" The file on disk was changed later, at {_when(changed)}."
    return text + " Recover unsaved work?"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))
