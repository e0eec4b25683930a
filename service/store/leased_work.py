"""Work a worker takes under a lease: a submission's grading, a practice run. One lifecycle,
written once for both tables (submissions.py and practice_runs.py add what differs).

A worker claims a row with one conditional UPDATE (queued, or running under an expired lease)
that writes a fresh lease token; every write after it (renew, pause, release, and the end each
kind writes) matches that token and `running`. A worker whose lease was taken over (it was too
slow, or presumed dead) therefore cannot write: its end is fenced, and no work ends twice.

A student's work takes turns: while one of theirs is in the students' queue (queued with its
message sent, or running), a new one waits (queued, `enqueued_at` null) and is sent when the
one before ends (next_turn), at the tail of the queue, behind every other student's. So a
student with ten endless loops holds one place in the queue, not ten. Work that has had its
slice of the sandbox pauses when others wait (core.verdicts.Turn, fair_share.py): its results
so far are kept (`progress`) and it goes to the tail again, its claim not counted.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Self

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    Update,
    and_,
    bindparam,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.orm import aliased

from core.runs import RunResult, result_from, result_record
from service.store.database import Store, changed
from service.store.models import PracticeRun, PracticeStatus, Submission, SubmissionStatus

Model = type[Submission] | type[PracticeRun]
Lane = Callable[[Any], ColumnElement[bool]]  # which of a table's rows share the students' queue


@dataclass(frozen=True)
class Held:
    """Another worker holds the work until `until`."""

    until: datetime


Done = None  # ended already, or gone: nothing to do


@dataclass(frozen=True)
class Taken:
    """A row just claimed: its id, its new lease's token, its first results by name from a
    turn that paused (and those after them cut short), and the claim's returned columns."""

    id: int
    token: str
    done: tuple[tuple[str, RunResult], ...]
    tried: tuple[str, ...]
    row: Row[Any]


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A worker's hold on one piece of work, and what running it needs; each kind adds its
    own (submissions.Claim, practice_runs.Claim)."""

    id: int  # the row's: a submission's, a practice run's
    token: str
    claims: int
    source: str
    lesson_id: str
    placement_id: int
    user_id: int
    # its first results (a case's, a run's) by name, from a turn that paused
    done: tuple[tuple[str, RunResult], ...] = ()
    tried: tuple[str, ...] = ()  # those after them whose first try was cut short

    @classmethod
    def of(cls, taken: Taken, lesson_id: str, **more: Any) -> Self:
        """Return the claim of a row just taken, with what its kind adds (`more`)."""
        row = taken.row
        return cls(
            id=taken.id,
            token=taken.token,
            claims=row.claims,
            source=row.source,
            lesson_id=lesson_id,
            placement_id=row.placement_id,
            user_id=row.user_id,
            done=taken.done,
            tried=taken.tried,
            **more,
        )


class LeasedWork:
    """The lease's statements for one table of work, built once with bound parameters:
    building a statement (and its cache key) costs more CPU than SQLite takes to run it.

    `named`: the key a paused turn's results are kept under in `progress` ("case", "run");
    `lane`: the condition that a row is in the students' queue (None: every row is);
    `returning`: the columns its kind's claim reads besides the shared ones;
    `address`: the columns a message to a stuck row needs besides its id.
    """

    def __init__(
        self,
        model: Model,
        named: str,
        lane: Lane | None = None,
        returning: Sequence[Any] = (),
        address: Sequence[Any] = (),
    ) -> None:
        status = SubmissionStatus if model is Submission else PracticeStatus
        self.named, self._running = named, status.RUNNING
        # queued, or running under a lease that ran out: a worker may take it
        self.claimable = or_(
            model.status == status.QUEUED,
            and_(model.status == status.RUNNING, model.lease_expires_at < bindparam("now")),
        )
        self.claiming = (
            update(model)
            .where(model.id == bindparam("held_id"), self.claimable)
            .values(
                status=status.RUNNING,
                lease_token=bindparam("token"),
                lease_expires_at=bindparam("until"),
                claims=model.claims + 1,
            )
            .returning(
                model.claims, model.source, model.placement_id, model.user_id, model.progress,
                *returning,
            )
        )  # fmt: skip
        self._lease = select(model.status, model.lease_expires_at).where(
            model.id == bindparam("held_id")
        )
        # an update that changes the row only while the claim (held_id, token) holds its lease
        self.fenced = update(model).where(
            model.id == bindparam("held_id"),
            model.lease_token == bindparam("token"),
            model.status == status.RUNNING,
        )
        self._renew = self.fenced.values(lease_expires_at=bindparam("until"))
        # back to its queue's tail, sent now
        give_back = self.fenced.values(
            status=status.QUEUED,
            lease_token=None,
            lease_expires_at=None,
            enqueued_at=bindparam("now"),
        )
        self._release = give_back.values(grader_error=bindparam("problem"))
        self._pause = give_back.values(claims=model.claims - 1, progress=bindparam("kept"))

        def in_lane(row: Any) -> list[ColumnElement[bool]]:
            return [lane(row)] if lane is not None else []

        def in_flight(row: Any) -> ColumnElement[bool]:  # its message sent, or running
            return and_(
                *in_lane(row),
                row.status.in_((status.QUEUED, status.RUNNING)),
                row.enqueued_at.is_not(None),
            )

        def waiting(row: Any) -> ColumnElement[bool]:  # its author's turn not come: not sent
            return and_(*in_lane(row), row.status == status.QUEUED, row.enqueued_at.is_(None))

        self._in_flight = (
            select(model.id).where(model.user_id == bindparam("user"), in_flight(model)).limit(1)
        )
        self._next_waiting = (
            select(model.id)
            .where(model.user_id == bindparam("user"), waiting(model))
            .order_by(model.id)
            .limit(1)
        )
        self._send = (
            update(model)
            .where(model.id == bindparam("held_id"), model.enqueued_at.is_(None))
            .values(enqueued_at=bindparam("now"))
        )
        later, busy = aliased(model), aliased(model)
        busy_too = select(busy.id).where(busy.user_id == later.user_id, in_flight(busy))
        self._turns_due = (
            select(func.min(later.id))
            .where(waiting(later), ~busy_too.exists())
            .group_by(later.user_id)
        )
        self._stuck = (
            select(model.id, model.enqueued_at, *address)
            .where(
                or_(
                    and_(model.status == status.QUEUED, model.enqueued_at < bindparam("before")),
                    and_(
                        model.status == status.RUNNING,
                        model.lease_expires_at < bindparam("now"),
                        # not sent since the lease ran out (or that message is late too)
                        or_(
                            model.enqueued_at < model.lease_expires_at,
                            model.enqueued_at < bindparam("before"),
                        ),
                    ),
                )
            )
            .order_by(model.id)
        )
        self._sent_again = (
            update(model)
            .where(model.id == bindparam("held_id"), model.enqueued_at == bindparam("was"))
            .values(enqueued_at=bindparam("now"))
        )

    def take(
        self,
        connection: Connection,
        held_id: int,
        lease_s: int,
        now: datetime,
        claiming: Update | None = None,
        **params: object,
    ) -> Taken | Held | None:
        """Take the row under a fresh lease in the connection's transaction; Held or Done when
        that is not on. `claiming`: the claim statement narrowed by the kind (its `params`)."""
        token = secrets.token_hex(16)
        until = now + timedelta(seconds=lease_s)
        values = {"held_id": held_id, "now": now, "token": token, "until": until, **params}
        statement = self.claiming if claiming is None else claiming
        taken = connection.execute(statement, values).first()
        if taken is None:
            row = connection.execute(self._lease, {"held_id": held_id}).first()
            if row is not None and row.status == self._running and row.lease_expires_at is not None:
                return Held(row.lease_expires_at)
            return Done
        kept, key = taken.progress or (), self.named
        done = tuple((str(one[key]), result_from(one["result"])) for one in kept if "result" in one)
        tried = tuple(str(one[key]) for one in kept if one.get("tried"))
        return Taken(held_id, token, done, tried, taken)

    @staticmethod
    def fence(held: Claim) -> dict[str, object]:
        """Return the parameters of a fenced statement (`fenced`) for the claim."""
        return {"held_id": held.id, "token": held.token}

    def renew(self, store: Store, held: Claim, lease_s: int, now: datetime) -> bool:
        """Extend the claim's lease to `lease_s` from now; False when it no longer holds."""
        until = now + timedelta(seconds=lease_s)
        with store.session() as session:
            return changed(session, self._renew, {**self.fence(held), "until": until}) == 1

    def release(
        self, store: Store, held: Claim, now: datetime, problem: str | None = None
    ) -> bool:
        """Give the work back to its queue (the grader failed; it will be tried again); False
        when the claim no longer holds.

        `problem` is kept as its grader error: a submission's teacher sees "grader error,
        retrying" until a verdict replaces it.
        """
        values = {**self.fence(held), "now": now, "problem": problem}
        with store.session() as session:
            return changed(session, self._release, values) == 1

    def pause(
        self,
        store: Store,
        held: Claim,
        done: Sequence[tuple[str, RunResult]],
        now: datetime,
        tried: Sequence[str] = (),
    ) -> bool:
        """Give the work back to its queue with its first results (and those cut short after
        them), to be taken again behind fresh work; False when the claim no longer holds.

        A pause is no lost worker: the claim it made is not counted against grade_attempts.
        """
        kept: list[dict[str, object]] = [
            {self.named: name, "result": result_record(ran)} for name, ran in done
        ]
        kept += [{self.named: name, "tried": True} for name in tried]
        values = {**self.fence(held), "now": now, "kept": kept}
        with store.session() as session:
            return changed(session, self._pause, values) == 1

    def in_flight(self, connection: Connection, user_id: int) -> bool:
        """Return whether the user has work in the students' queue (sent, or running)."""
        return connection.execute(self._in_flight, {"user": user_id}).first() is not None

    def next_turn(self, connection: Connection, user_id: int, now: datetime) -> int | None:
        """Mark the user's oldest waiting work as sent now, unless another of theirs is in the
        queue; return its id, to be sent after the commit."""
        if self.in_flight(connection, user_id):
            return None
        waiting = connection.scalar(self._next_waiting, {"user": user_id})
        if waiting is None:
            return None
        sent = changed(connection, self._send, {"held_id": waiting, "now": now})
        return int(waiting) if sent == 1 else None

    def turns_due(self, store: Store, now: datetime, limit: int) -> list[int]:
        """Mark the oldest waiting work of each student who has none in the queue as sent now
        (a turn the end of their last one missed); return their ids."""
        found: list[int] = []
        with store.session() as session:
            for held_id in list(session.scalars(self._turns_due.limit(limit))):
                if changed(session, self._send, {"held_id": held_id, "now": now}) == 1:
                    found.append(int(held_id))
        return found

    def stuck(
        self, store: Store, now: datetime, queued_deadline_s: int, limit: int
    ) -> list[Row[Any]]:
        """Mark work sent past the deadline, or running past its lease, as sent now; return
        its rows (id, enqueued_at, and the `address` columns).

        Each row is taken with a conditional update, so that two sweeps at once send it once.
        """
        before = now - timedelta(seconds=queued_deadline_s)
        found: list[Row[Any]] = []
        with store.session() as session:
            candidates = session.execute(
                self._stuck.limit(limit), {"now": now, "before": before}
            ).all()
            for row in candidates:
                moved = {"held_id": row.id, "was": row.enqueued_at, "now": now}
                if changed(session, self._sent_again, moved) == 1:
                    found.append(row)
        return found
