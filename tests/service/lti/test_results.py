"""What the LMS holds, read back from the demo LMS's AGS result service (issue 29, point 7).

FINDINGS: after a teacher cleared a grade in Moodle, the tool still said "LMS: 8". Here the
demo LMS clears a grade as Moodle's reset does; a teacher's page asks for a read (at most one
per line item every few minutes, however many pages ask), a real Celery worker reads the
results over HTTP, the gradebook says "LMS has none", and the one resend brings it back.
The failing reads (503, 403, 404, a platform that granted no result.readonly scope, an LMS
away) are shown plainly and lose what no earlier read found.
"""

import html
import re
import threading
from dataclasses import replace
from datetime import timedelta
from urllib.parse import urljoin

import pytest
import requests
from sqlalchemy import select

from core.messages import from_json
from demo.browser import run_launch
from demo.tokens import RESULT_READONLY
from service.lti import results
from service.lti.ags import AgsPoster
from service.lti.results import ResultsRead, next_page, read_results
from service.store import result_reads
from service.store.models import Grade, LineItemRead, User, utcnow
from testkit.lms import answer, lms_with_a_worker, make_lms, signed_in_headers
from testkit.waits import wait_for
from tests.service.sessions import form_token, text_of
from workers.syncing import Synced, sync_pair

pytestmark = [pytest.mark.celery, pytest.mark.slow]

NO_SWEEP = {"sweep_interval_s": 3600, "queued_deadline_s": 3600, "lease_s": 60}


def teacher_url(lms, link):
    """Launch as the course's teacher; return the lesson's teacher page URL (with its `s`)."""
    with requests.Session() as browser:
        trace = run_launch(browser, lms.platform.launch("ada", link.id))
    return urljoin(trace.launch.url, trace.launch.headers["Location"])


def gradebook_url(lms, page_url):
    """Return the course gradebook's URL from a teacher page's link to it."""
    page = requests.get(page_url, timeout=30).text
    href = re.search(r'href="([^"]*/teach/courses/\d+\?[^"]*)"', page).group(1)
    return urljoin(page_url, html.unescape(href))


def lost(page):
    """Return what the page's cells say the LMS lost ("LMS has none", "LMS has 5, ...")."""
    return [html.unescape(found) for found in re.findall(r'<div class="lost">([^<]*)</div>', page)]


def read_state(lms, placement_id):
    with lms.store.session() as session:
        row = session.get(LineItemRead, placement_id)
        return None if row is None else (row.requested_at, row.read_at, row.error)


def problem(lms, placement_id):
    """Return why the line item's last read failed, in English; None if it did not."""
    error = read_state(lms, placement_id)[2]
    return None if error is None else str(from_json(error))


def grade_of(lms, placement_id):
    with lms.store.session() as session:
        row = session.scalar(select(Grade).where(Grade.placement_id == placement_id))
        return (None, None, None) if row is None else (row.lms_given, row.read_at, row.read_given)


def age(lms, placement_id, by):
    """Move the line item's last read and ask `by` into the past: minutes pass."""
    with lms.store.session() as session:
        row = session.get(LineItemRead, placement_id)
        row.requested_at -= by
        row.read_at -= by


def scored(lms, headers, placement_id, who="ali"):
    """Answer the first question right as `who`; wait until the LMS took the score."""
    with requests.Session() as browser:
        replied = answer(browser, lms, headers, placement_id, timeout=30)
    assert replied.status_code == 201, replied.text
    wait_for(lambda: grade_of(lms, placement_id)[0] is not None, "the score in the LMS", 60)


