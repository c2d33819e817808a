"""The words and formulas the player shows: edge labels (plain text) and the
chain-rule / summary write-ups (Qt rich-text HTML, built here as plain strings).

No Qt and no mathematics: every number comes from the engine's recorded
:class:`~engine.trace.Step` (its upstream gradient, its VJP, its Jacobian derived
from that VJP) or from :func:`engine.autodiff.end_to_end_jacobian`. Keeping the
text pure means a test can assert "the label at step 1 says ``[1, 0, 0]ᵀ``"
without a window, and the canvas, the panels and an exported PNG say the same.

The HTML uses only what Qt's rich-text engine renders well: tables (a fraction
is a two-row table with a rule between numerator and denominator, a matrix is a
table whose outer cells carry bracket borders), ``<sub>`` and colours.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from enum import IntEnum
from functools import lru_cache
from typing import Any

import numpy as np

from engine.errors import visible
from engine.trace import Step

from . import colours
from .formatting import bracketed, fmt_num, fmt_shape, format_tensor

#: The edge label prints the Jacobian's numbers up to this many entries; above,
#: its structure in words (a label on a canvas must stay small).
LABEL_MAX_ENTRIES = 16
#: The chain-rule panel prints a Jacobian as a matrix up to this many entries.
PANEL_MAX_ENTRIES = 64
#: ... and a vector (upstream, vjp, gradient) element by element up to this many, as a
#: Jacobian's rows and columns: a wider formula would run off the panel's edge.
PANEL_MAX_VECTOR = 16
#: A shortened (elided) write-up keeps a vector's or a row's numbers up to this many: a
#: row of 16 at a projector's 22 px is about twice a 1280-pixel panel's width (XOR's
#: 4x4 hidden layer); a longer one is summarised, as a vector over
#: :data:`PANEL_MAX_VECTOR` always is.
ELIDED_MAX_VECTOR = 8
#: A wrapped write-up (:attr:`Narrow.WRAPPED`) puts a longer row (a row vector, a matrix's
#: row) on lines of this many numbers, each continuation one column in after
#: :data:`CONTINUED`: every number kept at a readable size in a column too narrow for it.
WRAP_NUMBERS = ELIDED_MAX_VECTOR
#: What starts a wrapped row's continuation line: the row goes on, it is not the matrix's
#: next row (an indent alone read as one).
CONTINUED = "↪"


class Narrow(IntEnum):
    """How narrow a column a step's numbers are written for (:func:`step_html`); each
    level is one of the shortenings a panel or an export tries."""

    #: As written: the row vector, the Jacobian and the vjp on one line.
    NO = 0
    #: One factor a line; a row of more than :data:`ELIDED_MAX_VECTOR` numbers summarised
    #: and a Jacobian of more columns written as its shape.
    FACTORS = 1
    #: One factor a line, every number kept: a longer row wrapped onto lines of
    #: :data:`WRAP_NUMBERS`.
    WRAPPED = 2
    #: :attr:`FACTORS`, and the whole call's summary after the last step shortened
    #: (elided): the last step of a page whose summary does not fit beside it.
    SUMMARY = 3
    #: :attr:`SUMMARY`, and a gradient's name on its own line above its numbers: a column
    #: a 4×4 gradient's line was 10 px too wide for keeps its numbers. A level of its own,
    #: tried after :attr:`SUMMARY`, so that a short vector's name (neuron_layer's
    #: ``x.grad``) keeps its line when only the summary needed shortening.
    SPLIT = 4


#: Numbers and symbols never break inside a formula ("0.1" must not wrap after the dot).
NOWRAP = "white-space:nowrap"

#: What a panel says while the end-to-end product is computed off the UI thread.
COMPUTING_TEXT = "computing…"


# --------------------------------------------------------------------------- plain text


def inline_tensor(a: np.ndarray | None, max_shown: int = LABEL_MAX_ENTRIES) -> str:
    """A tensor on one line: ``0.1``, ``[1, 2]``, ``[[1, 2], [3, 4]]``, or a summary
    (:func:`format_tensor`'s text, a small matrix's rows without their padding)."""
    if a is not None and np.ndim(a) == 2 and np.size(a) <= max_shown:
        return bracketed(bracketed(map(fmt_num, r)) for r in a)
    return format_tensor(a, max_shown).replace("\n", "")


def flat_row(a: np.ndarray, max_shown: int = LABEL_MAX_ENTRIES) -> str:
    """A tensor read as the row vector that multiplies a Jacobian (row-major)."""
    a = np.asarray(a)
    if a.ndim == 0:
        return fmt_num(a)
    if a.size > max_shown:
        return inline_tensor(a, max_shown)
    return bracketed(map(fmt_num, a.ravel()))


def matrix_text(jac: np.ndarray) -> str:
    """A Jacobian as a teacher writes it: a number, a column ``[..]ᵀ``, a row, or rows."""
    m, n = jac.shape
    if m == 1 and n == 1:
        return fmt_num(jac[0, 0])
    if n == 1:
        return bracketed(map(fmt_num, jac[:, 0])) + "ᵀ"
    if m == 1:
        return bracketed(map(fmt_num, jac[0]))
    return format_tensor(jac, max_shown=jac.size)


def small_jacobian(step: Step, max_entries: int = LABEL_MAX_ENTRIES) -> np.ndarray | None:
    """The step's Jacobian when it is small enough to print, else None (never built)."""
    if step.jacobian_size > max_entries:
        return None
    return step.jacobian()


