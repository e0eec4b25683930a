"""Every page a student or teacher sees passes axe-core's audit, in English and in Turkish.

The pages run as in production: inside the demo LMS's iframe, launched from its course page,
with a real worker grading. Each page is audited in the states a user meets it in: the lesson
before and after a verdict, each question type answered right and wrong, the teacher's pages,
the settings with errors, the regrade preview, both pickers, and an exercise with cases before
and after its verdict, with the teacher's pass rates and case view. The audit counts every
violation by impact; a serious or critical one fails the test. `pytest -s` prints the table, and
the audits are written as JSON to $A11Y_REPORT, or to a11y.json in pytest's temporary directory.

The lesson page also works with the keyboard alone: a student tabs from the skip link through
the questions and the editor to a verdict, which takes the focus, while #run-status says what
happens.
"""

import os
from pathlib import Path

import pytest

from testkit.lms import lms_with_a_worker
from tests.service.web import test_pages_browser as pages
from tests.service.web.a11y import Ledger, assert_accessible
from tests.service.web.student.test_case_verdicts import CASES, write_catalog
from tests.service.web.student.test_case_verdicts_browser import PARTLY
from tests.service.web.test_pages_browser import FAILING, SOLUTION, TIMEOUT_MS, expect_text, launch

# the end-to-end browser tests' fixtures: the tool beside the demo LMS with a worker, Chromium
lms, chromium = pages.lms, pages.chromium

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

RIGHT = {"choice": "1", "blank": "@"}
MATCH = {
    "score": "Similarity measure",
    "softmax": "Turns into weights",
    "value": "Carried information",
    "equal scores": "Plain mean",
}
WRONG_MATCH = dict(zip(MATCH, [*list(MATCH.values())[1:], list(MATCH.values())[0]], strict=True))


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """The audits of this module's tests, printed and written to a11y.json at the end."""
    found = Ledger()
    yield found
    report = Path(os.environ.get("A11Y_REPORT") or tmp_path_factory.getbasetemp() / "a11y.json")
    found.write(report)
    print(f"\n{found.table()}\n(every violation: {report})")


def tool_frame(page):
    """The tool's frame inside the demo LMS's page (the same frame across its navigations)."""
    return page.locator("iframe.tool").element_handle().content_frame()


def settle(frame, selector="main"):
    """Wait for the page's main content (and any open request) before it is audited."""
    frame.wait_for_selector(selector, state="visible")
    frame.wait_for_load_state("load")


def follow(frame, locator):
    """Click a link or a form's button and wait for the frame's next page."""
    with frame.expect_navigation():
        locator.click()


def answer(frame, question, choice=None, blank=None, match=None):
    """Answer a question through its form and wait for its feedback."""
    form = frame.locator(f"#q-{question}")
    if choice is not None:
        form.locator(f"input[value='{choice}']").check()
    if blank is not None:
        form.locator("input[name=answer]").fill(blank)
    for term, meaning in (match or {}).items():
        form.locator(f"select[data-term='{term}']").select_option(meaning)
    form.locator("button[type=submit]").click()
    form.locator("[data-feedback] .explanation").wait_for()


def submit(page, frame, source):
    editor = frame.locator("#exercise .cm-content")
    editor.click()
    editor.press("Control+a")
    page.keyboard.insert_text(source)
    frame.locator("#submit").click()


def auditor(ledger, locale):
    """Return audit(frame, name): audit a settled page, first checking it is in `locale`."""

    def audit(frame, name):
        settle(frame)
        assert frame.evaluate("document.documentElement.lang") == locale, name
        return ledger.audit(frame, f"[{locale}] {name}")

    return audit


