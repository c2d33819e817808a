"""``python main.py run FILE [--json] [--steps]``: a graph file's backward pass, headless.

The text output is for people: a table of every node (op, shape, value, gradient),
then the leaves' gradients the way PyTorch prints them (``x.grad = tensor([2., 4.,
6.])``), so a student can hold it next to a PyTorch session. ``--json`` is for
programs (and for the tests that check the numbers against torch). ``--steps``
adds the engine's recorded trace, one entry per edge, in the order backward ran.

Bad input exits with status 2 and one line on stderr, ``error: FILE: ...``, never a
traceback; NaN or inf in the results is a one-line warning, not an error.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn, TextIO

import numpy as np

from .autodiff import Forward, backward, forward
from .errors import GraphError, printable
from .examples import example_path
from .fileformat import FileFormatError, GraphFile, load
from .graph import Graph
from .json_stream import write_json
from .trace import JACOBIAN_LIMIT, Step, Trace

PROG = "main.py run"

# torch's default print options (torch/_tensor_str.py, PRINT_OPTS)
_PRECISION = 4
_THRESHOLD = 1000
_EDGEITEMS = 3
_LINEWIDTH = 80


# =========================================================================== torch-style repr


class _Formatter:
    """torch's float formatter: integer mode, fixed 4 decimals, or scientific."""

    def __init__(self, values: Sequence[float]) -> None:
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:
            return
        absolute = [abs(v) for v in finite]
        lo, hi = min(absolute), max(absolute)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        for v in finite:
            if self.sci_mode:
                width = len(f"{v:.{_PRECISION}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1
            else:
                width = len(f"{v:.{_PRECISION}f}")
            self.max_width = max(self.max_width, width)

    def format(self, v: float) -> str:
        if self.sci_mode:
            text = f"{v:{self.max_width}.{_PRECISION}e}"
        elif self.int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{v:.{_PRECISION}f}"
        return " " * (self.max_width - len(text)) + text


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements torch looks at to choose a format when it prints ``...``."""
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        if a.shape[0] > 2 * _EDGEITEMS:
            return np.concatenate((a[:_EDGEITEMS], a[-_EDGEITEMS:]))
        return a
    rows = list(a)
    if len(rows) > 2 * _EDGEITEMS:
        rows = rows[:_EDGEITEMS] + rows[-_EDGEITEMS:]
    return np.stack([_summarized(r) for r in rows])


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((_LINEWIDTH - indent) / (fmt.max_width + 2)))
    values = a.tolist()
    if summarize and len(values) > 2 * _EDGEITEMS:
        data = [fmt.format(v) for v in values[:_EDGEITEMS]] + [" ..."]
        data += [fmt.format(v) for v in values[-_EDGEITEMS:]]
    else:
        data = [fmt.format(v) for v in values]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(float(a))
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    n = a.shape[0]
    if summarize and n > 2 * _EDGEITEMS:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(_EDGEITEMS)]
        slices += ["..."]
        slices += [_nested(a[i], indent + 1, summarize, fmt) for i in range(n - _EDGEITEMS, n)]
    else:
        slices = [_nested(a[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def torch_repr(value: Any, prefix: str = "tensor(") -> str:
    """``repr(torch.tensor(value))`` as PyTorch prints a default-dtype tensor.

    Same rules as ``torch/_tensor_str.py`` with the default print options: integer
    mode (``2.``), 4 decimals, or scientific notation when magnitudes differ by more
    than 1000x, line width 80, ``...`` above 1000 elements. No dtype suffix: the
    engine computes in float64, but students compare with float32 sessions.
    ``prefix=""`` gives the bare nested list (used for Jacobians).
    """
    a = np.asarray(value, dtype=np.float64)
    close = ")" if prefix else ""
    if a.size == 0:
        size = f", size={tuple(a.shape)}" if a.ndim != 1 and prefix else ""
        return f"{prefix}[]{size}{close}"
    summarize = a.size > _THRESHOLD
    fmt = _Formatter((_summarized(a) if summarize else a).ravel().tolist())
    return prefix + _nested(a, len(prefix), summarize, fmt) + close


# =========================================================================== running


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, as for every other bad input
    (argparse's default adds a usage block); shared by every headless command."""

    def __init__(self, *args: Any, usage_line: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.usage_line = usage_line

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (usage: {self.usage_line})\n")


def parse_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status when argparse has already answered
    (--help: 0, a usage error: 2, both printed)."""
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        usage_line=f"{PROG} (FILE | --example NAME) [--json] [--steps]",
        prog=PROG,
        description="Run a graph file's backward pass and print every value and gradient.",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "file", nargs="?", metavar="FILE", help="a .bpgraph file (any extension loads)"
    )
    which.add_argument(
        "--example", metavar="NAME", help="a shipped example by name, e.g. seed2_stack_vjp"
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of the table"
    )
    parser.add_argument(
        "--steps", action="store_true", help="add the backward trace: one entry per edge"
    )
    return parser


class _Run:
    """One backward pass over a loaded file, with what both printers need."""

    def __init__(self, gf: GraphFile) -> None:
        self.gf = gf
        self.graph: Graph = gf.graph
        self.output = _pick_output(gf)
        self.fwd: Forward = forward(self.graph)
        self.trace: Trace = backward(self.graph, self.fwd, self.output, gf.gradient)
        self.order = self.fwd.order

    def nonfinite(self) -> list[str]:
        """Where NaN or inf appeared, in words, for the one-line warning."""
        bad_values = self.fwd.nonfinite()
        bad_grads = [
            n for n, g in self.trace.grads.items() if g is not None and not np.isfinite(g).all()
        ]
        parts = []
        if bad_values:
            parts.append("the value of " + ", ".join(repr(n) for n in bad_values))
        if bad_grads:
            parts.append("the gradient of " + ", ".join(repr(n) for n in bad_grads))
        return parts


def _pick_output(gf: GraphFile) -> str:
    """The file's backward output, or the graph's only sink when the file names none."""
    if gf.output is not None:
        return gf.output
    sinks = gf.graph.outputs()
    if len(sinks) == 1:
        return sinks[0]
    if not sinks:
        raise GraphError("the file has no nodes to run backward from")
    names = ", ".join(repr(s) for s in sinks)
    raise GraphError(f"the file names no backward.output, and several nodes could be it: {names}")


def main(argv: list[str]) -> int:
    """Entry point of ``main.py run``; returns the exit status (0 ok, 2 bad input)."""
    args = parse_args(_parser(), argv)
    if isinstance(args, int):
        return args
    name = printable(args.file if args.example is None else args.example)
    try:
        gf = load(args.file if args.example is None else example_path(args.example))
        with warnings.catch_warnings():
            # numpy warns (over several lines) on e.g. the mean of an empty tensor;
            # NaN and inf get the one-line warning below instead.
            warnings.simplefilter("ignore", RuntimeWarning)
            run = _Run(gf)
    except (FileFormatError, GraphError) as exc:
        print(f"error: {name}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not the user's fault: still one line, never a traceback
        print(f"error: {name}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    warning = run.nonfinite()
    if warning:
        spelled = ' (written as "NaN", "Infinity", "-Infinity")' if args.json else ""
        print(f"warning: {name}: NaN or inf in {'; '.join(warning)}{spelled}", file=sys.stderr)
    try:
        if args.json:
            _print_json(run, args.steps, sys.stdout)
        else:
            _print_text(run, args.steps, name, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head` closed the pipe: not an error worth a traceback
        return 0
    return 0


# =========================================================================== JSON


def step_to_json(step: Step) -> dict[str, Any]:
    """One trace entry for the JSON output, arrays as numpy arrays (the Jacobian is
    null above 4,096 entries); :func:`engine.json_stream.write_json` writes it."""
    jac = step.jacobian(JACOBIAN_LIMIT)
    return {
        "consumer": step.consumer,
        "operand": step.operand,
        "operand_index": step.operand_index,
        "upstream": step.upstream,
        "jacobian": jac,
        "vjp": step.vjp,
        "accumulated": step.accumulated,
    }


def result_to_json(run: _Run, steps: bool) -> dict[str, Any]:
    """The ``--json`` document, arrays as numpy arrays (written by ``write_json``)."""
    doc: dict[str, Any] = {
        "output": run.output,
        "gradient": run.trace.gradient,
        "values": {n: run.fwd.values[n] for n in run.order},
        "grads": {n: run.trace.grads.get(n) for n in run.order},
    }
    if steps:
        doc["steps"] = [step_to_json(s) for s in run.trace.steps]
    return doc


def _print_json(run: _Run, steps: bool, out: TextIO) -> None:
    write_json(result_to_json(run, steps), out)
    out.write("\n")


# =========================================================================== text


def _num(v: float) -> str:
    """One number for the table, in PyTorch's spirit: whole numbers end in a point
    (``2.``, ``0.``, and ``-0.`` keeps its sign, as ``tensor(-0.)`` does), others
    keep six significant digits."""
    if math.isfinite(v) and v == int(v) and abs(v) < 1e16:
        return ("-" if math.copysign(1.0, v) < 0 else "") + f"{abs(int(v))}."
    return f"{v:.6g}"


def compact(value: np.ndarray | None, limit: int = 60) -> str:
    """A value in one short line for the table: ``[1, 2, 3]``, ``1.1``, ``None``.

    Formats only as many elements as the line shows: a 10^7-element tensor costs
    the same as a small one.
    """
    if value is None:
        return "None"
    pieces: list[str] = []
    length = 0
    for token in _tokens(np.asarray(value)):
        pieces.append(token)
        length += len(token)
        if length > limit:
            break
    text = "".join(pieces)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tokens(a: np.ndarray) -> Iterator[str]:
    """``a`` as the pieces of ``[1, 2, 3]`` text, lazily (the caller stops early)."""
    if a.ndim == 0:
        yield _num(float(a))
        return
    yield "["
    for i, sub in enumerate(a):
        if i:
            yield ", "
        yield from _tokens(sub)
    yield "]"


def _shape(a: np.ndarray) -> str:
    s = a.shape
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _computes(graph: Graph, nid: str) -> str:
    node = graph.nodes[nid]
    if node.is_leaf:
        return ""
    return node.computes()


def _indent(text: str, column: int) -> str:
    return text.replace("\n", "\n" + " " * column)


def _print_text(run: _Run, steps: bool, name: str, out: TextIO) -> None:
    graph, gf = run.graph, run.gf
    head = name + (f": {gf.title}" if gf.title else "")
    lines = [head, ""]
    rows = [["node", "op", "computes", "shape", "value", "grad"]]
    for nid in run.order:
        value = run.fwd.values[nid]
        rows.append(
            [
                nid,
                graph.nodes[nid].op,
                _computes(graph, nid),
                _shape(value),
                compact(value),
                compact(run.trace.grads.get(nid)),
            ]
        )
    lines += _table(rows)
    lines.append("")
    if gf.gradient is None:
        call = f"{run.output}.backward()"
    else:
        call = f"{run.output}.backward(gradient={torch_repr(run.trace.gradient)})"
    lines.append(_indent(call, len(f"{run.output}.backward(gradient=")))
    if steps:
        lines.append("")
        lines += _step_lines(run)
    lines.append("")
    for nid in run.order:
        node = graph.nodes[nid]
        if node.op != "input":
            continue
        grad = run.trace.grads.get(nid) if node.requires_grad else None
        label = f"{nid}.grad = "
        shown = "None" if grad is None else _indent(torch_repr(grad), len(label))
        note = "" if node.requires_grad else "  (requires_grad=False)"
        lines.append(f"{label}{shown}{note}")
    # ids and titles are user text: no escape sequence reaches the terminal
    out.write("\n".join(printable(line) for line in "\n".join(lines).split("\n")) + "\n")


def _step_lines(run: _Run) -> list[str]:
    lines = ["Backward steps, one per edge, in the order backward runs them:"]
    graph = run.graph
    width = len(str(len(run.trace.steps)))
    for k, step in enumerate(run.trace.steps, 1):
        expr = graph.nodes[step.consumer].computes()
        lines.append(
            f"  {k:>{width}}. {step.consumer} -> {step.operand}"
            f"  (operand {step.operand_index} of {step.consumer} = {expr})"
        )
        pad = " " * (width + 4)
        col = len(pad) + 13
        jac = step.jacobian(JACOBIAN_LIMIT)
        if jac is None:
            jac_text = (
                f"not printed: {step.jacobian_size:,} entries (over {JACOBIAN_LIMIT:,}); "
                f"{step.structure()}"
            )
        else:
            jac_text = _indent(torch_repr(jac, prefix=""), col)
        before = "" if step.before is None else f"  = {compact(step.before)} already there + vjp"
        for label, text in (
            ("upstream", _indent(torch_repr(step.upstream), col)),
            ("jacobian", jac_text),
            ("vjp", _indent(torch_repr(step.vjp), col)),
            ("accumulated", _indent(torch_repr(step.accumulated), col) + before),
        ):
            lines.append(f"{pad}{label:<13}{text}")
    if not run.trace.steps:
        lines.append("  (none: no edge carries a gradient)")
    return lines


__all__ = ["PROG", "compact", "main", "result_to_json", "step_to_json", "torch_repr"]
