"""Training: the update after the backward pass, as ``torch.optim`` defines it.

A file's ``"train"`` block (format 1, minor version 2; docs/graph-format.md) names
the scalar loss, the parameters (the trainable ``input`` leaves) and an optimizer
with its hyper-parameters. One step is what a PyTorch training loop does::

    optimizer.zero_grad()      # unless zero_grad is off: then .grad accumulates
    loss = model(...)          # forward
    loss.backward()            # backward
    optimizer.step()           # the update, below

The updates follow ``torch.optim``'s single-tensor code line by line (the same
operations in the same order), so the exported script's ``torch.optim`` run
agrees to rounding:

- ``sgd``: ``SGD(lr)``: ``w ← w − lr · g``;
- ``momentum``: ``SGD(lr, momentum, dampening=0, nesterov=False)``: ``b ← g`` on
  the first step, then ``b ← μ · b + g``; ``w ← w − lr · b``;
- ``adam``: ``Adam(lr, betas=(β1, β2), eps)``: ``m ← m + (1 − β1)(g − m)``,
  ``v ← β2 · v + (1 − β2) g²``, ``m̂ = m / (1 − β1ᵗ)``, ``v̂ = v / (1 − β2ᵗ)``,
  ``w ← w − lr · m̂ / (√v̂ + ε)`` (torch computes it as ``lr / (1 − β1ᵗ) · m /
  (√v / √(1 − β2ᵗ) + ε)``, which this does too).

Each step returns an :class:`Update` per parameter holding every number the GUI
draws on the parameter's box, so the drawing and the change can never disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .autodiff import backward, forward
from .errors import GraphError, quoted, shape_text
from .graph import Graph

#: The file-format minor version that added the ``train`` block.
TRAIN_MINOR_VERSION = 2

OPTIMIZERS = ("sgd", "momentum", "adam")
#: torch.optim's defaults (SGD and Adam both default lr to 1e-3); ``momentum`` is
#: SGD with momentum, whose torch default of 0 would make it plain SGD: 0.9 here.
DEFAULT_LR = 1e-3
DEFAULT_MOMENTUM = 0.9
DEFAULT_BETAS = (0.9, 0.999)
DEFAULT_EPS = 1e-8
DEFAULT_STEPS = 100
#: The most steps one run takes (the CLI, the GUI's Play, an export).
MAX_STEPS = 1_000_000

_KEYS = ("loss", "params", "optimizer", "lr", "momentum", "betas", "eps", "steps",
         "zero_grad", "target")


class TrainError(GraphError):
    """A train block or a training request that cannot run; one line for the user."""


@dataclass
class TrainSpec:
    """What to train: the ``"train"`` block of a graph file.

    ``params`` None means the default: every ``input`` leaf that requires grad
    (the data are consts or inputs with ``requires_grad`` false). ``extra`` keeps
    keys this reader does not know, so a newer file saves back unchanged.
    """

    loss: str
    params: list[str] | None = None
    optimizer: str = "sgd"
    lr: float = DEFAULT_LR
    momentum: float = DEFAULT_MOMENTUM
    betas: tuple[float, float] = DEFAULT_BETAS
    eps: float = DEFAULT_EPS
    steps: int = DEFAULT_STEPS
    zero_grad: bool = True
    target: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"loss": self.loss}
        if self.params is not None:
            out["params"] = list(self.params)
        out["optimizer"] = self.optimizer
        out["lr"] = self.lr
        if self.optimizer == "momentum":
            out["momentum"] = self.momentum
        if self.optimizer == "adam":
            out["betas"] = list(self.betas)
            out["eps"] = self.eps
        out["steps"] = self.steps
        if not self.zero_grad:
            out["zero_grad"] = False
        if self.target is not None:
            out["target"] = self.target
        out.update({k: v for k, v in self.extra.items() if k not in _KEYS})
        return out


def train_from_json(value: Any) -> TrainSpec:
    """The file's ``"train"`` object (schema-checked already); ranges checked here."""
    spec = TrainSpec(
        loss=value["loss"],
        params=list(value["params"]) if "params" in value else None,
        optimizer=value.get("optimizer", "sgd"),
        lr=float(value.get("lr", DEFAULT_LR)),
        momentum=float(value.get("momentum", DEFAULT_MOMENTUM)),
        betas=tuple(float(b) for b in value.get("betas", DEFAULT_BETAS)),  # type: ignore[arg-type]
        eps=float(value.get("eps", DEFAULT_EPS)),
        steps=int(value.get("steps", DEFAULT_STEPS)),
        zero_grad=bool(value.get("zero_grad", True)),
        target=None if value.get("target") is None else float(value["target"]),
        extra={k: v for k, v in value.items() if k not in _KEYS},
    )
    check_hyper(spec)
    return spec


