"""Backprop Studio: no arguments or FILE opens the app; the subcommands work headless.

    backprop-studio                      the app, with seed example 2 open
    backprop-studio FILE...              the app, with each FILE in a window (a .bptrace: read-only)
    backprop-studio run FILE [--json] [--steps]   (or --example NAME)
    backprop-studio export FILE --step K --out frame.png [--size 1280x720]  (or FILE.bptrace)
    backprop-studio import SNIPPET.py --out FILE.bpgraph
    backprop-studio export-torch FILE [--out script.py] [--retain-grads]
    backprop-studio train FILE [--steps N] [--optimizer sgd|momentum|adam] [--lr LR] [--json]
    backprop-studio --version | --help | --install-desktop | --uninstall-desktop

``python main.py`` from a checkout is the same command.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import NamedTuple

from engine.allocator import retain_freed_memory


class Command(NamedTuple):
    """A subcommand: the module and function that run it, and its line in ``--help``."""

    module: str
    function: str
    summary: str


#: Every subcommand, the one place they are registered: dispatch and ``--help`` read it.
#: Each imports only what it runs, so the headless ones never load the GUI.
COMMANDS: dict[str, Command] = {
    "run": Command("engine.cli", "main", "a graph's backward pass as a table or JSON"),
    "export": Command("gui.export", "main", "one frame, or the whole lesson, to a file"),
    "import": Command("engine.pytorch_cli", "import_main", "PyTorch code -> .bpgraph"),
    "export-torch": Command("engine.pytorch_cli", "export_main", "a graph -> PyTorch script"),
    "train": Command("engine.train_cli", "main", "optimizer steps on a graph's train block"),
}

#: Options of the command itself, besides FILE (``--help`` lists them).
OPTIONS = {
    "--version": "print the version and exit",
    "--install-desktop": "Linux: add the menu entry, icon and file types for this user",
    "--uninstall-desktop": "remove exactly what --install-desktop wrote",
}


def usage(prog: str) -> str:
    """``--help``: the app, every registered subcommand and the options."""
    width = max(map(len, [*COMMANDS, *OPTIONS]))
    lines = [
        f"usage: {prog} [FILE ...] | {prog} COMMAND ... | {prog} OPTION",
        "",
        "Reverse-mode autodiff, made visible. FILE (.bpgraph or .bptrace) opens in the app.",
        "",
        "commands (COMMAND --help for more):",
        *(f"  {name:<{width}}  {cmd.summary}" for name, cmd in COMMANDS.items()),
        "",
        "options:",
        f"  {'-h, --help':<{width}}  show this message and exit",
        *(f"  {name:<{width}}  {text}" for name, text in OPTIONS.items()),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    retain_freed_memory()  # every run frees and reallocates its arrays: keep the pages
    args = list(sys.argv[1:] if argv is None else argv)
    first = args[0] if args else None
    if first in COMMANDS:
        command = COMMANDS[first]
        return getattr(importlib.import_module(command.module), command.function)(args[1:])
    if first in ("-h", "--help"):
        print(usage("backprop-studio"))
        return 0
    if first == "--version":
        from engine import app_signature

        print(app_signature())
        return 0
    if first in ("--install-desktop", "--uninstall-desktop"):
        from gui.desktop import main as desktop_main

        return desktop_main(first)
    # One BLAS thread unless the user chose: the app's arrays are small, and OpenBLAS
    # starting a thread per core (each with its buffers) was ~45 ms of start-up, CPU
    # and wall alike, before numpy had loaded (it reads this once, as it loads).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from gui.app import main as gui_main

    return gui_main(args)


if __name__ == "__main__":
    sys.exit(main())