@pytest.mark.parametrize("locale", ["en", "tr"])
def test_every_page_a_student_or_teacher_sees_passes_the_audit(lms, chromium, ledger, locale):
    lms.link()  # "What is attention?"
    lms.link(lesson=None, title="Pick a lesson")

    audit = auditor(ledger, locale)

    # ---- a student who answers right ----------------------------------------------------------
    page, _, _ = launch(chromium, lms, "Ali Student", locale)
    frame = tool_frame(page)
    frame.locator("#lesson h1").wait_for()
    audit(frame, "lesson, nothing answered")
    answer(frame, "rnn-advantage", choice=RIGHT["choice"])
    audit(frame, "lesson, choice answered right")
    answer(frame, "weighted-average", blank=RIGHT["blank"])
    audit(frame, "lesson, blank answered right")
    answer(frame, "concepts", match=MATCH)
    audit(frame, "lesson, match answered right")
    submit(page, frame, FAILING)
    expect_text(frame.locator("#verdict"), "not yet")
    audit(frame, "lesson, verdict: output differs")
    submit(page, frame, SOLUTION)
    frame.locator("#verdict.passed").wait_for()
    audit(frame, "lesson, verdict: passed")
    frame.goto(frame.url)  # as the page comes back from the server
    audit(frame, "lesson, reloaded after its verdict")
    follow(frame, frame.locator(".bar a").first)
    audit(frame, "course: the student's lessons")

    # ---- a student who answers wrong, and one whose link has no lesson yet --------------------
    page, _, _ = launch(chromium, lms, "Berna Student", locale)
    frame = tool_frame(page)
    frame.locator("#lesson h1").wait_for()
    answer(frame, "rnn-advantage", choice="0")
    audit(frame, "lesson, choice answered wrong")
    answer(frame, "weighted-average", blank="+")
    audit(frame, "lesson, blank answered wrong")
    answer(frame, "concepts", match=WRONG_MATCH)
    audit(frame, "lesson, match answered wrong")
    page.goto(f"{lms.demo.url}/demo/?lang={locale}")
    page.locator("tr", has_text="Pick a lesson").get_by_role(
        "link", name="Launch as Berna Student"
    ).click()
    frame = tool_frame(page)
    frame.locator("main .notice h1").wait_for()
    audit(frame, "lesson not set up yet (student)")

    # ---- the teacher ----------------------------------------------------------------------------
    page, _, _ = launch(chromium, lms, "Ada Teacher", locale)
    frame = tool_frame(page)
    frame.locator("#settings").wait_for()
    audit(frame, "teacher: the lesson (placement) with its settings")
    frame.locator("#settings input#max_attempts").fill("0")
    follow(frame, frame.locator("#settings button[type=submit]"))
    frame.locator("#settings [role=alert]").wait_for()
    audit(frame, "teacher: settings with errors")
    follow(frame, frame.locator("form[action*='/regrade?'] button[type=submit]"))
    frame.locator("#send-scores:not([disabled])").wait_for(timeout=TIMEOUT_MS)
    audit(frame, "teacher: regrade preview")
    follow(frame, frame.locator(".bar a").first)
    follow(frame, frame.locator("table.gradebook tbody th a").first)
    audit(frame, "teacher: a student's submissions")
    page.goto(f"{lms.demo.url}/demo/?lang={locale}")
    page.get_by_role("link", name="Launch as Ada Teacher").first.click()
    frame = tool_frame(page)
    frame.locator("#settings").wait_for()
    follow(frame, frame.locator(".bar a").first)
    frame.locator("table.gradebook").wait_for()
    audit(frame, "teacher: the course gradebook")

    # ---- the two pickers --------------------------------------------------------------------
    page.goto(f"{lms.demo.url}/demo/?lang={locale}")
    page.locator("tr", has_text="Pick a lesson").get_by_role(
        "link", name="Launch as Ada Teacher"
    ).click()
    frame = tool_frame(page)
    frame.locator("form.picker").wait_for()
    audit(frame, "resource-link picker")
    page.goto(f"{lms.demo.url}/demo/?lang={locale}")
    page.get_by_role("link", name="Add content (deep linking) as Ada Teacher").click()
    frame = tool_frame(page)
    frame.locator("form.picker").wait_for()
    audit(frame, "deep-linking picker")

    # ---- pages seen without a launch: the browser's language decides ------------------------
    context = chromium.new_context(locale="tr-TR" if locale == "tr" else "en-US")
    context.set_default_timeout(TIMEOUT_MS)
    alone = context.new_page()
    for path, name in [
        ("/", "home page"),
        ("/no/such/page", "error: not found"),
        ("/lessons/1", "error: not signed in"),
        ("/lti/login?iss=https%3A%2F%2Funknown.example&login_hint=x&target_link_uri=x",
         "error: a launch refused"),
    ]:  # fmt: skip
        alone.goto(lms.tool_url + path)
        audit(alone, name)
    context.close()

    ledger.check()


@pytest.fixture
def cased_lms(tmp_path, redis_server):
    """The tool and the demo LMS on a catalog with an exercise of cases, and a worker."""
    lessons = write_catalog(tmp_path / "lessons")
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", lessons_dir=lessons) as found:
        yield found


@pytest.mark.parametrize("locale", ["en", "tr"])
def test_an_exercise_with_cases_passes_the_audit(cased_lms, chromium, ledger, locale):
    cased_lms.link(lesson=CASES, title="Shout", score=6.0)

    audit = auditor(ledger, locale)

    page, _, _ = launch(chromium, cased_lms, "Ali Student", locale)
    frame = tool_frame(page)
    frame.locator("#exercise ol.checks").wait_for()
    frame.locator("#exercise .cm-content").wait_for()
    audit(frame, "cases: the exercise, before a verdict")
    submit(page, frame, PARTLY)
    frame.locator("#verdict .cases").wait_for()
    audit(frame, "cases: a verdict, partly passed")

    page, _, _ = launch(chromium, cased_lms, "Ada Teacher", locale)
    frame = tool_frame(page)
    frame.locator("#settings").wait_for()
    audit(frame, "cases: the teacher's lesson with case pass rates")
    follow(frame, frame.locator("table.gradebook tbody th a").first)
    audit(frame, "cases: the teacher's view of a student's cases")

    ledger.check()


# ---- the keyboard alone -------------------------------------------------------------------------

