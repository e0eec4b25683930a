"""`codeblanks grade`: grade a file as a lesson's exercise entrypoint, in the sandbox."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

from core.errors import GraderError, LessonError
from core.lessons import Lesson, load_lesson
from core.sources import Fault, SourceRefused, check_source
from core.verdicts import Verdict, grade_source
from service.cli.command_context import Context
from workers.sandbox import BACKENDS


@click.command()
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
        check_source(source)
    except SourceRefused as refused:  # too large or a NUL: a `rejected` verdict, as the API's
        if refused.fault is Fault.NOT_UTF8:  # not a text file at all: a usage error
            _fail(f"{submission_file}: {refused}")
    try:
        with obj.sandbox(backend) as sandbox:
            verdict = grade_source(lesson.exercise, source, sandbox)
    except GraderError as exc:
        _fail(f"the grader failed: {exc}", code=1)
    if as_json:
        click.echo(json.dumps(verdict.as_json(lesson.id), ensure_ascii=False))
    else:
        _print_verdict(lesson, verdict)


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
    if lesson.exercise is not None and lesson.exercise.has_cases:
        click.echo("--- cases ---")
        for case in verdict.cases:  # what a student may see: a hidden case's verdict only
            click.echo(f"{case.status:<12} {case.summary()} (weight {case.weight:g})")
    if verdict.stdout:
        click.echo("--- stdout ---")
        click.echo(verdict.stdout.rstrip("\n"))
    if verdict.stderr:
        click.echo("--- stderr ---")
        click.echo(verdict.stderr.rstrip("\n"))


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"codeblanks: {message}", err=True)
    sys.exit(code)
