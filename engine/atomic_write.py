"""Writing a file so that a crash, a kill or a full disk never leaves it half written.

The bytes go to a temporary file beside the target, named ``.NAME.PID.HEX.tmp``,
are flushed to disk, and the temporary file is renamed over the target: readers
see the old file or the new one, never a mix. A save that is killed leaves its
temporary file behind; the next save of the same name removes those whose
process is gone (only names of this exact pattern, never anything else). A
symbolic link is followed, so saving through a link rewrites the file it points
to and the link stays a link.
"""

from __future__ import annotations

import glob
import os
import re
import stat
from pathlib import Path

_TEMP_PATTERN = r"\.{name}\.(\d+)\.[0-9a-f]{{8}}\.tmp"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (this process counts; unknown means no)."""
    if pid == os.getpid():
        return True
    if os.name != "posix" or pid <= 0:
        return False  # cannot tell cheaply: treat what it left as orphaned
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, it just is not ours to signal
    return True


def is_read_only(path: Path) -> bool:
    """True for an existing file (through links) whose write permission bits are all off.

    Judged by the mode bits, not ``os.access``, so it means the same for every user.
    """
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def temp_name(target: Path) -> Path:
    """A fresh temporary name beside ``target`` in the pattern stale-file cleanup knows."""
    import secrets  # here, not at the top: opening files (and the app's start) never writes

    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def remove_stale_temps(target: Path) -> list[Path]:
    """Remove temporary files of ``target`` left by saves whose process is gone."""
    pattern = re.compile(_TEMP_PATTERN.format(name=re.escape(target.name)))
    removed: list[Path] = []
    try:
        candidates = list(target.parent.glob(f".{glob.escape(target.name)}.*.tmp"))
    except OSError:
        return removed
    for path in candidates:
        m = pattern.fullmatch(path.name)
        if m is None or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (after links, and for hard links too)."""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def output_is_input(out: str | os.PathLike[str], source: str | os.PathLike[str]) -> str | None:
    """The one-line refusal when a command's ``--out`` would overwrite its own input."""
    if not same_file(out, source):
        return None
    return "--out is the input file itself; writing it would destroy the source"


def write_atomic(target: Path, data: bytes) -> None:
    """Replace ``target`` (or, for a link, the file it points to) with ``data``.

    Keeps the old file's permission bits. Raises OSError; the old file is then
    untouched and the temporary file removed.
    """
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    remove_stale_temps(target)
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        try:
            if hasattr(os, "fchmod") and target.exists():
                os.fchmod(fd, stat.S_IMODE(target.stat().st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable where the OS allows it (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = [
    "is_read_only",
    "output_is_input",
    "same_file",
    "pid_alive",
    "remove_stale_temps",
    "temp_name",
    "write_atomic",
]
