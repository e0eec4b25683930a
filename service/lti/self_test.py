"""The registration self-test: what one platform really granted, and whether grades get through.

Every request goes through the tool's outbound client and its service calls (CachingConnector,
pylti1p3's AGS and NRPS services, the AGS poster, the key set cache), with their time limits.
A check that fails never stops the others, and the throwaway line item is deleted whatever
happens after it was made. What the LMS answered is matched against the traps of
core.lms_traps and never shown: pages show our words only.

Tokens: the scopes are asked for all together first. Canvas grants all or nothing and charges
each token request 200 of its 600 throttle budget (research A.5, A.9), so when the whole set is
granted each scope is taken as granted; when it is refused, the grade scopes are asked together
(as grade posts ask them) and each scope alone, which tells which one the LMS withholds (Sakai
grants `score` only with both grade boxes ticked: LTI13Servlet.java).
"""

from __future__ import annotations

import json
import logging
import secrets
from datetime import timedelta
from typing import Any, cast

import requests
from celery import Celery
from pylti1p3.exception import LtiServiceException
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService

from core.errors import GraderError
from core.lesson_scores import LessonScore
from core.lms_traps import (
    LINEITEM,
    NRPS,
    RESULT,
    SCORE,
    SHUT_OUT,
    Check,
    CheckStatus,
    Seen,
    SelfTest,
    Wire,
    traps_in,
)
from core.messages import Message, say
from core.platforms import ScorePost
from service.lti.ags import AgsPoster
from service.lti.claims import LaunchProblem
from service.lti.results import ResultsService
from service.lti.services import (
    AGS_SCOPES,
    SCOPE_LINEITEM,
    SCOPE_NRPS,
    SCOPE_RESULT,
    SCOPE_SCORE,
    CachingConnector,
    TokenCache,
    describe,
    throttled,
)
from service.lti.tool import LtiContext
from service.outbound import Unreadable, document
from service.queue import PlatformCheckMessage, send_platform_check
from service.store import platform_checks, platform_rows
from service.store.database import Store
from service.store.models import utcnow

log = logging.getLogger("codeblanks.lti")
LABEL = "CodeBlanks self-test"
LINE_ITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
SHORT = {SCOPE_LINEITEM: LINEITEM, SCOPE_SCORE: SCORE, SCOPE_RESULT: RESULT, SCOPE_NRPS: NRPS}
LEARNER = "Learner"
ASK_EVERY = timedelta(minutes=10)


def ask_after_launch(store: Store, celery_app: Celery, platform_id: int) -> bool:
    """Have the platform tested in the background after a launch from it, when its latest
    test found the tool shut out, which the launch now disproves (Moodle's tool left pending
    at registration, then activated). Once per ASK_EVERY; return whether asked."""
    if not platform_checks.ask(store, platform_id, utcnow(), ASK_EVERY, SHUT_OUT):
        return False
    return send_platform_check(celery_app, PlatformCheckMessage(platform_id))


def run(lti: LtiContext, platform_id: int, *, try_grades: bool = True) -> SelfTest | None:
    """Test one platform, keep the result as its latest, and return it; None if unknown.

    `try_grades` False (a test in the background, no admin asking): nothing is written to a
    course's gradebook, no throwaway line item nor test score, which a teacher or student
    could see (Canvas notifies of new assignments and grades); the rest is read-only.
    """
    platform = platform_rows.find(lti.store, platform_id)
    if platform is None:
        return None
    test = _Test(lti, platform_id, try_grades)
    try:
        test.run(platform)
    except Exception:  # noqa: BLE001  our own fault must still leave a result behind
        log.exception("self-test of platform %s failed", platform_id)
        test.add("self_test", CheckStatus.FAILED, say("The self-test itself failed; see the log."))
    result = SelfTest(tuple(test.checks), tuple(traps_in(test.wire)))
    platform_checks.save(lti.store, platform_id, result.to_json(), result.grades_ok, utcnow())
    return result


