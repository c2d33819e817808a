"""Real PyTorch architectures, small, for the capture tests (engine and GUI).

Each entry of :data:`ARCHITECTURES` builds ``(model, loss)``: the same seeded weights
and data every time, in float64 so the float64 oracle compares, and ``loss(model)``
runs the forward; :func:`captured` runs it under :func:`engine.capture.tracking`
(module paths and values) and captures it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from support import torch

F64 = None if torch is None else torch.float64


def mlp_cross_entropy() -> tuple[Any, Any]:
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8), torch.nn.ReLU(),
        torch.nn.Linear(8, 3),
    )
    x = torch.randn(4, 6, dtype=F64)
    return model, lambda m: torch.nn.functional.cross_entropy(m(x), torch.tensor([0, 2, 1, 2]))


def cnn() -> tuple[Any, Any]:
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 3, 3, padding=1), torch.nn.BatchNorm2d(3), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(3 * 3 * 3, 2),
    )
    x = torch.randn(2, 1, 6, 6, dtype=F64)
    return model, lambda m: torch.nn.functional.cross_entropy(m(x), torch.tensor([0, 1]))


class LSTMTagger(torch.nn.Module if torch is not None else object):  # type: ignore[misc]
    """An LSTM over 5 steps and a linear read-out of the last hidden state."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = torch.nn.LSTM(3, 4, batch_first=True)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x: Any) -> Any:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def lstm() -> tuple[Any, Any]:
    x = torch.randn(2, 5, 3, dtype=F64)
    return LSTMTagger(), lambda m: m(x).square().sum()


def transformer() -> tuple[Any, Any]:
    model = torch.nn.TransformerEncoderLayer(
        d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True
    )
    x = torch.randn(2, 4, 16, dtype=F64)
    return model, lambda m: m(x).square().mean()


class TinyLM(torch.nn.Module if torch is not None else object):  # type: ignore[misc]
    """Embedding, LayerNorm and a Linear head over the vocabulary."""

    def __init__(self, vocab: int = 11, width: int = 8) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, tokens: Any) -> Any:
        return self.head(self.norm(self.embed(tokens)))


def language_model() -> tuple[Any, Any]:
    tokens = torch.tensor([[1, 4, 7, 2], [3, 3, 9, 0]])
    targets = torch.tensor([[4, 7, 2, 5], [3, 9, 0, 1]])

    def loss(m: Any) -> Any:
        logits = m(tokens)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, 11), targets.reshape(-1))

    return TinyLM(), loss


def resnet18() -> tuple[Any, Any]:
    from torchvision.models import resnet18 as make

    x = torch.randn(2, 3, 32, 32, dtype=F64)
    return make(num_classes=10), lambda m: torch.nn.functional.cross_entropy(
        m(x), torch.tensor([3, 7])
    )


def _seeded(make: Callable[[], tuple[Any, Any]]) -> Callable[[], tuple[Any, Any]]:
    """The same weights and data every time, in float64."""

    def build() -> tuple[Any, Any]:
        torch.manual_seed(27)
        model, loss = make()
        return model.double(), loss

    return build


ARCHITECTURES: dict[str, Callable[[], tuple[Any, Any]]] = {
    name: _seeded(make)
    for name, make in {
        "mlp": mlp_cross_entropy,
        "cnn": cnn,
        "lstm": lstm,
        "transformer": transformer,
        "language_model": language_model,
        "resnet18": resnet18,
    }.items()
}


def captured(model: Any, loss: Callable[[Any], Any]) -> Any:
    """``loss(model)`` run under :func:`engine.capture.tracking` and captured."""
    from engine.capture import capture, tracking

    with tracking(model):
        out = loss(model)
    return capture(out, names=model)


@cache
def capture_of(name: str) -> tuple[Any, Any, Callable[[Any], Any]]:
    """``(model, trace, loss)`` for ``ARCHITECTURES[name]``, captured once per test run:
    the engine and the GUI tests read the same trace (nothing changes one), so
    resnet18 is built and captured once (the cache holds ~0.5 GB of float64 till the end)."""
    model, loss = ARCHITECTURES[name]()
    return model, captured(model, loss), loss