def jacobian_text(step: Step, short: bool = False) -> str:
    """``J`` as numbers when small (``short``: :func:`label_matrix`'s), else its
    structure in words and symbols."""
    jac = small_jacobian(step)
    if jac is None:
        return step.structure()
    return label_matrix(jac, short)


def default_edge_label(step: Step, short: bool = False) -> str:
    """The label the canvas shows on the active edge when the player sets none."""
    return f"vjp = {short_tensor(step.vjp) if short else format_tensor(step.vjp)}"


def elides_to_shape(a: np.ndarray, as_row: bool = False) -> bool:
    """Does a shortened (elided) write-up say ``a`` by its shape? A matrix of more than
    one row does (unless read ``as_row``); a scalar, a vector and a row keep numbers."""
    return not as_row and np.ndim(a) >= 2 and np.shape(a)[0] > 1


def short_tensor(a: np.ndarray, as_row: bool = False) -> str:
    """A tensor as the elided write-up says it, in plain text (the canvas label's short
    text): a matrix as ``[3×3]``, up to :data:`ELIDED_MAX_VECTOR` numbers, else its
    shape with min/max."""
    if elides_to_shape(a, as_row):
        return f"[{fmt_shape(np.shape(a))}]"
    if as_row:
        return flat_row(a, ELIDED_MAX_VECTOR)
    return inline_tensor(a, ELIDED_MAX_VECTOR)


def short_jacobian_text(jac: np.ndarray) -> str:
    """A small Jacobian in a short label: a number or a row as numbers, else its shape."""
    if elides_to_shape(jac) or jac.size > ELIDED_MAX_VECTOR:
        return f"[{fmt_shape(jac.shape)}]"
    return matrix_text(jac)


def label_tensor(a: np.ndarray, short: bool = False, as_row: bool = False) -> str:
    """A tensor in an edge label: its numbers (``as_row``: the row vector that multiplies
    a Jacobian), or ``short`` as :func:`short_tensor` writes it."""
    if short:
        return short_tensor(a, as_row)
    return flat_row(a) if as_row else inline_tensor(a)


def label_matrix(jac: np.ndarray, short: bool = False) -> str:
    """A small Jacobian in an edge label (``short``: :func:`short_jacobian_text`)."""
    return short_jacobian_text(jac) if short else matrix_text(jac)


def edge_label(step: Step, short: bool = False) -> str:
    """The label on the active edge: the local Jacobian, then ``upstream · J = vjp``.

    ``∂y/∂y1 = [1, 0, 0]ᵀ`` / ``[0.1, 0.2, 0.3] · J = 0.1``. A 1×1 Jacobian is
    substituted into the product (``0.1 · 3 = 0.3``) since that reads better.
    ``short``: tensors as the chain-rule panel's elided mode writes them
    (:func:`short_tensor`), for a label that cannot show its numbers readably.
    """
    jac = small_jacobian(step)
    head = f"∂{step.consumer}/∂{step.operand}"
    up = label_tensor(step.upstream, short, as_row=True)
    out = label_tensor(step.vjp, short)
    if jac is None:
        shape = f"{fmt_shape(step.upstream.shape)} → {fmt_shape(step.vjp.shape)}"
        return f"{head} ({shape}): {step.structure()}\n{up} · J = {out}"
    text = label_matrix(jac, short)
    if jac.shape == (1, 1):
        return f"{head} = {text}\n{up} · {text} = {out}"
    return f"{equals_matrix(head, text)}\n{up} · J = {out}"


def equals_matrix(head: str, text: str) -> str:
    """``head = J`` in a label, a matrix of several rows starting on the next line."""
    sep = "\n" if "\n" in text else " "
    return f"{head} ={sep}{text}"


#: The edge label's lines are wrapped at this many characters: one long line (a step's
#: structure in words, a flattened matrix) made the label as wide as the canvas, and the
#: camera gave up framing the graph around it.
LABEL_WRAP_CHARS = 72


def wrap_label(text: str, width: int = LABEL_WRAP_CHARS) -> list[str]:
    """``text``'s lines, each longer than ``width`` broken at the last ``], `` (between a
    tensor's rows), else `` = ``, else ``, ``, else space that keeps the piece within
    ``width``; continuation lines are indented two spaces."""
    out: list[str] = []
    for line in text.split("\n"):
        indent = ""
        while len(indent) + len(line) > width:
            room = width - len(indent)
            cut = next(
                (
                    at + len(sep)
                    for sep in ("], ", " = ", ", ", " ")
                    if (at := line.rfind(sep, 0, room - len(sep) + 1)) > 0
                ),
                -1,
            )
            if cut <= 0:
                break  # one unbreakable word: left whole
            out.append(indent + line[:cut].rstrip())
            line, indent = line[cut:].lstrip(), "  "
        out.append(indent + line)
    return out


def grad_name(node: str, is_leaf: bool) -> str:
    """How a node's gradient is called: ``x1.grad`` for a leaf, ``grad y1`` otherwise."""
    return f"{node}.grad" if is_leaf else f"grad {node}"


