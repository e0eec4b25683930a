"""The platform's protocol endpoints: discovery, OIDC, token, registration, AGS, NRPS, admin."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from flask import Blueprint, Response, jsonify, request

from demo import lms_ags, lms_registration, nrps, tokens
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
    "openid_configuration",
    "jwks",
}


def typed(body: Any, media_type: str, status: int = 200) -> Response:
    """Return `body` as JSON under an LTI media type."""
    return Response(json.dumps(body), status=status, mimetype=media_type)


def register_views(bp: Blueprint, platform: DemoPlatform) -> None:
    """Add the protocol endpoints to `bp`."""

    def knob(target: str) -> Response | None:
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

    @bp.get("/.well-known/openid-configuration")
    def openid_configuration() -> Response:
        return jsonify(platform.openid_configuration())

    @bp.get("/jwks")
    def jwks() -> Response:
        return jsonify(platform.key.jwks())

    @bp.route("/auth", methods=["GET", "POST"])
    def auth() -> Response:
        params = request.form if request.method == "POST" else request.args
        post = platform.authorize(params.to_dict())
        return Response(post.html(), mimetype="text/html")

    @bp.post("/token")
    def token() -> Response:
        if failed := knob("token"):
            return failed
        answer = tokens.issue(platform, request.form.to_dict())
        response = Response(json.dumps(answer), mimetype=platform.config.token_content_type)
        response.headers["Cache-Control"] = "no-store"
        return response

    @bp.post("/register")
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

    @bp.route("/courses/<course_id>/lineitems", methods=["GET", "POST"])
    def lineitems(course_id: str) -> Response:
        if failed := knob("ags"):
            return failed
        auth = request.headers.get("Authorization")
        if request.method == "GET":
            access = tokens.check(platform, auth, (LINEITEM, LINEITEM_READONLY))
            found = lms_ags.search(platform, access, course_id, request.args.to_dict())
            return typed([lms_ags.to_json(platform, i) for i in found], lms_ags.CONTAINER_TYPE)
        access = tokens.check(platform, auth, (LINEITEM,))
        item = lms_ags.save(platform, access, course_id, request.mimetype, body())
        return typed(lms_ags.to_json(platform, item), lms_ags.LINEITEM_TYPE, 201)

    @bp.route("/courses/<course_id>/lineitems/<int:item_id>", methods=["GET", "PUT", "DELETE"])
    def lineitem(course_id: str, item_id: int) -> Response:
        if failed := knob("ags"):
            return failed
        auth = request.headers.get("Authorization")
        needs = (LINEITEM, LINEITEM_READONLY) if request.method == "GET" else (LINEITEM,)
        access = tokens.check(platform, auth, needs)
        item = lms_ags.find(platform, access, course_id, item_id)
        if request.method == "DELETE":
            platform.records.delete_lineitem(item.id)
            return Response(status=204)
        if request.method == "PUT":
            item = lms_ags.save(platform, access, course_id, request.mimetype, body(), item)
        return typed(lms_ags.to_json(platform, item), lms_ags.LINEITEM_TYPE)

    @bp.post("/courses/<course_id>/lineitems/<int:item_id>/scores")
    def scores(course_id: str, item_id: int) -> Response:
        if failed := knob("ags"):
            return failed
        access = tokens.check(platform, request.headers.get("Authorization"), (SCORE,))
        item = lms_ags.find(platform, access, course_id, item_id)
        score = lms_ags.post_score(platform, item, request.mimetype, body())
        url = platform.lineitem_url(item).split("?")[0]
        return jsonify({"resultUrl": f"{url}/results/{score.user_id}"})

    @bp.get("/courses/<course_id>/lineitems/<int:item_id>/results")
    def results(course_id: str, item_id: int) -> Response:
        if failed := knob("results"):
            return failed
        access = tokens.check(platform, request.headers.get("Authorization"), (RESULT_READONLY,))
        item = lms_ags.find(platform, access, course_id, item_id)
        found = lms_ags.results(platform, item, request.args.get("user_id"))
        page, link = lms_ags.page_of(
            found, request.url, request.args.to_dict(), platform.config.results_per_page
        )
        answer = typed(page, lms_ags.RESULTS_TYPE)
        if link is not None:
            # PHP sends the header's UTF-8 bytes as they are: so does this
            answer.headers["Link"] = link.encode().decode("latin-1")
        return answer

    @bp.get("/courses/<course_id>/memberships")
    def memberships(course_id: str) -> Response:
        if failed := knob("nrps"):
            return failed
        access = tokens.check(platform, request.headers.get("Authorization"), (MEMBERSHIPS,))
        container = nrps.memberships(platform, access, course_id, request.args.to_dict())
        return typed(container, nrps.MEMBERSHIPS_TYPE)

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
                if "down_s" in fields:  # {"down_s": 30, "status": 502}: down for a while
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
