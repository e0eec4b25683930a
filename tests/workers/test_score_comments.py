"""A score's comment through the whole path (issue 29, point 5): a Turkish launch from the
demo LMS, answers and a submission through the API, a real Celery worker grading in the
sandbox and posting by AGS, and the demo LMS's recorded score, result service and gradebook.

The lesson is tests/service/web/student/test_case_verdicts.py's "shout" (five cases, two of
them hidden) with two questions; PARTLY passes "shout" and "length" and fails the rest.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests
import yaml
from markupsafe import escape

from demo import lms_ags
from demo.browser import run_launch
from service.store.models import User
from testkit.lms import Lms, lms_with_a_worker
from testkit.waits import wait_for
from tests.conftest import SEED
from tests.service.web.student.test_case_verdicts import HIDDEN, SECRETS, VISIBLE, write_lesson
from tests.service.web.student.test_case_verdicts_browser import PARTLY

pytestmark = [pytest.mark.celery, pytest.mark.slow]

LESSON = "comments/shout"
TURKISH = (
    "5 testten 2 tanesi geçti. 'two lines' testi geçemedi. Gizli 'secret' testi geçemedi. "
    "Gizli 'secret value' testi geçemedi. 2 sorudan 1 tanesi doğru."
)
ENGLISH = (
    "2 of 5 cases passed. Case 'two lines' failed. Hidden case 'secret' failed. "
    "Hidden case 'secret value' failed. 0 of 2 questions right. 2 questions not answered."
)


def write_catalog(root: Path) -> Path:
    """Write the "shout" lesson with the seed lesson's first two questions; return the root."""
    track = root / "comments"
    track.mkdir(parents=True)
    (track / "track.yaml").write_text("title: Comments\nlessons:\n  - shout\n")
    write_lesson(track / "shout", VISIBLE + HIDDEN)
    questions = yaml.safe_load((SEED / "questions.yaml").read_text())[:2]
    (track / "shout" / "questions.yaml").write_text(yaml.safe_dump(questions, sort_keys=False))
    seed = root / "seed"  # the catalog keeps the seed lesson, as the app's checks expect
    seed.mkdir()
    (seed / "track.yaml").write_text("title: Seed\nlessons:\n  - what-is-attention\n")
    shutil.copytree(SEED, seed / "what-is-attention")
    return root


def launched(browser: requests.Session, lms: Lms, who: str, link_id: str, locale: str):
    """Launch `who` in `locale`; return their API's base URL and session header."""
    trace = run_launch(browser, lms.platform.launch(who, link_id, locale))
    location = urlsplit(trace.launch.headers["Location"])
    placement_id = int(location.path.rsplit("/", 1)[1])
    headers = {"X-CodeBlanks-Session": dict(parse_qsl(location.query))["s"]}
    return f"{lms.tool_url}/api/placements/{placement_id}", headers


def test_the_lms_receives_why_in_the_students_language(tmp_path, redis_server):
    root = write_catalog(tmp_path / "lessons")
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", pool=1, lessons_dir=root) as lms,
        requests.Session() as ali_browser,
        requests.Session() as berna_browser,
    ):
        link = lms.link(lesson=LESSON, title="Shout", score=8.0)
        ali, ali_headers = launched(ali_browser, lms, "ali", link.id, "tr")
        berna, berna_headers = launched(berna_browser, lms, "berna", link.id, "en")
        for question, given in (("weighted-average", "@"), ("rnn-advantage", 0)):
            answered = ali_browser.post(
                f"{ali}/answers", json={"question_id": question, "answer": given},
                headers=ali_headers,
            )  # fmt: skip
            assert answered.status_code == 201, answered.text
        for browser, api, headers in ((ali_browser, ali, ali_headers),
                                      (berna_browser, berna, berna_headers)):  # fmt: skip
            sent = browser.post(f"{api}/submissions", json={"source": PARTLY}, headers=headers)
            assert sent.status_code == 202, sent.text

        def held(who: str) -> dict:
            sub = lms.platform.user_sub(who)
            found = [s.body for (user, _), s in lms.platform.gradebook().items() if user == sub]
            return found[0] if found else {}

        # the score of 2 cases' weight of 6 is 3 of 6 points, and 1 of 2 questions: 4 of 8
        wait_for(lambda: held("ali").get("comment") == TURKISH, "Ali's comment in Turkish", 120)
        wait_for(lambda: held("berna").get("comment") == ENGLISH, "Berna's in English", 120)
        assert (held("ali")["scoreGiven"], held("ali")["scoreMaximum"]) == (4.0, 8.0)

        # what the LMS's result service answers, and its gradebook page, say the same
        item = lms.platform.records.lineitem(next(iter(lms.platform.gradebook()))[1])
        results = lms_ags.results(lms.platform, item, lms.platform.user_sub("ali"))
        assert [r.get("comment") for r in results] == [TURKISH]
        page = requests.get(f"{lms.demo.config.base_url}/gradebook", timeout=30).text
        for comment in (TURKISH, ENGLISH):  # in the student's cell, as Moodle shows feedback
            assert f'<span class="muted">Feedback:</span> {escape(comment)}</div>' in page

        # nothing a hidden case holds reached the LMS, in any score it received
        every = " ".join(str(score.body.get("comment", "")) for score in lms.platform.scores())
        assert [secret for secret in SECRETS.values() if secret in every] == []
        # the student's language, as the store keeps it from the launch, for the worker
        with lms.store.session() as session:
            kept = {user.sub: user.locale for user in session.query(User)}
        assert kept[lms.platform.user_sub("ali")] == "tr"
        assert kept[lms.platform.user_sub("berna")] == "en"
        assert lms.worker is not None and lms.worker.errors() == []
