"""The update act's frames (issue 30: "the box's value changing as the pulse passes"):
a parameter's box shows its old value until the pulse reaches it, its new value from
then on, in the order the step updated them; the exported lesson schedules the same
frames. Headless (no Qt)."""

from __future__ import annotations

import numpy as np

from engine.examples import EXAMPLES_DIR
from engine.fileformat import load
from engine.train import Trainer
from gui.model import lesson, update_act
from gui.model.update_act import DONE, UpdateFrame


def xor_updates():  # noqa: ANN201
    gf = load(EXAMPLES_DIR / "xor_mlp.bpgraph")
    assert gf.train is not None
    return Trainer(gf.graph, gf.train).step().updates


def test_each_box_changes_when_the_pulse_reaches_it_not_before() -> None:
    updates = xor_updates()
    names = list(updates)
    assert names == ["W1", "W2"]
    between = 4
    frames = update_act.frames(len(names), between)
    assert len(frames) == len(names) * between + 1 and frames[-1] is DONE
    changed_at: dict[str, int] = {}
    for i, frame in enumerate(frames):
        shown = update_act.shown_values(updates, frame)
        for k, name in enumerate(names):
            up = updates[name]
            assert not np.array_equal(up.old, up.new)
            new = np.array_equal(shown[name], up.new)
            assert new or np.array_equal(shown[name], up.old)
            if new:
                changed_at.setdefault(name, i)
            else:  # still old: the pulse has not got there; it is on its way or before
                assert name not in changed_at and frame.index <= k
        target = update_act.active(updates, frame)
        assert target == (None if frame is DONE else names[frame.index])
        if target is not None:
            assert 0 < frame.pulse < 1 and not frame.arrived(frame.index)
    # W1 turns new once the pulse has left it for W2; W2 once the pulse reached it
    assert changed_at == {"W1": between, "W2": len(frames) - 1}


def test_the_window_act_runs_through_the_same_frames() -> None:
    assert update_act.at(0.0, 2) == UpdateFrame(0, 0.0)
    assert update_act.at(0.25, 2) == UpdateFrame(0, 0.5)
    assert update_act.at(0.5, 2) == UpdateFrame(1, 0.0)  # W1 reached at half time
    assert update_act.at(1.0, 2) is DONE and update_act.at(0.3, 0) is DONE
    assert UpdateFrame(1, 0.0).arrived(0) and not UpdateFrame(1, 0.0).arrived(1)
    assert UpdateFrame(1, 1.0).arrived(1)
    ts = np.linspace(0, 1, 101)
    reached = [sum(update_act.at(t, 3).arrived(k) for k in range(3)) for t in ts]
    assert reached == sorted(reached) and reached[0] == 0 and reached[-1] == 3


def test_the_exported_lesson_schedules_the_act() -> None:
    timing = lesson.Timing(transition=0.4, fps=10)  # 4 pictures on the way
    shots = lesson.plan(3, 6, timing, forward=False, train=2)
    kinds = [s.kind for s in shots]
    act = [s for s in shots if s.kind is lesson.ShotKind.UPDATE]
    assert kinds[-len(act) - 1:] == [lesson.ShotKind.UPDATE] * len(act) + [lesson.ShotKind.LOSS]
    on_the_way = [UpdateFrame(s.position, s.pulse) for s in act if not s.held]
    assert on_the_way == update_act.frames(2, 4)[:-1]
    assert [s.held for s in act] == [False] * 8 + [True]
    assert act[-1].duration_ms == 4000 and act[0].duration_ms == 100
    cut = lesson.plan(3, 6, lesson.Timing(transition=0), forward=False, train=2)
    assert [s.kind for s in cut].count(lesson.ShotKind.UPDATE) == 1  # cut: the update held
    assert lesson.ShotKind.UPDATE not in [s.kind for s in lesson.plan(3, 6, timing, False)]
