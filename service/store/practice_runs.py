"""Practice runs through their life: created queued, claimed under a lease, done once.

A practice run (the page's Run button, core.practice) walks a submission's path
(submissions.py): a worker claims it with one conditional UPDATE that writes a fresh lease
token, and saves what it found with another that matches that token and `running`, so a
worker whose lease was taken over saves nothing. It takes turns as a grading does: once its
turn is used up and another student's work waits (fair_share.py), it pauses, keeping its
runs so far (`progress`), and goes to the tail of the queue.

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

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import (
    ColumnElement,
    Connection,
    Update,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, aliased

from core.messages import to_json
from core.practice import Practice
from core.runs import RunResult, RunStatus, result_from, result_record
from core.verdicts import Verdict
from service.queue import Message, Order, PracticeMessage
from service.store import figure_rows
from service.store.database import Store, changed
from service.store.models import Placement, PracticeRun
from service.store.models import PracticeStatus as Status
from service.store.submissions import Held


@dataclass(frozen=True)
class Claim:
    """A worker's hold on one practice run, and what it needs to run it."""

    run_id: int
    token: str
    claims: int
    source: str
    stdin: str | None
    lesson_id: str
    placement_id: int
    user_id: int
    replaced: bool = False  # a newer run of its author came: end it unrun
    # its first runs' results, by core.practice.plan() name, from a turn that paused
    done: tuple[tuple[str, RunResult], ...] = ()
    tried: tuple[str, ...] = ()  # runs after those whose first try was cut short


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


_IN_FLIGHT_STATES = (Status.QUEUED, Status.RUNNING)
_CLAIM = (
    update(PracticeRun)
    .where(
        PracticeRun.id == bindparam("run_id"),
        or_(
            PracticeRun.status == Status.QUEUED,
            and_(
                PracticeRun.status == Status.RUNNING,
                PracticeRun.lease_expires_at < bindparam("now"),
            ),
        ),
    )
    .values(
        status=Status.RUNNING,
        lease_token=bindparam("token"),
        lease_expires_at=bindparam("until"),
        claims=PracticeRun.claims + 1,
    )
    .returning(
        PracticeRun.claims,
        PracticeRun.source,
        PracticeRun.stdin,
        PracticeRun.placement_id,
        PracticeRun.user_id,
        PracticeRun.progress,
    )
)
_LEASE = select(PracticeRun.status, PracticeRun.lease_expires_at).where(
    PracticeRun.id == bindparam("run_id")
)
_LESSON = select(Placement.lesson_id).where(Placement.id == bindparam("placement_id"))
_NEWER = (
    select(PracticeRun.id)
    .where(PracticeRun.user_id == bindparam("user"), PracticeRun.id > bindparam("run_id"))
    .limit(1)
)
_RESULT_COLUMNS = (
    "replaced", "run_status", "duration_ms", "message", "cases", "on_input", "grader_error",
)  # fmt: skip
_END = (
    update(PracticeRun)
    .where(
        PracticeRun.id == bindparam("run_id"),
        PracticeRun.lease_token == bindparam("token"),
        PracticeRun.status == Status.RUNNING,
    )
    .values(
        status=Status.DONE,
        lease_token=None,
        lease_expires_at=None,
        progress=None,
        finished_at=bindparam("now"),
        **{name: bindparam(f"new_{name}") for name in _RESULT_COLUMNS},
    )
)