def check_hyper(spec: TrainSpec) -> None:
    """The hyper-parameters torch.optim would accept (it refuses lr < 0; a zero or NaN
    lr trains nothing, so it is refused too)."""
    if spec.optimizer not in OPTIMIZERS:
        raise TrainError(f"train: unknown optimizer {quoted(spec.optimizer)} "
                         f"(one of {', '.join(OPTIMIZERS)})")
    if not (math.isfinite(spec.lr) and spec.lr > 0):
        raise TrainError(f"train: the learning rate must be a positive number, not {spec.lr}")
    if not (math.isfinite(spec.momentum) and 0 <= spec.momentum < 1):
        raise TrainError(f"train: momentum must lie in [0, 1), not {spec.momentum}")
    if len(spec.betas) != 2 or not all(math.isfinite(b) and 0 <= b < 1 for b in spec.betas):
        raise TrainError(f"train: betas must be two numbers in [0, 1), not {list(spec.betas)}")
    if not (math.isfinite(spec.eps) and spec.eps >= 0):
        raise TrainError(f"train: eps must be a non-negative number, not {spec.eps}")
    if not 0 <= spec.steps <= MAX_STEPS:
        raise TrainError(f"train: steps must lie in 0..{MAX_STEPS:,}, not {spec.steps}")
    if spec.target is not None and not math.isfinite(spec.target):
        raise TrainError("train: the target loss must be a finite number")


def default_params(graph: Graph) -> list[str]:
    """Every ``input`` leaf that requires grad, in node order: the default parameters."""
    return [nid for nid, n in graph.nodes.items() if n.wants_grad]


def params_of(graph: Graph, spec: TrainSpec) -> list[str]:
    return default_params(graph) if spec.params is None else list(spec.params)


def check_spec(graph: Graph, spec: TrainSpec) -> list[str]:
    """Everything a run needs, checked before it starts; returns the parameters.

    The loss must exist and be a scalar (one element, as ``loss.backward()`` needs);
    each parameter must be an ``input`` leaf requiring grad; there must be one.
    """
    check_hyper(spec)
    if spec.loss not in graph.nodes:
        raise TrainError(f"train: the loss {quoted(spec.loss)} is not a node of the graph")
    params = params_of(graph, spec)
    for p in params:
        node = graph.nodes.get(p)
        if node is None:
            raise TrainError(f"train: the parameter {quoted(p)} is not a node of the graph")
        if not node.wants_grad:
            raise TrainError("a parameter must be an input that requires grad", p)
    if not params:
        raise TrainError("train: no trainable leaf (mark an input that requires grad)")
    if len(set(params)) != len(params):
        raise TrainError("train: a parameter is listed twice")
    fwd = forward(graph)
    if spec.loss in fwd.errors:
        raise fwd.errors[spec.loss]
    if spec.loss not in fwd.values:
        raise TrainError("the loss cannot be computed (an operand upstream fails)", spec.loss)
    size = fwd.values[spec.loss].size
    if size != 1:
        shape = fwd.values[spec.loss].shape
        raise TrainError(
            f"the loss must be a scalar, but it has shape {shape_text(shape)} ({size:,} elements)",
            spec.loss,
        )
    return params


@dataclass
class Update:
    """One parameter's update in one step: every number the drawing shows.

    ``delta`` is what was subtracted: ``new = old − delta`` exactly, elementwise.
    ``buf`` is SGD's momentum buffer; ``m``, ``v``, ``m_hat``, ``v_hat`` are Adam's.
    """

    name: str
    old: np.ndarray
    grad: np.ndarray
    new: np.ndarray
    delta: np.ndarray
    t: int
    buf: np.ndarray | None = None
    m: np.ndarray | None = None
    v: np.ndarray | None = None
    m_hat: np.ndarray | None = None
    v_hat: np.ndarray | None = None


@dataclass
class StepResult:
    """One training step: the loss before the update, and each parameter's update."""

    loss: float
    updates: dict[str, Update]


