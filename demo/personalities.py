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
    # Every switch names the file of instructure/canvas-lms it was read from (docs/canvas.md
    # lists each behaviour with its file and the test that checks it).
    # One issuer for every school (lti_advantage_adapter.rb, lti_iss; Blackboard's too); the
    # school's own domain (the demo's base URL) still serves every endpoint. None: the base
    # URL is the issuer, as Moodle's wwwroot.
    issuer: str | None = None
    # Canvas's routes (config/routes.rb as its controllers are mounted): the auth request to
    # /api/lti/authorize_redirect, which 302s to the school's /api/lti/authorize
    # (authentication_controller.rb), the token at /login/oauth2/token, the keys at
    # /api/lti/security/jwks, services under /api/lti/courses/:id/{line_items,names_and_roles}.
    canvas_routes: bool = False
    # Deployment ids "<ContextExternalTool id>:<40 hex context opaque id>"
    # (context_external_tool.rb deployment_id).
    canvas_deployment_ids: bool = False
    # AGS/NRPS errors as concerns/lti_services.rb render_error ({"errors": {type, message}},
    # 412 by default) and application_controller.rb api_error_json ({"errors": [{message}]});
    # bearer-token refusals are all 401 (advantage_access_token.rb, "Insufficient permissions").
    canvas_errors: bool = False
    # Scores as scores_controller.rb takes them: 422 "User not found in course or is not a
    # student" for a non-student or an unpublished course (course.rb user_is_student?), the
    # array-bodied 422 of an unpublished assignment (submission.rb can_autograde?), progress
    # values not checked, scoreGiven above the maximum allowed, a timestamp earlier than the
    # result's 400 but an equal one accepted, 200 with the score media type and resultUrl;
    # line items (line_items_controller.rb: 422 RecordInvalid bodies, no start/endDateTime
    # served back) and results (results_controller.rb: [] for a non-student) likewise.
    canvas_ags: bool = False
    # Api.paginate (lib/api.rb): line items and results 10 a page by default, `limit` ->
    # per_page, `Link` with rel="current",rel="next",rel="first",rel="last" joined by ","
    # without a space. None: Moodle's (all at once, `limit`/`from`, a curly-quoted rel).
    page_size: int | None = None
    # NRPS members a page (memberships_provider.rb MAX_PAGE_SIZE, the default and the maximum).
    nrps_page_size: int | None = None
    # The token endpoint as oauth2_provider_controller.rb and canvas/oauth/provider.rb answer:
    # every assertion failure 400 invalid_request, scopes all or nothing with Canvas's text,
    # the access token's aud the token URL (client_credentials_provider.rb).
    canvas_tokens: bool = False
    # The launch as jwt_message.rb signs it (azp, lti11_legacy_user_id, the lis claim,
    # https://www.instructure.com/placement, id_token 1 h) and lti_advantage_adapter.rb starts
    # it (deployment_id, canvas_environment, canvas_region, lti_storage_target in the login).
    canvas_launch: bool = False
    # Deep linking: a lineItem makes an assignment that starts unpublished
    # (concerns/deep_linking_modules.rb create_update_assignment!, workflow_state "unpublished").
    deep_linked_unpublished: bool = False
    # Dynamic registration answers no deployment_id (dynamic_registration_controller.rb: the
    # deployment is made when the admin installs), and Canvas takes a developer key's JSON
    # (lib/schemas/lti_configuration.rb) on its admin page.
    registration_answers_deployment: bool = True
    # Registration checks of app/models/lti/ims/registration.rb and
    # lib/schemas/lti/ims/lti_tool_configuration.rb: `claims` and `messages` required, a
    # `domain` without a scheme, unknown scopes refused ("Invalid scopes"); no same-domain rule.
    canvas_registration_checks: bool = False
    developer_key_json: bool = False
    # Throttling (app/middleware/request_throttle.rb): X-Rate-Limit-Remaining on every service
    # answer, and, when a test asks for it, 403 text/plain "403 Forbidden (Rate Limit
    # Exceeded)" per client id with no Retry-After.
    rate_limit_headers: bool = False
    # What the OpenID configuration names as `authorization_server` when that is not the
    # `aud` its token endpoint checks: Canvas's names its issuer's host, "canvas.instructure.com"
    # (doc/api/registration.md), while its token endpoint wants the token URL as `aud`
    # (JwtValidator via AsymmetricClientCredentialsProvider). None: `token_audience`, if any.
    authorization_server: str | None = None

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
    # The `aud` the token endpoint wants in the tool's client assertion, when it is not the
    # token URL: Brightspace hands the tool a separate "Brightspace OAuth2 Audience" with the
    # registration (D2L KB 23662; Sakai/Tsugi ClientAssertion: "D2L felt like there was
    # supposed to be a separate audience value"; pylti1.3#43), and names it as
    # `authorization_server` in its OpenID configuration (LTI Dynamic Registration 1.0:
    # "the token endpoint if absent"). An assertion with another `aud` is refused as D2L
    # does: 400 {"error": "invalid_grant", "error_description": "Error validating assertion:
    # ..."} (pylti1.3#43). None: the token URL is the only accepted `aud` (Moodle's).
    token_audience: str | None = None

    # --- Blackboard Learn ----------------------------------------------------------------
    # The one issuer of every Learn site ("Issuer - is always https://blackboard.com",
    # blackboard/anthologydevdocs docs/blackboard/lti/1.3/01-register-an-application.md):
    # `issuer` above, as Canvas's.
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
    product_family_code="canvas",  # jwt_message.rb add_tool_platform_claims!
    issuer="https://canvas.instructure.com",  # lti_advantage_adapter.rb, registration.md
    canvas_routes=True,  # authentication_controller.rb, lti/ims/*_controller.rb
    canvas_deployment_ids=True,  # context_external_tool.rb
    canvas_errors=True,  # concerns/lti_services.rb, application_controller.rb
    canvas_ags=True,  # scores_, line_items_, results_controller.rb, course.rb, submission.rb
    page_size=10,  # lib/api.rb Api::PER_PAGE
    nrps_page_size=50,  # providers/memberships_provider.rb MAX_PAGE_SIZE
    canvas_tokens=True,  # oauth2_provider_controller.rb, canvas/oauth/provider.rb
    canvas_launch=True,  # jwt_message.rb, lti_advantage_adapter.rb
    deep_linked_unpublished=True,  # concerns/deep_linking_modules.rb
    registration_answers_deployment=False,  # dynamic_registration_controller.rb
    canvas_registration_checks=True,  # lti/ims/registration.rb, lti_tool_configuration.rb
    developer_key_json=True,  # lib/schemas/lti_configuration.rb, lti_dev_key_config.md
    rate_limit_headers=True,  # app/middleware/request_throttle.rb
    authorization_server="canvas.instructure.com",  # doc/api/registration.md
)

BRIGHTSPACE = Personality(
    name="brightspace",
    product_family_code="desire2learn",
    links_make_grade_items=False,  # hypothesis/lms PR #4726
    clip_scores=True,  # D2L KB 23752
    # the value commonly seen; no primary D2L page states it (issue 31 research, B)
    token_audience="https://api.brightspace.com/auth/token",  # D2L KB 23662; pylti1.3#43
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