def leaf_grad_lines(leaf_grads: Mapping[str, np.ndarray | None]) -> list[str]:
    """The leaves' gradients in PyTorch's words: ``x1.grad = 1.1`` (``None`` if none flowed)."""
    lines = []
    for leaf, g in leaf_grads.items():
        lines.append(f"{leaf}.grad = {'None' if g is None else inline_tensor(g, 64)}")
    return lines


def fan_out_words(node: str, fan_in: int, senders: Sequence[str] | None) -> str:
    """``x₃ feeds 3 consumers (y₁, y₂, c)``, or ``y is used 2 times (by z, z)`` when one
    consumer uses it more than once (``y * y``): both mean gradients add up."""
    if not senders:
        return f"{h_name(node)} feeds {fan_in} consumers"
    names = ", ".join(h_name(c) for c in senders)
    if len(set(senders)) == len(senders):
        return f"{h_name(node)} feeds {fan_in} consumers ({names})"
    return f"{h_name(node)} is used {fan_in} times (by {names})"


def objective_name(output: str, gradient: np.ndarray) -> str:
    """What backward differentiates: the output itself when it is a scalar seeded with 1,
    else ``A``, the seeds' unknown ``A = f(y)`` whose gradient ``v = ∂A/∂y`` was given."""
    g = np.asarray(gradient)
    if g.size == 1 and float(g.ravel()[0]) == 1.0:
        return output
    return "A"


# --------------------------------------------------------------------------- HTML pieces


def esc(text: str, quote: bool = False) -> str:
    """User or file text as rich text shows it, and as an HTML page does (``quote``: in
    an attribute's quotes): markup characters escaped, bidirectional controls written out
    (:func:`engine.errors.visible`: a title could have reordered the write-up around it).
    What ``html.escape`` returns, without importing :mod:`html`, which builds its table
    of 2,231 entity names (~1 ms of start-up) for an escape that needs five of them."""
    text = visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&#x27;") if quote else text


_NAME = re.compile(r"^([A-Za-z]+)_?(\d+)$")


@lru_cache(maxsize=4096)
def h_name(node: str, index: str | None = None) -> str:
    """A node name with a real subscript (``x1`` → x<sub>1</sub>), optionally indexed.
    (Remembered: a write-up names its nodes dozens of times, each a regular expression
    and an escape.)"""
    m = _NAME.match(node)
    if m:
        base = f"{esc(m.group(1))}<sub>{m.group(2)}</sub>"
        return base if index is None else f"{base}[{index}]"
    base = esc(node)
    return base if index is None else f"{base}<sub>{index}</sub>"


def h_color(text: str, color: str) -> str:
    return f'<span style="color:{color}">{text}</span>'


def h_lines(lines: Iterable[str], color: str) -> str:
    """Plain-text lines (they hold ids: escaped here) in ``color``, one under another."""
    return "<br/>".join(h_color(esc(t), color) for t in lines)


def h_frac(num: str, den: str) -> str:
    """A stacked fraction: numerator over a rule over denominator."""
    return (
        '<table cellspacing="0" cellpadding="0" style="border-collapse:collapse">'
        f'<tr><td align="center" style="border-bottom:1px solid {colours.TEXT};'
        f' padding:0px 3px 1px 3px; {NOWRAP}">{num}</td></tr>'
        f'<tr><td align="center" style="padding:1px 3px 0px 3px; {NOWRAP}">{den}</td></tr>'
        "</table>"
    )


def h_partial(top: str, bottom: str) -> str:
    """∂top / ∂bottom as a stacked fraction (both already HTML)."""
    return h_frac(f"∂{top}", f"∂{bottom}")


def h_sigma(index: str) -> str:
    """A summation sign with its index underneath."""
    return (
        '<table cellspacing="0" cellpadding="0">'
        '<tr><td align="center"><span style="font-size:150%">Σ</span></td></tr>'
        f'<tr><td align="center"><span style="font-size:80%">{index}</span></td></tr></table>'
    )


def h_matrix(cells: Sequence[Sequence[str]], color: str | None = None, wrap: int = 0) -> str:
    """A matrix in square brackets; cells are HTML, right-aligned so digits line up.

    The brackets are two narrow cells spanning all rows, each with three borders,
    so their serifs stay short whatever the width of the numbers. The colour is the
    cell's own (a span in each cell cost the panel's layout a format per number);
    ``None``: the theme's text colour. ``wrap``: a row of more cells than that is written
    on lines of ``wrap`` (:func:`_wrapped`).
    """
    color = color or colours.TEXT
    if wrap and max(map(len, cells), default=0) > wrap:
        cells = _wrapped(cells, wrap)
    rows = len(cells)
    b = f"2px solid {colours.TEXT}"
    bracket = (
        f'<td rowspan="{rows}" width="5" style="border-{{side}}:{b}; border-top:{b};'
        f' border-bottom:{b}; padding:0px">&nbsp;</td>'
    )
    out = ['<table cellspacing="0" cellpadding="0" style="border-collapse:collapse">']
    for i, row in enumerate(cells):
        out.append("<tr>")
        if i == 0:
            out.append(bracket.format(side="left"))
        for cell in row:  # one line each, all as tall: no vertical alignment to ask for
            out.append(
                f'<td align="right" style="padding:1px 5px; {NOWRAP}; color:{color}">{cell}</td>'
            )
        if i == 0:
            out.append(bracket.format(side="right"))
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def _wrapped(cells: Sequence[Sequence[str]], wrap: int) -> list[list[str]]:
    """Each row of ``cells`` cut into lines of at most ``wrap`` cells; a row's continuation
    lines start with :data:`CONTINUED` (its numbers one column in, still in columns), so a
    wrapped row reads as one row, not as more rows of the matrix. Every line is
    ``wrap + 1`` cells wide."""
    out: list[list[str]] = []
    for row in cells:
        for start in range(0, max(len(row), 1), wrap):
            line = list(row[start : start + wrap])
            lead = [h_color(CONTINUED, colours.TEXT_MUTED)] if start else []
            out.append(lead + line + [""] * (wrap + 1 - len(lead) - len(line)))
    return out


