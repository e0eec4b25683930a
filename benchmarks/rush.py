"""A deadline rush: N students of the demo LMS hand in to the six-case lesson within S seconds.

Usage: .venv/bin/python benchmarks/rush.py [--students N] [--window-s S] [--concurrency C]
                                          [--sync-pool K] [--json]
Real parts, started here and stopped at the end: a redis-server, `codeblanks serve` (gunicorn
with its defaults), the workers as `codeblanks dev` runs them: one on `grade` (C pool processes,
default one per core; the warm pool where it runs) and one on `sync` alone (K pool processes,
CODEBLANKS_SYNC_CONCURRENCY by default; with K = 0, one worker on both queues, as before), a
SQLite store in a temp dir, and the demo LMS (in this process, on a port of its own) with N
students, registered with the tool. First, the machine's sandbox-only capacity: the sample
solution graded straight into the sandbox, one run per core. Then each student, at a random
moment of the window, launches expert/scaled-dot-product through the demo LMS (OIDC login,
id_token), answers its three questions (four in five right), and submits: 70% the sample
solution, 20% a wrong one (some cases fail), 10% `while True: pass`. It follows its submission
as the lesson page does: every other student by the live stream (polling when the stream says
`busy`), the rest by polling every second. Printed, for the well-behaved students (right and
wrong): submit -> verdict saved (graded_at) and seen, p50/p95/max; the worst student's wait
(the longest seen); last click -> their final score applied in the demo LMS's gradebook; for
all: graded / submitted, lost (not graded by a generous deadline), duplicated (graded more than
once, or one post delivered twice). With --json, ends with one JSON line: {"students",
"window_s", "cores", "concurrency", "sync_pool", "sandbox", "load_before", "load_after",
"sandbox_only_per_s", "submitted", "graded", "lost", "duplicated", "reposted", "failures",
"failed", "dropped_polls", "verdict_ms", "seen_ms", "gradebook_ms", "worst_wait_ms",
"not_in_gradebook", "all_seen_s"}, each *_ms {"p50", "p95", "max"}.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import select  # noqa: E402

from benchmarks.pipeline import CORES, percentile, sandbox_only  # noqa: E402
from core.lessons import Lesson, load_lesson  # noqa: E402
from core.questions import ChoiceQuestion, MatchQuestion, Question  # noqa: E402
from demo import DemoServer  # noqa: E402
from service.settings import Settings  # noqa: E402
from service.store.models import GradeSync, Submission, SubmissionStatus, SyncStatus, User  # noqa: E402
from service.web import (
    create_app,  # noqa: E402
    extensions,
)
from testkit.factories import SCALED, settings_in  # noqa: E402
from testkit.lms import register, signed_in_headers  # noqa: E402
from testkit.pipeline import SOLUTION, Pipeline, add_sync_pool, fastest_sandbox  # noqa: E402
from testkit.servers import REPO, RedisServer, WorkerProcess, free_port  # noqa: E402
from testkit.webserver import Stream, WebServer  # noqa: E402

WRONG = (
    # softmax without the max subtracted: the two hidden cases of scores near 1000 overflow
    SOLUTION.replace("np.exp(z - z.max(axis=eksen, keepdims=True))", "np.exp(z)"),
    # divided by d, not sqrt(d): the example and the scaled case fail
    SOLUTION.replace("/ np.sqrt(boyut)", "/ boyut"),
)
ENDLESS = "while True:\n    pass\n"
SHARES = (("right", 0.7), ("wrong", 0.2), ("endless", 0.1))
POLL_S = 1.0  # the lesson page's POLL_MS
RIGHT_ANSWERS = 0.8


@dataclass
class Student:
    """One student's hand-in and what they saw of it (wall times, seconds since the epoch)."""

    sub: str
    kind: str  # right, wrong or endless
    offset_s: float  # when, into the window, they launch
    streams: bool  # follows by the live stream (else by polling)
    submission_id: int | None = None
    clicked: float | None = None  # the submit: their last click
    graded_at: float | None = None  # the verdict saved, as the API stamps it
    seen: float | None = None  # the verdict in their hands
    step: str = "waiting"  # where they are: launch, answers, submit, follow
    error: str | None = None  # why they stopped, and at which step
    dropped: int = 0  # polls whose connection dropped (the page tries again, and so do they)

    @property
    def behaves(self) -> bool:
        """Return whether the student's code ends (right or wrong)."""
        return self.kind != "endless"


