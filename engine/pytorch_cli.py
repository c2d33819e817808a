"""``main.py import SNIPPET.py --out FILE.bpgraph``: PyTorch code to a graph file, headless.

The snippet is read, never run (see :mod:`engine.pytorch_import`). A refusal is one
line on stderr, ``error: SNIPPET.py: line L, column C: ...``, with exit status 2;
warnings (skipped statements, seeded random numbers) are one line each.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from .fileformat import FileFormatError, dumps, save
from .pytorch_import import MAX_SOURCE_CHARS, CodeError, import_code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, as for every other bad input."""
        self.exit(2, f"{self.prog}: error: {message} (usage: {self.usage_line})\n")

    usage_line = ""


def _parser(prog: str, usage: str) -> _Parser:
    parser = _Parser(prog=prog)
    parser.usage_line = usage
    return parser


def read_source(path: str) -> str:
    """A snippet's text; OSError or a one-line ValueError when it cannot be read as code."""
    p = Path(path)
    if not p.is_file():
        raise ValueError("no such file" if not p.exists() else "not a regular file")
    with open(p, "rb") as fh:
        data = fh.read(4 * MAX_SOURCE_CHARS + 1)
    if len(data) > 4 * MAX_SOURCE_CHARS:
        raise ValueError(f"the file is over {4 * MAX_SOURCE_CHARS:,} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"byte {exc.start} is not UTF-8 text") from None


def import_main(argv: list[str]) -> int:
    """Entry point of ``main.py import``; 0 ok, 2 refused or unreadable."""
    parser = _parser("main.py import", "main.py import SNIPPET.py --out FILE.bpgraph")
    parser.add_argument("snippet", metavar="SNIPPET.py")
    parser.add_argument("--out", metavar="FILE.bpgraph", help="where to write (default: stdout)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    name = args.snippet.replace("\n", "\\n")
    try:
        imported = import_code(read_source(args.snippet))
        gf = imported.to_graph_file(title=Path(args.snippet).stem)
        if args.out:
            save(args.out, gf)
        else:
            sys.stdout.write(dumps(gf))
    except (CodeError, OSError, ValueError, FileFormatError) as exc:
        text = str(exc) if not isinstance(exc, OSError) else f"cannot read: {exc.strerror}"
        print(f"error: {name}: {text}", file=sys.stderr)
        return 2
    for line in imported.warnings + imported.notes:
        print(f"warning: {name}: {line}", file=sys.stderr)
    return 0


__all__ = ["import_main", "read_source"]