def test_a_grade_cleared_in_the_lms_is_shown_lost_and_resent(tmp_path, redis_server):
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", pool=1, **NO_SWEEP) as lms,
        requests.Session() as student,
    ):
        link = lms.link()
        headers, placement_id = signed_in_headers(student, lms, "ali", link)
        scored(lms, headers, placement_id)
        [item] = lms.platform.lineitems_of(link)

        # the teacher's lesson page asks for a read; the worker reads; the page shows it
        lesson_page = teacher_url(lms, link)
        assert "Checking the LMS" in text_of(requests.get(lesson_page, timeout=30).text)
        wait_for(lambda: (read_state(lms, placement_id) or (0, None))[1], "a read", 30)
        book_url = gradebook_url(lms, lesson_page)
        page = requests.get(book_url, timeout=30).text
        assert "LMS checked" in text_of(page) and lost(page) == []
        assert lms.platform.knobs.hits["results"] == 1
        # more pages at once, within the minutes: no more reads of the line item
        threads = [
            threading.Thread(target=requests.get, args=(book_url,), kwargs={"timeout": 30})
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert lms.platform.knobs.hits["results"] == 1

        # the teacher clears Ali's grade in the LMS (Moodle's reset); minutes pass
        lms.platform.clear(item.id, "ali")
        age(lms, placement_id, results.MAX_AGE)
        before = read_state(lms, placement_id)[1]
        requests.get(book_url, timeout=30)
        wait_for(lambda: read_state(lms, placement_id)[1] > before, "a second read", 30)
        assert lms.platform.knobs.hits["results"] == 2
        shown = requests.get(book_url, timeout=30).text
        assert lost(shown) == ["LMS has none"]
        assert grade_of(lms, placement_id)[0] == 1.0  # what the tool believes is kept

        # the one resend sends it again; the LMS holds it once more
        action = html.unescape(re.search(r'<form[^>]*action="([^"]*resend[^"]*)"', shown).group(1))
        form = {"csrf": form_token(shown)}
        resent = requests.post(
            urljoin(book_url, action), data=form, timeout=30, allow_redirects=False
        )
        assert resent.status_code == 303, resent.text
        cleared_at = lms.platform.records.cleared(item.id)[lms.platform.user_sub("ali")]
        wait_for(
            lambda: any(
                s.applied and s.received_at > cleared_at for s in lms.platform.scores(user="ali")
            ),
            "the score resent to the LMS",
            60,
        )
        wait_for(lambda: grade_of(lms, placement_id)[1] is None, "the read made stale", 30)
        assert lost(requests.get(book_url, timeout=30).text) == []
        # and the next read finds it there
        age(lms, placement_id, results.MAX_AGE)
        before = read_state(lms, placement_id)[1]
        requests.get(book_url, timeout=30)
        wait_for(lambda: read_state(lms, placement_id)[1] > before, "a third read", 30)
        assert grade_of(lms, placement_id)[1:] != (None, None)
        assert grade_of(lms, placement_id)[2] == 1.0
        page = requests.get(book_url, timeout=30).text
        assert lost(page) == [] and "LMS checked" in text_of(page)


@pytest.fixture
def lms(tmp_path):
    """The tool and the demo LMS (paging its results one a page, as Canvas pages them)."""
    found, tool_server = make_lms(tmp_path, fake_celery=True, results_per_page=1)
    yield found
    found.demo.stop()
    tool_server.stop()
    found.store.dispose()


def placed_with_scores(lms, *students):
    """Each student answers a question; their syncs post in this process, over HTTP."""
    link = lms.link()
    pairs = []
    for who in students:
        with requests.Session() as browser:
            headers, placement_id = signed_in_headers(browser, lms, who, link)
            assert answer(browser, lms, headers, placement_id).status_code == 201
        with lms.store.session() as session:
            sub = lms.platform.user_sub(who)
            pairs.append(session.scalar(select(User.id).where(User.sub == sub)))
    poster = AgsPoster(lms.lti)
    for user_id in pairs:
        wait_for(
            lambda user_id=user_id: (
                sync_pair(lms.store, lms.lti.catalog, poster, user_id, placement_id, 3).outcome
                is Synced.SENT
            ),
            "the score posted",
            10,
            every=0.5,
        )
    [item] = lms.platform.lineitems_of(link)
    return placement_id, item


def test_every_page_of_results_is_read_and_a_cleared_one_is_found(lms):
    placement_id, item = placed_with_scores(lms, "ali", "berna", "can")
    lms.platform.clear(item.id, "berna")
    assert read_results(lms.lti, placement_id) is ResultsRead.READ
    assert lms.platform.knobs.hits["results"] == 3  # one result a page, Moodle's Link header
    with lms.store.session() as session:
        rows = session.execute(
            select(User.sub, Grade.lms_given, Grade.read_given, Grade.read_at)
            .join(User, User.id == Grade.user_id)
            .where(Grade.placement_id == placement_id)
        ).all()
    found = {sub: (given, read, at is not None) for sub, given, read, at in rows}
    assert found == {
        "demo-ali": (1.0, 1.0, True),
        "demo-berna": (1.0, None, True),  # cleared: the LMS has none
        "demo-can": (1.0, 1.0, True),
    }


def test_a_read_stops_at_its_page_bound_and_says_so(lms, monkeypatch):
    placement_id, _ = placed_with_scores(lms, "ali", "berna", "can")
    monkeypatch.setattr(results, "MAX_PAGES", 2)
    assert read_results(lms.lti, placement_id) is ResultsRead.READ
    assert lms.platform.knobs.hits["results"] == 2
    assert read_state(lms, placement_id)[1] is not None
    assert problem(lms, placement_id) == (
        "The LMS listed more than 2 pages of grades; the rest were not read."
    )
    with lms.store.session() as session:
        unknown = session.scalars(
            select(Grade.read_at).where(Grade.placement_id == placement_id)
        ).all()
    assert sorted(at is None for at in unknown) == [False, False, True]  # the third: unread


@pytest.mark.parametrize(
    ("status", "away", "words"),
    [
        (503, True, "503"),
        (403, False, "403"),
        (404, False, "404"),
        (401, False, "401"),
    ],
)
def test_a_failing_read_is_noted_and_loses_nothing(lms, status, away, words):
    placement_id, item = placed_with_scores(lms, "ali")
    assert read_results(lms.lti, placement_id) is ResultsRead.READ
    kept = grade_of(lms, placement_id)
    lms.platform.clear(item.id, "ali")
    lms.platform.fail("results", times=1, status=status)
    if away:
        with pytest.raises(Exception, match=words):  # GraderError: the task retries it
            read_results(lms.lti, placement_id)
    else:
        assert read_results(lms.lti, placement_id) is ResultsRead.REFUSED
    said = problem(lms, placement_id)
    assert said.startswith(f"The LMS's grades could not be read: HTTP {words}"), said
    assert grade_of(lms, placement_id) == kept  # the earlier read stands, nothing lost


def test_a_platform_that_granted_no_result_scope_is_said_so(lms):
    placement_id, _ = placed_with_scores(lms, "ali")
    tool = lms.platform.tool(lms.client_id)
    scopes = tuple(scope for scope in tool.scopes if scope != RESULT_READONLY)
    lms.platform.records.put_tool(replace(tool, scopes=scopes))
    assert read_results(lms.lti, placement_id) is ResultsRead.REFUSED
    assert "granted no result.readonly scope" in problem(lms, placement_id)


def test_a_line_item_is_asked_for_once_however_many_ask_at_once(lms):
    placement_id, _ = placed_with_scores(lms, "ali")
    now = utcnow()
    answers = []
    threads = [
        threading.Thread(
            target=lambda: answers.append(
                result_reads.ask(lms.store, placement_id, now, results.MAX_AGE, results.ASK_EVERY)
            )
        )
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [False] * 7 + [True]
    later = now + results.ASK_EVERY + timedelta(seconds=1)
    assert result_reads.ask(lms.store, placement_id, later, results.MAX_AGE, results.ASK_EVERY)


@pytest.mark.parametrize(
    ("link", "found"),
    [
        ('<https://lms/r?from=2>; rel="next"', "https://lms/r?from=2"),
        ("<https://lms/r?From=2&Page=B>; rel=next", "https://lms/r?From=2&Page=B"),
        # Moodle's results.php: curly quotes, sent as UTF-8 bytes and read as Latin-1
        (
            "<https://m/r?type_id=1&limit=1&from=0>; rel=\u201cfirst\u201d, "
            "<https://m/r?type_id=1&limit=1&from=1>; rel=\u201cnext\u201d".encode().decode(
                "latin-1"
            ),
            "https://m/r?type_id=1&limit=1&from=1",
        ),
        ('<https://lms/r?from=0>; rel="first", <https://lms/r?from=9>; rel="last"', None),
        ("", None),
        ("garbage", None),
    ],
)
def test_the_next_page_is_found_however_the_lms_quotes_it(link, found):
    assert next_page(link) == found