def h_numbers(
    a: np.ndarray,
    color: str,
    as_row: bool = False,
    max_vector: int = PANEL_MAX_VECTOR,
    wrap: int = 0,
) -> str:
    """A tensor's numbers: a scalar plainly, a vector or matrix in brackets, big ones summarised.

    ``as_row`` reads the tensor as the flattened row vector that multiplies a Jacobian;
    ``wrap``: a row longer than that on several lines (:func:`h_matrix`).
    """
    a = np.asarray(a)
    if a.ndim == 0:
        return h_color(esc(fmt_num(a)), color)
    if a.size > max_vector or a.ndim > 2:
        return h_color(esc(format_tensor(a, max_vector)), color)
    return h_matrix(_cells([a.ravel()] if as_row or a.ndim == 1 else a), color, wrap)


def _cells(rows: Iterable[np.ndarray]) -> list[list[str]]:
    """A matrix's numbers as the cells of :func:`h_matrix`."""
    return [[esc(fmt_num(v)) for v in r] for r in rows]


def h_shape(a: np.ndarray, color: str, symbol: str = "") -> str:
    """A matrix written as its shape (``J`` ``[3×3]``): how a shortened write-up elides it."""
    return h_color(f"{symbol}[{fmt_shape(np.shape(a))}]", color)


def h_numbers_or_shape(
    a: np.ndarray, color: str, elide: bool, as_row: bool = False, wrap: int = 0
) -> str:
    """:func:`h_numbers`, or with ``elide`` a matrix of more than one row as its shape
    (a vector, a single row and a scalar keep their numbers, up to
    :data:`ELIDED_MAX_VECTOR` of them; ``as_row``: read as a row, never as a shape;
    ``wrap``: see :func:`h_numbers`)."""
    a = np.asarray(a)
    if elide and elides_to_shape(a, as_row):
        return h_shape(a, color)
    return h_numbers(a, color, as_row, ELIDED_MAX_VECTOR if elide else PANEL_MAX_VECTOR, wrap)


def h_jacobian(jac: np.ndarray, wrap: int = 0) -> str:
    """A Jacobian's numbers as a bracketed matrix (1×1: the plain number; ``wrap``: see
    :func:`h_matrix`)."""
    if jac.shape == (1, 1):
        return h_color(esc(fmt_num(jac[0, 0])), colours.JACOBIAN)
    return h_matrix(_cells(jac), colours.JACOBIAN, wrap)


def h_equation(cells: Sequence[str]) -> str:
    """Cells laid out in one row, vertically centred: how fractions sit inline."""
    tds = "".join(f'<td valign="middle" style="padding:0px 2px; {NOWRAP}">{c}</td>' for c in cells)
    return f'<table cellspacing="2" cellpadding="0"><tr>{tds}</tr></table>'


def h_para(text: str, color: str | None = None, size: str = "100%", bold: bool = False) -> str:
    """A paragraph in ``color`` (``None``: the theme's text colour, read now)."""
    color = color or colours.TEXT
    weight = "font-weight:bold;" if bold else ""
    return f'<p style="margin:4px 0px; color:{color}; font-size:{size}; {weight}">{text}</p>'


def h_heading(text: str, size: str = "115%") -> str:
    """A heading: a bold paragraph (of a write-up's step, phase or part unless ``size``
    says otherwise)."""
    return h_para(text, bold=True, size=size)


#: Qt's rich text sets sub- and superscripts at the share of the text around them the
#: font asks for (DejaVu Sans: 0.61 on paper, about 0.64 on screen, whole pixels): at
#: least this much, what sizes are reckoned with.
QT_SUB_SHARE = 0.6


def h_document(body: str, base_pt: float, sub_pt: float | None = None) -> str:
    """The whole document at ``base_pt``; ``sub_pt``: sub- and superscripts set at that
    size instead of Qt's :data:`QT_SUB_SHARE` of the text (a minimum a page or a
    projector must keep), counting in whole pixels at 96 per inch, rounded up."""
    if sub_pt is not None:
        span_px = math.ceil(math.ceil(sub_pt * 96 / 72) / QT_SUB_SHARE)
        # in whole points: Qt's HTML export drops a pixel size inside a point-sized
        # text, and its reading of the HTML a point size's fraction
        span = f'<span style="font-size:{math.ceil(span_px * 72 / 96)}pt">'
        for tag in ("sub", "sup"):
            body = body.replace(f"<{tag}>", f"<{tag}>{span}").replace(
                f"</{tag}>", f"</span></{tag}>"
            )
    return (
        f"<html><body style=\"font-family:'DejaVu Sans'; font-size:{base_pt:.1f}pt;"
        f' color:{colours.TEXT}">{body}</body></html>'
    )