class Optimizer:
    """The optimizer's state (step count, momentum buffers, Adam's moments), kept
    apart from the graph so Reset and undo can restore it as a value."""

    def __init__(self, spec: TrainSpec) -> None:
        self.spec = spec
        self.t = 0
        self.state: dict[str, dict[str, np.ndarray]] = {}

    def snapshot(self) -> tuple[int, dict[str, dict[str, np.ndarray]]]:
        return self.t, {k: dict(v) for k, v in self.state.items()}

    def restore(self, snap: tuple[int, dict[str, dict[str, np.ndarray]]]) -> None:
        self.t, state = snap
        self.state = {k: dict(v) for k, v in state.items()}

    def update(self, name: str, w: np.ndarray, g: np.ndarray) -> Update:
        """The new value of one parameter (call once per parameter, after :meth:`tick`)."""
        spec, t = self.spec, self.t
        state = self.state.setdefault(name, {})
        if spec.optimizer == "adam":
            b1, b2 = spec.betas
            m = state.get("m", np.zeros_like(w))
            v = state.get("v", np.zeros_like(w))
            m = m + (1 - b1) * (g - m)  # torch: exp_avg.lerp_(grad, 1 - beta1)
            v = v * b2 + (1 - b2) * (g * g)  # torch: mul_(beta2).addcmul_(g, g, 1 - beta2)
            state["m"], state["v"] = m, v
            bc1, bc2 = 1 - b1**t, 1 - b2**t
            denom = np.sqrt(v) / math.sqrt(bc2) + spec.eps
            new = w + (-(spec.lr / bc1)) * (m / denom)  # torch: addcdiv_(m, denom, -step_size)
            return Update(name, w, g, new, w - new, t, m=m, v=v, m_hat=m / bc1, v_hat=v / bc2)
        if spec.optimizer == "momentum" and spec.momentum != 0:
            buf = state.get("buf")
            buf = g.copy() if buf is None else buf * spec.momentum + g
            state["buf"] = buf
            new = w + (-spec.lr) * buf
            return Update(name, w, g, new, w - new, t, buf=buf)
        new = w + (-spec.lr) * g
        return Update(name, w, g, new, w - new, t)

    def tick(self) -> None:
        self.t += 1


class Trainer:
    """Runs training steps on ``graph`` in place (the parameters' values change).

    ``grads`` is each parameter's ``.grad`` as PyTorch would hold it after the last
    step's backward: zeroed before each step when ``zero_grad`` is on, else summed.
    """

    def __init__(self, graph: Graph, spec: TrainSpec) -> None:
        self.graph = graph
        self.spec = spec
        self.params = check_spec(graph, spec)
        self.optimizer = Optimizer(spec)
        self.grads: dict[str, np.ndarray] = {}

    def propose(self) -> StepResult:
        """One ``zero_grad(); forward; backward`` and the update it gives, without
        writing the new values (the optimizer's state and ``grads`` do advance): the GUI
        writes them through an undoable command."""
        graph, spec = self.graph, self.spec
        prior = None if spec.zero_grad else self.grads
        fwd = forward(graph)
        loss = fwd.values.get(spec.loss)
        if loss is None:
            raise fwd.errors.get(spec.loss) or TrainError("the loss cannot be computed", spec.loss)
        trace = backward(graph, fwd, spec.loss, None, prior)
        self.optimizer.tick()
        updates: dict[str, Update] = {}
        grads: dict[str, np.ndarray] = {}
        for p in self.params:
            g = trace.grads.get(p)
            w = graph.nodes[p].value
            assert w is not None
            if g is None:  # the loss does not depend on it: torch skips a None .grad
                continue
            grads[p] = g
            updates[p] = self.optimizer.update(p, w, g)
        self.grads = grads
        return StepResult(float(loss.reshape(())), updates)

    def step(self) -> StepResult:
        """One ``zero_grad(); forward; backward; step()``, the new values written."""
        result = self.propose()
        for p, up in result.updates.items():
            self.graph.nodes[p].value = up.new
        return result

    def run(self, steps: int) -> list[float]:
        """``steps`` steps; the loss of each (before its update)."""
        return [self.step().loss for _ in range(steps)]


__all__ = [
    "OPTIMIZERS",
    "TRAIN_MINOR_VERSION",
    "Optimizer",
    "StepResult",
    "TrainError",
    "TrainSpec",
    "Trainer",
    "Update",
    "check_spec",
    "default_params",
    "train_from_json",
]
