"""How long a practice run (the Run button) takes, from the POST to its result, on the warm pool.

Usage: .venv/bin/python benchmarks/practice_run.py [--runs N] [--concurrency C] [--json]
Starts what `codeblanks dev` starts, in a temp dir: a private redis-server, `codeblanks serve`
(gunicorn) on a SQLite store, a worker on the `grade` queue (C pool processes, default 1, as
the dev stack's) and one on `sync`, on the fastest sandbox here (the warm pool). A signed-in
student runs each lesson's sample solution N times (default 30, after 3 to warm up), one at a
time, over HTTP with the page's session header:
- the seed lesson expert/what-is-attention (one case, no input),
- expert/scaled-dot-product (numpy, four visible cases of six),
- expert/positional-encoding (numpy, the student's input "3 4" and four visible cases).
Three figures per run: `done` (POST sent until GET /api/runs/<id> says done, polled every
5 ms: the run's own latency), `shown` (the same followed as lesson.js follows it, at its
polling steps, then the rendered result fetched: what the student waits for), `server`
(the run's finished_at - created_at, as stored). Prints a table of medians and p95s; with
--json, ends with one JSON line: {"runs", "sandbox", "concurrency", "cores", "load_before",
"load_after", "lessons": {"<lesson>": {"sandbox_runs", "done_ms", "shown_ms", "server_ms"}}},
each figure {"median", "p95"}.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.lessons import Catalog, Exercise, load_catalog  # noqa: E402
from core.practice import plan  # noqa: E402
from service.settings import Settings  # noqa: E402
from service.web import create_app, extensions  # noqa: E402
from testkit.factories import place, settings_in  # noqa: E402
from testkit.pipeline import Pipeline, fastest_sandbox  # noqa: E402
from testkit.servers import REPO, RedisServer, WorkerProcess  # noqa: E402
from testkit.sessions import session_token  # noqa: E402
from testkit.webserver import WebServer  # noqa: E402

LESSONS = {  # the lesson, and the input the student types in the page's box (None: no box)
    "expert/what-is-attention": None,
    "expert/scaled-dot-product": None,
    "expert/positional-encoding": "3 4\n",
}
WARM_UP = 3
TIGHT_S = 0.005
PAGE_STEPS_MS = (40, 60, 100, 150, 250, 400, 600, 1000)  # service/web/static/lesson.js


class Client:
    """One keep-alive HTTP connection to the web app, with the page's session header."""

    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"X-CodeBlanks-Session": token, "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """Send one request and read its JSON answer."""
        data = None if body is None else json.dumps(body)
        self.connection.request(method, path, body=data, headers=self.headers)
        response = self.connection.getresponse()
        return response.status, json.loads(response.read() or b"null")


def one_run(
    client: Client, placement_id: int, body: dict[str, Any], page: bool
) -> dict[str, float]:
    """Run once; return the milliseconds to done (or to shown, as the page follows it)."""
    started = time.perf_counter()
    status, answer = client.call("POST", f"/api/placements/{placement_id}/runs", body)
    if status != 202:
        raise RuntimeError(f"the run was refused: {status} {answer}")
    url, run_id = answer["url"], answer["id"]
    step = 0
    while True:
        if page:
            time.sleep(PAGE_STEPS_MS[min(step, len(PAGE_STEPS_MS) - 1)] / 1000)
            step += 1
        else:
            time.sleep(TIGHT_S)
        status, state = client.call("GET", url)
        if state["status"] == "done":
            break
        if time.perf_counter() - started > 60:
            raise TimeoutError(f"run {run_id} was not done in 60 s: {state}")
    if page:  # the page then fetches the run as the server renders it
        status, shown = client.call("GET", f"/lessons/{placement_id}/runs/{run_id}")
        if status != 200 or "practice-result" not in shown["practice"]:
            raise RuntimeError(f"the run's result was not rendered: {status}")
    took = (time.perf_counter() - started) * 1000
    result = state["result"]
    if result is None or result["status"] != "passed":
        raise RuntimeError(f"the sample solution's run did not pass: {state}")
    created = datetime.fromisoformat(state["created_at"])
    finished = datetime.fromisoformat(state["finished_at"])
    return {"took": took, "server": (finished - created).total_seconds() * 1000}


def _exercise(catalog: Catalog, lesson_id: str) -> Exercise:
    lesson = catalog.lesson(lesson_id)
    assert lesson is not None and lesson.exercise is not None, lesson_id
    return lesson.exercise


def figures(values: list[float]) -> dict[str, float]:
    """Return the median and the 95th percentile, in ms, rounded."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median": round(statistics.median(ordered), 1), "p95": round(p95, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per lesson and way")
    parser.add_argument("--concurrency", type=int, default=1, help="the grade worker's pool")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()

    catalog = load_catalog(REPO / "lessons")
    sandbox = fastest_sandbox(Settings.from_env())
    load_before = os.getloadavg()[0]
    temp = Path(tempfile.mkdtemp(prefix="codeblanks-bench-run-"))
    redis = RedisServer(temp)
    redis.start()
    settings = settings_in(
        temp, "runs.db", redis_url=redis.url, sandbox=sandbox, run_rate=1_000_000
    )
    app = create_app({"TESTING": True, "SETTINGS": settings})  # to seed the store, quietly
    store = extensions.store(app)
    placements = {lesson: place(store, lesson) for lesson in LESSONS}
    # the first placement's student, as launched into all three (a session names them)
    ids = [placed.placement_id for placed in placements.values()]
    token = session_token(app, placements["expert/what-is-attention"].user_id, ids)
    store.dispose()
    env = {**Pipeline.env_of(settings), "CODEBLANKS_LOG_FORMAT": "text"}
    web = WebServer(env, temp / "web.log")
    grade = WorkerProcess(env, temp / "worker.log", queues="grade")
    sync = WorkerProcess(env, temp / "sync-worker.log", queues="sync")
    measured: dict[str, dict[str, list[float]]] = {}
    try:
        web.start()
        grade.start(args.concurrency)
        sync.start(1)
        grade.wait_ready()
        sync.wait_ready()
        client = Client(web.port, token)
        for lesson, stdin in LESSONS.items():
            exercise = _exercise(catalog, lesson)
            body: dict[str, Any] = {"source": exercise.solution[exercise.entrypoint]}
            if stdin is not None:
                body["stdin"] = stdin
            placement_id = placements[lesson].placement_id
            for _ in range(WARM_UP):
                one_run(client, placement_id, body, page=False)
            done = [one_run(client, placement_id, body, page=False) for _ in range(args.runs)]
            shown = [one_run(client, placement_id, body, page=True) for _ in range(args.runs)]
            measured[lesson] = {
                "done": [run["took"] for run in done],
                "shown": [run["took"] for run in shown],
                "server": [run["server"] for run in done + shown],
            }
    finally:
        sync.stop()
        grade.stop()
        web.stop()
        redis.stop()
        shutil.rmtree(temp, ignore_errors=True)  # the figures are all it leaves

    runs_of = {
        lesson: len(plan(_exercise(catalog, lesson), given)) for lesson, given in LESSONS.items()
    }
    result: dict[str, Any] = {
        "runs": args.runs,
        "sandbox": sandbox,
        "concurrency": args.concurrency,
        "cores": os.cpu_count(),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "lessons": {
            lesson: {
                "sandbox_runs": runs_of[lesson],
                "done_ms": figures(times["done"]),
                "shown_ms": figures(times["shown"]),
                "server_ms": figures(times["server"]),
            }
            for lesson, times in measured.items()
        },
    }
    print(
        f"practice runs: POST to result, {args.runs} runs a lesson and way, one at a time; "
        f"{sandbox} sandbox, grade worker of {args.concurrency} pool process(es), "
        f"{result['cores']} cores, load {result['load_before']} -> {result['load_after']}"
    )
    keys = ("done_ms", "shown_ms", "server_ms")
    print(
        f"{'lesson':28} {'runs':>4}" + "".join(f"  {k[:-3] + ' ms, med / p95':>22}" for k in keys)
    )
    for lesson, row in result["lessons"].items():
        cells = "".join(f"  {row[k]['median']:>10.1f} / {row[k]['p95']:<9.1f}" for k in keys)
        print(f"{lesson:28} {row['sandbox_runs']:>4}{cells}")
    print("done: polled every 5 ms; shown: followed as the page follows it, result rendered;")
    print("server: the run's finished_at - created_at; runs: sandbox runs in one practice run")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
