"""A student's attempts in a real browser (issue 30, point 5): two submissions graded by a real
worker, each shown in place from the attempts list, the change between them read, and the
first put back in the editor with the keyboard alone; the draft keeps it across a reload, and
the page passes the accessibility audit with an attempt open.

The tool beside the demo LMS, a real redis-server and a real `codeblanks worker` on the
configured sandbox, on tests/service/web/student/test_case_verdicts.py's catalog (an exercise
with hidden cases). With `--screenshots DIR` the open attempt's screenshot (attempts.png) goes
to DIR; by default to a temporary directory.
"""

from urllib.parse import urljoin

import pytest
from sqlalchemy import select

from service.store.models import Draft
from testkit.lms import lms_with_a_worker
from tests.service.web import a11y
from tests.service.web import test_pages_browser as pages
from tests.service.web.student.test_case_verdicts import CASES, SECRETS, SOLUTION, write_catalog
from tests.service.web.student.test_case_verdicts_browser import PARTLY
from tests.service.web.test_a11y_browser import tool_frame
from tests.service.web.test_pages_browser import (
    active,
    expect_text,
    launch,
    no_sideways_scroll,
    submit_code,
)

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

chromium = pages.chromium  # Debian's Chromium, through Playwright


@pytest.fixture
def lms(tmp_path, redis_server):
    """The tool and the demo LMS on the test's catalog, with a real Celery worker."""
    lessons = write_catalog(tmp_path / "lessons")
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", lessons_dir=lessons) as found:
        yield found


def tab_to(page, frame, wanted: str, key: str = "Tab", most: int = 60) -> None:
    """Press Tab (or `key`) until `wanted` (as test_pages_browser.active names it) has the focus."""
    seen = []
    for _ in range(most):
        page.keyboard.press(key)
        seen.append(active(frame))
        if seen[-1] == wanted:
            return
    raise AssertionError(f"{wanted!r} never took the focus; it went to {seen}")


def editor_text(frame) -> str:
    return frame.locator("#exercise .cm-content").inner_text()


def test_the_first_attempt_goes_back_into_the_editor_by_keyboard(lms, chromium, screenshots):
    lms.link(lesson=CASES, title="Shout", score=6.0)
    page, frame, watch = launch(chromium, lms, "Ali Student")
    frame.locator("#exercise .cm-content").wait_for()
    submit_code(page, frame, PARTLY)
    expect_text(frame.locator("#verdict h3"), "Failed")
    expect_text(frame.locator("#verdict"), "2 of 5 cases passed")
    # the sample solution: right on every case here but the hidden "secret" (stdin it shouts)
    submit_code(page, frame, SOLUTION)
    expect_text(frame.locator("#verdict"), "4 of 5 cases passed")
    frame.locator("#verdict:focus").wait_for()
    rows = frame.locator("table.attempts tbody tr")
    assert rows.count() == 2
    expect_text(rows.first, "83%")

    # from the verdict, Tab to the newest attempt's link; Enter shows it in place, focused
    tab_to(page, frame, "A:Show attempt 2")
    page.keyboard.press("Enter")
    shown = frame.locator("#attempt-shown")
    expect_text(shown.locator("h4"), "Attempt 2")
    focused = frame.locator(":focus")
    assert focused.evaluate("e => e.tagName") == "H4" and "Attempt 2" in focused.inner_text()
    expect_text(shown, "Changes from attempt 1")
    diff = shown.locator("table.code-diff")
    added = [" ".join(t.split()) for t in diff.locator("tr.added").all_inner_texts()]
    removed = [" ".join(t.split()) for t in diff.locator("tr.removed").all_inner_texts()]
    # each line says what happened to it in words, for a screen reader, beside its sign
    assert added == [
        '9 + Added: return text.replace("EXPR-c63", "VALUE-d74")',
        '13 + Added: print(sys.stdin.read().upper(), end="")',
    ]
    assert removed == [
        "9 − Removed: return text",
        '13 − Removed: print(sys.stdin.read().upper().replace("B", "X"), end="")',
    ]
    expect_text(shown, "Lines added: 2; removed: 2.")
    expect_text(shown, "✘ Output differs — score 83%")
    expect_text(shown, "✔ secret value — Passed (hidden case)")

    # back to the list, the first attempt, and its "Put back in the editor", keyboard only
    tab_to(page, frame, "A:Show attempt 1", key="Shift+Tab")
    page.keyboard.press("Enter")
    expect_text(shown.locator("h4"), "Attempt 1")
    expect_text(shown, "Your first attempt: there is none before it to compare with.")
    expect_text(shown, "✘ secret — Failed (hidden case)")
    assert [s for s in SECRETS.values() if s in shown.inner_html()] == []
    assert "upper().replace" not in editor_text(frame)
    tab_to(page, frame, "BUTTON:Put back in the editor")
    failures = a11y.audit(tool_frame(page), "lesson, an attempt shown in place").failures()
    assert failures == [], "\n".join(failures)
    page.keyboard.press("Enter")
    assert active(frame) == "editor"
    assert 'upper().replace("B", "X")' in editor_text(frame)
    expect_text(shown.locator(".restore-status"), "The code of attempt 1 is in the editor")
    expect_text(frame.locator("#draft-status"), "Draft saved")
    with lms.store.session() as session:
        assert session.scalar(select(Draft.source)) == PARTLY
    assert frame.locator("table.attempts tbody tr").count() == 2  # nothing was submitted

    # a reload keeps it: the draft
    lesson_url = frame.locator("#lesson").evaluate("() => window.location.href")
    alone = page.context.new_page()
    alone.set_viewport_size({"width": 900, "height": 1100})
    alone.goto(lesson_url)
    alone.locator("#exercise .cm-content").wait_for()
    assert 'upper().replace("B", "X")' in alone.locator("#exercise .cm-content").inner_text()
    alone.get_by_role("link", name="Show attempt 2").click()
    expect_text(alone.locator("#attempt-shown h4"), "Attempt 2")
    alone.locator("#attempt-shown").screenshot(path=str(screenshots / "attempts.png"))

    # the attempt's own page (the link without the script), at 320 px, passes the audit too
    href = alone.get_by_role("link", name="Show attempt 2").get_attribute("href")
    alone.set_viewport_size({"width": 320, "height": 800})
    alone.goto(urljoin(lesson_url, href))
    expect_text(alone.locator("h2"), "Attempt 2")
    assert no_sideways_scroll(alone), "the attempt's page scrolls sideways at 320 px"
    failures = a11y.audit(alone, "an attempt's own page").failures()
    assert failures == [], "\n".join(failures)
    alone.get_by_role("link", name="All your attempts").click()
    expect_text(alone.locator("table.attempts"), "Show attempt 1")
    failures = a11y.audit(alone, "the attempts' own page").failures()
    assert failures == [], "\n".join(failures)

    assert lms.worker.errors() == []
    assert watch.errors == []
    assert watch.outside() == [], f"requests left 127.0.0.1: {watch.outside()}"