class _Test:
    """One run of the self-test: the checks so far, and what the wire showed."""

    def __init__(self, lti: LtiContext, platform_id: int, try_grades: bool) -> None:
        self.lti = lti
        self.platform_id = platform_id
        self.try_grades = try_grades
        self.checks: list[Check] = []
        self.wire = Wire()

    def add(self, name: str, status: CheckStatus, words: Message) -> None:
        self.checks.append(Check(name, status, words))

    def seen(self, step: str, exc: Exception) -> Seen:
        """Note what a failed step met, for the rules; return it."""
        found = _seen(exc)
        self.wire.seen[step] = found
        log.info("self-test of platform %s: %s failed: %s", self.platform_id, step, describe(exc))
        return found

    def run(self, platform: Any) -> None:
        claimed = platform_checks.claimed(self.lti.store, self.platform_id)
        self.wire.family = claimed.product_family or ""
        self._claims(claimed)
        self._key_set(platform.key_set_url)
        connector = CachingConnector(self.lti.access(platform), TokenCache(), self.lti.http)
        self._tokens(connector)
        course = platform_checks.test_course(self.lti.store, self.platform_id)
        if course is None:
            self.add(
                "course",
                CheckStatus.WARNING,
                say(
                    "No launch has come from this LMS yet, so there is no course to test grades "
                    "in. Launch the tool once from a course, then run the self-test again."
                ),
            )
            return
        self.wire.launched = True
        self.wire.course_has_ags = course.line_items_url is not None
        self.wire.links_without_line_item = course.links_without_line_item
        self.add("course", CheckStatus.OK, say("Testing in course {id}.", id=course.course_id))
        student = self._roster(connector, course.memberships_url)
        if not self.try_grades:
            self.add(
                "line_item",
                CheckStatus.WARNING,
                say(
                    "No throwaway grade was tried in this test in the background, as it writes "
                    "to a course's gradebook: run the self-test from the admin page or with "
                    "codeblanks platforms check to try one."
                ),
            )
            return
        self._grades(connector, course.line_items_url, student)

    def _claims(self, claimed: platform_checks.Claimed) -> None:
        family = claimed.product_family or "?"
        if claimed.launch_scopes is not None:
            self.wire.launch_scopes = tuple(SHORT.get(s, s) for s in claimed.launch_scopes.split())
        if claimed.registered_scopes is None and claimed.launch_scopes is None:
            self.add(
                "claims",
                CheckStatus.WARNING,
                say(
                    "LMS: {family}. It has neither registered dynamically nor launched yet: "
                    "only the token endpoint tells what it grants.",
                    family=family,
                ),
            )
            return
        self.add(
            "claims",
            CheckStatus.OK,
            say(
                "LMS: {family}. The registration granted: {registered}. The latest launch "
                "listed: {launched}.",
                family=family,
                registered=_names(claimed.registered_scopes),
                launched=_names(claimed.launch_scopes),
            ),
        )

    def _key_set(self, url: str) -> None:
        try:
            kids = self.lti.key_sets.usable(url)
        except LaunchProblem as exc:
            self.wire.key_set_ok = False
            self.add("key_set", CheckStatus.FAILED, say("The key set: {why}.", why=exc.detail))
            return
        self.wire.key_set_ok = bool(kids)
        if not kids:
            self.add(
                "key_set", CheckStatus.FAILED, say("The key set holds no key the tool can use.")
            )
            return
        self.add(
            "key_set", CheckStatus.OK, say("The key set holds {n} usable key(s).", n=len(kids))
        )

    def _tokens(self, connector: CachingConnector) -> None:
        everything = [*AGS_SCOPES, SCOPE_NRPS]
        if self._token(connector, "token:all", everything):
            self.wire.granted = {SHORT[s]: True for s in everything}
            self.add(
                "scopes", CheckStatus.OK, say("The LMS granted every scope the tool asks for.")
            )
            return
        # Grades are sent with one scope a token (service.lti.ags), as Canvas grants all the
        # scopes asked for or none: what matters is what each scope gets alone.
        for scope in everything:
            self.wire.granted[SHORT[scope]] = self._token(
                connector, f"token:{SHORT[scope]}", [scope]
            )
        refused = [name for name, ok in self.wire.granted.items() if not ok]
        self.add(
            "scopes",
            CheckStatus.FAILED if SCORE in refused else CheckStatus.WARNING,
            say(
                "The LMS refused a token for: {refused}. Granted alone: {granted}.",
                refused=", ".join(refused) or "-",
                granted=", ".join(n for n, ok in self.wire.granted.items() if ok) or "-",
            ),
        )

    def _token(self, connector: CachingConnector, step: str, scopes: list[str]) -> bool:
        try:
            connector.get_access_token(scopes)
        except Exception as exc:  # noqa: BLE001  noted for the rules, and the check says it
            self.seen(step, exc)
            return False
        return True

    def _roster(self, connector: CachingConnector, url: str | None) -> str | None:
        """Read one NRPS page; return a student's user id from it, if any."""
        if url is None or not self.wire.granted.get(NRPS):
            self.add(
                "roster",
                CheckStatus.WARNING,
                say("The roster (NRPS) was not read: the LMS offers none for this course.")
                if url is None
                else say("The roster (NRPS) was not read: its scope was not granted."),
            )
            return None
        service = NamesRolesProvisioningService(
            connector, cast(Any, {"context_memberships_url": url, "scope": [SCOPE_NRPS]})
        )
        try:
            members, _next = service.get_members_page(url)
        except Exception as exc:  # noqa: BLE001
            self.seen("nrps_page", exc)
            self.add(
                "roster",
                CheckStatus.FAILED,
                say("The roster read failed: {why}.", why=describe(exc)),
            )
            return None
        student = next(
            (
                str(m["user_id"])
                for m in members
                if isinstance(m, dict)
                and m.get("user_id")
                and m.get("status", "Active") == "Active"
                and any(str(r).rsplit("#", 1)[-1] == LEARNER for r in m.get("roles", []))
            ),
            None,
        )
        self.add(
            "roster",
            CheckStatus.OK if student else CheckStatus.WARNING,
            say("One roster page read: {n} member(s).", n=len(members))
            if student
            else say(
                "One roster page read: {n} member(s), no active student: no score can be tried.",
                n=len(members),
            ),
        )
        return student

    def _grades(self, connector: CachingConnector, url: str | None, student: str | None) -> None:
        if url is None:
            self.add(
                "line_item",
                CheckStatus.FAILED,
                say("The course's launches carry no grade service (AGS): nothing to test."),
            )
            return
        if not self.wire.granted.get(SCORE):
            self.add(
                "line_item",
                CheckStatus.FAILED,
                say("No line item was tried: the score scope was not granted."),
            )
            return
        if not self.wire.granted.get(LINEITEM):
            self.add(
                "line_item",
                CheckStatus.WARNING,
                say("No line item was tried: the line item scope was not granted."),
            )
            return
        item = self._create(connector, url)
        if item is None:
            return
        try:
            if student is None:
                self.add("score", CheckStatus.WARNING, say("No score was tried: no student found."))
            elif self._post(item, student):
                self._read_back(connector, item, student)
        finally:
            self._delete(connector, item)

    def _create(self, connector: CachingConnector, url: str) -> str | None:
        tag = f"codeblanks-self-test-{secrets.token_hex(4)}"
        body = LineItem().set_label(LABEL).set_score_maximum(1).set_tag(tag).set_resource_id(tag)
        try:
            made = connector.make_service_request(
                [SCOPE_LINEITEM],
                url,
                is_post=True,
                data=body.get_value(),
                content_type=LINE_ITEM_TYPE,
                accept=LINE_ITEM_TYPE,
            )
            item = made["body"].get("id") if isinstance(made["body"], dict) else None
            if not isinstance(item, str) or not item:
                raise GraderError("the LMS's answer names no line item id")
        except Exception as exc:  # noqa: BLE001
            self.seen("line_item_create", exc)
            self.add(
                "line_item",
                CheckStatus.FAILED,
                say("A throwaway line item could not be made: {why}.", why=describe(exc)),
            )
            return None
        self.add("line_item", CheckStatus.OK, say("A throwaway line item was made."))
        return item

    def _post(self, item: str, student: str) -> bool:
        post = ScorePost(
            platform_id=self.platform_id,
            line_item_url=item,
            user_sub=student,
            score=LessonScore(1.0, 1.0),
            timestamp=utcnow(),
            comment=LABEL,
            canvas=self.wire.family == "canvas",
        )
        try:
            AgsPoster(self.lti).post(post)
        except Exception as exc:  # noqa: BLE001
            self.seen("score_post", exc)
            self.add(
                "score",
                CheckStatus.FAILED,
                say("The test score was refused: {why}.", why=describe(exc)),
            )
            return False
        self.add("score", CheckStatus.OK, say("A test score was sent to it."))
        return True

    def _read_back(self, connector: CachingConnector, item: str, student: str) -> None:
        if not self.wire.granted.get(RESULT):
            self.add("read_back", CheckStatus.WARNING, say("Not read back: no result scope."))
            return
        service = ResultsService(connector, cast(Any, {"scope": [SCOPE_RESULT], "lineitem": item}))
        try:
            page, _next = service.get_grades_page(service.results_url(item))
        except Exception as exc:  # noqa: BLE001
            self.seen("score_read", exc)
            self.add(
                "read_back",
                CheckStatus.FAILED,
                say("The score could not be read back: {why}.", why=describe(exc)),
            )
            return
        held = next(
            (r for r in page if isinstance(r, dict) and str(r.get("userId")) == student), None
        )
        if held is not None and held.get("resultScore") == 1:
            self.add("read_back", CheckStatus.OK, say("The LMS holds the test score."))
        else:
            self.add(
                "read_back",
                CheckStatus.WARNING,
                say("The results read back do not show the test score as sent."),
            )

    def _delete(self, connector: CachingConnector, item: str) -> None:
        try:
            connector.delete(item, (SCOPE_LINEITEM,))
        except Exception as exc:  # noqa: BLE001
            self.seen("line_item_delete", exc)
            self.add(
                "cleanup",
                CheckStatus.WARNING,
                say("The throwaway line item was left behind: {why}.", why=describe(exc)),
            )
            return
        self.add("cleanup", CheckStatus.OK, say("The throwaway line item was deleted."))


