"""The tool and the demo LMS, each on its own port and registered with each other; a launch."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import requests
from flask import Flask
from sqlalchemy import func, select

from demo.browser import run_launch
from demo.lms_models import Link, Score
from demo.platform import DemoPlatform
from demo.server import BackgroundServer, DemoServer
from service.lti import registration
from service.lti.tool import LtiContext
from service.store.database import Store
from service.store.models import Course, Membership, Placement, User
from service.store.platform_rows import PlatformFields
from service.web import create_app, extensions
from testkit.celery import FakeCelery
from testkit.factories import settings_in
from testkit.pipeline import Pipeline
from testkit.servers import RedisServer, WorkerProcess


@dataclass
class Lms:
    """The tool and the platform, registered with each other."""

    tool_url: str
    app: Flask
    demo: DemoServer
    client_id: str
    deployment_id: str
    worker: WorkerProcess | None = None  # lms_with_a_worker's

    @property
    def platform(self) -> DemoPlatform:
        return self.demo.platform

    @property
    def store(self) -> Store:
        return extensions.store(self.app)

    @property
    def lti(self) -> LtiContext:
        return extensions.lti(self.app)

    @property
    def celery_app(self) -> Any:  # a FakeCelery's `sent` is read by the tests that made one
        return extensions.celery_app(self.app)

    def link(
        self, lesson: str = "expert/what-is-attention", title: str = "What is attention?",
        score: float = 8.0,
    ) -> Link:  # fmt: skip
        custom = {"lesson": lesson} if lesson else {}
        return self.platform.add_link(self.client_id, title, custom=custom, score_maximum=score)

    def counts(self) -> tuple[int, ...]:
        """Rows a launch stores: users, courses, memberships, placements."""
        with self.store.session() as session:
            return tuple(
                session.scalar(select(func.count()).select_from(model)) or 0
                for model in (User, Course, Membership, Placement)
            )


def make_lms(
    tmp_path: Path,
    allow: str = "",
    settings_changes: dict[str, Any] | None = None,
    tool_host: str = "127.0.0.1",
    fake_celery: bool = False,
    registration_by: str = "hand",
    token_audience: bool = True,
    **demo_config: Any,
) -> tuple[Lms, BackgroundServer]:
    """Start the tool and the demo LMS; the tool may reach the demo LMS and `allow` only.

    `settings_changes` replace the tool's settings (a real Redis, for a test with workers).
    The demo LMS serves on 127.0.0.1; a tool on another loopback address (`tool_host`
    127.0.0.2) is another site, a third party inside the LMS's iframe as in production.
    `fake_celery`: the tool sends through a testkit.celery.FakeCelery, which records.
    `registration_by` "developer_key": as a Canvas admin, a developer key made from the
    tool's /lti/config.json, then `codeblanks platforms add` (the demo must play Canvas:
    `personality="canvas"`, passed on to the demo LMS like its other `demo_config`).
    `token_audience` False: registered by hand without the LMS's token audience (Brightspace's
    OAuth2 Audience), as an admin who left that field empty.
    """
    tool_server = BackgroundServer(host=tool_host)
    demo = DemoServer(tmp_path / "demo", tool_url=tool_server.url, **demo_config)
    tool_settings = {
        "base_url": tool_server.url,
        # the demo LMS on loopback, and nothing more
        "outbound_allow": ",".join(filter(None, [urlsplit(demo.url).netloc, allow])),
    }
    settings = settings_in(tmp_path, "tool.db", **{**tool_settings, **(settings_changes or {})})
    celery_app = FakeCelery(settings) if fake_celery else None
    app = create_app({"TESTING": True, "SETTINGS": settings}, celery_app=celery_app)
    tool_server.mount(app)
    tool_server.start()
    demo.start()
    if registration_by == "developer_key":
        return register_developer_key(demo, app, tool_server.url), tool_server
    return register(demo, app, tool_server.url, token_audience=token_audience), tool_server


@contextmanager
def lms_with_a_worker(
    tmp_path: Path,
    redis_server: RedisServer,
    queues: str,
    lms_options: dict[str, Any] | None = None,
    pool: int = 2,
    **changes: Any,
) -> Iterator[Lms]:
    """The tool beside the demo LMS, with a real redis-server and a real Celery worker.

    `lms_options` go to make_lms (the tool's host, the demo LMS's configuration), `changes`
    to the tool's settings; the worker, of `pool` processes, is the Lms's `worker`.
    """
    settings_changes = {"redis_url": redis_server.url, **changes}
    found, tool_server = make_lms(
        tmp_path, settings_changes=settings_changes, **(lms_options or {})
    )
    env = Pipeline.env_of(extensions.settings(found.app))
    worker = WorkerProcess(env, tmp_path / "worker.log", queues=queues)
    worker.start(concurrency=pool)
    found.worker = worker
    try:
        worker.wait_ready()
        yield found
    finally:
        worker.stop()
        found.demo.stop()
        tool_server.stop()
        found.store.dispose()


def register(demo: DemoServer, app: Flask, tool_url: str, *, token_audience: bool = True) -> Lms:
    """Register the tool at `tool_url` (whose store is `app`'s) and the demo LMS with each other.

    The admin gives the tool the LMS's token audience when it has one (Brightspace), unless
    `token_audience` is False. Also used by benchmarks/rush.py, whose tool is a `codeblanks
    serve` on the same store.
    """
    tool = demo.platform.register_tool(
        name="CodeBlanks",
        login_url=tool_url + "/lti/login",
        launch_url=tool_url + "/lti/launch",
        jwks_url=tool_url + "/lti/jwks",
        deep_link_url=tool_url + "/lti/launch",
    )
    fields = PlatformFields(
        issuer=demo.platform.issuer,
        client_id=tool.client_id,
        deployment_ids=(tool.deployment_id,),
        auth_login_url=demo.platform.auth_url,
        auth_token_url=demo.platform.token_url,
        key_set_url=demo.platform.jwks_url,
        name="Demo",
        token_audience=demo.config.plays.token_audience if token_audience else None,
    )
    registration.add_platform(extensions.store(app), fields)
    return Lms(tool_url, app, demo, tool.client_id, tool.deployment_id)


def register_developer_key(demo: DemoServer, app: Flask, tool_url: str) -> Lms:
    """Register as a Canvas admin does: paste the tool's JSON URL into a new developer key
    (which the demo turns ON and deploys), then `codeblanks platforms add` in a real process
    with the client id, the deployment id and Canvas's endpoints (docs/canvas.md)."""
    made = requests.post(
        demo.config.url("/admin/developer_keys"),
        json={"url": tool_url + "/lti/config.json", "redirect_uris": [tool_url + "/lti/launch"]},
        timeout=30,
    )
    made.raise_for_status()
    client_id, deployment_id = made.json()["client_id"], made.json()["deployment_id"]
    platform = demo.platform
    command = [
        str(Path(sys.executable).parent / "codeblanks"),
        "platforms", "add",
        "--issuer", platform.issuer,
        "--client-id", client_id,
        "--deployment-id", deployment_id,
        "--auth-login-url", platform.auth_url,
        "--auth-token-url", platform.token_url,
        "--key-set-url", platform.jwks_url,
        "--name", "Our Canvas",
    ]  # fmt: skip
    env = {**os.environ, **Pipeline.env_of(extensions.settings(app))}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"codeblanks platforms add failed: {done.stderr}")
    return Lms(tool_url, app, demo, client_id, deployment_id)


