"""Write an export to a hidden temporary name and put it in place only when complete.

A failed, interrupted or cancelled export leaves nothing behind: not a truncated
GIF, not half a folder of PNGs.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engine.atomic_write import remove_stale_temps, temp_name


@contextmanager
def atomic_file(out: Path) -> Iterator[Path]:
    """A temporary path beside ``out``; renamed to ``out`` if the block succeeds.

    Named as :mod:`engine.atomic_write` names its temporary files, so a killed
    export's leftovers are cleaned up by the next write of the same name.
    """
    remove_stale_temps(out)
    tmp = temp_name(out)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_folder(out: Path) -> Iterator[Path]:
    """A temporary folder beside ``out``; its files move into ``out`` (made if missing)
    if the block succeeds."""
    out = Path(str(out).rstrip("/\\") or ".")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        yield tmp
        if out.exists():
            for f in sorted(tmp.iterdir()):
                os.replace(f, out / f.name)
            tmp.rmdir()
        else:
            os.chmod(tmp, 0o777 & ~_umask())
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_interrupted: list[int] = []


def defer_interrupts() -> None:
    """SIGINT (Ctrl+C) and SIGTERM (a Cancel from the app) only take note; the export
    stops at its next :func:`checkpoint`, between frames. Raised at once, the
    interrupt could land inside Qt's painting (a C++ call back into Python) or in the
    middle of removing the temporary files, and crash instead of cancelling."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda number, _frame: _interrupted.append(number))


def checkpoint() -> None:
    """Stop here (KeyboardInterrupt: the temporary files are removed on the way out)
    if an interrupt came since :func:`defer_interrupts`."""
    if _interrupted:
        raise KeyboardInterrupt


def ignore_interrupts() -> None:
    """The export is over (done or cancelled): further Ctrl+C presses change nothing.
    Ignored rather than left to Python, which restores the default handler as it
    exits, and a late press then killed the process with no message."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
