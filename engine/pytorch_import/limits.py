"""What is checked on the text before a tree is built: size, null bytes, nesting, chains.

``ast.parse`` recurses once per nested call, attribute or operator, so a pasted line
of 3,000 chained calls would exhaust the stack inside the parser; the tokenizer sees
those before the parser does and refuses them with their place.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize

from ..fileformat import MAX_ELEMENTS
from ..graph import id_problem
from .values import CodeError

#: Longest source accepted, in characters (tutorial snippets are a few hundred).
MAX_SOURCE_CHARS = 2_000_000
#: Most nodes one import may create.
MAX_NODES = 5_000
#: Most operators in one statement: bounds the depth of the tree walk.
MAX_OPERATORS = 100
#: Most calls, indexes and attribute reads chained in one statement (``x.a().b()[0]``).
MAX_CHAIN = 300
#: Deepest bracket nesting accepted (and deepest nesting of lists the evaluator builds).
MAX_NESTING = 32
#: Most tensor elements across the whole import.
MAX_TOTAL_ELEMENTS = 2 * MAX_ELEMENTS

#: A comment that gives an assignment's node its original id: ``# id: "x.1"``.
ID_COMMENT = re.compile(r"#\s*id:\s*(\".*\")\s*$")

_BINARY = ("+", "-", "*", "/", "//", "%", "@", "**", "+=", "-=", "*=", "/=", "@=")


class _Counts:
    """Per-statement counters of the token scan."""

    def __init__(self) -> None:
        self.depth = 0
        self.operators = 0
        self.chain = 0


def check_text(source: str) -> None:
    """Limits a tokenizer can check before the tree is built: size, null bytes, nesting."""
    if len(source) > MAX_SOURCE_CHARS:
        raise CodeError(
            f"the code is {len(source):,} characters long; the limit is {MAX_SOURCE_CHARS:,}"
        )
    nul = source.find("\0")
    if nul >= 0:
        line = source.count("\n", 0, nul) + 1
        column = nul - (source.rfind("\n", 0, nul) + 1) + 1
        raise CodeError("the code contains a null byte", line, column)
    counts = _Counts()
    previous = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                counts.operators = counts.chain = 0
            elif tok.type == tokenize.OP:
                _count(tok, previous, counts)
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                previous = tok
    except (tokenize.TokenError, SyntaxError):
        return  # the parser reports it with its place


def _count(tok: tokenize.TokenInfo, previous: tokenize.TokenInfo | None, counts: _Counts) -> None:
    line, col = tok.start
    if _is_trailer(tok.string, previous):
        counts.chain += 1
        if counts.chain > MAX_CHAIN:
            raise CodeError(
                f"more than {MAX_CHAIN} calls, indexes and attributes in one statement",
                line,
                col + 1,
            )
    if tok.string in "([{":
        counts.depth += 1
        if counts.depth > MAX_NESTING:
            raise CodeError(f"brackets nested more than {MAX_NESTING} deep", line, col + 1)
    elif tok.string in ")]}":
        counts.depth -= 1
    elif _is_operator(tok.string, previous):
        counts.operators += 1
        if counts.operators > MAX_OPERATORS:
            raise CodeError(f"more than {MAX_OPERATORS} operators in one statement", line, col + 1)


def _after_value(previous: tokenize.TokenInfo | None) -> bool:
    """True when the token before ends a value (a name, number, string or closing bracket)."""
    return previous is not None and (
        previous.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)
        or previous.string in (")", "]", "}")
    )


def _is_trailer(op: str, previous: tokenize.TokenInfo | None) -> bool:
    """``.``, or a ``(`` / ``[`` right after a value: one more link of a call chain."""
    return op == "." or (op in "([" and _after_value(previous))


def _is_operator(op: str, previous: tokenize.TokenInfo | None) -> bool:
    """A binary operator, or a sign after another sign (``- - - x``): each one a level of the
    tree. A sign after a comma or an open bracket (``[-1, -2]``) is part of a number."""
    if op in ("+", "-", "~"):
        if previous is not None and previous.string in ("+", "-", "~", "*", "/", "@", "**"):
            return True
        return op != "~" and _after_value(previous)
    return op in _BINARY


def parse(source: str) -> ast.Module:
    """The tree of ``source``; every failure is a :class:`CodeError` with its place."""
    try:
        return ast.parse(source, mode="exec")
    except SyntaxError as exc:
        raise CodeError(f"syntax error: {exc.msg}", exc.lineno or 1, exc.offset or 1) from None
    except RecursionError:
        raise CodeError("the code is nested too deeply to read") from None
    except (ValueError, MemoryError) as exc:
        raise CodeError(f"cannot parse the code: {exc}") from None


def id_comments(source: str) -> dict[int, str]:
    """``# id: "..."`` comments by line: the original id of a node the export had to rename.

    An id the graph could not hold (too long, empty) is refused at the comment.
    """
    ids: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            m = ID_COMMENT.search(tok.string)
            if not m:
                continue
            try:
                value = json.loads(m.group(1))
            except ValueError:
                continue
            if isinstance(value, str) and value:
                problem = id_problem(value)
                if problem is not None:
                    line, col = tok.start
                    raise CodeError(f"# id: comment: {problem}", line, col + 1)
                ids[tok.start[0]] = value
    except (tokenize.TokenError, SyntaxError):
        pass
    return ids


def assigned_names(tree: ast.Module) -> set[str]:
    """Every plain name the code assigns: temporaries keep out of their way."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names