# --------------------------------------------------------------------------- chain rule


def _op_title(graph: Any, node: str) -> str:
    n = graph.nodes.get(node) if graph is not None else None
    if n is None or n.is_leaf:
        return h_name(node)
    return n.computes(h_name)


def node_is_leaf(graph: Any, node: str) -> bool:
    """Whether ``node`` is a leaf of ``graph`` (None, or a node it lacks: not one)."""
    n = graph.nodes.get(node) if graph is not None else None
    return bool(n is not None and n.is_leaf)


def _grad_symbol(A: str, node: str, index: str | None = None) -> str:
    return h_partial(A, h_name(node, index))


def _lines(lead: Sequence[str], cells: Sequence[str], cuts: Sequence[int]) -> list[str]:
    """``cells`` as one equation after ``lead``, or cut before each index of ``cuts``
    into as many lines, each after ``lead`` (a narrow column's numbers line)."""
    ends = [0, *cuts, len(cells)]
    return [h_equation([*lead, *cells[a:b]]) for a, b in zip(ends, ends[1:], strict=False)]


def step_html(
    step: Step,
    k: int,
    n: int,
    objective: str,
    fan_in: int,
    contribution: int,
    graph: Any = None,
    output: str | None = None,
    senders: Sequence[str] | None = None,
    compact: bool = False,
    elide: bool = False,
    interactive: bool = True,
    narrow: Narrow = Narrow.NO,
) -> str:
    """The chain rule for one backward step, symbolic and with the numbers substituted.

    ``contribution`` is which of the operand's ``fan_in`` incoming gradients this is;
    ``senders`` names the consumer of each of them, in order (for the fan-out note).
    ``compact`` writes the symbolic line and the numbers side by side, and the words
    on the Jacobian after the operation: two lines less (a short, wide panel:
    presentation mode on a projector). ``elide`` shortens it further by one rule: a
    matrix of more than one row (the Jacobian, a matrix gradient) is written as its
    shape; the row vector arriving from above and every vector keep their numbers (up
    to :data:`ELIDED_MAX_VECTOR`, a longer one summarised); the operation's line and
    the words on the Jacobian go (the heading names both nodes, the shape says the
    rest) and a fan-out is said in one short line. ``narrow`` (a :class:`Narrow` level)
    writes the numbers line one factor a line (the row vector; times the Jacobian;
    equals the vjp), and an accumulation likewise: a tall, narrow column (an exported
    frame's) holds a 4×4 Jacobian at full size that way; the level says what is done
    with a row too long for the column (summarised, or wrapped keeping its numbers,
    unless elided) and whether a gradient's name goes on its own line. ``interactive``: the
    window's text, which says where a Jacobian too large to print is shown (an export
    has no views).
    """
    c, o, A = step.consumer, step.operand, h_name(objective)  # an id: user text
    m_c, m_o = int(step.upstream.size), int(step.vjp.size)
    i_idx = "i" if m_o > 1 else None
    j_idx = "j" if m_c > 1 else None
    title = _op_title(graph, c)
    parts = [h_heading(f"Step {k} of {n}: the gradient flows from {h_name(c)} back to {h_name(o)}")]
    operation = f"{h_name(c)} = {title}; {h_name(o)} is its operand {step.operand_index}."
    said = len(parts)  # where the operation is said
    parts.append(h_para(operation, colours.TEXT_MUTED))
    accumulate = fan_in > 1 or step.before is not None
    eq = "+=" if accumulate else "="

    # Symbolic: dA/do_i (+)= sum_j dA/dc_j . dc_j/do_i
    lhs = _grad_symbol(A, o, i_idx)
    sym = [lhs, eq]
    if j_idx:
        sym.append(h_sigma(j_idx))
    sym += [_grad_symbol(A, c, j_idx), "·", h_partial(h_name(c, j_idx), h_name(o, i_idx))]
    if not compact:
        parts.append(h_equation(sym))
    # the numbers line's start: an indent (shortened: a gap)
    lead = (sym if compact else []) + ["&nbsp;" * (2 if elide or narrow else 6)]

    # Numbers: upstream . J = vjp
    up_known = "(the v you gave)" if c == output and objective != c else ""
    jac = small_jacobian(step, PANEL_MAX_ENTRIES)
    wrap_at = WRAP_NUMBERS if narrow is Narrow.WRAPPED and not elide else 0
    summarise = bool(narrow) and not elide and not wrap_at  # a row too long: its summary
    up_html = (
        h_numbers(step.upstream, colours.GRAD_TEXT, True, ELIDED_MAX_VECTOR)
        if summarise
        else h_numbers_or_shape(step.upstream, colours.GRAD_TEXT, elide, True, wrap_at)
    )
    vjp_html = h_numbers_or_shape(step.vjp, colours.GRAD_TEXT, elide, wrap=wrap_at)
    if jac is not None and max(m_c, m_o) <= PANEL_MAX_VECTOR:
        as_shape = (elide and m_c > 1) or (summarise and m_o > ELIDED_MAX_VECTOR)
        jac_html = h_shape(jac, colours.JACOBIAN, "J") if as_shape else h_jacobian(jac, wrap_at)
        num = [eq if not accumulate else "+=", up_html, "·", jac_html, "=", vjp_html]
        parts += _lines(lead, num, (2, 4) if narrow else ())
        if jac.shape != (1, 1) and not elide:  # shortened: the words on J go
            words = (
                f"row vector ∂{A}/∂{h_name(c)} {up_known} times the Jacobian "
                f"∂{h_name(c)}/∂{h_name(o)} ({m_c}×{m_o}: rows are {h_name(c)}'s elements, "
                f"columns {h_name(o)}'s)."
            )
            if compact:  # after the operation, on its line: one line less again
                parts[said] = h_para(
                    f'{operation} <span style="font-size:90%">{words[0].upper()}{words[1:]}</span>',
                    colours.TEXT_MUTED,
                )
            else:
                parts.append(h_para(words, colours.TEXT_MUTED, "90%"))
    else:
        # shortened: the words on J's structure go, as for a small J
        structure = "" if elide else f": <b>{esc(step.structure())}</b>"
        parts.append(
            h_para(
                f"J = ∂{h_name(c)}/∂{h_name(o)} is {m_c}×{m_o} = {m_c * m_o:,} entries"
                f"{structure}{' (heatmap in the Jacobian view)' if interactive else ''}.",
                colours.JACOBIAN,
            )
        )
        num = ["upstream", up_html, "·&nbsp;J&nbsp;=", vjp_html]
        parts += _lines(lead, num, (2,) if narrow else ())

    # Accumulation at the operand: grad += vjp
    gname = f"{h_name(o)}.grad" if node_is_leaf(graph, o) else f"∂{A}/∂{h_name(o)}"
    after = h_numbers_or_shape(step.accumulated, colours.GRAD_TEXT, elide, wrap=wrap_at)
    if step.before is None:
        acc = [gname, "=", after]
    else:
        acc = [
            gname,
            "=",
            h_numbers_or_shape(step.before, colours.GRAD_TEXT, elide, wrap=wrap_at),
            "+",
            vjp_html,
            "=",
            after,
        ]
    cuts = (3, 5) if narrow and step.before is not None else ()
    if narrow is Narrow.SPLIT:  # the name, then its numbers a line below, indented
        parts += [h_equation(acc[:2]), *_lines(lead, acc[2:], [c - 2 for c in cuts])]
    else:
        parts += _lines([], acc, cuts)
    if fan_in > 1 and elide:
        parts.append(
            h_para(
                f"<b>Fan-out:</b> term {contribution} of the {fan_in} summed into "
                f"{h_name(o)}'s gradient.",
                colours.GRAD_TEXT,
            )
        )
    elif fan_in > 1:
        parts.append(
            h_para(
                f"<b>Fan-out:</b> {fan_out_words(o, fan_in, senders)}, so its "
                f"gradient is the sum of {fan_in} terms; this is term "
                f"{contribution} of {fan_in}.",
                colours.GRAD_TEXT,
            )
        )
    elif step.before is not None:
        parts.append(
            h_para(
                f"{h_name(o)}.grad already held a gradient from an earlier backward call: "
                "PyTorch adds into .grad.",
                colours.GRAD_TEXT,
            )
        )
    if elide:
        del parts[said]
    return "".join(parts)


