"""Figures in the domain: which a verdict keeps, which case names them, what a note says."""

import pytest

from core.cases import Case, judge_case
from core.compare import CompareMode, Tolerance
from core.figures import MAX_FIGURES, Dropped, DropReason, Figure, distinct, drop_note, name_shown
from core.messages import verbatim
from core.runs import Limits, RunOutcome, RunResult, RunStatus, result_from, result_record
from core.verdicts import Verdict

TOLERANCE = Tolerance(rel=1e-6, abs=1e-3)


def case(name: str, hidden: bool = False, **fields) -> Case:
    return Case(name, 1.0, hidden, CompareMode.EXACT, TOLERANCE, output="ok\n", **fields)


def figure(n: int) -> Figure:
    return Figure(f"png {n}".encode(), 640, 480, f"figure {n}")


def ran(*figures: Figure, dropped: tuple[Dropped, ...] = ()) -> RunResult:
    return RunResult(RunOutcome.EXITED, b"ok\n", exit_code=0, figures=figures, dropped=dropped)


@pytest.mark.parametrize("hidden", [False, True])
def test_a_case_asks_for_its_figures_unless_it_is_hidden(hidden):
    files = {"main.py": b"print('ok')"}
    run_case = case("run", hidden)
    value_case = Case("value", 1.0, hidden, CompareMode.EXACT, TOLERANCE, expr="1", expected=1)
    for each in (run_case, value_case):
        assert each.request(files, "main.py", Limits()).figures is not hidden


def test_a_visible_case_keeps_its_figures_and_says_which_it_dropped():
    lost = (Dropped("big.png", DropReason.TOO_LARGE),)
    verdict = judge_case(case("shown"), ran(figure(1), dropped=lost), Limits())
    assert verdict.status is RunStatus.PASSED
    assert verdict.figures == (figure(1),)
    assert verdict.feedback == "The figure 'big.png' was not kept: it is larger than 1 MiB."
    assert verdict.summary() == (
        "Case 'shown' passed. The figure 'big.png' was not kept: it is larger than 1 MiB."
    )


def test_a_hidden_case_keeps_no_figure_and_no_note_of_one():
    lost = (Dropped("big.png", DropReason.TOO_LARGE),)
    verdict = judge_case(case("secret", hidden=True), ran(figure(1), dropped=lost), Limits())
    assert (verdict.figures, verdict.feedback) == ((), "")


def test_a_verdict_s_figures_are_its_visible_cases_each_picture_once_four_at_most():
    cases = (
        judge_case(case("a"), ran(figure(1), figure(2)), Limits()),
        judge_case(case("hidden", hidden=True), ran(figure(9)), Limits()),
        judge_case(case("b"), ran(figure(2), figure(3), figure(4), figure(5)), Limits()),
    )
    verdict = Verdict(RunStatus.PASSED, 10, verbatim(""), cases)
    assert [(name, f.alt) for name, f in verdict.figures()] == [
        ("a", "figure 1"),
        ("a", "figure 2"),
        ("b", "figure 3"),
        ("b", "figure 4"),
    ][:MAX_FIGURES]


def test_distinct_stops_at_the_bound():
    many = [("c", figure(n)) for n in range(10)] + [("d", figure(0))]
    assert [f.alt for _, f in distinct(many)] == [f"figure {n}" for n in range(MAX_FIGURES)]


def test_every_reason_is_worded_with_the_name_it_came_with():
    for reason in DropReason:
        text = str(drop_note(Dropped("x.png", reason)))
        assert text.startswith("The figure 'x.png' was not kept:"), text


def test_a_name_from_the_sandbox_is_shown_printable_and_short():
    assert name_shown("a\nb\x00c.png") == "a?b?c.png"
    assert name_shown("z" * 200) == "z" * 59 + "…"


def test_a_paused_result_keeps_its_figures():
    result = ran(figure(1), dropped=(Dropped("q.png", DropReason.NOT_PNG),))
    assert result_from(result_record(result)) == result
    assert result_from({**result_record(result)} | {"figures": [], "dropped": []}).figures == ()
    older = {k: v for k, v in result_record(result).items() if k not in ("figures", "dropped")}
    assert result_from(older).figures == ()  # one paused before figures existed
