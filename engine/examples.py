"""The shipped example graphs (``assets/examples``) and the order they are taught in.

File > Open Example lists them; the tests run every one against PyTorch. Adding an
example means dropping a ``.bpgraph`` file in the folder (and, to place it, naming
it in :data:`EXAMPLE_ORDER`).
"""

from __future__ import annotations

import json
from pathlib import Path

from .fileformat import SUFFIX

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


def list_examples() -> list[tuple[Path, str]]:
    """The shipped examples as (path, title), seeds first, then in teaching order."""
    if not EXAMPLES_DIR.is_dir():
        return []
    files = {p.stem: p for p in EXAMPLES_DIR.glob(f"*{SUFFIX}") if p.is_file()}
    ordered = [files.pop(stem) for stem in EXAMPLE_ORDER if stem in files]
    ordered += [files[stem] for stem in sorted(files)]
    return [(p, _title_of(p)) for p in ordered]


def _title_of(path: Path) -> str:
    try:
        title = json.loads(path.read_text(encoding="utf-8-sig")).get("title")
    except (OSError, ValueError, AttributeError):
        title = None
    return title if isinstance(title, str) and title else path.stem


__all__ = ["EXAMPLES_DIR", "EXAMPLE_ORDER", "list_examples"]
