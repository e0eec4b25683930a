"""The lesson model and its loader: lessons are directories of data (see LESSONS.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core import lesson_fields as fields
from core.cases import HARNESS, HARNESS_CONFIG, Case, load_cases
from core.compare import CompareMode, Tolerance
from core.errors import LessonError
from core.questions import BlankQuestion, ChoiceQuestion, MatchQuestion, Question
from core.runs import Limits

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_RUN_GRACE_S = 1.0  # a run's start-up and clean-up beyond its time limit, generously
_LIMIT_CAPS = {"time_s": 60.0, "memory_mb": 2048, "output_kb": 1024}


@dataclass(frozen=True)
class Exercise:
    """The coding practice of a lesson."""

    title: str
    prompt: str
    entrypoint: str
    compare: CompareMode
    tolerance: Tolerance
    limits: Limits
    points: float
    starter: Mapping[str, str]
    solution: Mapping[str, str]
    expected_output: str  # expected_output.txt; "" when the cases say what to expect
    cases: tuple[Case, ...]  # the implicit one (expected_output.txt) without `cases`
    has_cases: bool = False  # exercise.yaml lists `cases`
    # exercise.yaml's `stdin: true | false`; None: the program reads stdin when a visible
    # case gives it one (the page then offers an input box for a practice run)
    stdin: bool | None = None

    @property
    def reads_stdin(self) -> bool:
        """Return whether the program reads its stdin, as the page's input box is offered."""
        if self.stdin is not None:
            return self.stdin
        return any(case.stdin for case in self.cases if not case.hidden)

    @property
    def starter_code(self) -> str:
        """Return the entrypoint's starter code, which the student edits."""
        return self.starter[self.entrypoint]

    def files_with(self, source: str) -> dict[str, bytes]:
        """Return the work dir of a run: the starter files with the student's entrypoint."""
        files = {name: text.encode() for name, text in self.starter.items()}
        files[self.entrypoint] = source.encode()
        return files


@dataclass(frozen=True)
class Lesson:
    """One lesson: teaching text, questions and an optional exercise."""

    id: str
    track: str
    slug: str
    title: str
    summary: str
    body: str
    questions: tuple[Question, ...]
    exercise: Exercise | None
    path: Path

    @property
    def points(self) -> float:
        """Return the points available in the lesson (questions and exercise)."""
        total = sum(q.points for q in self.questions)
        return total + (self.exercise.points if self.exercise else 0)

    def question(self, question_id: str) -> Question | None:
        """Return the question with this id, or None."""
        return next((q for q in self.questions if q.id == question_id), None)


@dataclass(frozen=True)
class Track:
    """An ordered list of lessons ("All lessons in Expert")."""

    slug: str
    title: str
    description: str
    lesson_ids: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    """Every track and lesson, loaded and validated once."""

    tracks: Mapping[str, Track]
    lessons: Mapping[str, Lesson]

    def lesson(self, lesson_id: str) -> Lesson | None:
        """Return the lesson with this id ("track/slug"), or None."""
        return self.lessons.get(lesson_id)

    def longest_grading_s(self) -> float:
        """Return the longest an exercise's cases may run, one after another, in seconds, and
        one run more: a practice run's on the student's own input (core.practice)."""
        return max(
            (
                (len(lesson.exercise.cases) + 1) * (lesson.exercise.limits.time_s + _RUN_GRACE_S)
                for lesson in self.lessons.values()
                if lesson.exercise is not None
            ),
            default=0.0,
        )

    def __iter__(self) -> Iterator[Lesson]:
        for track in self.tracks.values():
            for lesson_id in track.lesson_ids:
                yield self.lessons[lesson_id]


def load_catalog(root: Path) -> Catalog:
    """Load and validate every track under `root`; raise LessonError on the first fault."""
    if not root.is_dir():
        raise LessonError(str(root), None, "the lessons directory does not exist")
    tracks: dict[str, Track] = {}
    lessons: dict[str, Lesson] = {}
    for track_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        track = load_track(track_dir)
        tracks[track.slug] = track
        for lesson_id in track.lesson_ids:
            lessons[lesson_id] = load_lesson(track_dir / lesson_id.split("/", 1)[1])
    return Catalog(tracks=tracks, lessons=lessons)


def load_track(track_dir: Path) -> Track:
    """Load a track's track.yaml and check that it lists exactly the lessons present."""
    path = track_dir / "track.yaml"
    data = fields.yaml_mapping(path)
    fields.check_keys(path, data, required={"title", "lessons"}, optional={"description"})
    slugs = data["lessons"]
    if not isinstance(slugs, list) or not slugs or not all(isinstance(s, str) for s in slugs):
        raise LessonError(str(path), "lessons", "must be a non-empty list of lesson slugs")
    if len(set(slugs)) != len(slugs):
        raise LessonError(str(path), "lessons", "lists a lesson twice")
    present = {p.name for p in track_dir.iterdir() if (p / "lesson.md").is_file()}
    for slug in slugs:
        if slug not in present:
            raise LessonError(str(path), "lessons", f"lists {slug!r}, which has no lesson.md")
    unlisted = sorted(present - set(slugs))
    if unlisted:
        raise LessonError(str(path), "lessons", f"does not list {', '.join(unlisted)}")
    return Track(
        slug=track_dir.name,
        title=fields.text(path, data, "title"),
        description=fields.text(path, data, "description", default=""),
        lesson_ids=tuple(f"{track_dir.name}/{slug}" for slug in slugs),
    )


