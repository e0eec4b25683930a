from pathlib import Path

import pytest

from core.cases import HARNESS, HARNESS_CONFIG
from core.compare import CompareMode
from core.errors import LessonError
from core.lessons import load_catalog, load_lesson, load_track
from core.questions import BlankQuestion, ChoiceQuestion, MatchQuestion

SEED_OUTPUT = b"[0.787 0.107 0.107]\n[0.893 0.213]\nTrue\n"


def test_seed_lesson_is_reproduced_faithfully(catalog):
    lesson = catalog.lesson("expert/what-is-attention")
    assert lesson is not None
    assert lesson.title == "What is attention?"
    assert lesson.summary == "Attention lets the model focus on important parts of the input."
    assert "cikis = agirlik @ degerler        # (d,)" in lesson.body
    assert "print(a @ degerler)          # [0.893 0.213]: mostly the first value" in lesson.body
    exercise = lesson.exercise
    assert exercise is not None and exercise.title == "First attention"
    assert exercise.entrypoint == "model.py" and exercise.compare is CompareMode.EXACT
    assert (lesson.path / "expected_output.txt").read_bytes() == SEED_OUTPUT
    assert exercise.starter_code.rstrip().endswith("# buraya yaz")
    assert "def softmax(z, eksen=-1):" in exercise.solution["model.py"]
    choice, blank, match = lesson.questions
    assert isinstance(choice, ChoiceQuestion)
    assert choice.options[choice.answer] == (
        "It relates distant positions in one step and is computed in parallel"
    )
    assert choice.explanation.startswith("In an RNN information is carried step by step")
    assert isinstance(blank, BlankQuestion)
    assert blank.template == "cikis = agirlik ____ degerler" and blank.answers == ("@",)
    assert isinstance(match, MatchQuestion)
    assert dict(match.pairs) == {
        "score": "Similarity measure",
        "softmax": "Turns into weights",
        "value": "Carried information",
        "equal scores": "Plain mean",
    }


def test_catalog_has_the_expert_track_in_order(catalog):
    track = catalog.tracks["expert"]
    assert track.title == "Expert"
    assert track.lesson_ids[0] == "expert/what-is-attention"
    assert len(track.lesson_ids) >= 6
    assert [lesson.id for lesson in catalog] == list(track.lesson_ids)


def test_every_lesson_has_all_three_question_types_and_an_exercise(catalog):
    for lesson in catalog:
        assert {q.type for q in lesson.questions} == {"choice", "blank", "match"}, lesson.id
        assert lesson.exercise is not None, lesson.id
        assert "import numpy" in lesson.exercise.solution[lesson.exercise.entrypoint]
        assert lesson.points == sum(q.points for q in lesson.questions) + lesson.exercise.points


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


BROKEN = [
    # (what to break, file named in the error, field named in the error)
    (lambda d: (d / "lesson.md").unlink(), "lesson.md", None),
    (lambda d: _edit(d / "lesson.md", "---\ntitle", "title"), "lesson.md", None),
    (lambda d: _edit(d / "lesson.md", "title: What is attention?\n", ""), "lesson.md", "title"),
    (lambda d: _edit(d / "lesson.md", "summary:", "sumary:"), "lesson.md", "sumary"),
    (
        lambda d: _edit(d / "questions.yaml", "answer: 1", "answer: 7"),
        "questions.yaml",
        "[0].answer",
    ),
    (
        lambda d: _edit(d / "questions.yaml", "type: blank", "type: essay"),
        "questions.yaml",
        "[1].type",
    ),
    (
        lambda d: _edit(d / "questions.yaml", "cikis = agirlik ____", "cikis = agirlik"),
        "questions.yaml",
        "[1].template",
    ),
    (
        lambda d: _edit(d / "questions.yaml", "id: concepts", "id: rnn-advantage"),
        "questions.yaml",
        "[2].id",
    ),
    (
        lambda d: _edit(
            d / "questions.yaml", "    value: Carried information", "    value: Plain mean"
        ),
        "questions.yaml",
        "[2].pairs",
    ),
    (
        lambda d: _edit(d / "questions.yaml", "  explanation: The product", "  explain: The"),
        "questions.yaml",
        "[1].explain",
    ),
    (lambda d: _edit(d / "questions.yaml", "- id: rnn", "- id: [rnn"), "questions.yaml", None),
    (
        lambda d: _edit(d / "exercise.yaml", "entrypoint: model.py", "entrypoint: main.py"),
        "starter",
        "main.py",
    ),
    (
        lambda d: _edit(d / "exercise.yaml", "compare: exact", "compare: fuzzy"),
        "exercise.yaml",
        "compare",
    ),
    (lambda d: _edit(d / "exercise.yaml", "points: 5", "points: -5"), "exercise.yaml", "points"),
    (
        lambda d: _edit(d / "exercise.yaml", "points: 5", "points: 5\nlimits: {time_s: 500}"),
        "exercise.yaml",
        "limits.time_s",
    ),
    (
        lambda d: _edit(d / "exercise.yaml", "points: 5", "points: 5\ntolerance: {abs: 1}"),
        "exercise.yaml",
        "tolerance",
    ),
    (lambda d: (d / "expected_output.txt").unlink(), "expected_output.txt", None),
    (lambda d: (d / "expected_output.txt").write_bytes(b"\xff\xfe"), "expected_output.txt", None),
    (lambda d: (d / "solution" / "model.py").unlink(), "solution", "model.py"),
    (lambda d: (d / "starter" / "evil.py").symlink_to("/etc/passwd"), "evil.py", None),
    (
        lambda d: _edit(d / "exercise.yaml", "points: 5", "points: 5\ncase: []"),
        "exercise.yaml",
        "case",
    ),
    (
        lambda d: _edit(d / "exercise.yaml", "points: 5", "points: 5\ncases: 5"),
        "exercise.yaml",
        "cases",
    ),
    (
        lambda d: _edit(d / "exercise.yaml", "points: 5", "points: 5\ncases: [{name: a}]"),
        "exercise.yaml",
        "cases[0] ('a').output",
    ),
    (lambda d: (d / "starter" / HARNESS).write_text("x = 1\n"), "starter", HARNESS),
    (lambda d: (d / "solution" / HARNESS_CONFIG).write_text("{}"), "solution", HARNESS_CONFIG),
    (lambda d: (d / "exercise.yaml").write_text("[" * 5000), "exercise.yaml", None),
    (
        lambda d: _edit(d / "exercise.yaml", "points: 5", 'points: 5\nstdin: "yes"'),
        "exercise.yaml",
        "stdin",
    ),
]


