"""A student who answers fast, as Moodle met one: three answers and a code submission within
one second, then the time until the demo LMS's gradebook shows the final score.

Used by tests/service/web/test_lms_race_browser.py and by benchmarks/lms_latency.py, both against
a real `codeblanks dev` (gunicorn, a Celery worker, the sandbox, the demo LMS) in Chromium.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from testkit.factories import SEED
from testkit.servers import REPO

LESSON = "What is attention?"
FINAL = "8"  # every question right and the exercise passed: 8 of 8 points
SOLUTION = (REPO / "lessons" / SEED / "solution" / "model.py").read_text()
PAIRS = {
    "score": "Similarity measure",
    "softmax": "Turns into weights",
    "value": "Carried information",
    "equal scores": "Plain mean",
}


@dataclass(frozen=True)
class Race:
    """One try: how long the four clicks took, and the wait for the final score after them."""

    clicks_s: float
    final_after_s: float | None  # None: not shown before the deadline
    last_seen: str | None  # the score the gradebook showed last


def score_of(page: Any, student: str) -> str | None:
    """Return the student's points for the lesson as the demo gradebook shows them, or None."""
    grid = page.locator("main table").first
    if grid.count() == 0:
        return None
    headers = grid.locator("tr").first.locator("th").all_inner_texts()
    column = next((i for i, h in enumerate(headers) if h.startswith(LESSON)), None)
    if column is None:
        return None
    name = re.compile(rf"^{re.escape(student)}$")
    row = grid.locator("tr", has=page.locator("td", has_text=name))
    cell = row.locator("td").nth(column).locator("strong")
    return str(cell.inner_text()).strip() if cell.count() else None


def race(context: Any, base: str, student: str, deadline_s: float) -> Race:
    """Launch the seed lesson as `student` ("Ali Student"), make every answer ready, then click
    Check three times and Submit at once; poll the demo gradebook until it shows FINAL."""
    page = context.new_page()
    page.goto(base + "/demo/")
    row = page.locator("tr", has_text=LESSON)
    row.get_by_role("link", name=f"Launch as {student}").click()
    frame = page.frame_locator("iframe.tool")
    frame.get_by_role("heading", name=LESSON, level=1).wait_for()

    # everything ready, nothing sent yet
    choice = frame.locator("#q-rnn-advantage")
    choice.get_by_label("It relates distant positions").check()
    blank = frame.locator("#q-weighted-average")
    blank.get_by_label("The missing part of").fill("@")
    match = frame.locator("#q-concepts")
    for term, meaning in PAIRS.items():
        match.get_by_label(term, exact=True).select_option(meaning)
    editor = frame.locator("#exercise .cm-content")
    editor.click()
    editor.press("Control+a")
    page.keyboard.insert_text(SOLUTION)
    buttons = [
        choice.get_by_role("button", name="Check answer"),
        blank.get_by_role("button", name="Check answer"),
        match.get_by_role("button", name="Check answer"),
        frame.get_by_role("button", name="Submit"),
    ]
    for button in buttons:
        button.wait_for()

    started = time.monotonic()
    for button in buttons:
        button.click(no_wait_after=True)
    last_click = time.monotonic()

    book = context.new_page()
    seen: str | None = None
    while time.monotonic() - last_click < deadline_s:
        book.goto(base + "/demo/gradebook")
        seen = score_of(book, student)
        if seen == FINAL:
            found = Race(last_click - started, time.monotonic() - last_click, seen)
            break
        time.sleep(0.05)
    else:
        found = Race(last_click - started, None, seen)
    book.close()
    page.close()
    return found