def start_html(output: str, gradient: np.ndarray, objective: str, n: int) -> str:
    """Forward done, nothing propagated yet: what backward is about to do."""
    A, y = h_name(objective), output  # the objective may be the output's id: user text
    parts = [h_heading("Forward done. Backward starts at the output.")]
    if objective == y:
        parts.append(
            h_para(
                f"{h_name(y)} is a scalar, so {h_name(y)}.backward() starts from "
                f"∂{h_name(y)}/∂{h_name(y)} = 1."
            )
        )
    else:
        parts.append(
            h_para(
                f"{h_name(y)}.backward(gradient=v): v = ∂{A}/∂{h_name(y)} is the gradient of some "
                f"scalar {A} = f({h_name(y)}) that PyTorch never needs to know."
            )
        )
    parts.append(
        h_equation([_grad_symbol(A, y), "=", "v", "=", h_numbers(gradient, colours.GRAD_TEXT)])
    )
    parts.append(
        h_para(
            f"Each of the {n} steps pulls the gradient back through one edge, consumer → operand:"
        )
    )
    parts.append(
        h_equation(
            [
                _grad_symbol(A, "operand"),
                "+=",
                _grad_symbol(A, "consumer"),
                "·",
                h_partial("consumer", "operand"),
            ]
        )
    )
    parts.append(
        h_para(
            "A node that feeds several consumers adds up what each sends back.", colours.TEXT_MUTED
        )
    )
    return "".join(parts)