def load_lesson(lesson_dir: Path) -> Lesson:
    """Load one lesson directory; raise LessonError naming the file and field at fault."""
    if not lesson_dir.is_dir():
        raise LessonError(str(lesson_dir), None, "the lesson directory does not exist")
    slug, track = lesson_dir.name, lesson_dir.parent.name
    if not _SLUG.match(slug):
        raise LessonError(str(lesson_dir), None, "the directory name must be a lowercase slug")
    front, body = _front_matter(lesson_dir / "lesson.md")
    questions_path = lesson_dir / "questions.yaml"
    questions = _questions(questions_path) if questions_path.exists() else ()
    exercise_path = lesson_dir / "exercise.yaml"
    exercise = _exercise(exercise_path) if exercise_path.exists() else None
    if not questions and exercise is None:
        raise LessonError(str(lesson_dir), None, "has neither questions.yaml nor exercise.yaml")
    return Lesson(
        id=f"{track}/{slug}",
        track=track,
        slug=slug,
        title=fields.text(lesson_dir / "lesson.md", front, "title"),
        summary=fields.text(lesson_dir / "lesson.md", front, "summary", default=""),
        body=body,
        questions=questions,
        exercise=exercise,
        path=lesson_dir,
    )


def _front_matter(path: Path) -> tuple[dict[str, Any], str]:
    text = fields.read_text(path)
    if not text.startswith("---\n"):
        raise LessonError(str(path), None, "must start with a '---' YAML front matter block")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise LessonError(str(path), None, "the front matter has no closing '---' line")
    try:
        front = yaml.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        raise LessonError(str(path), "front matter", f"is not valid YAML: {exc}") from exc
    if not isinstance(front, dict):
        raise LessonError(str(path), "front matter", "must be a mapping")
    fields.check_keys(path, front, required={"title"}, optional={"summary"})
    body = text[end + 5 :].strip("\n")
    if not body.strip():
        raise LessonError(str(path), "body", "the teaching text is empty")
    return front, body + "\n"


def _questions(path: Path) -> tuple[Question, ...]:
    data = fields.load_yaml(path)
    if not isinstance(data, list) or not data:
        raise LessonError(str(path), None, "must be a non-empty list of questions")
    seen: set[str] = set()
    questions: list[Question] = []
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise LessonError(str(path), f"[{index}]", "each question must be a mapping")
        question = _question(path, index, item)
        if question.id in seen:
            raise LessonError(str(path), f"[{index}].id", f"{question.id!r} is used twice")
        seen.add(question.id)
        questions.append(question)
    return tuple(questions)


def _question(path: Path, index: int, item: dict[str, Any]) -> Question:
    base = {"id", "type", "prompt", "explanation"}
    kind = item.get("type")
    at = f"[{index}]"
    if kind == "choice":
        fields.check_keys(
            path, item, required=base | {"options", "answer"}, optional={"points"}, at=at
        )
        options = item["options"]
        if not isinstance(options, list) or len(options) < 2:
            raise LessonError(str(path), f"{at}.options", "needs a list of at least 2 options")
        options = [str(o) for o in options]
        answer = item["answer"]
        if not isinstance(answer, int) or isinstance(answer, bool):
            raise LessonError(str(path), f"{at}.answer", "must be the index of the right option")
        if not 0 <= answer < len(options):
            raise LessonError(str(path), f"{at}.answer", f"{answer} is not an index of options")
        return ChoiceQuestion(
            **_question_base(path, at, item), options=tuple(options), answer=answer
        )
    if kind == "blank":
        fields.check_keys(
            path, item, required=base | {"template", "answers"}, optional={"points"}, at=at
        )
        template = fields.text(path, item, "template", at=at)
        if template.count("____") != 1:
            raise LessonError(str(path), f"{at}.template", "must contain exactly one '____'")
        answers = item["answers"]
        if not isinstance(answers, list) or not answers:
            raise LessonError(str(path), f"{at}.answers", "needs a non-empty list of fills")
        fills = tuple(str(a).strip() for a in answers)
        if not all(fills):
            raise LessonError(str(path), f"{at}.answers", "an accepted fill is empty")
        return BlankQuestion(**_question_base(path, at, item), template=template, answers=fills)
    if kind == "match":
        fields.check_keys(path, item, required=base | {"pairs"}, optional={"points"}, at=at)
        pairs = item["pairs"]
        if not isinstance(pairs, dict) or len(pairs) < 2:
            raise LessonError(str(path), f"{at}.pairs", "needs a mapping of at least 2 terms")
        meanings = [str(v) for v in pairs.values()]
        if len(set(meanings)) != len(meanings):
            raise LessonError(str(path), f"{at}.pairs", "two terms share a meaning")
        return MatchQuestion(
            **_question_base(path, at, item),
            pairs=tuple((str(k), str(v)) for k, v in pairs.items()),
        )
    raise LessonError(str(path), f"{at}.type", f"{kind!r} is not one of choice, blank, match")