def kinds(students: int) -> list[str]:
    """Return the students' kinds in SHARES, rounded by the largest remainder."""
    exact = [(name, share * students) for name, share in SHARES]
    counts = {name: int(value) for name, value in exact}
    by_remainder = sorted(exact, key=lambda item: item[1] - int(item[1]), reverse=True)
    for name, _ in by_remainder[: students - sum(counts.values())]:
        counts[name] += 1
    return [name for name, _ in SHARES for _ in range(counts[name])]


def answer_of(question: Question, right: bool) -> object:
    """Return a right or a wrong answer to the question."""
    if isinstance(question, ChoiceQuestion):
        return question.answer if right else (question.answer + 1) % len(question.options)
    if isinstance(question, MatchQuestion):
        pairs = dict(question.pairs)
        if not right:  # two meanings swapped: half the pairs right
            first, second = question.terms[:2]
            pairs[first], pairs[second] = pairs[second], pairs[first]
        return pairs
    return question.answers[0] if right else "boyut"


def source_of(student: Student, number: int) -> str:
    """Return the code the student hands in."""
    if student.kind == "right":
        return SOLUTION
    return WRONG[number % len(WRONG)] if student.kind == "wrong" else ENDLESS


def stamp(value: str) -> float:
    """Return an API timestamp as seconds since the epoch (the store's are UTC)."""
    found = datetime.fromisoformat(value)
    return (found if found.tzinfo else found.replace(tzinfo=UTC)).timestamp()


class Rush:
    """The students' side: launches, answers, submissions and following them, over HTTP."""

    def __init__(self, lms: Any, link: Any, lesson: Lesson, port: int, deadline: float) -> None:
        self.lms = lms
        self.link = link
        self.lesson = lesson
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.deadline = deadline

    def hand_in(self, student: Student, number: int, start: float) -> None:
        """Launch, answer every question, submit, and wait for the verdict."""
        time.sleep(max(0.0, start + student.offset_s - time.time()))
        pick = random.Random(number)
        try:
            with requests.Session() as browser:
                student.step = "launch"
                headers, placement_id = signed_in_headers(browser, self.lms, student.sub, self.link)
                student.step = "answers"
                api = f"{self.base}/api/placements/{placement_id}"
                for question in self.lesson.questions:
                    answer = answer_of(question, pick.random() < RIGHT_ANSWERS)
                    body = {"question_id": question.id, "answer": answer}
                    said = browser.post(f"{api}/answers", json=body, headers=headers, timeout=60)
                    if said.status_code != 201:
                        raise RuntimeError(f"an answer got {said.status_code}: {said.text[:200]}")
                student.step, student.clicked = "submit", time.time()
                sent = browser.post(
                    f"{api}/submissions",
                    json={"source": source_of(student, number)},
                    headers=headers,
                    timeout=60,
                )
                if sent.status_code != 202:
                    raise RuntimeError(f"submit answered {sent.status_code}: {sent.text[:200]}")
                handed = sent.json()
                student.submission_id = int(handed["id"])
                student.step = "follow"
                state = self.follow(browser, headers, handed, student)
                student.seen = time.time()
                student.graded_at = stamp(state["graded_at"])
        except Exception as failed:  # noqa: BLE001  a student's failure is a figure, not a crash
            student.error = f"{student.step}: {type(failed).__name__}: {failed}"[:300]

    def follow(
        self, browser: requests.Session, headers: dict[str, str], handed: Any, student: Student
    ) -> dict[str, Any]:
        """Return the submission's state once graded, as the lesson page follows it."""
        token = headers["X-CodeBlanks-Session"]
        while student.streams and time.time() < self.deadline:
            stream = Stream(self.port, handed["events"], token, timeout=30)
            try:
                answer = stream.read(30)
            finally:
                stream.close()
            for name, data in answer.events:
                if name == "status" and isinstance(data, dict) and data["status"] == "graded":
                    return data
            if "busy" in answer.names() or answer.status != 200:
                break  # as the page does: over the cap, poll instead
        while time.time() < self.deadline:
            try:
                state = browser.get(self.base + handed["url"], headers=headers, timeout=60)
            except requests.ConnectionError:  # the page says "Connection lost; still trying"
                student.dropped += 1
                time.sleep(POLL_S)
                continue
            if state.status_code == 200 and state.json()["status"] == "graded":
                return dict(state.json())
            time.sleep(POLL_S)
        raise TimeoutError("not graded by the deadline")


