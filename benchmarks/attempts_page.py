"""What a student's attempts cost the lesson page: 200 attempts of 64 KiB each.

Usage: .venv/bin/python benchmarks/attempts_page.py [--attempts N] [--requests R] [--json]
Builds the app in this process (its Flask test client: no network, no worker) on a SQLite
store in a temp dir, places the seed lesson and hands in N submissions of 64 KiB (each a
local edit of the one before, but the last, which shares no line with the one before it),
every other one graded, then times R requests of each page and prints its size:
  - the lesson page (the newest 10 attempts listed, no code but the editor's),
  - the attempts page (25 a page), one attempt's page after a local edit, and after a
    change of every line (the diff is cut at 1000 lines), and that attempt's JSON;
the store's reads behind the list, all rows whole as the page read them before, against
the newest 10 without their code; and core.code_changes.compare on the worst input for
difflib (64 KiB of one repeated line, first and last lines changed). With --json, ends with
one JSON line: {"attempts", "pages": {name: {"bytes", "median_ms", "p95_ms"}}, "reads_ms":
{"all_whole", "listed"}, "diff_ms": {"local", "every_line", "repeats"}}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.code_changes import compare  # noqa: E402
from core.runs import MAX_SOURCE_BYTES, RunStatus  # noqa: E402
from service.store import submissions, work  # noqa: E402
from service.store.models import utcnow  # noqa: E402
from service.web import create_app, extensions  # noqa: E402
from service.web.student.lesson_view import ATTEMPTS_LISTED  # noqa: E402
from testkit import factories  # noqa: E402
from testkit.celery import FakeCelery  # noqa: E402
from testkit.sessions import sign_in  # noqa: E402


def source(n: int, lines: int = 4000) -> str:
    """Return attempt n's code: 64 KiB of assignments, line n changed (a local edit)."""
    body = [f"value_{i} = {i} * 3  # the attempt's {i}th line\n" for i in range(lines)]
    body[n % lines] = f"value_{n} = {n} * 7  # changed in attempt {n}\n"
    return "".join(body)[:MAX_SOURCE_BYTES].rsplit("\n", 1)[0] + "\n"


def unlike(n: int) -> str:
    """Return 64 KiB of code that shares no line with source()."""
    return source(n).replace("value_", "other_").replace("* 3", "* 5")


def timed(call: Callable[[], Any], rounds: int) -> tuple[Any, list[float]]:
    found, times = None, []
    for _ in range(rounds):
        started = time.perf_counter()
        found = call()
        times.append((time.perf_counter() - started) * 1000)
    return found, times


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=200)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as temp:
        settings = factories.settings_in(Path(temp))
        app = create_app({"TESTING": True, "SETTINGS": settings}, FakeCelery(settings))
        store = extensions.store(app)
        placed = factories.place(store, lesson_id=factories.SEED)
        ids = []
        for n in range(1, options.attempts + 1):
            code = unlike(n) if n == options.attempts else source(n)
            submission_id = factories.submission(store, placed.placement_id, placed.user_id, code)
            if n % 2:
                claim = submissions.claim(store, submission_id, 30, utcnow())
                verdict = factories.verdict(RunStatus.FAILED, stdout="not yet\n" * 64)
                submissions.finish(store, claim, verdict, utcnow())
            ids.append(submission_id)
        client = app.test_client()
        sign_in(client, placed.user_id, [placed.placement_id])
        base = f"/lessons/{placed.placement_id}"
        pages = {
            "lesson": base,
            "attempts": f"{base}/attempts",
            "attempt, a local edit": f"{base}/attempts/{ids[-2]}",
            "attempt, every line changed": f"{base}/attempts/{ids[-1]}",
            "attempt JSON, every line changed": f"/api/placements/{placed.placement_id}"
            f"/attempts/{ids[-1]}",
        }
        measured = {}
        for name, url in pages.items():
            answer, times = timed(lambda url=url: client.get(url), options.requests)
            assert answer.status_code == 200, (url, answer.status_code)
            measured[name] = {"bytes": len(answer.get_data()), **summary(times)}

        def read(listed: bool) -> Any:
            with store.reading() as session:
                if listed:
                    return work.attempt_rows(
                        session, placed.placement_id, placed.user_id, ATTEMPTS_LISTED
                    )
                return work.submissions(session, placed.placement_id, placed.user_id)

        _, whole = timed(lambda: read(False), options.requests)
        _, listed = timed(lambda: read(True), options.requests)
        repeats_before = "x = 1\n" * (MAX_SOURCE_BYTES // 6 - 1) + "end\n"
        repeats_after = "start\n" + "x = 1\n" * (MAX_SOURCE_BYTES // 6 - 1)
        diffs = {
            "local": timed(lambda: compare(source(1), source(2)), options.requests)[1],
            "every_line": timed(lambda: compare(source(1), unlike(2)), options.requests)[1],
            "repeats": timed(lambda: compare(repeats_before, repeats_after), 5)[1],
        }

    print(f"{options.attempts} attempts of {len(source(1).encode())} bytes, on SQLite; "
          f"medians of {options.requests} requests")  # fmt: skip
    print(f"{'page':<36} {'bytes':>10} {'median ms':>10} {'p95 ms':>8}")
    for name, found in measured.items():
        print(f"{name:<36} {found['bytes']:>10} {found['median_ms']:>10} {found['p95_ms']:>8}")
    reads = {"all_whole": summary(whole)["median_ms"], "listed": summary(listed)["median_ms"]}
    print(f"store reads: every row whole {reads['all_whole']} ms, "
          f"the newest {ATTEMPTS_LISTED} without code {reads['listed']} ms")  # fmt: skip
    diff_ms = {name: summary(times)["median_ms"] for name, times in diffs.items()}
    print(f"compare(): a local edit {diff_ms['local']} ms, every line changed "
          f"{diff_ms['every_line']} ms, 64 KiB of repeats {diff_ms['repeats']} ms")  # fmt: skip
    if options.json:
        print(json.dumps({"attempts": options.attempts, "pages": measured, "reads_ms": reads,
                          "diff_ms": diff_ms}))  # fmt: skip


if __name__ == "__main__":
    main()
