"""The embedded demo: the demo LMS mounted at /demo and registered with the tool, both ways.

Used by `codeblanks dev` (CODEBLANKS_DEMO=1), so that a newcomer can launch a lesson as a
student or a teacher right away. Registration is idempotent: a restart finds it done.
"""

from __future__ import annotations

import sqlite3
import time

from flask import Flask
from sqlalchemy.exc import IntegrityError

from service.demo import DemoConfig, DemoError, DemoPlatform, create_demo_blueprint, platform_of
from service.lti import registration
from service.settings import Settings

CLIENT_ID = "codeblanks-demo"
DEPLOYMENT_ID = "1:codeblanks-demo"
SEED_LESSONS = ("expert/what-is-attention", "expert/scaled-dot-product")


def mount_demo(app: Flask) -> None:
    """Serve the demo LMS at <base>/demo and register it and the tool with each other."""
    settings: Settings = app.config["SETTINGS"]
    base = settings.base_url.rstrip("/")
    config = DemoConfig(
        base_url=base + "/demo", state_dir=settings.instance_dir / "demo", tool_url=base
    )
    app.register_blueprint(create_demo_blueprint(config))
    platform = platform_of(app)
    # several web processes start at once (gunicorn): whoever registers second finds it done
    for attempt in range(5):
        try:
            _register(app, platform)
            return
        except (DemoError, IntegrityError, sqlite3.Error):
            if attempt == 4:
                raise
            time.sleep(0.2 * (attempt + 1))


def _register(app: Flask, platform: DemoPlatform) -> None:
    base = app.config["SETTINGS"].base_url.rstrip("/")
    try:
        platform.tool(CLIENT_ID)
    except DemoError:
        platform.register_tool(
            name="CodeBlanks",
            login_url=base + "/lti/login",
            launch_url=base + "/lti/launch",
            jwks_url=base + "/lti/jwks",
            deep_link_url=base + "/lti/launch",
            client_id=CLIENT_ID,
            deployment_id=DEPLOYMENT_ID,
        )
    if not platform.links():
        catalog = app.extensions["catalog"]
        for lesson_id in SEED_LESSONS:
            lesson = catalog.lesson(lesson_id)
            if lesson is not None:
                platform.add_link(
                    CLIENT_ID,
                    lesson.title,
                    custom={"lesson": lesson.id},
                    score_maximum=lesson.points,
                )
    registration.add_platform(
        app.extensions["store"],
        issuer=platform.issuer,
        client_id=CLIENT_ID,
        deployment_ids=[DEPLOYMENT_ID],
        auth_login_url=platform.auth_url,
        auth_token_url=platform.token_url,
        key_set_url=platform.jwks_url,
        name="Demo LMS",
    )