def forward_html(
    frame_position: int, forward_order: Sequence[str], values: Mapping[str, Any], graph: Any = None
) -> str:
    """During the forward pass: which node was just computed, and its value."""
    if frame_position <= 0:
        return h_heading("Forward pass not run yet.") + h_para(
            "Play forward computes the values node by node, from the inputs to "
            "the output; then backward sends gradients the other way."
        )
    node = forward_order[frame_position - 1]
    value = values.get(node)
    title = _op_title(graph, node)
    parts = [h_heading(f"Forward: node {frame_position} of {len(forward_order)}")]
    rhs = [h_name(node), "="]
    if title != h_name(node):
        rhs += [title, "="]
    rhs.append(h_numbers(value, colours.TEXT) if value is not None else "—")
    parts.append(h_equation(rhs))
    return "".join(parts)


def _grad_row(A: str, y: str, gradient: np.ndarray) -> str:
    """``[∂A/∂y₀, ∂A/∂y₁, ...]`` (0-based, as PyTorch indexes ``y``) for up to 4
    elements, else ∂A/∂y."""
    g = np.asarray(gradient)
    if 1 < g.size <= 4 and g.ndim == 1:
        return h_matrix([[h_frac(f"∂{A}", f"∂{h_name(y, str(j))}") for j in range(g.size)]])
    return h_frac(f"∂{A}", f"∂{h_name(y)}")


def end_to_end_html(
    output: str,
    objective: str,
    leaves: Sequence[str],
    jac: np.ndarray | None,
    gradient: np.ndarray,
    vjp: Sequence[np.ndarray],
    heading: bool = True,
    elide: bool = False,
) -> str:
    """The seeds' whole computation: ``[∂A/∂x₁ …] = vᵀ · J = [...]``, numbers on a line below
    (``elide``: the Jacobian said by its shape, the leaves' .grad lines follow).

    ``jac`` is the end-to-end Jacobian (columns grouped by leaf, as the engine returns
    it), ``vjp`` the leaves' gradients from this one backward call (zeros where none flows).
    """
    A, y = h_name(objective), output
    lhs_cells = [h_frac(f"∂{A}", f"∂{h_name(x)}") for x in leaves]
    lhs = h_matrix([lhs_cells]) if len(leaves) > 1 else lhs_cells[0] if lhs_cells else ""
    parts = (
        [h_heading(f"End to end: {h_name(y)} with respect to the leaves", "100%")]
        if heading
        else []
    )
    big = jac is None or jac.size > PANEL_MAX_ENTRIES or max(jac.shape) > PANEL_MAX_VECTOR
    if big or elide:
        if jac is None:  # not computed (too many entries or too much work): its shape
            columns = sum(int(np.size(g)) for g in vjp)
            size = f"{int(np.size(gradient))}×{columns}, too big to show"
        else:
            size = f"{jac.shape[0]}×{jac.shape[1]}"
        parts.append(h_para(f"J = ∂{h_name(y)}/∂(leaves) is {size}; vᵀJ is the leaves' .grad."))
        return "".join(parts)
    assert jac is not None  # "big" covers a Jacobian not computed
    flat = np.concatenate([np.ravel(g) for g in vjp]) if len(vjp) == len(leaves) and vjp else None
    # Two lines, as the seed writes it, so the formula fits a narrow panel.
    parts.append(
        h_equation([lhs, "=", _grad_row(A, y, gradient), "·&nbsp;J", "&nbsp;=&nbsp;v<sup>T</sup>J"])
    )
    row = [
        "&nbsp;&nbsp;=",
        h_numbers(gradient, colours.GRAD_TEXT, as_row=True),
        "·",
        h_jacobian(jac),
    ]
    if flat is None:
        parts.append(h_equation(row))
        return "".join(parts)
    result = ["=", h_numbers(flat, colours.GRAD_TEXT, as_row=True)]
    # vᵀ, J's columns and vᵀJ side by side: more numbers across than a vector's worth run
    # off a presentation panel's edge (classifier_head's 25), so vᵀJ gets a line of its own.
    if np.size(gradient) + jac.shape[1] + flat.size > PANEL_MAX_VECTOR:
        parts += [h_equation(row), h_equation(["&nbsp;&nbsp;", *result])]
    else:
        parts.append(h_equation(row + result))
    return "".join(parts)


# --------------------------------------------------------------------------- summary


def leaf_grads_html(
    leaves: Sequence[str], grads: Mapping[str, np.ndarray | None], status: str
) -> str:
    """The leaves' ``.grad`` in PyTorch's words, with where playback stands."""
    lines = leaf_grad_lines({leaf: grads.get(leaf) for leaf in leaves})
    body = h_lines(lines, colours.GRAD_TEXT) or "no leaf requires grad"
    return (
        h_heading("Leaf gradients")
        + h_para(esc(status), colours.TEXT_MUTED, "90%")
        + f"<p style=\"margin:6px 0px; font-family:'DejaVu Sans Mono'; font-size:120%\">"
        f"{body}</p>"
    )