def figures(values: list[float]) -> dict[str, float | None]:
    """Return p50, p95 and max of values in seconds, as ms."""
    if not values:
        return {"p50": None, "p95": None, "max": None}
    return {
        "p50": round(percentile(values, 0.5) * 1000),
        "p95": round(percentile(values, 0.95) * 1000),
        "max": round(max(values) * 1000),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--window-s", type=float, default=60.0, help="when they hand in")
    parser.add_argument("--concurrency", type=int, default=CORES, help="worker pool processes")
    add_sync_pool(parser)
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="codeblanks-rush-") as tmp:
        result = measure(Path(tmp), args.students, args.window_s, args.concurrency, args.sync_pool)
    report(result)
    if args.json:
        print(json.dumps(result))


def measure(
    tmp: Path, count: int, window_s: float, concurrency: int, sync_pool: int = 0
) -> dict[str, Any]:
    """Run one rush; return the figures."""
    lesson = load_lesson(REPO / "lessons" / SCALED)
    assert lesson.exercise is not None
    backend = fastest_sandbox(Settings.from_env())
    load_before = os.getloadavg()
    capacity, _ = sandbox_only(backend, Settings.from_env(), max(40, CORES * 20))
    everyone = kinds(count)
    shuffle = random.Random(27)
    students = [
        Student(f"demo-learner-{n + 1}", kind, shuffle.uniform(0, window_s), n % 2 == 0)
        for n, kind in enumerate(everyone)
    ]
    endless = sum(not s.behaves for s in students)
    case_s = len(lesson.exercise.cases) * lesson.exercise.limits.time_s
    # generous: the window, then every endless loop run to its time limit twice over
    waiting_s = window_s + 120 + 2 * endless * case_s / max(concurrency, 1)

    redis = RedisServer(tmp)
    redis.start()
    port = free_port()
    tool_url = f"http://127.0.0.1:{port}"
    demo = DemoServer(tmp / "demo", tool_url=tool_url, learners=count)
    settings = settings_in(
        tmp,
        "rush.db",
        redis_url=redis.url,
        base_url=tool_url,
        outbound_allow=urlsplit(demo.url).netloc,
        sandbox=backend,
    )
    app = create_app({"SETTINGS": settings})
    env = Pipeline.env_of(settings)
    web = WebServer(env, tmp / "web.log", port=port)
    worker = WorkerProcess(env, tmp / "worker.log", queues="grade" if sync_pool else "grade,sync")
    syncs = WorkerProcess(env, tmp / "sync-worker.log", queues="sync")
    try:
        demo.start()
        lms = register(demo, app, tool_url)
        link = lms.link(lesson=SCALED, title=lesson.title, score=lesson.points)
        web.start()
        worker.start(concurrency)
        if sync_pool:
            syncs.start(sync_pool)
            syncs.wait_ready()
        worker.wait_ready()
        start = time.time() + 1
        rush = Rush(lms, link, lesson, port, start + waiting_s)
        threads = [
            threading.Thread(target=rush.hand_in, args=(s, n, start), daemon=True)
            for n, s in enumerate(students)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, start + waiting_s - time.time()) + 5)
        endless_done = time.time() - start
        settled = settle(app, start + waiting_s + 60)
        items = [item.id for item in demo.platform.lineitems_of(link)]
        scores = demo.platform.scores(lineitem_id=items[0])
        landed = gradebook(students, scores, settled)
        rows = graded(app, [s.submission_id for s in students if s.submission_id])
    finally:
        syncs.stop()
        worker.stop()
        web.stop()
        demo.stop()
        extensions.store(app).dispose()
        redis.stop()
    return summary(students, rows, scores, landed, endless_done) | {
        "students": count,
        "window_s": window_s,
        "cores": CORES,
        "concurrency": concurrency,
        "sync_pool": sync_pool,
        "sandbox": backend,
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in os.getloadavg()],
        "sandbox_only_per_s": round(capacity, 1),
    }


def settle(app: Any, deadline: float) -> dict[str, float | None]:
    """Wait until no grade sync is pending; return each student's last score sent, by sub."""
    store = extensions.store(app)
    pending = select(GradeSync.id).where(GradeSync.status == SyncStatus.PENDING).limit(1)
    while time.time() < deadline:
        with store.session() as session:
            if session.scalar(pending) is None:
                break
        time.sleep(0.5)
    with store.session() as session:
        rows = session.execute(
            select(User.sub, GradeSync.score_given)
            .join(User, User.id == GradeSync.user_id)
            .order_by(GradeSync.id)
        ).all()
    return {sub: given for sub, given in rows}  # the last row of each student wins