@pytest.mark.parametrize(("breaking", "file", "field"), BROKEN)
def test_broken_lesson_names_file_and_field(seed_copy, breaking, file, field):
    breaking(seed_copy)
    with pytest.raises(LessonError) as info:
        load_lesson(seed_copy)
    assert file in info.value.path
    assert info.value.field == field
    assert file in str(info.value)


def test_track_must_list_exactly_its_lessons(seed_copy):
    track_dir = seed_copy.parent
    (track_dir / "track.yaml").write_text("title: T\nlessons: [what-is-attention, ghost]\n")
    with pytest.raises(LessonError, match="ghost"):
        load_track(track_dir)
    (track_dir / "track.yaml").write_text("title: T\nlessons: [what-is-attention]\n")
    assert load_track(track_dir).lesson_ids == ("expert/what-is-attention",)
    (track_dir / "other").mkdir()
    (track_dir / "other" / "lesson.md").write_text("---\ntitle: x\n---\nbody\n")
    with pytest.raises(LessonError, match="does not list other"):
        load_catalog(track_dir.parent)


def test_missing_catalog_root_is_a_lesson_error(tmp_path):
    with pytest.raises(LessonError, match="does not exist"):
        load_catalog(tmp_path / "nope")


def test_a_typo_of_cases_is_named_with_a_did_you_mean(seed_copy):
    _edit(seed_copy / "exercise.yaml", "points: 5", "points: 5\ncase: []")
    with pytest.raises(LessonError, match="did you mean 'cases'"):
        load_lesson(seed_copy)


def test_with_cases_expected_output_txt_is_optional(seed_copy):
    (seed_copy / "expected_output.txt").unlink()
    _edit(seed_copy / "exercise.yaml", "points: 5", 'points: 5\ncases: [{name: a, output: "1"}]')
    exercise = load_lesson(seed_copy).exercise
    assert exercise is not None and exercise.has_cases
    assert exercise.expected_output == "" and [case.output for case in exercise.cases] == ["1"]


def test_the_seed_lesson_has_its_one_implicit_case(catalog):
    lesson = catalog.lesson("expert/what-is-attention")
    assert lesson is not None and lesson.exercise is not None
    assert not lesson.exercise.has_cases
    [case] = lesson.exercise.cases
    assert (case.name, case.weight, case.hidden, case.is_value) == (
        "expected output",
        1.0,
        False,
        False,
    )
    assert case.output == SEED_OUTPUT.decode() == lesson.exercise.expected_output
    assert (case.stdin, case.argv, case.compare) == ("", (), CompareMode.EXACT)


def test_the_longest_grading_is_every_case_one_after_another(catalog):
    # the worker's task time limit is the lease plus this: a grading of many cases is no hang,
    # nor a practice run of every case and the student's own input
    longest = max(
        (len(lesson.exercise.cases) + 1) * (lesson.exercise.limits.time_s + 1.0)
        for lesson in catalog
        if lesson.exercise is not None
    )
    assert catalog.longest_grading_s() == longest
    scaled = catalog.lesson("expert/scaled-dot-product").exercise
    assert longest >= len(scaled.cases) * scaled.limits.time_s > scaled.limits.time_s


def test_an_exercise_reads_stdin_when_a_visible_case_gives_one_or_it_says_so(catalog, seed_copy):
    # the page's input box for a practice run: positional-encoding's cases read "n d"
    assert catalog.lesson("expert/positional-encoding").exercise.reads_stdin
    assert not catalog.lesson("expert/scaled-dot-product").exercise.reads_stdin
    assert not load_lesson(seed_copy).exercise.reads_stdin
    _edit(seed_copy / "exercise.yaml", "points: 5", "points: 5\nstdin: true")
    assert load_lesson(seed_copy).exercise.reads_stdin  # said so: the program reads its input
    hidden = 'cases: [{name: a, output: "1"}, {name: b, stdin: "2", output: "2", hidden: true}]'
    _edit(seed_copy / "exercise.yaml", "stdin: true", hidden)
    (seed_copy / "expected_output.txt").unlink()
    assert not load_lesson(seed_copy).exercise.reads_stdin  # a hidden case's stdin tells nothing
