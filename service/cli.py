"""The `codeblanks` command: grade a file, check lessons, and (later) run the service."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import click

from core.errors import GraderError, LessonError
from core.lessons import Lesson, load_catalog, load_lesson, load_track
from core.runs import RunStatus, Sandbox
from core.verdicts import Verdict, grade_source
from service.settings import Settings
from workers.sandbox import BACKENDS, make_sandbox


@dataclass
class Context:
    """What every command gets: the settings, read once."""

    settings: Settings

    def sandbox(self, backend: str | None = None) -> Sandbox:
        """Build the sandbox backend named, or the configured one."""
        return make_sandbox(backend or self.settings.sandbox, self.settings.runtime_dir)


@click.group()
@click.pass_context
def main(ctx: click.Context) -> None:
    """Grade interactive coding lessons, in a sandbox, for any LTI 1.3 LMS."""
    ctx.obj = Context(Settings.from_env())


@main.command()
@click.argument("lesson_dir", type=click.Path(path_type=Path))
@click.argument("submission_file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--backend", type=click.Choice(BACKENDS), help="Sandbox backend to run in.")
@click.pass_obj
def grade(
    obj: Context, lesson_dir: Path, submission_file: Path, as_json: bool, backend: str | None
) -> None:
    """Grade SUBMISSION_FILE as the exercise entrypoint of the lesson in LESSON_DIR."""
    lesson = _load_lesson_or_exit(lesson_dir)
    if lesson.exercise is None:
        _fail(f"{lesson_dir}: this lesson has no exercise.yaml, so there is nothing to grade")
    try:
        source = submission_file.read_bytes()
    except FileNotFoundError:
        _fail(f"{submission_file}: no such file")
    except IsADirectoryError:
        _fail(f"{submission_file}: is a directory, not a file")
    except OSError as exc:
        _fail(f"{submission_file}: cannot be read ({exc.strerror})")
    try:
        source.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(f"{submission_file}: is not UTF-8 text (invalid byte at position {exc.start})")
    try:
        verdict = grade_source(lesson.exercise, source, obj.sandbox(backend))
    except GraderError as exc:
        _fail(f"the grader failed: {exc}", code=1)
    if as_json:
        click.echo(json.dumps(verdict.as_json(lesson.id), ensure_ascii=False))
    else:
        _print_verdict(lesson, verdict)


@main.group()
def lessons() -> None:
    """Work with lessons."""


@lessons.command("check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.pass_obj
def lessons_check(obj: Context, paths: tuple[Path, ...]) -> None:
    """Validate lessons, and run every solution (must pass) and starter (must not) in the sandbox.

    PATHS may be the lessons root, a track or a lesson directory (default: the lessons root).
    """
    sandbox = obj.sandbox()
    ok = True
    for path in paths or (obj.settings.lessons_dir,):
        try:
            found = _lessons_under(path)
        except LessonError as exc:
            click.echo(f"FAIL {path}: {exc}")
            ok = False
            continue
        for lesson in found:
            line, passed = _check_lesson(lesson, sandbox)
            click.echo(line)
            ok = ok and passed
    sys.exit(0 if ok else 1)


@main.group()
def db() -> None:
    """Work with the database."""


@db.command("upgrade")
@click.pass_obj
def db_upgrade(obj: Context) -> None:
    """Bring the database to the newest schema (every start does this too)."""
    from service.store import Store
    from service.store.migrate import upgrade

    store = Store(obj.settings.database)
    upgrade(store)
    store.dispose()
    click.echo(f"codeblanks: the {store.engine.dialect.name} database has the newest schema")


@main.command()
@click.option("--queues", default="grade,sync", show_default=True, help="Queues to serve.")
@click.option("--concurrency", type=int, help="Pool processes (default: one per core).")
@click.option("--loglevel", default="info", show_default=True)
def worker(queues: str, concurrency: int | None, loglevel: str) -> None:
    """Run a Celery worker that grades submissions, syncs grades and sweeps what is stuck.

    Run another with `--queues regrade` for bulk regrades, so that they never delay students.
    """
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", "worker"]
    argv += ["--queues", queues, "--loglevel", loglevel, "--without-gossip", "--without-mingle"]
    if concurrency:
        argv += ["--concurrency", str(concurrency)]
    os.execv(sys.executable, argv)


@main.command()
@click.argument("placement_id", type=int)
def regrade(placement_id: int) -> None:
    """Grade every graded submission of PLACEMENT_ID again, on the bulk `regrade` queue."""
    from service.web import create_app
    from service.web.teacher.regrading import regrade as queue_regrade

    app = create_app()
    count = queue_regrade(app.extensions["store"], app.extensions["celery"], placement_id)
    click.echo(f"codeblanks: {count} submissions queued for regrading")


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True)
@click.option("--workers", "processes", default=2, show_default=True, help="Web processes.")
@click.option("--threads", default=16, show_default=True, help="Threads per process.")
@click.pass_obj
def serve(obj: Context, host: str, port: int, processes: int, threads: int) -> None:
    """Run the web app with gunicorn (threaded: a live status stream holds a thread)."""
    # live streams may hold half of a process's threads at most, whatever --threads says:
    # the other half answers pages, submissions and health checks
    streams = max(1, min(obj.settings.streams_per_process, threads // 2))
    os.environ["CODEBLANKS_STREAMS_PER_PROCESS"] = str(streams)
    argv = [sys.executable, "-m", "gunicorn", "--bind", f"{host}:{port}"]
    argv += ["--workers", str(processes), "--threads", str(threads), "--worker-class", "gthread"]
    argv += ["--config", "python:service.web.serving"]
    os.execv(sys.executable, [*argv, "service:create_app()"])


@main.command()
@click.option("--port", default=5000, show_default=True, help="Port of the web app.")
@click.pass_obj
def dev(obj: Context, port: int) -> None:
    """Run everything on this machine: Redis, a worker, the web app and a demo LMS."""
    from service.dev.supervisor import run_dev

    sys.exit(run_dev(obj.settings.instance_dir, port, lambda line: click.echo(line)))


def _lessons_under(path: Path) -> list[Lesson]:
    if (path / "lesson.md").is_file():
        return [load_lesson(path)]
    if (path / "track.yaml").is_file():
        track = load_track(path)
        return [load_lesson(path / lesson_id.split("/", 1)[1]) for lesson_id in track.lesson_ids]
    return list(load_catalog(path))


def _check_lesson(lesson: Lesson, sandbox: Sandbox) -> tuple[str, bool]:
    exercise = lesson.exercise
    summary = f"{len(lesson.questions)} questions, {lesson.points:g} points"
    if exercise is None:
        return f"ok   {lesson.id}: {summary}, no exercise", True
    started = time.monotonic()
    try:
        solution = grade_source(exercise, exercise.solution[exercise.entrypoint].encode(), sandbox)
        starter = grade_source(exercise, exercise.starter_code.encode(), sandbox)
    except GraderError as exc:
        return f"FAIL {lesson.id}: the sandbox failed: {exc}", False
    elapsed = int((time.monotonic() - started) * 1000)
    problems = []
    if solution.status is not RunStatus.PASSED:
        problems.append(f"the solution does not pass ({solution.status}: {solution.feedback})")
    if starter.status is RunStatus.PASSED:
        problems.append("the starter code already passes")
    if problems:
        return f"FAIL {lesson.id}: " + "; ".join(problems), False
    return (
        f"ok   {lesson.id}: {summary}; solution passed ({solution.duration_ms} ms), "
        f"starter {starter.status} ({elapsed} ms in all)",
        True,
    )


def _load_lesson_or_exit(lesson_dir: Path) -> Lesson:
    if not lesson_dir.exists():
        _fail(f"{lesson_dir}: no such lesson directory")
    if not (lesson_dir / "lesson.md").is_file():
        _fail(f"{lesson_dir}: not a lesson directory (it has no lesson.md)")
    try:
        return load_lesson(lesson_dir)
    except LessonError as exc:
        _fail(f"broken lesson: {exc}")


def _print_verdict(lesson: Lesson, verdict: Verdict) -> None:
    click.echo(f"{lesson.id}: {verdict.status} (score {verdict.score:g}, {verdict.duration_ms} ms)")
    click.echo(verdict.feedback)
    if verdict.stdout:
        click.echo("--- stdout ---")
        click.echo(verdict.stdout.rstrip("\n"))
    if verdict.stderr:
        click.echo("--- stderr ---")
        click.echo(verdict.stderr.rstrip("\n"))


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"codeblanks: {message}", err=True)
    sys.exit(code)


def _add_lti_commands() -> None:
    from service.lti.commands import keys, platforms

    main.add_command(platforms)
    main.add_command(keys)


_add_lti_commands()