def gradebook(
    students: list[Student], scores: list[Any], settled: dict[str, float | None]
) -> dict[str, float | None]:
    """Return, per well-behaved student, seconds from their last click until the demo LMS
    applied their final score (None: it holds another)."""
    applied: dict[str, list[Any]] = {}
    for score in scores:
        if score.applied:
            applied.setdefault(score.user_id, []).append(score)
    landed: dict[str, float | None] = {}
    for student in students:
        if not student.behaves or student.clicked is None or student.seen is None:
            continue
        final = settled.get(student.sub)
        mine = applied.get(student.sub, [])
        if final is None or not mine or abs(mine[-1].body["scoreGiven"] - final) > 1e-9:
            landed[student.sub] = None
            continue
        first = next(s for s in mine if abs(s.body["scoreGiven"] - final) <= 1e-9)
        landed[student.sub] = first.received_at - student.clicked
    return landed


def graded(app: Any, ids: list[int]) -> dict[int, tuple[str, int]]:
    """Return each submission's status and how many times it was graded."""
    with extensions.store(app).session() as session:
        rows = session.execute(
            select(Submission.id, Submission.status, Submission.gradings).where(
                Submission.id.in_(ids)
            )
        ).all()
    return {sid: (status, gradings) for sid, status, gradings in rows}


def summary(
    students: list[Student],
    rows: dict[int, tuple[str, int]],
    scores: list[Any],
    landed: dict[str, float | None],
    ended_s: float,
) -> dict[str, Any]:
    """Return the figures of one rush."""
    good = [s for s in students if s.behaves and s.seen is not None and s.clicked is not None]
    done = [sid for sid, (status, _) in rows.items() if status == SubmissionStatus.GRADED]
    # one post delivered twice: the same score with the same timestamp (a later post of an
    # unchanged score, as after an endless loop's 0 points, has a later one, and is counted
    # apart as reposted)
    posts = [(s.user_id, s.body["scoreGiven"], s.body["timestamp"]) for s in scores]
    reposted, last = 0, {}
    for score in scores:
        if score.applied:
            reposted += last.get(score.user_id) == score.body["scoreGiven"]
            last[score.user_id] = score.body["scoreGiven"]
    waits = [s.seen - s.clicked for s in good]  # type: ignore[operator]
    return {
        "submitted": len(rows),
        "graded": len(done),
        "lost": len(rows) - len(done),
        "duplicated": sum(1 for _, gradings in rows.values() if gradings > 1)
        + len(posts)
        - len(set(posts)),
        "reposted": reposted,
        "failed": [s.error for s in students if s.error][:5],
        "failures": sum(1 for s in students if s.error),
        "dropped_polls": sum(s.dropped for s in students),
        "verdict_ms": figures([s.graded_at - s.clicked for s in good]),  # type: ignore[operator]
        "seen_ms": figures(waits),
        "worst_wait_ms": round(max(waits) * 1000) if waits else None,
        "gradebook_ms": figures([v for v in landed.values() if v is not None]),
        "not_in_gradebook": sum(1 for v in landed.values() if v is None),
        "all_seen_s": round(ended_s, 1),
    }


def report(result: dict[str, Any]) -> None:
    """Print the figures as a table."""
    print(
        f"deadline rush: {result['students']} students within {result['window_s']:g} s, "
        f"{result['cores']} cores, worker pool {result['concurrency']} (+ {result['sync_pool']} "
        f"on sync only), sandbox "
        f"{result['sandbox']}; load average before {result['load_before']}, after "
        f"{result['load_after']}"
    )
    print(f"\n{'well-behaved students (ms)':<34}{'p50':>8}{'p95':>8}{'max':>8}")
    for name, key in (
        ("submit -> verdict saved", "verdict_ms"),
        ("submit -> verdict seen", "seen_ms"),
        ("last click -> LMS gradebook", "gradebook_ms"),
    ):
        row = result[key]
        print(f"{name:<34}{row['p50']!s:>8}{row['p95']!s:>8}{row['max']!s:>8}")
    print(f"\nworst student's wait          {result['worst_wait_ms']} ms")
    print(f"graded / submitted            {result['graded']} / {result['submitted']}")
    print(f"lost, duplicated              {result['lost']}, {result['duplicated']}")
    print(f"an unchanged score posted again {result['reposted']}")
    print(f"final score not in gradebook  {result['not_in_gradebook']}")
    print(f"students who failed to finish {result['failures']} {result['failed'] or ''}")
    print(f"polls whose connection dropped {result['dropped_polls']} (polled again, as the page)")
    print(f"every verdict seen after      {result['all_seen_s']} s (endless loops included)")
    print(f"sandbox only, same machine    {result['sandbox_only_per_s']} gradings/s")


if __name__ == "__main__":
    main()
