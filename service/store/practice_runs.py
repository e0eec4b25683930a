"""Practice runs through their life: created queued, claimed under a lease, done once.

A practice run (the page's Run button, core.practice) is leased work as a submission is
(leased_work.py): claimed with a fresh lease token, ended with a write fenced by it, so a
worker whose lease was taken over saves nothing; it takes turns as a grading does, pausing
with its runs so far kept (`progress`) once its turn is used up and another student's work
waits (fair_share.py).

A student has one practice run in flight. A new one replaces their queued one at once (the
old one's message then finds it done), and their running one at its next case: its worker
sees a newer run (`replaced`), stops, and ends it; the new one waits meanwhile (`enqueued_at`
None), and the write that ends the old one returns it, to be sent (After). A running one
whose lease ran out (its worker died) is replaced at once. So one student's runs hold one
place in the queue and one sandbox at a time, however often they press Run.

Nothing here writes a submission, a grade or a grade sync: a practice run counts as no
attempt, changes no score and reaches no LMS. The sweep sends again a run whose message or
worker was lost (stuck), and deletes runs a day old (purge).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session

from core.messages import to_json
from core.practice import Practice
from core.runs import RunStatus
from core.verdicts import Verdict
from service.queue import Message, Order, PracticeMessage
from service.store import figure_rows, leased_work
from service.store.database import Store, changed
from service.store.leased_work import Done, Held, LeasedWork, Taken
from service.store.models import Placement, PracticeRun
from service.store.models import PracticeStatus as Status


@dataclass(frozen=True, kw_only=True)
class Claim(leased_work.Claim):
    """A worker's hold on one practice run (`id`), and what it needs to run it; its `done`
    and `tried` are named as core.practice.plan() names its runs."""

    stdin: str | None
    replaced: bool = False  # a newer run of its author came: end it unrun


@dataclass(frozen=True)
class Queued:
    """A practice run just written, and whether its message is to be sent now (else it waits
    for its author's running one to stop)."""

    run_id: int
    send: bool


@dataclass(frozen=True)
class After:
    """What follows a practice run's end: whether it was saved, and the author's next run,
    its turn come, to be sent."""

    saved: bool
    then: int | None = None

    @property
    def follows(self) -> tuple[Message, ...]:
        """Return the messages to send once the end is committed."""
        return (PracticeMessage(self.then),) if self.then is not None else ()


# the statements of a run's path, built once with bound parameters (LeasedWork says why)
_WORK = LeasedWork(PracticeRun, "run", returning=(PracticeRun.stdin,))
_LESSON = select(Placement.lesson_id).where(Placement.id == bindparam("placement_id"))
_NEWER = (
    select(PracticeRun.id)
    .where(PracticeRun.user_id == bindparam("user"), PracticeRun.id > bindparam("run_id"))
    .limit(1)
)
_RESULT_COLUMNS = (
    "replaced", "run_status", "duration_ms", "message", "cases", "on_input", "grader_error",
)  # fmt: skip
# a run's end, its lease and progress cleared: its own, or replaced by a newer run
_ENDED: dict[str, object] = {
    "status": Status.DONE,
    "lease_token": None,
    "lease_expires_at": None,
    "progress": None,
    "finished_at": bindparam("now"),
}
_END = _WORK.fenced.values(**_ENDED, **{name: bindparam(f"new_{name}") for name in _RESULT_COLUMNS})
# the Run path's: the author's queued runs (and a running one whose worker is gone) end now
_REPLACE = (
    update(PracticeRun)
    .where(PracticeRun.user_id == bindparam("user"), _WORK.claimable)
    .values(**_ENDED, replaced=True)
)
_RUNNING = (
    select(PracticeRun.id)
    .where(PracticeRun.user_id == bindparam("user"), PracticeRun.status == Status.RUNNING)
    .limit(1)
)
_QUEUED = (
    insert(PracticeRun)
    .values(
        placement_id=bindparam("placement"),
        user_id=bindparam("user"),
        source=bindparam("code"),
        stdin=bindparam("given"),
        created_at=bindparam("now"),
        enqueued_at=bindparam("enqueued"),
    )
    .returning(PracticeRun.id)
)
_RECENT = select(func.count(PracticeRun.id), func.min(PracticeRun.created_at)).where(
    PracticeRun.user_id == bindparam("user"), PracticeRun.created_at > bindparam("since")
)


def recent(connection: Connection, user_id: int, since: datetime) -> tuple[int, datetime | None]:
    """Return how many practice runs the user started after `since`, and when the first was."""
    count, oldest = connection.execute(_RECENT, {"user": user_id, "since": since}).one()
    return int(count), oldest


def queue_new(
    connection: Connection,
    placement_id: int,
    user_id: int,
    source: str,
    stdin: str | None,
    now: datetime,
) -> Queued:
    """Write a queued practice run in the connection's transaction, replacing the author's
    queued one; say whether to send it now (else it waits for their running one to stop).

    The only writer of practice runs. The caller holds the author's lock
    (submissions.lock_author), so that two runs at once cannot both go.
    """
    changed(connection, _REPLACE, {"user": user_id, "now": now})
    waits = connection.execute(_RUNNING, {"user": user_id}).first() is not None
    values = {
        "placement": placement_id, "user": user_id, "code": source, "given": stdin, "now": now,
        "enqueued": None if waits else now,
    }  # fmt: skip
    created = connection.execute(_QUEUED, values)
    return Queued(int(created.scalar_one()), send=not waits)


def get(store: Store, run_id: int) -> PracticeRun | None:
    """Return the practice run, detached, for reading its status and result."""
    with store.reading() as session:
        return session.get(PracticeRun, run_id)


def latest(session: Session, placement_id: int, user_id: int) -> PracticeRun | None:
    """Return the user's newest practice run of the placement, if any is kept."""
    query = (
        select(PracticeRun)
        .where(PracticeRun.placement_id == placement_id, PracticeRun.user_id == user_id)
        .order_by(PracticeRun.id.desc())
        .limit(1)
    )
    return session.scalar(query)


def claim(store: Store, run_id: int, lease_s: int, now: datetime) -> Claim | Held | None:
    """Take the practice run under a fresh lease; Held, or None (done, or gone) otherwise."""
    with store.transaction() as connection:
        taken = _WORK.take(connection, run_id, lease_s, now)
        if not isinstance(taken, Taken):
            return taken
        lesson_id = connection.scalar(_LESSON, {"placement_id": taken.row.placement_id})
        if lesson_id is None:
            return Done  # the placement is gone, and its runs with it
        newer = connection.execute(_NEWER, {"user": taken.row.user_id, "run_id": run_id})
        return Claim.of(taken, lesson_id, stdin=taken.row.stdin, replaced=newer.first() is not None)


def replaced(store: Store, held: Claim) -> bool:
    """Return whether a newer practice run of the claim's author has come (it replaces it)."""
    with store.reading() as session:
        found = session.execute(_NEWER, {"user": held.user_id, "run_id": held.id})
        return found.first() is not None


renew = _WORK.renew
pause = _WORK.pause


def finish(store: Store, held: Claim, practice: Practice, now: datetime) -> After:
    """Save what the practice run found, if the claim still holds; return what follows."""
    verdict = practice.verdict
    on_input = practice.on_input
    return _end(
        store,
        held,
        now,
        run_status=verdict.status.value if verdict else None,
        duration_ms=practice.duration_ms,
        message=to_json(verdict.message) if verdict else None,
        cases=[case.record() for case in verdict.cases] if verdict else None,
        on_input=on_input.record() if on_input else None,
        figures=practice.figures(),
    )


def end_replaced(store: Store, held: Claim, now: datetime) -> After:
    """End the practice run unrun (or cut short): a newer one of its author replaces it."""
    return _end(store, held, now, replaced=True)


def lose(store: Store, held: Claim, verdict: Verdict, problem: str, now: datetime) -> After:
    """End the practice run as the grader's failure (`verdict` says so to its student)."""
    return _end(
        store,
        held,
        now,
        run_status=RunStatus.ERROR.value,
        duration_ms=0,
        message=to_json(verdict.message),
        grader_error=problem,
    )


def _end(
    store: Store, held: Claim, now: datetime, figures: figure_rows.Drawn = (), **result: object
) -> After:
    values = {f"new_{name}": result.get(name) for name in _RESULT_COLUMNS}
    values["new_replaced"] = bool(result.get("replaced"))
    with store.transaction() as connection:
        if changed(connection, _END, {**_WORK.fence(held), "now": now, **values}) != 1:
            return After(saved=False)
        figure_rows.keep_for_run(connection, held.id, figures, now)  # what it drew
        return After(saved=True, then=_WORK.next_turn(connection, held.user_id, now))


def release(store: Store, held: Claim, now: datetime) -> bool:
    """Give the practice run back to the queue (the grader failed; it will be tried again)."""
    return _WORK.release(store, held, now)  # no grader error: its student sees it queued


def stuck(
    store: Store, now: datetime, queued_deadline_s: int, limit: int = 500
) -> list[PracticeMessage]:
    """Mark practice runs sent past the deadline, or running past their lease, as sent now;
    return their messages, each first in the queue (it has waited longest)."""
    found = _WORK.stuck(store, now, queued_deadline_s, limit)
    return [PracticeMessage(row.id, Order.FIRST) for row in found]


def turns_due(store: Store, now: datetime, limit: int = 500) -> list[PracticeMessage]:
    """Send the waiting practice run of each student who has none in the queue (a turn the
    end of their last one missed); return their messages."""
    return [PracticeMessage(sent) for sent in _WORK.turns_due(store, now, limit)]


def purge(store: Store, before: datetime) -> int:
    """Delete the practice runs started before `before` (done, or long lost); return how many."""
    with store.session() as session:
        return changed(session, delete(PracticeRun).where(PracticeRun.created_at < before))
