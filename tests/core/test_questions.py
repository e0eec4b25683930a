import pytest

from core.questions import (
    AnswerError,
    BlankQuestion,
    ChoiceQuestion,
    MatchQuestion,
    score_answer,
)

CHOICE = ChoiceQuestion("q1", "Which?", "Because.", 1.0, ("a", "b", "c", "d"), answer=1)
BLANK = BlankQuestion("q2", "Fill", "Because.", 2.0, "cikis = agirlik ____ degerler", ("@",))
MATCH = MatchQuestion(
    "q3",
    "Match",
    "Because.",
    4.0,
    (
        ("score", "Similarity measure"),
        ("softmax", "Turns into weights"),
        ("value", "Carried information"),
        ("equal scores", "Plain mean"),
    ),
)
ALL_RIGHT = dict(MATCH.pairs)


@pytest.mark.parametrize(
    ("question", "answer", "earned"),
    [
        (CHOICE, 1, 1.0),
        (CHOICE, 0, 0.0),
        (CHOICE, 3, 0.0),
        (BLANK, "@", 2.0),
        (BLANK, "  @ \n", 2.0),
        (BLANK, "*", 0.0),
        (BLANK, "", 0.0),
        (MATCH, ALL_RIGHT, 4.0),
        (MATCH, {**ALL_RIGHT, "score": "Plain mean", "equal scores": "Similarity measure"}, 2.0),
        (MATCH, {"score": "Similarity measure"}, 1.0),
        (MATCH, {}, 0.0),
    ],
)
def test_scores(question, answer, earned):
    score = score_answer(question, answer)
    assert score.earned == earned
    assert score.possible == question.points
    assert score.correct is (earned == question.points)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (CHOICE, "1"),
        (CHOICE, True),
        (CHOICE, 4),
        (CHOICE, -1),
        (BLANK, 3),
        (BLANK, None),
        (MATCH, ["score"]),
        (MATCH, {"unknown": "Plain mean"}),
    ],
)
def test_malformed_answers_are_refused(question, answer):
    with pytest.raises(AnswerError):
        score_answer(question, answer)


def test_match_meanings_are_sorted_and_blank_shows_solution():
    assert MATCH.meanings == tuple(sorted(m for _, m in MATCH.pairs))
    assert BLANK.solved_template == "cikis = agirlik @ degerler"
