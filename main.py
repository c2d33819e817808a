"""Backprop Studio: no arguments or FILE opens the app; ``run`` and ``export`` work headless.

    python main.py                      the app, with seed example 2 open
    python main.py FILE                 the app, with FILE open
    python main.py run FILE [--json] [--steps]
    python main.py export FILE --step K --out frame.png [--size 1280x720]
    python main.py import SNIPPET.py --out FILE.bpgraph
    python main.py export-torch FILE [--out script.py] [--retain-grads]
    python main.py train FILE [--steps N] [--optimizer sgd|momentum|adam] [--lr LR] [--json]
"""

from __future__ import annotations

import sys

from engine.allocator import retain_freed_memory


def main(argv: list[str] | None = None) -> int:
    retain_freed_memory()  # every run frees and reallocates its arrays: keep the pages
    args = list(sys.argv[1:] if argv is None else argv)
    # Each command imports only what it runs: the headless ones never load the GUI.
    if args and args[0] == "run":
        from engine.cli import main as run_main

        return run_main(args[1:])
    if args and args[0] == "import":
        from engine.pytorch_cli import import_main

        return import_main(args[1:])
    if args and args[0] == "export-torch":
        from engine.pytorch_cli import export_main

        return export_main(args[1:])
    if args and args[0] == "train":
        from engine.train_cli import main as train_main

        return train_main(args[1:])
    if args and args[0] == "export":
        from gui.export import main as export_main

        return export_main(args[1:])
    from gui.app import main as gui_main

    return gui_main(args)


if __name__ == "__main__":
    sys.exit(main())