def _names(scopes: str | None) -> str:
    if scopes is None:
        return "-"
    return ", ".join(SHORT.get(s, s) for s in scopes.split()) or "-"


def _seen(exc: Exception) -> Seen:
    """Return what a failed call met: its status, error code and error text (lowercased)."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(chain) < 8:
        chain.append(cause)
        cause = cause.__cause__
    refused = next((c for c in chain if isinstance(c, LtiServiceException)), None)
    if refused is None:
        unanswered = any(isinstance(c, requests.RequestException) for c in chain)
        return Seen(None if unanswered else 0)
    response = refused.response
    error, text = "", ""
    try:
        body = document(response)
    except Unreadable:
        text = response.text[:300]
    else:
        error, text = _error_of(body)
    return Seen(response.status_code, error[:64], text[:300].lower(), throttled(response))


def _error_of(body: dict[str, Any]) -> tuple[str, str]:
    """Return the error code and text of an LMS's error body, in the shapes LMSs use.

    OAuth: {"error", "error_description"}; Canvas's services: {"errors": {"type", "message"}}
    or {"errors": [{"message"}]} (lti_services.rb render_error, api_error_json).
    """
    errors = body.get("errors")
    if isinstance(errors, dict):
        return str(errors.get("type") or ""), str(errors.get("message") or "")
    if isinstance(errors, list):
        said = [str(e.get("message") or "") for e in errors if isinstance(e, dict)]
        return "", " ".join(said)
    return str(body.get("error") or ""), str(body.get("error_description") or json.dumps(body))
