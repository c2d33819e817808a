"""Quiz mode's Qt-free state: questions, grading, reveal, score and hiding."""

from __future__ import annotations

import numpy as np
import pytest

from engine.autodiff import backward, forward
from gui.model.quiz import (
    DEFAULT_HIDDEN,
    Hidden,
    Quiz,
    grade,
    parse_answer,
)
from gui.model.results import Results
from gui.model.timeline import Timeline
from support import seed2_graph


def seed2_quiz(hidden=DEFAULT_HIDDEN) -> Quiz:  # noqa: ANN001
    g = seed2_graph()
    fwd = forward(g)
    timeline = Timeline(Results(fwd, backward(g, fwd, "y", [0.1, 0.2, 0.3])))
    return Quiz(g, timeline, hidden)


def test_seed2_has_15_scorable_steps():
    quiz = seed2_quiz()
    assert quiz.scorable_steps == 15
    assert len(quiz.questions) == 30  # a vjp and an accumulated gradient per step
    assert [q.kind for q in quiz.questions[:2]] == [Hidden.VJP, Hidden.ACCUMULATED]
    assert seed2_quiz({Hidden.VJP}).scorable_steps == 15


def test_right_vjp_scores_wrong_does_not_reveal_shows_engine_value():
    quiz = seed2_quiz({Hidden.VJP})
    first = quiz.questions[0]  # step 1: y -> y1, vjp = v[0] = 0.1
    assert first.step == 1 and "y → y1" in first.prompt
    wrong = quiz.check(0, "0.2")
    assert not wrong.correct and quiz.score == 0
    right = quiz.check(0, "0.1")
    assert right.correct and quiz.score == 0  # right, but not at the first attempt
    assert quiz.check(1, "0.2").correct and quiz.score == 1  # step 2: y -> y2, first try
    i = next(i for i, q in enumerate(quiz.questions) if q.step == 4)  # y1 -> x1x2 (a)
    assert quiz.questions[i].answer == pytest.approx(0.3)
    assert not quiz.check(i, "0.5").correct
    assert quiz.reveal(i) == "0.3"
    assert quiz.score == 1 and quiz.settled == 3
    assert quiz.check(i, "0.3").message == "already revealed"
    assert quiz.score == 1


def test_unreadable_answers_are_refused_not_counted():
    quiz = seed2_quiz({Hidden.VJP})
    verdict = quiz.check(0, "import os")
    assert not verdict.correct and "number" in verdict.message
    assert quiz.attempts[0].tries == 0


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.1", 1.1),
        ("1/3", 1 / 3),
        ("-2e-3", -2e-3),
        ("[1, 2]", [1, 2]),
        ("1, 2", [1, 2]),
        ("1 2 3", [1, 2, 3]),
        ("[[1, 0], [0, 1]]", [[1, 0], [0, 1]]),
    ],
)
def test_parse_answer(text, value):
    np.testing.assert_allclose(parse_answer(text), value)


@pytest.mark.parametrize("text", ["", "x", "__import__('os')", "[1, [2]]", "1/0", "True"])
def test_parse_answer_refuses(text):
    with pytest.raises(ValueError):
        parse_answer(text)


def test_grade_tolerance_and_shape():
    assert grade(np.array(0.333), np.array(1 / 3)).correct  # within 0.5 %
    assert not grade(np.array(0.32), np.array(1 / 3)).correct
    assert grade(np.array([1, 2, 3, 4.0]), np.arange(1, 5.0).reshape(2, 2)).correct
    verdict = grade(np.array([1, 2.0]), np.array([1, 2, 3.0]))
    assert not verdict.correct and "expected 3 numbers" in verdict.message
    assert not grade(np.array(1e-3), np.array(0.0)).correct


def test_mask_hides_the_open_question_and_shows_it_after():
    quiz = seed2_quiz()
    tl = quiz.timeline
    frame = tl.frame(tl.position_of_step(1))
    masked = quiz.mask(frame)
    assert masked.hidden == {"vjp", "accumulated"}
    assert "y1" not in masked.grads  # y1 had no gradient before step 1
    assert masked.question.startswith("Predict step 1")
    assert "· J = ?" in quiz.edge_label(frame.active, masked.hidden)
    assert quiz.check(0, "0.1").correct
    masked = quiz.mask(frame)
    assert masked.hidden == {"accumulated"} and "· J = 0.1" in quiz.edge_label(
        frame.active, masked.hidden
    )
    quiz.reveal(1)
    assert quiz.mask(frame) is frame


def test_jacobian_and_forward_questions():
    quiz = seed2_quiz({Hidden.JACOBIAN, Hidden.FORWARD})
    forward_qs = [q for q in quiz.questions if q.kind is Hidden.FORWARD]
    assert [q.node for q in forward_qs][-1] == "y" and len(forward_qs) == 7
    y = forward_qs[-1]
    assert quiz.check(quiz.questions.index(y), "[6, 6, 7]").correct
    jac = next(q for q in quiz.questions if q.kind is Hidden.JACOBIAN)
    assert jac.answer.tolist() == [[1.0], [0.0], [0.0]]  # dy/dy1
    masked = quiz.mask(quiz.timeline.frame(forward_qs[0].position))
    assert forward_qs[0].node not in masked.shown_values


def test_hidden_quantities_by_key():
    assert {h.value for h in Hidden} == {"vjp", "accumulated", "jacobian", "forward"}


def test_seed1_two_wrong_then_right_scores_the_first_attempt():
    """The rehearsal's case: on seed 1, two wrong answers then the right one at step 2
    scored 3 of 3; only a first attempt scores, and the attempts are shown."""
    from engine.examples import EXAMPLES_DIR
    from engine.fileformat import load

    gf = load(EXAMPLES_DIR / "seed1_square_sum.bpgraph")
    fwd = forward(gf.graph)
    timeline = Timeline(Results(fwd, backward(gf.graph, fwd, gf.output, gf.gradient)))
    quiz = Quiz(gf.graph, timeline, {Hidden.VJP})
    by_step = {q.step: i for i, q in enumerate(quiz.questions)}
    for step in (1, 3):
        assert quiz.check(by_step[step], quiz.answer_text(by_step[step])).correct
    i = by_step[2]
    assert not quiz.check(i, "7").correct and not quiz.check(i, "8").correct
    assert quiz.check(i, quiz.answer_text(i)).correct
    assert quiz.score == 2 and quiz.settled == 3 and quiz.tries == 5
    assert quiz.score_text().startswith("score 2 of 3 answered at the first attempt (5 attempts")
