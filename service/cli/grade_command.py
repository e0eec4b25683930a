"""`codeblanks grade`: grade a file as a lesson's exercise entrypoint, in the sandbox.

Its figures (what the visible cases drew, as the worker re-encodes them) have no URL here:
`--json` lists each one's case, size and text alternative, and `--figures DIR` writes them
as DIR/figure-N.png, which the JSON then names as `file`.
"""

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
@click.option(
    "--figures",
    "figures_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the figures the program drew into this directory (figure-1.png, ...).",
)
@click.pass_obj
def grade(
    obj: Context,
    lesson_dir: Path,
    submission_file: Path,
    as_json: bool,
    backend: str | None,
    figures_dir: Path | None,
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
    figures = _figures(verdict, figures_dir)
    if as_json:
        shown = {**verdict.as_json(lesson.id), "figures": figures}
        click.echo(json.dumps(shown, ensure_ascii=False))
    else:
        _print_verdict(lesson, verdict, figures)


def _figures(verdict: Verdict, directory: Path | None) -> list[dict[str, object]]:
    """Return the verdict's figures as the JSON lists them, written to `directory` if given."""
    shown: list[dict[str, object]] = []
    if directory is not None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _fail(f"{directory}: cannot be made ({exc.strerror})")
    for number, (case, figure) in enumerate(verdict.figures(), start=1):
        entry: dict[str, object] = {
            "case": case,
            "width": figure.width,
            "height": figure.height,
            "alt": figure.alt,
        }
        if directory is not None:
            path = directory / f"figure-{number}.png"
            try:
                path.write_bytes(figure.png)
            except OSError as exc:
                _fail(f"{path}: cannot be written ({exc.strerror})")
            entry["file"] = str(path)
        shown.append(entry)
    return shown


def _load_lesson_or_exit(lesson_dir: Path) -> Lesson:
    if not lesson_dir.exists():
        _fail(f"{lesson_dir}: no such lesson directory")
    if not (lesson_dir / "lesson.md").is_file():
        _fail(f"{lesson_dir}: not a lesson directory (it has no lesson.md)")
    try:
        return load_lesson(lesson_dir)
    except LessonError as exc:
        _fail(f"broken lesson: {exc}")


def _print_verdict(lesson: Lesson, verdict: Verdict, figures: list[dict[str, object]]) -> None:
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
    if figures:
        click.echo("--- figures ---")
        for number, figure in enumerate(figures, start=1):
            where = figure.get("file") or "(--figures DIR writes it)"
            size = f"{figure['width']}x{figure['height']}"
            click.echo(f"{number}. {figure['case']}: {size} {where} {figure['alt']}".rstrip())


def _fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"codeblanks: {message}", err=True)
    sys.exit(code)
