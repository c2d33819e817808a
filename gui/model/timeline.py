"""Frame = f(results, position): what the canvas and panels show at one point of playback.

Pure Python (no Qt), so stepping back, seeking, exporting a frame headless and
testing "the label at step k says J = [1, 0, 0]ᵀ" all call the same function.

The timeline has ``len(forward order) + len(trace) + 1`` positions:

- 0: forward not run (no values shown);
- 1..F: the forward pass, values appearing node by node (F: forward done);
- F + k for k in 1..n: backward step k of n has just been applied (F + n: backward done).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from engine.trace import Step

from .results import Results

EdgeKey = tuple[str, str, int]  # (operand, consumer, operand index)


class Phase(Enum):
    NO_FORWARD = "forward not run"
    FORWARD = "forward"
    FORWARD_DONE = "forward done"
    BACKWARD = "backward"
    BACKWARD_DONE = "backward done"


@dataclass(frozen=True)
class Frame:
    """Everything a view needs to draw one moment; views compute nothing themselves."""

    position: int
    length: int  # number of positions (the last is length - 1)
    phase: Phase
    status: str  # the state in words, as the player's toolbar and exports show it
    k: int  # backward steps applied
    n: int  # backward steps in all
    shown_values: frozenset[str]
    grads: Mapping[str, np.ndarray] = field(default_factory=dict)
    active: Step | None = None  # the step applied last (highlighted), if in backward
    done_edges: frozenset[EdgeKey] = frozenset()
    fan_in: Mapping[str, int] = field(default_factory=dict)
    #: Quiz mode: quantities of the active step (or forward node) still to be predicted
    #: ("jacobian", "vjp", "accumulated", "forward"; gui.model.quiz.Hidden values) and
    #: the question asked. Views show "?" for those and the question instead of the numbers.
    hidden: frozenset[str] = frozenset()
    question: str = ""

    @property
    def active_edge(self) -> EdgeKey | None:
        s = self.active
        return None if s is None else (s.operand, s.consumer, s.operand_index)


class Timeline:
    """The positions of one document's results; :meth:`frame` is pure in (results, p)."""

    def __init__(self, results: Results) -> None:
        self.results = results
        fwd = results.forward
        self.forward_order = [n for n in fwd.order if n in fwd.values]
        trace = results.trace
        self.steps: list[Step] = list(trace.steps) if trace is not None else []
        self.fan_in: dict[str, int] = trace.fan_ins() if trace is not None else {}
        # Per step: how many of its operand's contributions it completes (1-based);
        # per operand: who sends it a vjp, in order. Read by the chain-rule write-up.
        self._contribution: list[int] = []
        self._senders: dict[str, list[str]] = {}
        for s in self.steps:
            senders = self._senders.setdefault(s.operand, [])
            senders.append(s.consumer)
            self._contribution.append(len(senders))
        self.start_grads: dict[str, np.ndarray] = {}
        if trace is not None:
            self.start_grads[trace.output] = trace.grads[trace.output]
            seen: set[str] = set()
            for s in self.steps:  # only an operand's first step says what it held before
                if s.operand not in seen:
                    seen.add(s.operand)
                    if s.before is not None and s.operand not in self.start_grads:
                        self.start_grads[s.operand] = s.before

    @property
    def forward_length(self) -> int:
        return len(self.forward_order)

    @property
    def length(self) -> int:
        return self.forward_length + len(self.steps) + 1

    @property
    def end(self) -> int:
        return self.length - 1

    def contribution(self, k: int) -> int:
        """Which of its operand's contributions step ``k`` (1-based) is: 1 for the first."""
        return self._contribution[k - 1]

    def senders(self, operand: str) -> list[str]:
        """The consumers that send ``operand`` a vjp, in step order."""
        return self._senders.get(operand, [])

    def position_of_step(self, k: int) -> int:
        """Timeline position after ``k`` backward steps (0: forward done)."""
        return self.forward_length + max(0, min(k, len(self.steps)))

    def _no_backward_text(self) -> str:
        error = self.results.backward_error
        return "forward done; no backward: " + (str(error) if error else "nothing to do")

    def frame(self, position: int) -> Frame:
        p = max(0, min(position, self.end))
        F, n = self.forward_length, len(self.steps)
        has_backward = self.results.trace is not None
        if p < F or (p == F and not has_backward):
            shown = frozenset(self.forward_order[:p])
            if p == 0:
                phase, status = Phase.NO_FORWARD, "forward not run"
            elif p < F:
                phase = Phase.FORWARD
                status = f"forward: node {p} of {F} ({self.forward_order[p - 1]})"
            else:
                phase, status = Phase.FORWARD_DONE, self._no_backward_text()
            return Frame(p, self.length, phase, status, 0, n, shown, fan_in=self.fan_in)
        k = p - F
        grads = dict(self.start_grads)
        done: set[EdgeKey] = set()
        for s in self.steps[:k]:
            grads[s.operand] = s.accumulated
            done.add((s.operand, s.consumer, s.operand_index))
        if k == 0:
            phase, status = Phase.FORWARD_DONE, f"forward done; backward 0 of {n} steps"
        elif k < n:
            s = self.steps[k - 1]
            phase, status = Phase.BACKWARD, f"backward step {k} of {n}: {s.consumer} → {s.operand}"
        else:
            phase, status = Phase.BACKWARD_DONE, f"backward done ({n} step{'s' if n != 1 else ''})"
        return Frame(
            position=p,
            length=self.length,
            phase=phase,
            status=status,
            k=k,
            n=n,
            shown_values=frozenset(self.forward_order),
            grads=grads,
            active=self.steps[k - 1] if k else None,
            done_edges=frozenset(done),
            fan_in=self.fan_in,
        )