def _question_base(path: Path, at: str, item: dict[str, Any]) -> dict[str, Any]:
    qid = item["id"]
    if not isinstance(qid, str) or not _SLUG.match(qid):
        raise LessonError(str(path), f"{at}.id", "must be a lowercase slug")
    return {
        "id": qid,
        "prompt": fields.text(path, item, "prompt", at=at),
        "explanation": fields.text(path, item, "explanation", at=at),
        "points": _points(path, item, at, default=1.0),
    }


def _exercise(path: Path) -> Exercise:
    data = fields.yaml_mapping(path)
    fields.check_keys(
        path,
        data,
        required={"title", "prompt", "entrypoint"},
        optional={"compare", "tolerance", "limits", "points", "cases", "stdin"},
    )
    reads = data.get("stdin")
    if reads is not None and not isinstance(reads, bool):
        raise LessonError(str(path), "stdin", "must be true or false")
    entrypoint = fields.text(path, data, "entrypoint")
    if "/" in entrypoint or not entrypoint.endswith(".py"):
        raise LessonError(str(path), "entrypoint", "must be a .py file name in starter/")
    try:
        mode = CompareMode(data.get("compare", "exact"))
    except ValueError:
        raise LessonError(str(path), "compare", "must be 'exact' or 'numeric'") from None
    if "tolerance" in data and mode is not CompareMode.NUMERIC:
        raise LessonError(str(path), "tolerance", "applies only with compare: numeric")
    lesson_dir = path.parent
    starter = _files(lesson_dir / "starter")
    solution = _files(lesson_dir / "solution")
    for name, files in (("starter", starter), ("solution", solution)):
        if entrypoint not in files:
            raise LessonError(str(lesson_dir / name), entrypoint, "the entrypoint is missing")
        clash = sorted(files.keys() & {HARNESS, HARNESS_CONFIG})
        if clash:
            raise LessonError(str(lesson_dir / name), clash[0], "this file name is the grader's")
    tolerance = fields.tolerance(path, data.get("tolerance"))
    expected_path = lesson_dir / "expected_output.txt"
    if "cases" in data:
        cases = load_cases(path, data["cases"], mode, tolerance)
        expected = fields.read_text(expected_path) if expected_path.exists() else ""
    else:
        expected = fields.read_text(expected_path)
        if not expected.strip():
            raise LessonError(str(expected_path), None, "is empty")
        implicit = Case("expected output", 1.0, False, mode, tolerance, output=expected)
        cases = (implicit,)
    return Exercise(
        title=fields.text(path, data, "title"),
        prompt=fields.text(path, data, "prompt"),
        entrypoint=entrypoint,
        compare=mode,
        tolerance=tolerance,
        limits=_limits(path, data.get("limits")),
        points=_points(path, data, "", default=1.0),
        starter=starter,
        solution=solution,
        expected_output=expected,
        cases=cases,
        has_cases="cases" in data,
        stdin=reads,
    )


def _limits(path: Path, raw: object) -> Limits:
    if raw is None:
        return Limits()
    if not isinstance(raw, dict):
        raise LessonError(str(path), "limits", "must be a mapping")
    fields.check_keys(path, raw, required=set(), optional=set(_LIMIT_CAPS), at="limits")
    values: dict[str, Any] = {}
    for key, cap in _LIMIT_CAPS.items():
        if key not in raw:
            continue
        value = raw[key]
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value <= cap:
            raise LessonError(str(path), f"limits.{key}", f"must be a number in (0, {cap:g}]")
        values[key] = float(value) if key == "time_s" else int(value)
    return Limits(**values)


def _files(directory: Path) -> dict[str, str]:
    if not directory.is_dir():
        raise LessonError(str(directory), None, "the directory is missing")
    files: dict[str, str] = {}
    for path in sorted(directory.rglob("*")):
        if path.is_symlink():
            raise LessonError(str(path), None, "symbolic links are not allowed in lessons")
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(directory).as_posix()] = fields.read_text(path)
    return files


def _points(path: Path, data: dict[str, Any], at: str, default: float) -> float:
    value = data.get("points", default)
    field = f"{at}.points" if at else "points"
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value <= 1000:
        raise LessonError(str(path), field, "must be a number in (0, 1000]")
    return float(value)
