"""The demo LMS's pages: course, gradebook, launch frames, deep-linking return, registration."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from flask import Blueprint, Response, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from demo import lms_ags, lms_deep_linking
from demo.lms_errors import DemoError
from demo.lms_models import COURSE, STUDENTS, TEACHER, AutoPost, LoginInitiation
from demo.platform import DemoPlatform


def points(value: float) -> str:
    """Return points without a useless '.0' (7.5, 10)."""
    return f"{value:g}"


def when(unix_time: float) -> str:
    """Return a Unix time as a readable UTC time."""
    return datetime.fromtimestamp(unix_time, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def start(initiation: LoginInitiation) -> BaseResponse:
    """Send the browser to the tool's login URL: an auto-post like Moodle's, or a redirect."""
    if initiation.method == "POST":
        page = AutoPost(initiation.login_url, initiation.params).html("Starting the launch…")
        return Response(page, mimetype="text/html")
    return redirect(initiation.url)


# The languages a user of the demo LMS may choose, as Moodle's user preference: every launch
# sends the chosen one as `launch_presentation.locale`, as Moodle and Canvas do.
LANGUAGES = {"en": "English", "tr": "Türkçe"}


def language() -> str:
    """Return the demo user's chosen language (`?lang=`), English when none or unknown."""
    chosen = request.args.get("lang", "en")
    return chosen if chosen in LANGUAGES else "en"


def register_pages(bp: Blueprint, platform: DemoPlatform) -> None:
    """Add the browser pages to `bp`."""
    canvas = platform.config.plays.canvas_ags

    @bp.context_processor
    def helpers() -> dict[str, object]:
        return {
            "course": COURSE,
            "points": points,
            "when": when,
            # a Brightspace's clipped points, as its own gradebook shows them
            "scaled": lambda item, score: lms_ags.scaled(item, score, platform.config.plays),
            "given": lambda score: lms_ags.given(score, canvas),
            "refusal": lms_ags.refusal,
            "lang": language(),
            "languages": LANGUAGES,
        }

    @bp.get("/")
    def course() -> str:
        tools = {t.client_id: t for t in platform.tools()}
        rows = [
            {"link": link, "tool": tools.get(link.client_id), "items": platform.lineitems_of(link)}
            for link in platform.links()
        ]
        tool_url = platform.config.tool_url
        return render_template(
            "demo/course.html",
            rows=rows,
            tools=list(tools.values()),
            users=[TEACHER, *STUDENTS],
            teacher=TEACHER,
            register_url=f"{tool_url.rstrip('/')}/lti/register" if tool_url else "",
            platform=platform,
        )

    @bp.get("/gradebook")
    def gradebook() -> str:
        items = platform.lineitems()
        names = {i.id: i.label for i in items}
        return render_template(
            "demo/gradebook.html",
            items=items,
            users=[*STUDENTS, TEACHER],
            grades=platform.gradebook(),
            cleared={i.id: platform.records.cleared(i.id) for i in items},
            received=list(reversed(platform.scores()))[:100],
            names=names,
            people=platform.users,
            teacher=TEACHER,
        )

    @bp.post("/gradebook/clear")
    def clear_grade() -> BaseResponse:
        # the teacher's reset of one grade, as in Moodle's grader report
        platform.clear(request.form.get("lineitem_id", type=int) or 0, request.form.get("user", ""))
        return redirect(url_for(".gradebook"), code=303)

    @bp.get("/launch/<link_id>")
    def launch(link_id: str) -> str:
        user = platform.users[platform.user_sub(request.args.get("user", ""))]
        link = platform.records.link(link_id)
        return render_template(
            "demo/frame.html",
            heading=link.title if link else link_id,
            note=f"Launched as {user.name}",
            src=url_for(".launch_start", link_id=link_id, user=user.sub, lang=language()),
            close_url=url_for(".course", lang=language()),
        )

    @bp.get("/launch/<link_id>/start")
    def launch_start(link_id: str) -> BaseResponse:
        return start(platform.launch(request.args.get("user", ""), link_id, language()))

    @bp.get("/review/<link_id>")
    def review(link_id: str) -> str:
        """Open one student's work from the gradebook, as Moodle's per-student grade link."""
        user = platform.users[platform.user_sub(request.args.get("user", TEACHER.sub))]
        student = platform.users[platform.user_sub(request.args.get("for", ""))]
        link = platform.records.link(link_id)
        return render_template(
            "demo/frame.html",
            heading=f"{link.title if link else link_id}: {student.name}",
            note=f"Submission review as {user.name}",
            src=url_for(
                ".review_start", link_id=link_id, user=user.sub, for_user=student.sub,
                lang=language(),
            ),
            close_url=url_for(".gradebook", lang=language()),
        )  # fmt: skip

    @bp.get("/review/<link_id>/start")
    def review_start(link_id: str) -> BaseResponse:
        args = request.args
        initiation = platform.review(
            args.get("user", ""), link_id, args.get("for_user", ""), language()
        )
        return start(initiation)

    @bp.get("/deep_link")
    def deep_link() -> str:
        client_id = request.args.get("client_id", "")
        user = platform.users[platform.user_sub(request.args.get("user", TEACHER.sub))]
        return render_template(
            "demo/frame.html",
            heading=f"Add content from {platform.tool(client_id).name}",
            note=f"Deep linking as {user.name}",
            src=url_for(".deep_link_start", client_id=client_id, user=user.sub, lang=language()),
            close_url=url_for(".course", lang=language()),
        )

    @bp.get("/deep_link/start")
    def deep_link_start() -> BaseResponse:
        args = request.args
        return start(
            platform.deep_link(args.get("user", ""), args.get("client_id", ""), language())
        )

    @bp.post("/deep_link_return")
    def deep_link_return() -> str:
        result = lms_deep_linking.receive(platform, request.form.to_dict())
        return render_template("demo/deep_link_done.html", result=result)

    @bp.post("/tools/register")
    def register_tool() -> str:
        target = platform.start_registration(request.form.get("register_url", "").strip())
        return render_template(
            "demo/frame.html",
            heading="Registering a tool",
            note="The tool's registration page; it closes itself when done.",
            src=target,
            close_url=url_for(".course", lang=language()),
        )

    @bp.post("/developer_keys")
    def developer_key() -> BaseResponse:
        # Canvas's "+ LTI Key" by Paste JSON or Enter URL (lti_dev_key_config.md); the key is
        # saved ON and installed in the course, so its client and deployment ids show above
        form = request.form
        pasted = form.get("json", "").strip()
        try:
            config = json.loads(pasted) if pasted else None
        except ValueError as exc:
            raise DemoError(422, f"the JSON does not parse: {exc}") from exc
        uris = [u.strip() for u in form.get("redirect_uris", "").splitlines() if u.strip()]
        platform.developer_key(
            url=form.get("url", "").strip() or None, json_config=config, redirect_uris=uris or None
        )
        return redirect(url_for(".course"), code=303)

    @bp.post("/tools/<client_id>/activate")
    def activate_tool(client_id: str) -> BaseResponse:
        platform.activate(client_id)
        return redirect(url_for(".course"))
