"""The platform's protocol endpoints: discovery, OIDC, token, registration, AGS, NRPS, admin."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar
from urllib.parse import urlencode

from flask import Blueprint, Response, jsonify, redirect, request

from demo import lms_ags, lms_canvas, lms_registration, nrps, tokens
from demo.lms_errors import DemoError
from demo.platform import DemoPlatform
from demo.tokens import LINEITEM, LINEITEM_READONLY, MEMBERSHIPS, RESULT_READONLY, SCORE

# Endpoints whose callers are programs: they get JSON errors; browsers get an HTML page.
JSON_ENDPOINTS = {
    "token",
    "register",
    "lineitems",
    "lineitem",
    "scores",
    "results",
    "memberships",
    "admin_tools",
    "admin_activate",
    "admin_checkboxes",
    "admin_links",
    "admin_link_list",
    "admin_registrations",
    "admin_knobs",
    "admin_scores",
    "admin_clear",
    "admin_launch",
    "admin_publish",
    "admin_developer_keys",
    "openid_configuration",
    "jwks",
}
# The services Canvas throttles per client id and marks with X-Rate-Limit-Remaining.
SERVICE_ENDPOINTS = {"token", "lineitems", "lineitem", "scores", "results", "memberships"}
View = TypeVar("View", bound=Callable[..., Any])


def typed(body: Any, media_type: str, status: int = 200) -> Response:
    """Return `body` as JSON under an LTI media type."""
    return Response(json.dumps(body), status=status, mimetype=media_type)


def register_views(bp: Blueprint, platform: DemoPlatform) -> None:
    """Add the protocol endpoints to `bp`."""
    plays = platform.config.plays

    def route(demo_rule: str, canvas_rule: str, **options: Any) -> Callable[[View], View]:
        """Serve a view at the demo's rule, or at Canvas's when the platform plays Canvas."""

        def add(view: View) -> View:
            rule = canvas_rule if plays.canvas_routes else demo_rule
            bp.add_url_rule(rule, view_func=view, **options)
            return view

        return add

    def service(view: View) -> View:
        """Answer a refusal of an AGS/NRPS view in Canvas's shapes when playing Canvas."""

        @functools.wraps(view)
        def shaped(*args: Any, **kwargs: Any) -> Any:
            try:
                return view(*args, **kwargs)
            except DemoError as exc:
                if plays.canvas_errors:
                    raise lms_canvas.shaped(exc) from exc
                raise

        return shaped  # type: ignore[return-value]

    @bp.after_request
    def rate_limit_remaining(response: Response) -> Response:
        # request_throttle.rb: every non-session answer tells what is left of the bucket
        endpoint = (request.endpoint or "").rpartition(".")[2]
        if plays.rate_limit_headers and endpoint in SERVICE_ENDPOINTS:
            if "X-Rate-Limit-Remaining" not in response.headers:
                response.headers["X-Request-Cost"] = "0.01"
                response.headers["X-Rate-Limit-Remaining"] = f"{lms_canvas.HIGH_WATER_MARK:.1f}"
        return response

    def knob(target: str, client_id: str | None = None) -> Response | None:
        if plays.rate_limit_headers and client_id and platform.knobs.throttled(client_id):
            # request_throttle.rb rate_limit_exceeded: no Retry-After, no X-Request-Cost
            return Response(
                lms_canvas.THROTTLED,
                status=403,
                headers={
                    "Content-Type": "text/plain; charset=utf-8",
                    "X-Rate-Limit-Remaining": "0.0",
                },
            )
        failure = platform.knobs.take(target)
        if failure is None:
            return None
        status, message = failure
        return typed(
            {"error": "server_error", "error_description": message}, "application/json", status
        )

    def body() -> object:
        try:
            return request.get_json(force=True, silent=True)
        except RecursionError:  # a JSON nested deeper than Python recurses: not a request
            return None

    @route("/.well-known/openid-configuration", "/api/lti/security/openid-configuration")
    def openid_configuration() -> Response:
        return jsonify(platform.openid_configuration())

    @route("/jwks", "/api/lti/security/jwks")
    def jwks() -> Response:
        return jsonify(platform.key.jwks())

    if plays.canvas_routes:

        @bp.route("/api/lti/authorize_redirect", methods=["GET", "POST"])
        def authorize_redirect() -> Response:
            # authentication_controller.rb#authorize_redirect: the shared host sends the browser
            # on to the school's domain (lti_message_hint's canvas_domain: here, the base URL)
            params = request.form if request.method == "POST" else request.args
            target = platform.config.url("/api/lti/authorize") + "?" + urlencode(params.to_dict())
            return redirect(target, 302)  # type: ignore[return-value]

    @route("/auth", "/api/lti/authorize", methods=["GET", "POST"])
    def auth() -> Response:
        params = request.form if request.method == "POST" else request.args
        post = platform.authorize(params.to_dict())
        return Response(post.html(), mimetype="text/html")

    @route("/token", "/login/oauth2/token", methods=["POST"])
    def token() -> Response:
        assertion = request.form.get("client_assertion", "")
        caller = tokens.client_of("Bearer " + assertion) if assertion else None
        if failed := knob("token", caller):
            return failed
        answer = tokens.issue(platform, request.form.to_dict())
        response = Response(json.dumps(answer), mimetype=platform.config.token_content_type)
        response.headers["Cache-Control"] = "no-store"
        return response

    @route("/register", "/api/lti/registrations", methods=["POST"])
    def register() -> Response:
        if not platform.config.plays.dynamic_registration:
            raise DemoError(404, "this LMS registers tools by client id, not dynamically")
        if request.mimetype != "application/json":
            raise DemoError(
                400, "the registration request must be application/json", "invalid_client_metadata"
            )
        answer = lms_registration.complete_registration(
            platform, request.headers.get("Authorization"), body()
        )
        return jsonify(answer)

    @route(
        "/courses/<course_id>/lineitems",
        "/api/lti/courses/<course_id>/line_items",
        methods=["GET", "POST"],
    )
    @service
    def lineitems(course_id: str) -> Response:
        auth = request.headers.get("Authorization")
        if failed := knob("ags", tokens.client_of(auth)):
            return failed
        if request.method == "GET":
            access = tokens.check(platform, auth, (LINEITEM, LINEITEM_READONLY))
            found = lms_ags.search(platform, access, course_id, request.args.to_dict())
            if plays.page_size is None:
                listed = [lms_ags.to_json(platform, i) for i in found]
                return typed(listed, lms_ags.CONTAINER_TYPE)
            shown, link = lms_canvas.page(
                found, request.base_url, request.args.to_dict(), plays.page_size, None
            )
            answer = typed([lms_ags.to_json(platform, i) for i in shown], lms_ags.CONTAINER_TYPE)
            answer.headers["Link"] = link
            return answer
        access = tokens.check(platform, auth, (LINEITEM,))
        item = lms_ags.save(platform, access, course_id, request.mimetype, body())
        return typed(lms_ags.to_json(platform, item), lms_ags.LINEITEM_TYPE, 201)

    @route(
        "/courses/<course_id>/lineitems/<int:item_id>",
        "/api/lti/courses/<course_id>/line_items/<int:item_id>",
        methods=["GET", "PUT", "DELETE"],
    )
    @service
    def lineitem(course_id: str, item_id: int) -> Response:
        auth = request.headers.get("Authorization")
        if failed := knob("ags", tokens.client_of(auth)):
            return failed
        needs = (LINEITEM, LINEITEM_READONLY) if request.method == "GET" else (LINEITEM,)
        access = tokens.check(platform, auth, needs)
        item = lms_ags.find(platform, access, course_id, item_id)
        if request.method == "DELETE":
            platform.records.delete_lineitem(item.id)
            return Response(status=204)
        if request.method == "PUT":
            item = lms_ags.save(platform, access, course_id, request.mimetype, body(), item)
        return typed(lms_ags.to_json(platform, item), lms_ags.LINEITEM_TYPE)

    @route(
        "/courses/<course_id>/lineitems/<int:item_id>/scores",
        "/api/lti/courses/<course_id>/line_items/<int:item_id>/scores",
        methods=["POST"],
    )
    @service
    def scores(course_id: str, item_id: int) -> Response:
        auth = request.headers.get("Authorization")
        if failed := knob("ags", tokens.client_of(auth)):
            return failed
        access = tokens.check(platform, auth, (SCORE,))
        item = lms_ags.find(platform, access, course_id, item_id, own=False)
        score = lms_ags.post_score(platform, item, request.mimetype, body())
        url = platform.lineitem_url(item).split("?")[0]
        result_url = f"{url}/results/{score.user_id}"
        if plays.canvas_ags:
            # scores_controller.rb#create: 200 under the score media type, on the school's host
            answer = {"resultUrl": result_url, lms_ags.CANVAS_SUBMISSION: {"content_items": []}}
            return typed(answer, lms_ags.SCORE_TYPE)
        return jsonify({"resultUrl": result_url})

    @route(
        "/courses/<course_id>/lineitems/<int:item_id>/results",
        "/api/lti/courses/<course_id>/line_items/<int:item_id>/results",
        methods=["GET"],
    )
    @service
    def results(course_id: str, item_id: int) -> Response:
        auth = request.headers.get("Authorization")
        if failed := knob("results", tokens.client_of(auth)):
            return failed
        access = tokens.check(platform, auth, (RESULT_READONLY,))
        item = lms_ags.find(platform, access, course_id, item_id, own=False)
        found = lms_ags.results(platform, item, request.args.get("user_id"))
        if plays.page_size is not None:
            shown, header = lms_canvas.page(
                found, request.base_url, request.args.to_dict(), plays.page_size, None
            )
            answer = typed(shown, lms_ags.RESULTS_TYPE)
            answer.headers["Link"] = header
            return answer
        page, link = lms_ags.page_of(
            found, request.url, request.args.to_dict(), platform.config.results_per_page
        )
        answer = typed(page, lms_ags.RESULTS_TYPE)
        if link is not None:
            # PHP sends the header's UTF-8 bytes as they are: so does this
            answer.headers["Link"] = link.encode().decode("latin-1")
        return answer

    @route(
        "/courses/<course_id>/memberships",
        "/api/lti/courses/<course_id>/names_and_roles",
        methods=["GET"],
    )
    @service
    def memberships(course_id: str) -> Response:
        auth = request.headers.get("Authorization")
        if failed := knob("nrps", tokens.client_of(auth)):
            return failed
        access = tokens.check(platform, auth, (MEMBERSHIPS,))
        container = nrps.memberships(platform, access, course_id, request.args.to_dict())
        if plays.nrps_page_size is None:
            return typed(container, nrps.MEMBERSHIPS_TYPE)
        # names_and_roles_controller.rb: 50 a page at most, Api.paginate's Link
        shown, header = lms_canvas.page(
            container["members"],
            request.base_url,
            request.args.to_dict(),
            plays.nrps_page_size,
            plays.nrps_page_size,
        )
        answer = typed({**container, "id": request.url, "members": shown}, nrps.MEMBERSHIPS_TYPE)
        answer.headers["Link"] = header
        return answer

    # A local admin API, so a platform in another process (codeblanks dev) can be driven too.
    @bp.post("/admin/tools")
    def admin_tools() -> tuple[Response, int]:
        fields = body()
        if not isinstance(fields, dict):
            raise DemoError(400, "send the tool's fields as a JSON object")
        try:
            tool = platform.register_tool(**fields)
        except TypeError as exc:
            raise DemoError(400, f"unexpected tool fields: {exc}") from exc
        return jsonify(asdict(tool)), 201

    @bp.post("/admin/tools/<client_id>/activate")
    def admin_activate(client_id: str) -> Response:
        return jsonify(asdict(platform.activate(client_id)))

    @bp.post("/admin/tools/<client_id>/checkboxes")
    def admin_checkboxes(client_id: str) -> Response:
        fields = body()
        if not isinstance(fields, dict) or not all(
            isinstance(fields.get(k), bool) for k in ("outcomes", "lineitems")
        ):
            raise DemoError(400, 'send {"outcomes": true|false, "lineitems": true|false}')
        boxes = platform.tick(client_id, outcomes=fields["outcomes"], lineitems=fields["lineitems"])
        return jsonify(asdict(boxes))

    @bp.post("/admin/registrations")
    def admin_registrations() -> tuple[Response, int]:
        fields = body()
        if not isinstance(fields, dict) or not isinstance(fields.get("register_url"), str):
            raise DemoError(400, 'send the tool\'s registration URL as {"register_url": ...}')
        return jsonify({"url": platform.start_registration(fields["register_url"])}), 201

    @bp.get("/admin/links")
    def admin_link_list() -> Response:
        return jsonify([asdict(link) for link in platform.links()])

    @bp.post("/admin/links")
    def admin_links() -> tuple[Response, int]:
        fields = body()
        if not isinstance(fields, dict):
            raise DemoError(400, "send client_id, title (and url, custom, score_maximum) as JSON")
        try:
            link = platform.add_link(fields.pop("client_id", ""), fields.pop("title", ""), **fields)
        except TypeError as exc:
            raise DemoError(400, f"unexpected link fields: {exc}") from exc
        return jsonify(asdict(link)), 201

    @bp.route("/admin/knobs", methods=["POST", "DELETE"])
    def admin_knobs() -> Response:
        if request.method == "DELETE":
            platform.knobs.reset()
        else:
            fields = body()
            if not isinstance(fields, dict):
                raise DemoError(400, "send target, times, mode, delay_s (or down_s) as JSON")
            try:
                if "throttle" in fields:  # {"throttle": 3, "client_id": ...}: Canvas's 403
                    platform.throttle(fields.pop("throttle"), **fields)
                elif "down_s" in fields:  # {"down_s": 30, "status": 502}: down for a while
                    platform.down_for(fields.pop("down_s"), **fields)
                else:
                    platform.fail(**fields)
            except (TypeError, ValueError) as exc:
                raise DemoError(400, str(exc)) from exc
        return jsonify({"hits": dict(platform.knobs.hits)})

    @bp.post("/admin/grades/clear")
    def admin_clear() -> Response:
        fields = body()
        if not isinstance(fields, dict) or not isinstance(fields.get("lineitem_id"), int):
            raise DemoError(400, 'send {"lineitem_id": N, "user": "ali"} as JSON')
        return jsonify({"at": platform.clear(fields["lineitem_id"], str(fields.get("user", "")))})

    @bp.get("/admin/scores")
    def admin_scores() -> Response:
        return jsonify([asdict(s) for s in platform.scores()])

    @bp.get("/admin/launch")
    def admin_launch() -> Response:
        args = request.args
        locale = args.get("locale", "en")
        if "link" in args and "for_user" in args:
            initiation = platform.review(
                args.get("user", ""), args["link"], args["for_user"], locale
            )
        elif "link" in args:
            initiation = platform.launch(args.get("user", ""), args["link"], locale)
        else:
            initiation = platform.deep_link(args.get("user", ""), args.get("client_id", ""), locale)
        return jsonify({"url": initiation.url, **asdict(initiation)})

    @bp.post("/admin/publish")
    def admin_publish() -> Response:
        # {"published": false} unpublishes the course; with "lineitem_id", that assignment
        fields = body()
        if not isinstance(fields, dict) or not isinstance(fields.get("published"), bool):
            raise DemoError(400, 'send {"published": true|false, "lineitem_id"?: N} as JSON')
        item = fields.get("lineitem_id")
        if item is not None and not isinstance(item, int):
            raise DemoError(400, "lineitem_id must be a number")
        platform.publish(fields["published"], item)
        return jsonify({"published": fields["published"], "lineitem_id": item})

    @bp.post("/admin/developer_keys")
    def admin_developer_keys() -> tuple[Response, int]:
        # Canvas's "+ LTI Key": {"url": <the tool's JSON URL>} or {"json": {...}}, and the
        # redirect URIs the admin types in; the key is made, turned ON and deployed
        fields = body()
        if not isinstance(fields, dict):
            raise DemoError(400, 'send {"url": ...} or {"json": {...}} (and "redirect_uris")')
        tool = platform.developer_key(
            url=fields.get("url"), json_config=fields.get("json"),
            redirect_uris=fields.get("redirect_uris"),
        )  # fmt: skip
        return jsonify(asdict(tool)), 201