def jacobian_table_html(
    output: str,
    output_shape: tuple[int, ...],
    leaves: Sequence[str],
    leaf_shapes: Sequence[tuple[int, ...]],
    jac: np.ndarray,
) -> str:
    """The end-to-end Jacobian as a grid: a column group per leaf, a row per output element."""
    border = f"1px solid {colours.RULE}"
    th = f'style="padding:3px 8px; border:{border}; background:{colours.HEADER}"'
    td = f'style="padding:3px 8px; border:{border}"'
    multi = any(int(np.prod(s)) > 1 for s in leaf_shapes)
    out = ['<table cellspacing="0" cellpadding="0" style="border-collapse:collapse">']
    out.append(f"<tr><th {th}></th>")
    for leaf, shape in zip(leaves, leaf_shapes, strict=True):
        span = max(1, int(np.prod(shape)))
        out.append(f'<th colspan="{span}" {th}>{h_name(leaf)}</th>')
    out.append("</tr>")
    if multi:
        out.append(f"<tr><th {th}></th>")
        for shape in leaf_shapes:
            for idx in np.ndindex(*shape) if shape else [()]:
                label = ",".join(str(i) for i in idx)
                out.append(
                    f'<th {th}><span style="font-size:80%">[{label}]</span></th>'
                    if shape
                    else f"<th {th}></th>"
                )
        out.append("</tr>")
    rows = list(np.ndindex(*output_shape)) if output_shape else [()]
    for r, idx in enumerate(rows):
        label = h_name(output) + ("[" + ",".join(str(i) for i in idx) + "]" if idx else "")
        out.append(f"<tr><th {th}>{label}</th>")
        for v in jac[r]:
            out.append(f'<td align="right" {td}>{h_color(esc(fmt_num(v)), colours.JACOBIAN)}</td>')
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def _paths(
    steps: Sequence[Step], output: str, leaf: str, limit: int
) -> tuple[list[list[Step]], int]:
    """Up to ``limit`` chains of steps from the output down to ``leaf``, and how many exist.

    Paths are counted first, in one pass over the steps (the trace runs consumers in
    reverse topological order, so reversed it meets every operand before its
    consumers); the enumeration then only follows edges that reach the leaf, so a
    deep graph with exponentially many paths costs ``limit × depth``. No recursion.
    """
    counts: dict[str, int] = {leaf: 1}
    for s in reversed(steps):
        if s.consumer != leaf:
            counts[s.consumer] = counts.get(s.consumer, 0) + counts.get(s.operand, 0)
    by_consumer: dict[str, list[Step]] = {}
    for s in steps:
        if counts.get(s.operand, 0):
            by_consumer.setdefault(s.consumer, []).append(s)
    found: list[list[Step]] = []
    stack: list[tuple[str, list[Step]]] = [(output, [])]
    while stack and len(found) < limit:
        node, chain = stack.pop()
        if node == leaf:
            found.append(chain)
            continue
        for s in reversed(by_consumer.get(node, [])):  # reversed: first edge popped first
            stack.append((s.operand, [*chain, s]))
    return found, counts.get(output, 0)


def composition_html(
    steps: Sequence[Step],
    output: str,
    leaves: Sequence[str],
    sizes: Sequence[int],
    jac: np.ndarray | None,
    max_paths: int = 6,
) -> str:
    """Each leaf's block of J as the sum over paths of the product of edge Jacobians.

    ``∂y/∂x₁ = ∂y/∂y₁·∂y₁/∂a·∂a/∂x₁ + …`` and the same with the recorded edge
    Jacobians substituted; the total is the engine's end-to-end Jacobian block.
    """
    parts = [
        h_heading("J as the composition of the edge Jacobians", "100%"),
        h_para(
            "Each path from the output to a leaf multiplies its edge Jacobians; "
            "the paths add up (reverse mode does exactly this, edge by edge).",
            colours.TEXT_MUTED,
            "90%",
        ),
    ]
    col = 0
    mono = "font-family:'DejaVu Sans Mono'"
    for leaf, n in zip(leaves, sizes, strict=True):
        paths, count = _paths(steps, output, leaf, max_paths)
        if not paths:
            parts.append(h_para(f"∂{h_name(output)}/∂{h_name(leaf)} = 0: no path leads here."))
            col += n
            continue
        sym_terms, num_terms = [], []
        numeric = True
        for chain in paths:
            sym_terms.append("·".join(f"∂{h_name(s.consumer)}/∂{h_name(s.operand)}" for s in chain))
            factors = []
            for s in chain:
                j = small_jacobian(s)
                if j is None or min(j.shape) > 1:  # a full matrix inline is unreadable
                    numeric = False
                    break
                factors.append(esc(matrix_text(j)))
            num_terms.append("·".join(factors))
        more = f" + … ({count - len(paths)} more paths)" if count > len(paths) else ""
        lhs = f"∂{h_name(output)}/∂{h_name(leaf)}"
        parts.append(h_para(f"{lhs} = " + " + ".join(sym_terms) + more))
        total = ""
        if jac is not None and jac.shape[0] * n <= LABEL_MAX_ENTRIES:
            total = h_color(
                esc(matrix_text(jac[:, col : col + n])).replace("\n", " "), colours.JACOBIAN
            )
        if numeric and not more:
            terms = " + ".join(h_color(t, colours.JACOBIAN) for t in num_terms)
            parts.append(
                f'<p style="margin:0px 0px 8px 24px; {mono}">= {terms}'
                + (f" = {total}" if total else "")
                + "</p>"
            )
        elif total:
            parts.append(f'<p style="margin:0px 0px 8px 24px; {mono}">= {total}</p>')
        col += n
    return "".join(parts)
