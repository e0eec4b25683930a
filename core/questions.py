"""Questions (choice, blank, match) and the scoring of a student's answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.errors import Refusal
from core.messages import say


@dataclass(frozen=True)
class ChoiceQuestion:
    """Pick one option; right when its index equals `answer`."""

    id: str
    prompt: str
    explanation: str
    points: float
    options: tuple[str, ...]
    answer: int
    type: str = "choice"


@dataclass(frozen=True)
class BlankQuestion:
    """Fill the one `____` in `template`; right when the stripped fill is an accepted one."""

    id: str
    prompt: str
    explanation: str
    points: float
    template: str
    answers: tuple[str, ...]
    type: str = "blank"

    @property
    def solved_template(self) -> str:
        """Return the template with its first accepted fill in place."""
        return self.template.replace("____", self.answers[0], 1)


@dataclass(frozen=True)
class MatchQuestion:
    """Match each term to its meaning; partial credit by the share of right pairs."""

    id: str
    prompt: str
    explanation: str
    points: float
    pairs: tuple[tuple[str, str], ...]
    type: str = "match"

    @property
    def terms(self) -> tuple[str, ...]:
        """Return the terms, in the author's order."""
        return tuple(term for term, _ in self.pairs)

    @property
    def meanings(self) -> tuple[str, ...]:
        """Return the meanings, sorted so that their order gives nothing away."""
        return tuple(sorted(meaning for _, meaning in self.pairs))


Question = ChoiceQuestion | BlankQuestion | MatchQuestion


@dataclass(frozen=True)
class QuestionScore:
    """Points earned for one answer, out of the question's points."""

    earned: float
    possible: float

    @property
    def correct(self) -> bool:
        """Return whether the answer earned every point."""
        return self.earned >= self.possible


MAX_ANSWER_CHARS = 1000  # a fill or a meaning; far longer than any right one


class AnswerError(Refusal):
    """An answer whose shape does not fit its question (a client fault, not a wrong answer)."""

    code = "malformed_answer"

    def __init__(self, problem: str) -> None:
        super().__init__(say("The answer does not fit: {problem}.", problem=problem))


def score_answer(question: Question, answer: object) -> QuestionScore:
    """Score an answer to a question; raise AnswerError when it has the wrong shape."""
    if isinstance(question, ChoiceQuestion):
        if not isinstance(answer, int) or isinstance(answer, bool):
            raise AnswerError("a choice answer is the index of an option")
        if not 0 <= answer < len(question.options):
            raise AnswerError(f"option {answer} does not exist")
        return _all_or_nothing(question.points, answer == question.answer)
    if isinstance(question, BlankQuestion):
        if not isinstance(answer, str):
            raise AnswerError("a blank answer is text")
        if len(answer) > MAX_ANSWER_CHARS:
            raise AnswerError(f"a blank answer is at most {MAX_ANSWER_CHARS} characters")
        return _all_or_nothing(question.points, answer.strip() in question.answers)
    if not isinstance(answer, Mapping):
        raise AnswerError("a match answer maps each term to a meaning")
    key = dict(question.pairs)
    unknown = [term for term in answer if term not in key]
    if unknown:
        raise AnswerError(f"unknown term {str(unknown[0])[:80]!r}")
    if not all(isinstance(m, str) and len(m) <= MAX_ANSWER_CHARS for m in answer.values()):
        raise AnswerError("each term's meaning is one of the listed meanings, as text")
    right = sum(1 for term, meaning in key.items() if answer.get(term) == meaning)
    return QuestionScore(question.points * right / len(key), question.points)


def _all_or_nothing(points: float, right: bool) -> QuestionScore:
    return QuestionScore(points if right else 0.0, points)
