"""What a valid launch opens: the session, and the page or the redirect (Flask)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from urllib.parse import urlsplit

from celery import Celery
from flask import Response, redirect, render_template, session, url_for
from werkzeug.wrappers import Response as WebResponse

from core.lessons import Catalog
from core.messages import say
from service.lti import launch_records, line_items, logins, reviews, roster, self_test
from service.lti.claims import DEEP_LINKING, DL, LaunchProblem
from service.lti.tool import LtiContext
from service.lti.validation import HardenedLaunch, Login, ValidLaunch
from service.store import memberships
from service.store.models import utcnow
from service.web.auth import link_token, page_session, sign_in
from service.web.i18n import remember_launch_locale


def validate(ctx: LtiContext, form: Mapping[str, str], login: Login) -> ValidLaunch:
    """Run the hardened launch validation against the login it answers."""
    return HardenedLaunch(
        form,
        login,
        ctx.key_sets,
        ctx.base_url,
        functools.partial(logins.use_nonce, ctx.store),
        functools.partial(logins.deployment_known, ctx.store),
    ).run()


def open(  # noqa: A001 - the launch opens
    ctx: LtiContext, celery_app: Celery, valid: ValidLaunch
) -> WebResponse:
    """Record who launched where, start their session, and answer with the right page.

    A teacher's launch also asks for the course's roster to be read, if it is stale: their
    pages then count the students who have not launched yet. A launch of a placement that
    has no line item, where the LMS lets the tool make one, asks for it to be made. A launch
    from a platform never tested, or last found shutting the tool out, has it tested.
    """
    opened = launch_records.record(ctx.store, ctx.catalog, valid)
    if opened.teacher:
        roster.ask_for_read(ctx.store, celery_app, opened.course_id, utcnow())
    if opened.placement_id:  # a launch without a line item, where the tool may make one
        line_items.ask_to_make(ctx.store, celery_app, opened.placement_id)
    # a platform never tested (added by hand), or last found shutting the tool out, is
    # tested again: its teachers' pages then say whether grades can be sent
    self_test.ask_after_launch(ctx.store, celery_app, valid.platform_id)
    student_id = _reviewed(ctx, valid, opened)
    sign_in(
        opened.user_id,
        [opened.placement_id] if opened.placement_id else [],
        teacher_course_ids=[opened.course_id] if opened.teacher else [],
        frame_urls=_lms_urls(valid),
    )
    remember_launch_locale(_object(valid.claim("launch_presentation")).get("locale"))
    if valid.message_type == DEEP_LINKING:
        if not opened.teacher:
            raise LaunchProblem(
                say("Not a teacher"), say("only teachers can add lessons to a course"), status=403
            )
        # only what the answer needs: the session travels in URLs
        settings = {
            key: value
            for key, value in valid.body[DL + "deep_linking_settings"].items()
            if key in ("deep_link_return_url", "accept_multiple", "data")
            and len(str(value)) <= 2048
        }
        session["deep_linking"] = {
            "platform_id": valid.platform_id,
            "deployment_id": valid.claim("deployment_id"),
            "settings": settings,
        }
        fields = page_session()
        return _page(
            render_template(
                "lti/picker.html",
                tracks=_tracks(ctx.catalog),
                action=url_for("lti_pick.deep_link", s=fields["link_token"]),
                deep_linking=True,
                multiple=bool(settings.get("accept_multiple", True)),
                **fields,
            )
        )
    if student_id is not None and opened.teacher:
        target_url = url_for(
            "teacher.student",
            placement_id=opened.placement_id,
            user_id=student_id,
            s=link_token(),
        )
        return redirect(target_url)
    target = urlsplit(str(valid.claim("target_link_uri", ""))).path
    if target.endswith("/lti/course"):  # Canvas's course navigation: the whole course
        endpoint = "teacher.gradebook" if opened.teacher else "pages.course"
        return redirect(url_for(endpoint, course_id=opened.course_id, s=link_token()))
    if opened.placement_id is None:
        fields = page_session()
        if opened.teacher:
            return _page(
                render_template(
                    "lti/picker.html",
                    tracks=_tracks(ctx.catalog),
                    action=url_for(
                        "lti_pick.resource_link",
                        course_id=opened.course_id,
                        link=opened.resource_link_id,
                        s=fields["link_token"],
                    ),
                    deep_linking=False,
                    multiple=False,
                    **fields,
                )
            )
        return _page(render_template("lti/not_ready.html", **fields))
    endpoint = "teacher.placement" if opened.teacher else "pages.lesson"
    return redirect(url_for(endpoint, placement_id=opened.placement_id, s=link_token()))


def _reviewed(ctx: LtiContext, valid: ValidLaunch, opened: launch_records.Opened) -> int | None:
    """Return the student whose work a review launch opens (None for other launches).

    A teacher may open any member of the course the launch is for; a student only
    themselves. Anything else is refused before the session starts.
    """
    sub = reviews.wanted(valid)
    if sub is None:
        return None
    if not opened.teacher and sub != valid.body["sub"]:
        raise LaunchProblem(
            say("Not your work"),
            say("a student can open only their own work, not another student's"),
            say("the LMS link you followed: it opens another person's submission"),
            status=403,
        )
    if opened.placement_id is None:
        raise LaunchProblem(
            say("No lesson here yet"),
            say("this tool has no lesson placed behind this link, so there is no work to see"),
            say("that the link was set up in the tool: a teacher's first launch picks its lesson"),
            status=404,
        )
    student_id = memberships.member_of(ctx.store, opened.course_id, valid.platform_id, sub)
    if student_id is None:
        raise LaunchProblem(
            say("Unknown student"),
            say(
                "the student {sub} has not opened this course's lessons in the tool yet, so "
                "there is no work to see",
                sub=repr(sub),
            ),
            say("the student's own launch of the lesson: their work appears after it"),
            status=404,
        )
    return student_id


def _lms_urls(valid: ValidLaunch) -> list[str]:
    """Return the launch's URLs of the LMS pages that may frame the tool (see service.web.headers).

    Canvas's issuer is one for every school, while the page that frames the tool is the
    school's own domain: that comes as the return URL (and deep linking's return URL).
    """
    urls = [
        valid.body.get("iss"),
        _object(valid.claim("launch_presentation")).get("return_url"),
        _object(valid.claim("tool_platform")).get("url"),
        _object(valid.body.get(DL + "deep_linking_settings")).get("deep_link_return_url"),
    ]
    return [url for url in urls if isinstance(url, str) and len(url) <= 2048]


def _object(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _tracks(catalog: Catalog) -> list[tuple[str, list[tuple[str, str, float]]]]:
    return [
        (
            track.title,
            [
                (lid, catalog.lessons[lid].title, catalog.lessons[lid].points)
                for lid in track.lesson_ids
            ],
        )
        for track in catalog.tracks.values()
    ]


def _page(html: str) -> Response:
    return Response(html, mimetype="text/html")
