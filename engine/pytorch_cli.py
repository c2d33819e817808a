"""``main.py import`` and ``main.py export-torch``: PyTorch code in and out, headless.

``import SNIPPET.py --out FILE.bpgraph`` reads a snippet, never runs it (see
:mod:`engine.pytorch_import`); ``export-torch FILE [--out script.py] [--retain-grads]``
writes a graph file as a runnable script (see :mod:`engine.pytorch_export`). A
refusal is one line on stderr, ``error: NAME: ...`` (``line L, column C: ...`` for
code), with exit status 2; warnings (skipped statements, seeded random numbers)
are one line each.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .atomic_write import output_is_input, write_atomic
from .cli import OneLineParser, parse_args
from .errors import printable
from .fileformat import FileFormatError, dumps, load, save
from .pytorch_export import export_script
from .pytorch_import import MAX_SOURCE_CHARS, CodeError, import_code


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
    parser = OneLineParser(
        prog="main.py import", usage_line="main.py import SNIPPET.py --out FILE.bpgraph"
    )
    parser.add_argument("snippet", metavar="SNIPPET.py")
    parser.add_argument("--out", metavar="FILE.bpgraph", help="where to write (default: stdout)")
    args = parse_args(parser, argv)
    if isinstance(args, int):
        return args
    name = printable(args.snippet)
    if args.out and (problem := output_is_input(args.out, args.snippet)):
        print(f"error: {name}: {problem}", file=sys.stderr)
        return 2
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


def export_main(argv: list[str]) -> int:
    """Entry point of ``main.py export-torch``; 0 ok, 2 when the file cannot be loaded."""
    usage = "main.py export-torch FILE [--out script.py] [--retain-grads]"
    parser = OneLineParser(prog="main.py export-torch", usage_line=usage)
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--out", metavar="script.py", help="where to write (default: stdout)")
    parser.add_argument(
        "--retain-grads",
        action="store_true",
        help="also keep and print the .grad of every non-leaf that requires grad",
    )
    args = parse_args(parser, argv)
    if isinstance(args, int):
        return args
    name = printable(args.file)
    if args.out and (problem := output_is_input(args.out, args.file)):
        print(f"error: {name}: {problem}", file=sys.stderr)
        return 2
    try:
        gf = load(args.file)
        script = export_script(
            gf.graph, gf.output, gf.gradient, retain_grads=args.retain_grads, title=gf.title,
            train=gf.train,
        )
        if args.out:
            write_atomic(Path(args.out), script.encode("utf-8"))
        else:
            sys.stdout.write(script)
    except FileFormatError as exc:
        print(f"error: {name}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {args.out}: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


__all__ = ["export_main", "import_main", "read_source"]
