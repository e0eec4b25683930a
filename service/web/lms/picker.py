"""The lesson picker's answers: a deep linking response, or a lesson for a resource link."""

from __future__ import annotations

from flask import Blueprint, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response as WebResponse

from core.lessons import Lesson
from core.messages import say
from service.lti.claims import LaunchProblem
from service.lti.deep_linking import response_jwt
from service.store import placement_rows, platform_rows
from service.web import csrf, extensions
from service.web.auth import add_placements, current_user, link_token

bp = Blueprint("lti_pick", __name__, url_prefix="/lti/pick")


@bp.post("/deep-link")
def deep_link() -> str:
    """Send the picked lessons (or whole tracks) back to the LMS as resource links."""
    csrf.check(request.form.get(csrf.FIELD))
    user = current_user()
    pending = session.get("deep_linking")
    if user is None or not user.teacher_course_ids or not isinstance(pending, dict):
        raise LaunchProblem(
            say("No deep linking in progress"), say("start again from the LMS"), status=403
        )
    ctx = extensions.lti()
    lessons = _picked(request.form.getlist("lesson"), request.form.getlist("track"))
    platform = platform_rows.find(ctx.store, pending["platform_id"])
    if platform is None:
        raise LaunchProblem(
            say("Unknown platform"), say("the registration was removed"), status=403
        )
    settings = pending["settings"]
    token = response_jwt(
        ctx.access(platform),
        pending["deployment_id"],
        settings,
        lessons,
        ctx.launch_url,
        ctx.review_url,
    )
    session.pop("deep_linking", None)
    return render_template(
        "lti/autopost.html", action=settings["deep_link_return_url"], fields={"JWT": token}
    )


@bp.post("/resource-link/<int:course_id>")
def resource_link(course_id: int) -> WebResponse:
    """Place the picked lesson behind a resource link on its first (teacher's) launch."""
    csrf.check(request.form.get(csrf.FIELD))
    user = current_user()
    link = request.args.get("link", "")
    if user is None or course_id not in user.teacher_course_ids or not link:
        raise LaunchProblem(
            say("Not allowed"), say("only the course's teachers can pick"), status=403
        )
    ctx = extensions.lti()
    lesson = ctx.catalog.lesson(request.form.get("lesson", ""))
    if lesson is None:
        raise LaunchProblem(say("Unknown lesson"), say("pick one of the listed lessons"))
    placement_id = placement_rows.place(ctx.store, course_id, link, lesson.id, lesson.title)
    add_placements([placement_id])
    return redirect(url_for("teacher.placement", placement_id=placement_id, s=link_token()))


def _picked(ids: list[str], tracks: list[str]) -> list[Lesson]:
    catalog = extensions.lti().catalog
    chosen: list[Lesson] = []
    for track in catalog.tracks.values():
        if track.title in tracks:
            chosen += [catalog.lessons[i] for i in track.lesson_ids]
    for lesson_id in ids:
        lesson = catalog.lesson(lesson_id)
        if lesson is not None and lesson not in chosen:
            chosen.append(lesson)
    if not chosen:
        raise LaunchProblem(say("Nothing picked"), say("choose at least one lesson or track"))
    return chosen