def signed_in_headers(
    browser: requests.Session, lms: Lms, who: str, link: Link
) -> tuple[dict[str, str], int]:
    """Launch `who` into `link`; return the session header its page holds, and the placement."""
    trace = run_launch(browser, lms.platform.launch(who, link.id))
    query = dict(parse_qsl(urlsplit(trace.launch.headers["Location"]).query))
    placement_id = int(urlsplit(trace.launch.headers["Location"]).path.rsplit("/", 1)[1])
    return {"X-CodeBlanks-Session": query["s"]}, placement_id


def answer(
    browser: Any,  # a requests.Session, or the requests module (no cookies at all)
    lms: Lms,
    headers: dict[str, str],
    placement_id: int,
    question: str = "weighted-average",
    given: object = "@",
    timeout: float = 30,
) -> requests.Response:
    """Post one answer through the API, as the lesson page's script does with the session
    header it holds (by default the seed lesson's first question, right); return the reply."""
    replied: requests.Response = browser.post(
        f"{lms.tool_url}/api/placements/{placement_id}/answers",
        json={"question_id": question, "answer": given},
        headers=headers,
        timeout=timeout,
    )
    return replied


def landed(platform: DemoPlatform) -> dict[tuple[str, int], Score]:
    """Return the scores the demo LMS applied: the first of each (user, line item)."""
    found: dict[tuple[str, int], Score] = {}
    for score in platform.scores():
        if score.applied:
            found.setdefault((score.user_id, score.lineitem_id), score)
    return found
