"""What the LMS holds, read back: a line item's results (AGS result service) beside what the
tool believes it holds.

A teacher who clears a grade in Moodle leaves the tool believing the LMS holds its score
(FINDINGS: the tool said "LMS: 8" while Moodle had none). The teacher's pages ask for a read
(the `codeblanks.read_results` task) when a line item's last one is stale; no request waits
on the LMS. The read goes through pylti1p3's AGS service and its results URL (which keeps
Moodle's `?type_id=N` after the path, as for scores) over our CachingConnector, a page at a
time: pylti1p3's own `get_grades` reads one page, and its Link parser lowercases the URL and
misses Moodle's `rel=“next”` (curly quotes, results.php), so the next page is found here.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import urlsplit

from celery import Celery
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException

from core.errors import GraderError
from core.lesson_scores import LessonScore
from core.messages import Message, say
from service.lti.services import SCOPE_RESULT, CachingConnector, away, describe
from service.outbound import Unreadable, document
from service.queue import ResultsMessage, send_results_read
from service.store import platform_rows, result_reads
from service.store.database import Store
from service.store.models import utcnow

RESULTS_TYPE = "application/vnd.ims.lis.v2.resultcontainer+json"
MAX_AGE = timedelta(minutes=3)  # an older read is done again when a teacher comes by
# at most one read asked for per line item in this long: longer than a failing read's
# retries (workers.tasks), so that two of them never hammer an LMS that is down
ASK_EVERY = timedelta(minutes=1)
# Canvas lists 10 results a page unless told (Api.paginate); Moodle lists all in one page
# unless asked for `limit`: 100 pages is a class of a thousand on Canvas
MAX_PAGES = 100
SCOPE_REFUSED = ("invalid_scope", "insufficient_scope")
_LINKS = re.compile(r"<([^>]*)>([^<]*)")
_WORDS = re.compile(r"[a-z]+")


class ResultsRead(enum.StrEnum):
    """How one read of a line item's results ended."""

    READ = "read"
    NO_LINE_ITEM = "no_line_item"  # nothing to read (yet): the placement has no line item
    REFUSED = "refused"  # the LMS refused the read: asking again will not help at once
    FAILED = "failed"  # the LMS was away every retry; a teacher's page asks again once stale


@dataclass(frozen=True)
class Listed:
    """The results the LMS listed, by user, and whether it listed them all."""

    found: dict[str, LessonScore | None]
    complete: bool
    problem: Message | None  # why the list stops short


class ResultsService(AssignmentsGradesService):
    """pylti1p3's AGS service, with its results read one page at a time."""

    def results_url(self, line_item_url: str) -> str:
        """Return the line item's results URL, its query (`?type_id=N`) kept after the path."""
        return self._add_url_path_ending(line_item_url, "results")

    def get_grades_page(self, url: str) -> tuple[list[Any], str | None]:
        """Return one page of results and the next page's URL, if the LMS gives one."""
        if not self.can_read_grades():
            raise LtiException("Can't read grades: Missing required scope")
        answer = self._service_connector.make_service_request(
            self._service_data["scope"], url, accept=RESULTS_TYPE, case_insensitive_headers=True
        )
        if not isinstance(answer["body"], list):
            raise LtiException("Unknown response type received for results")
        return answer["body"], next_page(str(answer["headers"].get("Link") or ""))


def ask_for_reads(store: Store, celery_app: Celery, placement_ids: list[int], now: datetime) -> int:
    """Have each placement's results read in the background if stale; return how many asked.

    However many pages ask at once, one read is sent per line item in ASK_EVERY; a page that
    finds every read fresh writes nothing.
    """
    with store.reading() as session:
        found = result_reads.states(session, placement_ids)
    due = [pid for pid, state in found.items() if state.due(now, MAX_AGE, ASK_EVERY)]
    asked = 0
    for placement_id in sorted(due):
        if not result_reads.ask(store, placement_id, now, MAX_AGE, ASK_EVERY):
            continue
        if send_results_read(celery_app, ResultsMessage(placement_id)):
            asked += 1
        else:
            problem = say("The task queue could not be reached; the LMS was not read.")
            result_reads.failed(store, placement_id, problem)
    return asked


