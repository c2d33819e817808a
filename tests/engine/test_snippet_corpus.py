"""The snippet corpus: real autograd tutorial code from public sources (tests/snippets/).

At least 75% of the snippets import; every imported one gives the leaf gradients
PyTorch gives when it runs the snippet up to its first ``backward(...)`` (snippets
that draw random numbers are checked on import only: PyTorch's own random numbers
can't be reproduced). Running a corpus file under torch is the test running known
files from this repository, never user input.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.pytorch_import import CodeError, Imported, import_code
from support import torch

CORPUS = Path(__file__).resolve().parents[1] / "snippets"
SNIPPETS = sorted(CORPUS.glob("*.py"))


def _import(path: Path) -> Imported | None:
    try:
        return import_code(path.read_text(encoding="utf-8"))
    except CodeError:
        return None


IMPORTED = {p.name: im for p in SNIPPETS if (im := _import(p)) is not None}


def test_the_corpus_has_40_cited_snippets_and_at_least_75_percent_import() -> None:
    assert len(SNIPPETS) >= 40
    for path in SNIPPETS:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# Origin: https://github.com/"), path.name
    assert len(IMPORTED) / len(SNIPPETS) >= 0.75, sorted(
        set(p.name for p in SNIPPETS) - set(IMPORTED)
    )


class _FirstBackward(Exception):
    """Raised after the snippet's first backward(): the import reads up to there too."""


def run_to_first_backward(path: Path) -> dict[str, Any]:
    """The snippet's variables after its first ``backward(...)``, run under PyTorch."""
    real = torch.Tensor.backward

    def once(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        raise _FirstBackward

    namespace: dict[str, Any] = {"__name__": "__main__"}
    stubs = {
        name: mock.MagicMock()
        for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.ticker", "rich")
    }
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with (
            mock.patch.object(torch.Tensor, "backward", once),
            mock.patch.dict(sys.modules, stubs),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            try:
                exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
            except _FirstBackward:
                pass
    finally:
        torch.set_default_dtype(previous)
    return namespace


def _random(im: Imported) -> bool:
    return any("random numbers" in w for w in im.warnings)


CHECKED = [name for name, im in IMPORTED.items() if im.output is not None and not _random(im)]


@pytest.mark.skipif(torch is None, reason="needs torch (the test extra)")
@pytest.mark.parametrize("name", CHECKED)
def test_imported_snippet_gives_torchs_leaf_gradients(name: str) -> None:
    im = IMPORTED[name]
    trace = backward(im.graph, forward(im.graph), im.output, im.gradient)
    theirs = run_to_first_backward(CORPUS / name)
    compared = 0
    for leaf in trace.leaves:
        tensor = theirs.get(leaf)
        if not isinstance(tensor, torch.Tensor) or not tensor.is_leaf:
            continue  # the name was rebound after the leaf was made
        ours = trace.grads[leaf]
        got = tensor.grad
        assert got is not None, leaf
        np.testing.assert_allclose(
            got.detach().double().numpy(), ours, rtol=1e-5, atol=1e-6, err_msg=leaf
        )
        compared += 1
    assert compared, "no leaf gradient was compared"
