"""`codeblanks lessons check`: validate lessons and run their solutions and starters."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import click

from core.cases import CaseVerdict
from core.errors import GraderError, LessonError
from core.lessons import Lesson, load_catalog, load_lesson, load_track
from core.runs import RunStatus, Sandbox
from core.verdicts import grade_source
from service.cli.command_context import Context


@click.group()
def lessons() -> None:
    """Work with lessons."""


@lessons.command("check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.pass_obj
def lessons_check(obj: Context, paths: tuple[Path, ...]) -> None:
    """Validate lessons, and run every solution (must pass) and starter (must not) in the sandbox.

    PATHS may be the lessons root, a track or a lesson directory (default: the lessons root).
    """
    ok = True
    with obj.sandbox() as sandbox:
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
    if solution.status is not RunStatus.PASSED and not exercise.has_cases:
        problems.append(f"the solution does not pass ({solution.status}: {solution.feedback})")
    elif solution.status is not RunStatus.PASSED:
        problems.append("the solution does not pass: " + _failed_cases(solution.cases))
    if starter.status is RunStatus.PASSED:
        cases = f" all {len(exercise.cases)} cases" if exercise.has_cases else ""
        problems.append(f"the starter code already passes{cases}")
    if problems:
        return f"FAIL {lesson.id}: " + "; ".join(problems), False
    cases = f" {len(exercise.cases)} cases" if exercise.has_cases else ""
    return (
        f"ok   {lesson.id}: {summary}; solution passed{cases} ({solution.duration_ms} ms), "
        f"starter {starter.status} ({elapsed} ms in all)",
        True,
    )


def _failed_cases(cases: Sequence[CaseVerdict]) -> str:
    """Name each case the solution did not pass, with its detail: the author may see a hidden
    case's (a student never does)."""
    return "; ".join(
        f"case {case.name!r}{' (hidden)' if case.hidden else ''} {case.status}: {case.feedback}"
        for case in cases
        if not case.passed
    )