def read_results(lti: Any, placement_id: int) -> ResultsRead:
    """Read the placement's results from the LMS and keep what it holds of each pair.

    A refusal (401, 403, 404, no result.readonly scope) is noted on the placement for its
    teacher's pages; an LMS that is away is noted too, and raises GraderError to be retried.
    What earlier reads found is kept either way.
    """
    store: Store = lti.store
    started = utcnow()
    with store.reading() as session:
        target = result_reads.target(session, placement_id, started)
    if target is None:
        return ResultsRead.NO_LINE_ITEM
    platform = platform_rows.find(store, target.platform_id)
    if platform is None:
        result_reads.failed(store, placement_id, say("The LMS is no longer registered."))
        return ResultsRead.REFUSED
    connector = CachingConnector(lti.access(platform), lti.tokens, lti.http)
    service = ResultsService(
        connector,
        {"scope": cast(Any, [SCOPE_RESULT]), "lineitem": target.line_item_url},
    )
    try:
        listed = _list(service, target.line_item_url)
    except Exception as exc:  # noqa: BLE001  the LMS's failure, shown to the teacher
        why = describe(exc)
        if "401" in why:
            lti.tokens.forget(platform.id)
        problem = (
            say(
                "The LMS does not let the tool read its grades: it granted no result.readonly "
                "scope. An LMS admin can allow it in the tool's settings."
            )
            if scope_refused(exc)
            else say("The LMS's grades could not be read: {why}", why=why)
        )
        result_reads.failed(store, placement_id, problem)
        if away(exc):
            raise GraderError(f"the LMS's results could not be read: {why}") from exc
        return ResultsRead.REFUSED
    result_reads.save(store, target, listed.found, listed.complete, started, utcnow())
    if listed.problem is not None:
        result_reads.failed(store, placement_id, listed.problem)
    return ResultsRead.READ


def _list(service: ResultsService, line_item_url: str) -> Listed:
    """Read every page of the results (at most MAX_PAGES), each result by its user."""
    url: str | None = service.results_url(line_item_url)
    origin = _origin(line_item_url)
    found: dict[str, LessonScore | None] = {}
    for _page in range(MAX_PAGES):
        assert url is not None
        page, url = service.get_grades_page(url)
        for item in page:
            result = _result(item)
            if result is not None:
                found[result[0]] = result[1]
        if url is None:
            return Listed(found, True, None)
        if _origin(url) != origin:
            # the access token goes with each page: only to the line item's own site
            problem = say("The LMS's next page of grades is on another site; it was not read.")
            return Listed(found, False, problem)
    problem = say(
        "The LMS listed more than {pages} pages of grades; the rest were not read.",
        pages=MAX_PAGES,
    )
    return Listed(found, False, problem)


def _result(item: object) -> tuple[str, LessonScore | None] | None:
    """Return a result's user and score (None: listed without one); None if unreadable."""
    if not isinstance(item, Mapping):
        return None
    user = item.get("userId")
    if isinstance(user, bool) or not isinstance(user, str | int) or str(user) == "":
        return None
    score, maximum = _number(item.get("resultScore")), _number(item.get("resultMaximum"))
    if score is None or score < 0:
        return str(user)[:255], None
    return str(user)[:255], LessonScore(score, maximum if maximum and maximum > 0 else 0.0)


def _number(value: object) -> float | None:
    """Return a JSON number as a float; None for anything else (a bool, a string, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def next_page(link: str) -> str | None:
    """Return the URL a Link header names `next`, however its rel is quoted (RFC 8288's
    "next", a bare next, or Moodle's “next”, which arrives as Latin-1 bytes)."""
    for url, params in _LINKS.findall(link):
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "rel" and "next" in _WORDS.findall(value.lower()):
                return url.strip() or None
    return None


def scope_refused(exc: Exception) -> bool:
    """Return whether the LMS refused the read for its scope (no result.readonly granted)."""
    if not isinstance(exc, LtiServiceException):
        return False
    response = exc.response
    if response.status_code not in (HTTPStatus.BAD_REQUEST, 401, HTTPStatus.FORBIDDEN):
        return False
    try:
        return document(response).get("error") in SCOPE_REFUSED
    except Unreadable:  # an answer that is not a JSON object names no scope
        return False


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()