FOCUSED = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return "";
  if (e.closest(".cm-editor")) return "editor";
  const where = e.closest("section.question, .toc, #submit-form");
  return [where ? where.id || where.className : "", e.id || e.className || "", e.tagName,
          e.getAttribute("type") || ""].join("|");
}"""
WATCH = """() => {
  window.statuses = [];
  window.pointers = 0;
  const status = document.getElementById("run-status");
  new MutationObserver(() => window.statuses.push(status.textContent.trim()))
    .observe(status, {childList: true, characterData: true, subtree: true});
  for (const kind of ["pointerdown", "mousedown"]) {
    document.addEventListener(kind, () => { window.pointers += 1; }, true);
  }
}"""


def tab_to(page, frame, wanted, limit=60):
    """Press Tab until the focused element in the tool's frame is `wanted`; return the path."""
    path = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        path.append(frame.evaluate(FOCUSED))
        if wanted(path[-1]):
            return path
    raise AssertionError(f"Tab never reached the element; it went {path}")


def test_the_lesson_page_works_with_the_keyboard_alone(lms, chromium):
    lms.link()
    page, _, _ = launch(chromium, lms, "Ali Student")
    frame = tool_frame(page)
    frame.locator("#lesson h1").wait_for()
    frame.locator("#exercise .cm-content").wait_for()
    frame.evaluate(WATCH)
    assert frame.locator("#run-status").get_attribute("role") == "status"

    # from the LMS's page into the tool's frame: the skip link comes first, and goes to main
    path = tab_to(page, frame, lambda f: f != "")
    assert path[-1] == "|skip|A|", path
    page.keyboard.press("Enter")
    assert frame.evaluate("document.activeElement.id") == "main"
    assert tab_to(page, frame, lambda f: f != "")[-1].startswith("toc|"), "the toc is next"

    # choice: the arrow keys choose, Tab reaches its button, Enter checks it
    tab_to(page, frame, lambda f: f.startswith("q-rnn-advantage|") and f.endswith("radio"))
    page.keyboard.press("ArrowDown")  # the second option: the right one
    assert frame.locator("#q-rnn-advantage input[value='1']").is_checked()
    tab_to(page, frame, lambda f: f.startswith("q-rnn-advantage|") and "BUTTON" in f)
    page.keyboard.press("Enter")
    expect_text(frame.locator("#q-rnn-advantage [data-feedback] .ok"), "Correct.")
    # blank: type into it, then Space on its button
    tab_to(page, frame, lambda f: f.startswith("q-weighted-average|") and "INPUT" in f)
    page.keyboard.type("@")
    tab_to(page, frame, lambda f: f.startswith("q-weighted-average|") and "BUTTON" in f)
    page.keyboard.press("Space")
    expect_text(frame.locator("#q-weighted-average [data-feedback] .ok"), "Correct.")
    # match: each select takes its meaning by typing its first letters
    for index, meaning in enumerate(MATCH.values()):
        tab_to(page, frame, lambda f, i=index: f.startswith(f"q-concepts|q-concepts-{i}|SELECT"))
        page.keyboard.type(meaning[:5])
        assert frame.locator(f"#q-concepts-{index}").input_value() == meaning
    tab_to(page, frame, lambda f: f.startswith("q-concepts|") and "BUTTON" in f)
    page.keyboard.press("Enter")
    expect_text(frame.locator("#q-concepts [data-feedback] .ok"), "Correct.")
    expect_text(frame.locator("#score"), "3")

    # the editor: Tab indents inside it; Escape, then Tab, leaves it for Submit
    tab_to(page, frame, lambda f: f == "editor")
    page.keyboard.press("Control+a")
    page.keyboard.type("pass")
    page.keyboard.press("Tab")
    assert frame.evaluate(FOCUSED) == "editor", "Tab indents in the editor"
    assert frame.locator("#exercise .cm-content").inner_text() == "pass    "
    page.keyboard.press("Control+a")
    page.keyboard.type("print('not yet')")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert frame.evaluate(FOCUSED).startswith("submit-form|submit|BUTTON"), "Submit follows"
    page.keyboard.press("Enter")

    # the verdict takes the focus when it arrives; #run-status said what happened meanwhile
    frame.wait_for_function("() => document.activeElement.id === 'verdict'", timeout=TIMEOUT_MS)
    expect_text(frame.locator("#verdict"), "not yet")
    statuses = [s for s in frame.evaluate("window.statuses") if s]
    assert statuses[0] == "Sending your code…", statuses
    assert {"Waiting for a grader…", "Running your code…"} & set(statuses), statuses
    assert statuses[-1].startswith("Graded: ✘"), statuses
    assert frame.locator("#run-status").inner_text().startswith("Graded: ✘")
    assert frame.evaluate("window.pointers") == 0, "nothing was pointed at"


def test_the_audit_fails_a_page_with_serious_violations(chromium):
    page = chromium.new_page()
    try:
        page.set_content(
            '<!doctype html><html lang="en"><title>Bad</title><main>'
            '<img src="data:,"><p style="color:#bbb;background:#fff">faint</p>'
            "<button></button></main></html>"
        )
        with pytest.raises(AssertionError) as failed:
            assert_accessible(page, "a bad page")
    finally:
        page.close()
    for rule in ("image-alt (critical)", "button-name (critical)", "color-contrast (serious)"):
        assert rule in str(failed.value)
