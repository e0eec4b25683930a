"""A score's comment in a real browser (issue 29, point 5): the student's lesson page shows,
beside the score, the sentence the LMS received, in the student's language, and the teacher's
student page the same one; both pass the accessibility audit.

The tool beside the demo LMS with a real redis-server and a real `codeblanks worker`, on
tests/workers/test_score_comments.py's lesson. With `--screenshots DIR` the lesson's score
(score-comment.png) goes to DIR; by default to a temporary directory.
"""

import pytest

from testkit.lms import lms_with_a_worker
from testkit.waits import wait_for
from tests.service.web import a11y
from tests.service.web import test_pages_browser as pages
from tests.service.web.student.test_case_verdicts import SECRETS
from tests.service.web.student.test_case_verdicts_browser import PARTLY
from tests.service.web.test_a11y_browser import answer, settle, submit, tool_frame
from tests.service.web.test_pages_browser import expect_text, launch
from tests.workers.test_score_comments import LESSON, write_catalog

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

chromium = pages.chromium  # Debian's Chromium, through Playwright

TURKISH = (
    "5 testten 2 tanesi geçti. 'two lines' testi geçemedi. Gizli 'secret' testi geçemedi. "
    "Gizli 'secret value' testi geçemedi. 2 sorudan 1 tanesi doğru. 1 soru cevaplanmadı."
)
ENGLISH = (
    "2 of 5 cases passed. Case 'two lines' failed. Hidden case 'secret' failed. "
    "Hidden case 'secret value' failed. 1 of 2 questions right. 1 question not answered."
)


@pytest.fixture
def lms(tmp_path, redis_server):
    """The tool and the demo LMS on the test's catalog, with a real Celery worker."""
    root = write_catalog(tmp_path / "lessons")
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", lessons_dir=root) as found:
        yield found


def failures(frame, name):
    return a11y.audit(frame, name).failures()


def test_the_lesson_page_and_the_teachers_say_what_the_lms_holds(lms, chromium, screenshots):
    lms.link(lesson=LESSON, title="Shout", score=8.0)
    page, _, watch = launch(chromium, lms, "Ali Student", lang="tr")
    frame = tool_frame(page)
    frame.locator("#lesson h1").wait_for()
    answer(frame, "weighted-average", blank="@")
    submit(page, frame, PARTLY)
    frame.locator("#verdict").wait_for()
    comment = frame.locator("#score .score-comment")
    expect_text(comment, TURKISH)
    expect_text(frame.locator("#score"), "8 puandan 4 puan")

    def in_the_lms():
        held = [s for s in lms.platform.scores(user="ali") if s.applied]
        return held[-1].body.get("comment") if held else None

    wait_for(lambda: in_the_lms() == TURKISH, "the same sentence in the LMS", 60)
    frame.goto(frame.url)  # as the page comes back from the server
    settle(frame)
    assert " ".join(comment.inner_text().split()) == TURKISH
    assert [s for s in SECRETS.values() if s in frame.content()] == []
    assert failures(frame, "lesson, score with its comment") == []
    frame.locator("#score").screenshot(path=str(screenshots / "score-comment.png"))

    teacher, _, teacher_watch = launch(chromium, lms, "Ada Teacher")
    tframe = tool_frame(teacher)
    tframe.get_by_role("link", name="Course gradebook").first.click()
    tframe.get_by_role("heading", name="Gradebook").wait_for()
    tframe.locator("table.gradebook tbody tr", has_text="Ali Student").locator("a").first.click()
    tframe.get_by_role("heading", name="Ali Student").wait_for()
    expect_text(tframe.locator("p.score"), "Score: 4 of 8 points")
    expect_text(tframe.locator("p.score .score-comment"), ENGLISH)  # the teacher's language
    settle(tframe)
    assert failures(tframe, "teacher: a student's work, score with its comment") == []

    assert lms.worker.errors() == []
    assert watch.errors == [] and teacher_watch.errors == []
