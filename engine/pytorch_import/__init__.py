"""PyTorch code -> graph, for a safe subset of what autograd tutorials write.

Pasted code and opened files come from strangers, so the source is only ever
*read*: the standard library's :mod:`tokenize` and :mod:`ast` turn it into a tree
and this package walks that tree, building engine nodes. Nothing in it is run
(no ``exec``, ``eval`` or ``compile`` of the user's code, no imports), and the
limits on source size, nesting, call chains, nodes, list sizes and tensor elements
are checked before anything of that size is allocated.

What the walk understands: tensor literals and factories, ``requires_grad``,
arithmetic (``@`` and unary minus included), the op table's ops in their
``torch.*``, ``torch.nn.functional.*`` and method spellings, indexing with ints
and ``:``, the seeds' writing-into-slots pattern (``y = torch.randn(3); y[0] = ...``
becomes a stack of the written rows) and the first ``backward(...)``, checked with
PyTorch's rules. Anything else is refused with one line, ``line L, column C: ...``.
A node made by an assignment takes the variable's name; rebinding gives ``y_2``.

One concern per module: :mod:`.limits` (the text's limits, before parsing),
:mod:`.values` (what the walk passes around), :mod:`.naming`, :mod:`.spellings`
(read from the op table), :mod:`.core` (nodes, names, bounds), :mod:`.evaluator`
(numbers, builtins, ``math``, ``range``), :mod:`.factories`, :mod:`.handlers`
(ops whose arguments the generic rule does not read), :mod:`.expressions` and
:mod:`.walker` (statements and PyTorch's rules).
"""

from __future__ import annotations

import ast

from ..errors import GraphError
from ..pytorch_train import training_of
from .limits import (
    ID_COMMENT,
    MAX_NODES,
    MAX_SOURCE_CHARS,
    assigned_names,
    check_text,
    id_comments,
    parse,
)
from .values import CodeError, Imported, T
from .walker import Walker


def import_code(source: str) -> Imported:
    """Translate ``source`` to a graph; raise :class:`CodeError` if it is outside the subset."""
    check_text(source)
    ids = id_comments(source)
    tree = parse(source)
    walker = Walker(source, ids, assigned_names(tree))
    try:
        walker.run(tree.body)
    except RecursionError:
        raise CodeError("the code is nested too deeply to read", walker.line) from None
    except (GraphError, ValueError, ArithmeticError, MemoryError) as exc:
        # An op's own check the walk did not foresee: still a refusal with its place.
        raise CodeError(str(exc), walker.line) from None
    return _with_training(walker.finish(), tree, walker)


def _with_training(imported: Imported, tree: ast.Module, walker: Walker) -> Imported:
    """The ``torch.optim`` loop after the backward, if there is one (:mod:`..pytorch_train`)."""
    after = [s for s in tree.body if s.lineno > walker.line]
    names = {k: v.id for k, v in walker.vars.items() if isinstance(v, T)}
    imported.train = training_of(after, names) if walker.done and after else None
    if imported.train is not None:
        skipped = f"line {after[0].lineno}: lines after the first backward(...) are ignored"
        imported.warnings = [w for w in imported.warnings if w != skipped]
    return imported


__all__ = ["CodeError", "ID_COMMENT", "Imported", "MAX_NODES", "MAX_SOURCE_CHARS", "import_code"]
