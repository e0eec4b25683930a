"""The steps of a whole flow of the real tool against the demo LMS playing another LMS.

Registration, deep linking, launches as teacher and student, and a code submission graded
by a real Celery worker, over real HTTP; used by test_flow_brightspace, _blackboard, _sakai.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import urljoin

import jwt
import requests
from sqlalchemy import select

from demo.browser import parse_form, run_launch
from demo.lms_models import Link, Score
from service.lti import registration
from service.store.models import GradeSync, Placement, Platform, utcnow
from testkit.lms import Lms, signed_in_headers
from testkit.lms_race import SOLUTION
from testkit.stacks import poll

SEED = "expert/what-is-attention"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"


def register_dynamically(lms: Lms, browser: requests.Session) -> Platform:
    """Run dynamic registration as the LMS's admin page would; return the tool's new row."""
    register_url = registration.registration_url(lms.store, lms.tool_url, now=utcnow())
    page = browser.get(lms.platform.start_registration(register_url), timeout=10)
    assert page.status_code == 200 and "org.imsglobal.lti.close" in page.text, page.text[:300]
    new = registration.list_platforms(lms.store)[-1]
    assert new.client_id != lms.client_id and new.issuer == lms.platform.issuer
    return new


def deep_link(lms: Lms, browser: requests.Session) -> tuple[list[Link], list[dict[str, Any]]]:
    """Deep link the seed lesson as the teacher; return the new links and the items sent."""
    before = {link.id for link in lms.platform.links()}
    trace = run_launch(browser, lms.platform.deep_link("ada", lms.client_id))
    assert trace.launch.status_code == 200, trace.launch.text[:500]
    page = trace.launch.text
    action = re.search(r'action="([^"]+)"', page).group(1).replace("&amp;", "&")  # type: ignore[union-attr]
    token = html.unescape(re.search(r'name="csrf" value="([^"]+)"', page).group(1))  # type: ignore[union-attr]
    picked = browser.post(
        urljoin(lms.tool_url, action), data={"lesson": [SEED], "csrf": token}, timeout=10
    )
    form = parse_form(picked.text, lms.tool_url)
    claims = jwt.decode(form.fields["JWT"], options={"verify_signature": False})
    items: list[dict[str, Any]] = claims[DL + "content_items"]
    returned = browser.post(form.action, data=form.fields, timeout=10)
    assert returned.status_code == 200, returned.text[:500]
    return [link for link in lms.platform.links() if link.id not in before], items


def teacher_sees_the_teacher_view(lms: Lms, browser: requests.Session, link: Link) -> None:
    """Launch as the teacher: the tool opens its teacher view of the placement."""
    trace = run_launch(browser, lms.platform.launch("ada", link.id))
    assert "/teach/placements/" in trace.launch.headers["Location"], trace.launch.text[:300]


def submit_the_solution(lms: Lms, who: str, link: Link) -> tuple[int, dict[str, Any]]:
    """Launch as `who`, hand in the seed's model solution, wait for its verdict; return the
    placement and the submission as its student sees it."""
    with requests.Session() as browser:
        headers, placement_id = signed_in_headers(browser, lms, who, link)
    submitted = requests.post(
        f"{lms.tool_url}/api/placements/{placement_id}/submissions",
        json={"source": SOLUTION},
        headers=headers,
        timeout=30,
    )
    assert submitted.status_code == 202, submitted.text
    url = f"{lms.tool_url}/api/submissions/{submitted.json()['id']}"
    found: dict[str, Any] = poll(
        lambda: requests.get(url, headers=headers, timeout=10).json(),
        lambda found: found["status"] == "graded",
        "the submission to be graded",
    )
    return placement_id, found


def landed(lms: Lms, who: str) -> Score:
    """Wait until the LMS applied a score for `who`; return the latest."""
    sub = lms.platform.user_sub(who)
    scores: list[Score] = poll(
        lambda: [s for s in lms.platform.scores(user=sub) if s.applied],
        bool,
        f"a score of {who} in the LMS",
    )
    return scores[-1]


def settled_syncs(lms: Lms, placement_id: int) -> list[GradeSync]:
    """Wait until no sync of the placement is pending; return them."""

    def read() -> list[GradeSync]:
        with lms.store.session() as session:
            rows = session.scalars(
                select(GradeSync).where(GradeSync.placement_id == placement_id)
            ).all()
            session.expunge_all()
            return list(rows)

    return poll(read, lambda rows: bool(rows) and all(r.status != "pending" for r in rows),
                "the grade syncs to settle")  # fmt: skip


def line_item_of(lms: Lms, placement_id: int) -> str | None:
    """Return the line item URL the tool keeps for a placement."""
    with lms.store.session() as session:
        return session.scalar(select(Placement.line_item_url).where(Placement.id == placement_id))
