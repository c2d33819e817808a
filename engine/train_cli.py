"""``python main.py train FILE [--steps N] [--optimizer sgd|momentum|adam] [--lr LR] [--json]``.

Trains the file's parameters headless (:mod:`engine.train`): the loss of every
step, then the final parameters, as PyTorch prints them (``w = tensor(2.0000)``).
``--json`` prints ``{"loss": [...], "params": {name: value}}``. The file's
``train`` block gives the loss, parameters and optimizer; the flags override it.
A file without one trains its backward output with every input that requires
grad, by SGD. Bad input is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from .cli import OneLineParser, parse_args, torch_repr
from .errors import GraphError
from .fileformat import FileFormatError, GraphFile, load
from .json_stream import write_json
from .train import OPTIMIZERS, Trainer, TrainError, TrainSpec

PROG = "main.py train"
USAGE = f"{PROG} FILE [--steps N] [--optimizer sgd|momentum|adam] [--lr LR] [--json]"


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        usage_line=USAGE,
        prog=PROG,
        description="Train a graph file's parameters and print the loss of every step.",
    )
    parser.add_argument("file", metavar="FILE", help="a .bpgraph file (any extension loads)")
    parser.add_argument("--steps", type=int, metavar="N", help="steps (default: the file's)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, help="override the file's optimizer")
    parser.add_argument("--lr", type=float, metavar="LR", help="override the learning rate")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    return parser


def spec_for(gf: GraphFile, args: argparse.Namespace) -> TrainSpec:
    """The file's train block (or a default one on its backward output), with the flags."""
    spec = gf.train
    if spec is None:
        if gf.output is None:
            raise TrainError("the file has no train block and no backward output to use as loss")
        spec = TrainSpec(loss=gf.output)
    changes = {k: v for k, v in (("steps", args.steps), ("optimizer", args.optimizer),
                                 ("lr", args.lr)) if v is not None}
    return dataclasses.replace(spec, **changes)


def main(argv: list[str]) -> int:
    """Entry point of ``main.py train``; 0 ok, 2 bad input."""
    args = parse_args(_parser(), argv)
    if isinstance(args, int):
        return args
    name = args.file.replace("\n", "\\n")
    try:
        gf = load(args.file)
        spec = spec_for(gf, args)
        trainer = Trainer(gf.graph, spec)
        losses = trainer.run(spec.steps)
    except (FileFormatError, GraphError) as exc:
        print(f"error: {name}: {exc}", file=sys.stderr)
        return 2
    params = {p: gf.graph.nodes[p].value for p in trainer.params}
    try:
        if args.json:
            write_json({"loss": losses, "params": params}, sys.stdout)
            sys.stdout.write("\n")
        else:
            width = len(str(len(losses)))
            for k, loss in enumerate(losses, 1):
                print(f"step {k:>{width}}: loss = {loss!r}")
            for p, value in params.items():
                print(f"{p} = {torch_repr(value)}")
        sys.stdout.flush()
    except BrokenPipeError:
        return 0
    return 0


__all__ = ["main"]
