"""Which LMS the demo platform plays: Moodle (the default), Canvas, Brightspace, Blackboard, Sakai.

A personality is one set of switches, read by the demo's handlers wherever that LMS answers
differently from Moodle. Each switch says where the behaviour was taken from (the LMS's own code,
its documentation, or a public tool tracker), so a test against a personality tests the LMS as
recorded, not as we wish it were. `DemoConfig(personality=...)` takes a name or a Personality;
`DemoConfig.plays` is the Personality, `DemoConfig.lms` its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LmsName = Literal["moodle", "canvas", "brightspace", "blackboard", "sakai"]
NAMES: tuple[LmsName, ...] = ("moodle", "canvas", "brightspace", "blackboard", "sakai")


@dataclass(frozen=True)
class Personality:
    """The switches of one LMS; every default is Moodle 4.5's behaviour."""

    name: LmsName = "moodle"
    # What the platform names itself (lti-platform-configuration's product_family_code, and
    # the launch's tool_platform claim): Canvas "canvas", Brightspace "desire2learn",
    # Blackboard "BlackboardLearn", Sakai "sakai". None: DemoConfig.product_family_code
    # ("codeblanks-demo", as the Moodle-like demo has always named itself).
    product_family_code: str | None = None

    # --- Canvas (instructure/canvas-lms) -------------------------------------------------

    # --- Brightspace (D2L) ---------------------------------------------------------------
    # False: a link placed in a course makes no grade item, so its launches carry the AGS
    # claim with `lineitems` but no `lineitem` until the tool POSTs one with its
    # resourceLinkId (or deep linking sent a `lineItem`). "In LTI1.3 the container is not
    # created" (hypothesis/lms PR #4726); D2L KB 18094 (the tool creates its own grade items).
    links_make_grade_items: bool = True
    # True: a score above the grade item's maximum is taken (200) and shown as the maximum
    # ("The maximum allowable score ... appears in the grade book", D2L KB 23752); Moodle's
    # demo refuses scoreGiven above scoreMaximum with a 400.
    clip_scores: bool = False

    # --- Blackboard Learn ----------------------------------------------------------------
    # The one issuer of every Learn site ("Issuer - is always https://blackboard.com",
    # blackboard/anthologydevdocs docs/blackboard/lti/1.3/01-register-an-application.md).
    # None: the base URL, as Moodle's wwwroot.
    issuer: str | None = None
    # True: a score without scoreGiven deletes the user's grade (their result is gone), and
    # scoreGiven may come without scoreMaximum (the item's own maximum applies)
    # (anthologydevdocs lti-subsystems/ags/03-working-with-grades.md). Moodle keeps the
    # user's result with blank points and needs scoreMaximum beside scoreGiven.
    scoreless_deletes: bool = False
    # False: no dynamic registration; discovery names no registration_endpoint and /register
    # answers 404. Learn's tools are registered once by their vendor on the developer portal,
    # and each site's admin pastes the client id (anthologydevdocs
    # 01-register-an-application.md; dynamic registration is not in those docs).
    dynamic_registration: bool = True

    # --- Sakai ---------------------------------------------------------------------------
    # The scopes a launch's AGS claim lists; None: every AGS scope the tool was granted.
    # Sakai lists only `lineitem`, whatever it will grant (SakaiBLTIUtil.java:
    # `endpoint.scope = [Endpoint.SCOPE_LINEITEM]`; pylti1.3#116).
    launch_scopes: tuple[str, ...] | None = None
    # True: the tool's two admin checkboxes decide what it gets (DemoPlatform.tick):
    # "Allow External Tool to return grades" (allowoutcomes) puts `lineitem`/`lineitems` in
    # the launch and, with "Allow External Tool to create grade columns" (allowlineitems),
    # lets the token endpoint grant `score` and `result.readonly`; `lineitem` needs
    # allowlineitems; NRPS needs allowoutcomes (LTI13Servlet.java token handler).
    scope_checkboxes: bool = False
    # True: every refusal of the token and service endpoints is a 400 ("Everything is 400;
    # Sakai sends no 422/404", LTI13Servlet#handleLineItemScore, LTI13Util.return400).
    errors_as_400: bool = False
    # The header naming the refused scope beside a 400 invalid_scope (Sakai's
    # `X-Tsugi-LTI13-Error-Detail`, LTI13Util.return400). None: no such header.
    scope_error_header: str | None = None
    # The deployment id dynamic registration answers in lti-tool-configuration (Sakai "1",
    # LTI13Servlet#handleRegistrationEndpointPost, lti/docs/TSUGI.md). None: a fresh one.
    registration_deployment_id: str | None = None


MOODLE = Personality()

CANVAS = Personality(
    name="canvas",
    product_family_code="canvas",
)

BRIGHTSPACE = Personality(
    name="brightspace",
    product_family_code="desire2learn",
    links_make_grade_items=False,  # hypothesis/lms PR #4726
    clip_scores=True,  # D2L KB 23752
)

BLACKBOARD = Personality(
    name="blackboard",
    product_family_code="BlackboardLearn",
    issuer="https://blackboard.com",  # anthologydevdocs 01-register-an-application.md
    scoreless_deletes=True,  # anthologydevdocs ags/03-working-with-grades.md
    dynamic_registration=False,  # anthologydevdocs 01-register-an-application.md
)

SAKAI = Personality(
    name="sakai",
    product_family_code="sakai",
    launch_scopes=("https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",),  # SakaiBLTIUtil
    scope_checkboxes=True,  # LTI13Servlet.java token handler; pylti1.3#116
    errors_as_400=True,  # LTI13Servlet#handleLineItemScore
    scope_error_header="X-Tsugi-LTI13-Error-Detail",  # org.tsugi.lti13.LTI13Util.return400
    registration_deployment_id="1",  # LTI13Servlet#handleRegistrationEndpointPost
)

BY_NAME: dict[str, Personality] = {
    p.name: p for p in (MOODLE, CANVAS, BRIGHTSPACE, BLACKBOARD, SAKAI)
}


def personality(value: str | Personality) -> Personality:
    """Return the Personality named `value` (or `value` itself); ValueError for an unknown name."""
    if isinstance(value, Personality):
        return value
    try:
        return BY_NAME[value]
    except KeyError:
        raise ValueError(f"unknown LMS personality {value!r}; one of {', '.join(NAMES)}") from None
