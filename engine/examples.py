"""The shipped example graphs (``assets/examples``) and the order they are taught in.

File > Open Example lists them; the tests run every one against PyTorch. Adding an
example means dropping a ``.bpgraph`` file in the folder (and, to place it, naming
it in :data:`EXAMPLE_ORDER`).
"""

from __future__ import annotations

import json
from pathlib import Path

from .fileformat import SUFFIX, FileFormatError

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "assets" / "examples"

#: The teaching order of the shipped examples: the seeds' worked examples first.
EXAMPLE_ORDER = (
    "seed1_square_sum",
    "seed2_stack_vjp",
    "seed3_mean_of_square",
    "seed4_weighted_v",
    "seed4b_ones_v",
    "fan_out",
    "broadcasting",
    "mean_vs_sum",
    "matmul_chain",
    "neuron_layer",
    "logistic_loss",
    "classifier_head",
    "attention_scores",
    "fit_line",
    "logistic_points",
    "xor_mlp",
)

#: What each example teaches, in one sentence (Help > Examples Tour).
EXAMPLE_LESSONS = {
    "seed1_square_sum": "A scalar output needs no gradient argument: backward starts from 1.",
    "seed2_stack_vjp": "A vector output needs v: backward computes vᵀJ without ever building J.",
    "seed3_mean_of_square": "A mean divides every entry's gradient by the number of entries.",
    "seed4_weighted_v": "v weights the rows of the Jacobian: [3, 2, 1] gives 10, 34, 42.",
    "seed4b_ones_v": "The same graph with v = [1, 1, 1] gives 5, 18, 34: v changes the answer.",
    "fan_out": "A node used twice receives the sum of what its consumers send back.",
    "broadcasting": "A value copied by broadcasting gets the sum of the copies' gradients.",
    "mean_vs_sum": "A sum sends 1 to every entry, a mean 1/n: the only difference.",
    "matmul_chain": "Jacobians compose by multiplication, and backward multiplies row vectors.",
    "neuron_layer": "A layer's gradient: tanh's derivative times W, and x for the weights.",
    "logistic_loss": "Sigmoid and log-loss together send back p - y, the error itself.",
    "classifier_head": "Softmax with cross-entropy sends back (p - one-hot) / batch size.",
    "attention_scores": "A batched matmul and a transpose: each batch element on its own.",
    "fit_line": "After the gradients, the update: SGD moves w and b against them, step by step.",
    "logistic_points": "Momentum remembers the last steps: the loss falls faster than plain SGD.",
    "xor_mlp": "A hidden tanh layer learns what no single neuron can; Adam scales each step.",
}


def list_examples() -> list[tuple[Path, str]]:
    """The shipped examples as (path, title), seeds first, then in teaching order."""
    if not EXAMPLES_DIR.is_dir():
        return []
    files = {p.stem: p for p in EXAMPLES_DIR.glob(f"*{SUFFIX}") if p.is_file()}
    ordered = [files.pop(stem) for stem in EXAMPLE_ORDER if stem in files]
    ordered += [files[stem] for stem in sorted(files)]
    return [(p, _title_of(p)) for p in ordered]


def example_path(name: str) -> Path:
    """The shipped example called ``name`` (its file's stem, ``seed2_stack_vjp``), so a
    wheel's examples are reached without knowing where pip put them; a name not shipped
    raises FileFormatError listing the ones that are."""
    for path, _title in list_examples():
        if path.stem == name:
            return path
    known = ", ".join(p.stem for p, _t in list_examples()) or "none are installed"
    raise FileFormatError(f"no example named {name!r}; the examples are: {known}")


def _title_of(path: Path) -> str:
    try:
        title = json.loads(path.read_text(encoding="utf-8-sig")).get("title")
    except (OSError, ValueError, AttributeError):
        title = None
    return title if isinstance(title, str) and title else path.stem


__all__ = ["EXAMPLES_DIR", "EXAMPLE_ORDER", "example_path", "list_examples"]