# the Run path's: the author's queued runs (and a running one whose worker is gone) end now
_REPLACE = (
    update(PracticeRun)
    .where(
        PracticeRun.user_id == bindparam("user"),
        or_(
            PracticeRun.status == Status.QUEUED,
            and_(
                PracticeRun.status == Status.RUNNING,
                PracticeRun.lease_expires_at < bindparam("now"),
            ),
        ),
    )
    .values(
        status=Status.DONE,
        replaced=True,
        lease_token=None,
        lease_expires_at=None,
        progress=None,
        finished_at=bindparam("now"),
    )
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


def _sent(row: type[PracticeRun]) -> ColumnElement[bool]:
    """Return the condition that the row is in the students' queue: sent, or running."""
    return and_(row.status.in_(_IN_FLIGHT_STATES), row.enqueued_at.is_not(None))


def _waiting(row: type[PracticeRun]) -> ColumnElement[bool]:
    """Return the condition that the row waits for its author's running one (not sent)."""
    return and_(row.status == Status.QUEUED, row.enqueued_at.is_(None))


_IN_FLIGHT = (
    select(PracticeRun.id)
    .where(PracticeRun.user_id == bindparam("user"), _sent(PracticeRun))
    .limit(1)
)
_NEXT_WAITING = (
    select(PracticeRun.id)
    .where(PracticeRun.user_id == bindparam("user"), _waiting(PracticeRun))
    .order_by(PracticeRun.id)
    .limit(1)
)
_SEND = (
    update(PracticeRun)
    .where(PracticeRun.id == bindparam("run_id"), PracticeRun.enqueued_at.is_(None))
    .values(enqueued_at=bindparam("now"))
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
    token, until = secrets.token_hex(16), now + timedelta(seconds=lease_s)
    values = {"run_id": run_id, "now": now, "token": token, "until": until}
    with store.transaction() as connection:
        taken = connection.execute(_CLAIM, values).first()
        if taken is None:
            row = connection.execute(_LEASE, {"run_id": run_id}).first()
            if row is not None and row.status == Status.RUNNING and row.lease_expires_at:
                return Held(row.lease_expires_at)
            return None
        lesson_id = connection.scalar(_LESSON, {"placement_id": taken.placement_id})
        if lesson_id is None:
            return None  # the placement is gone, and its runs with it
        newer = connection.execute(_NEWER, {"user": taken.user_id, "run_id": run_id}).first()
        return Claim(
            run_id=run_id,
            token=token,
            claims=taken.claims,
            source=taken.source,
            stdin=taken.stdin,
            lesson_id=lesson_id,
            placement_id=taken.placement_id,
            user_id=taken.user_id,
            replaced=newer is not None,
            done=tuple(
                (str(kept["run"]), result_from(kept["result"]))
                for kept in taken.progress or ()
                if "result" in kept
            ),
            tried=tuple(str(kept["run"]) for kept in taken.progress or () if kept.get("tried")),
        )


def replaced(store: Store, held: Claim) -> bool:
    """Return whether a newer practice run of the claim's author has come (it replaces it)."""
    with store.reading() as session:
        found = session.execute(_NEWER, {"user": held.user_id, "run_id": held.run_id})
        return found.first() is not None


def _held_by(held: Claim) -> Update:
    """Return an update of the run that changes it only while `held` holds its lease."""
    return update(PracticeRun).where(
        PracticeRun.id == held.run_id,
        PracticeRun.lease_token == held.token,
        PracticeRun.status == Status.RUNNING,
    )


def renew(store: Store, held: Claim, lease_s: int, now: datetime) -> bool:
    """Extend the claim's lease to `lease_s` from now; False when it no longer holds."""
    with store.session() as session:
        later = _held_by(held).values(lease_expires_at=now + timedelta(seconds=lease_s))
        return changed(session, later) == 1


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
        fence = {"run_id": held.run_id, "token": held.token, "now": now}
        if changed(connection, _END, {**fence, **values}) != 1:
            return After(saved=False)
        figure_rows.keep_for_run(connection, held.run_id, figures, now)  # what it drew
        return After(saved=True, then=_next_turn(connection, held.user_id, now))


def _next_turn(connection: Connection, user_id: int, now: datetime) -> int | None:
    """Mark the user's waiting practice run as sent now, unless another of theirs is in the
    queue; return its id, to be sent after the commit."""
    if connection.execute(_IN_FLIGHT, {"user": user_id}).first() is not None:
        return None
    waiting = connection.scalar(_NEXT_WAITING, {"user": user_id})
    if waiting is None:
        return None
    sent = changed(connection, _SEND, {"run_id": waiting, "now": now})
    return int(waiting) if sent == 1 else None


def release(store: Store, held: Claim, now: datetime) -> bool:
    """Give the practice run back to the queue (the grader failed; it will be tried again)."""
    with store.session() as session:
        return changed(session, _give_back(held, now)) == 1


def pause(
    store: Store,
    held: Claim,
    done: Sequence[tuple[str, RunResult]],
    now: datetime,
    tried: Sequence[str] = (),
) -> bool:
    """Give the practice run back to the queue with its first runs' results (and the runs
    cut short after them), to be taken again behind fresh work; False when the claim no
    longer holds. A pause is no lost worker: its claim is not counted."""
    progress: list[dict[str, object]] = [
        {"run": name, "result": result_record(ran)} for name, ran in done
    ]
    progress += [{"run": name, "tried": True} for name in tried]
    with store.session() as session:
        given_back = _give_back(held, now).values(claims=PracticeRun.claims - 1, progress=progress)
        return changed(session, given_back) == 1


def _give_back(held: Claim, now: datetime) -> Update:
    return _held_by(held).values(
        status=Status.QUEUED, lease_token=None, lease_expires_at=None, enqueued_at=now
    )


def stuck(
    store: Store, now: datetime, queued_deadline_s: int, limit: int = 500
) -> list[PracticeMessage]:
    """Mark practice runs sent past the deadline, or running past their lease, as sent now;
    return their messages, each first in the queue (it has waited longest)."""
    queued_before = now - timedelta(seconds=queued_deadline_s)
    found: list[PracticeMessage] = []
    with store.session() as session:
        candidates = session.execute(
            select(PracticeRun.id, PracticeRun.enqueued_at)
            .where(
                or_(
                    and_(
                        PracticeRun.status == Status.QUEUED,
                        PracticeRun.enqueued_at < queued_before,
                    ),
                    and_(
                        PracticeRun.status == Status.RUNNING,
                        PracticeRun.lease_expires_at < now,
                        or_(
                            PracticeRun.enqueued_at < PracticeRun.lease_expires_at,
                            PracticeRun.enqueued_at < queued_before,
                        ),
                    ),
                )
            )
            .order_by(PracticeRun.id)
            .limit(limit)
        ).all()
        for run_id, enqueued_at in candidates:
            moved = changed(
                session,
                update(PracticeRun)
                .where(PracticeRun.id == run_id, PracticeRun.enqueued_at == enqueued_at)
                .values(enqueued_at=now),
            )
            if moved == 1:
                found.append(PracticeMessage(run_id, Order.FIRST))
    return found


def turns_due(store: Store, now: datetime, limit: int = 500) -> list[PracticeMessage]:
    """Send the waiting practice run of each student who has none in the queue (a turn the
    end of their last one missed); return their messages."""
    waiting, busy = aliased(PracticeRun), aliased(PracticeRun)
    in_flight = select(busy.id).where(busy.user_id == waiting.user_id, _sent(busy))
    oldest_waiting = (
        select(func.min(waiting.id))
        .where(_waiting(waiting), ~in_flight.exists())
        .group_by(waiting.user_id)
        .limit(limit)
    )
    found: list[PracticeMessage] = []
    with store.session() as session:
        for run_id in list(session.scalars(oldest_waiting)):
            if changed(session, _SEND, {"run_id": run_id, "now": now}) == 1:
                found.append(PracticeMessage(int(run_id)))
    return found


def purge(store: Store, before: datetime) -> int:
    """Delete the practice runs started before `before` (done, or long lost); return how many."""
    with store.session() as session:
        return changed(session, delete(PracticeRun).where(PracticeRun.created_at < before))
