"""Held scores through the real path: the API, Redis, a Celery worker, the demo LMS.

Issue 29, point 3: while a placement holds its scores, the demo LMS (strict as Moodle:
anything not FullyGraded has no points) is told the work is handed in, PendingManual with
no scoreGiven, so its gradebook shows no points; the teacher's Release button, or the
sweep at the release date, sends every score FullyGraded, once.
"""

import html
import re
from datetime import timedelta

import pytest
import requests
from sqlalchemy import select, update

from demo import lms_ags
from service.store.models import GradeSync, Placement, SyncStatus, utcnow
from testkit.lms import answer, lms_with_a_worker, signed_in_headers
from testkit.waits import wait_for

pytestmark = [pytest.mark.celery, pytest.mark.slow]


def hold(lms, placement_id, release_at=None):
    with lms.store.session() as session:
        session.execute(
            update(Placement)
            .where(Placement.id == placement_id)
            .values(hold_scores=True, release_at=release_at)
        )


def received(lms, link, who="ali"):
    """Every score the demo LMS received for `who` on the link's line item, oldest first."""
    sub = lms.platform.user_sub(who)
    items = {item.id for item in lms.platform.lineitems_of(link)}
    return [s.body for s in lms.platform.scores() if s.user_id == sub and s.applied
            and s.lineitem_id in items]  # fmt: skip


def in_gradebook(lms, link, who="ali"):
    """The points the demo gradebook shows for `who` on the link (None: blank or none)."""
    sub = lms.platform.user_sub(who)
    items = {item.id: item for item in lms.platform.lineitems_of(link)}
    for (user, item_id), score in lms.platform.gradebook().items():
        if user == sub and item_id in items:
            return lms_ags.scaled(items[item_id], score)
    return None


def synced(lms, placement_id, status):
    with lms.store.reading() as session:
        rows = session.scalars(select(GradeSync).where(GradeSync.placement_id == placement_id))
        return [row.status for row in rows] == [status] if status else False


def handed_in_only(lms, link, placement_id):
    """Wait until the LMS has the held post and the tool holds the sync; check the post."""
    wait_for(lambda: synced(lms, placement_id, SyncStatus.HELD), "the sync held", 60)
    [body] = received(lms, link)
    assert body["gradingProgress"] == "PendingManual"
    assert body["activityProgress"] in ("Submitted", "Completed")
    assert "scoreGiven" not in body and "scoreMaximum" not in body
    assert in_gradebook(lms, link) is None  # the gradebook shows it handed in, no points


def fully_graded(lms, link, points):
    wait_for(lambda: in_gradebook(lms, link) == points, f"{points} in the LMS", 60)
    bodies = received(lms, link)
    graded = [b for b in bodies if b["gradingProgress"] == "FullyGraded"]
    assert len(graded) == 1 and graded[0]["scoreGiven"] == points  # sent once


def press_release(browser, lms, link):
    """Launch as the teacher, open the placement's page and press its Release button."""
    headers, placement_id = signed_in_headers(browser, lms, "ada", link)
    page = browser.get(
        f"{lms.tool_url}/teach/placements/{placement_id}",
        params={"s": headers["X-CodeBlanks-Session"]},
        timeout=30,
    )
    assert page.status_code == 200, page.text
    form = re.search(r'<form[^>]*action="([^"]*/release[^"]*)"[^>]*>(.*?)</form>', page.text, re.S)
    assert form is not None, "no Release button on the teacher's page"
    token = re.search(r'name="csrf" value="([^"]+)"', form.group(2))
    assert token is not None
    url = lms.tool_url + html.unescape(form.group(1))
    pressed = browser.post(url, data={"csrf": token.group(1), "back": "placement"}, timeout=30)
    assert pressed.status_code == 200 and "score released" in pressed.text, pressed.text


def test_held_scores_reach_the_lms_at_the_release_only(tmp_path, redis_server):
    with (
        lms_with_a_worker(tmp_path, redis_server, "grade,sync", pool=2) as lms,
        requests.Session() as browser,
    ):
        by_button = lms.link(title="Held until released")
        by_date = lms.link(title="Held until a date")
        headers, button_id = signed_in_headers(browser, lms, "ali", by_button)
        dated_headers, dated_id = signed_in_headers(browser, lms, "ali", by_date)
        hold(lms, button_id)
        hold(lms, dated_id, release_at=utcnow() + timedelta(seconds=8))

        # a right answer (1 of 8 points) on each: graded, and held
        for head, pid in ((headers, button_id), (dated_headers, dated_id)):
            replied = answer(browser, lms, head, pid)
            assert replied.status_code == 201 and replied.json()["earned"] == 1.0, replied.text
        handed_in_only(lms, by_button, button_id)
        handed_in_only(lms, by_date, dated_id)

        press_release(browser, lms, by_button)
        fully_graded(lms, by_button, 1.0)
        # nobody pressed anything for the other: the sweep releases it at its date
        assert in_gradebook(lms, by_date) is None
        fully_graded(lms, by_date, 1.0)
        with lms.store.reading() as session:
            released = session.get(Placement, dated_id).released_at
        assert released is not None and released >= utcnow() - timedelta(minutes=1)
        assert lms.worker.errors() == []
