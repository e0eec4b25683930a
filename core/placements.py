"""A placement's policy: when its lesson closes, what lateness costs, when answers show.

A student may have an exception on a placement (accommodations, illness): a later due
date, more attempts, the late penalty waived. Policy.for_student applies it, so that every
decision below is made on the student's own policy.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import datetime

from core.messages import Moment, Text, say, say_n


class Reveal(enum.StrEnum):
    """When the sample solution and the question answers may be shown to a student."""

    NEVER = "never"
    AFTER_PASS = "after_pass"
    AFTER_ATTEMPTS = "after_attempts"
    AFTER_DUE = "after_due"


class Closure(enum.StrEnum):
    """Why a placement takes no more work from a student."""

    PAST_DUE = "past_due"
    OUT_OF_ATTEMPTS = "out_of_attempts"
    SOLUTION_SHOWN = "solution_shown"


@dataclass(frozen=True)
class Closed:
    """A refusal, with the sentence the student reads (worded in their language when shown)."""

    closure: Closure
    message: Text


@dataclass(frozen=True)
class StudentException:
    """What one student is allowed beyond a placement's policy; None keeps the policy's."""

    due_at: datetime | None = None  # a later due date
    max_attempts: int | None = None  # more attempts
    waive_penalty: bool = False  # late work loses nothing

    @property
    def empty(self) -> bool:
        """Return whether the exception changes nothing."""
        return self.due_at is None and self.max_attempts is None and not self.waive_penalty


@dataclass(frozen=True)
class Policy:
    """The teacher's choices for one placement.

    `late_penalty` None means nothing is accepted after `due_at`; a number in [0, 1] is the
    share taken off work handed in late. Times are timezone-aware.
    """

    reveal: Reveal = Reveal.NEVER
    reveal_after_attempts: int | None = None
    max_attempts: int | None = None
    due_at: datetime | None = None
    late_penalty: float | None = None

    def for_student(self, exception: StudentException | None) -> Policy:
        """Return the policy a student with `exception` has on this placement.

        An exception only ever allows more: a due date earlier than the placement's, or
        fewer attempts, keeps the placement's; with no due date (or no maximum) there is
        nothing to extend. A waived penalty takes nothing off late work that is accepted,
        and accepts no late work the placement refuses (a later due date does that).
        """
        if exception is None:
            return self
        due_at, most, penalty = self.due_at, self.max_attempts, self.late_penalty
        if due_at is not None and exception.due_at is not None:
            due_at = max(due_at, exception.due_at)
        if most is not None and exception.max_attempts is not None:
            most = max(most, exception.max_attempts)
        if exception.waive_penalty and penalty is not None:
            penalty = 0.0
        return replace(self, due_at=due_at, max_attempts=most, late_penalty=penalty)

    def is_late(self, at: datetime) -> bool:
        """Return whether work handed in at `at` is past the due date."""
        return self.due_at is not None and at > self.due_at

    def penalty(self, at: datetime) -> float:
        """Return the share (0..1) taken off work handed in at `at`."""
        if not self.is_late(at) or self.late_penalty is None:
            return 0.0
        return min(max(self.late_penalty, 0.0), 1.0)

    def closed(
        self, at: datetime, attempts_used: int | None = None, revealed: bool = False
    ) -> Closed | None:
        """Return why no more work is taken at `at`, or None while the placement is open.

        `attempts_used` counts exercise submissions; None checks the due date only.
        `revealed` says the sample solution is shown: from then on the exercise earns nothing
        (a revealed answer is never worth points).
        """
        if self.is_late(at) and self.late_penalty is None:
            assert self.due_at is not None
            return Closed(
                Closure.PAST_DUE,
                say(
                    "This lesson was due on {due}; late work is not accepted.",
                    due=Moment(self.due_at),
                ),
            )
        if (
            attempts_used is not None
            and self.max_attempts is not None
            and attempts_used >= self.max_attempts
        ):
            return Closed(
                Closure.OUT_OF_ATTEMPTS,
                say_n(
                    "You have used your {num} attempt at this exercise.",
                    "You have used all {num} attempts at this exercise.",
                    num=self.max_attempts,
                ),
            )
        if revealed:
            return Closed(
                Closure.SOLUTION_SHOWN,
                say(
                    "The sample solution is shown now, so this exercise takes no more submissions."
                ),
            )
        return None

    def reveals(self, at: datetime, attempts_used: int, passed: bool) -> bool:
        """Return whether the sample solution (and answered questions' answers) may show now.

        "After a number of attempts" shows nothing before the attempts run out, whatever
        the stored number says: a solution shown while attempts are left would be worth
        points (and with no maximum, attempts never run out).
        """
        if self.reveal is Reveal.AFTER_PASS:
            return passed
        if self.reveal is Reveal.AFTER_ATTEMPTS:
            if self.max_attempts is None or self.reveal_after_attempts is None:
                return False
            return attempts_used >= max(self.reveal_after_attempts, self.max_attempts)
        if self.reveal is Reveal.AFTER_DUE:
            return self.due_at is not None and at > self.due_at
        return False
