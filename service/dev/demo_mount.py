"""The embedded demo: the demo LMS mounted at /demo, registered with the tool as an LMS would.

Used by `codeblanks dev` and the compose demo (CODEBLANKS_DEMO=1), so that a newcomer can
launch a lesson as a student or a teacher right away. The web app only mounts the demo
LMS; once it serves, `codeblanks serve` starts `python -m service.dev.demo_mount`, which
registers the demo LMS the way an LMS admin would: a single-use registration URL from the
tool, pasted into the LMS, whose dynamic registration then calls the tool. Nothing is
registered behind the tool's back, and a restart finds the registration done.
"""

from __future__ import annotations

import fcntl
import sys
import time
from collections.abc import Mapping
from typing import Any

import requests
from flask import Flask

from core.lessons import Catalog, load_catalog
from demo import DemoConfig, create_demo_blueprint
from service import web
from service.instance import prepare
from service.lti import registration
from service.settings import Settings
from service.store.database import Store
from service.store.models import utcnow
from service.web import extensions

SEED_LESSONS = ("expert/what-is-attention", "expert/scaled-dot-product")
PLATFORM_NAME = "Demo LMS"


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the tool as service.web does, with the demo LMS mounted at <base>/demo.

    `codeblanks serve` builds its app with this when CODEBLANKS_DEMO=1 (`codeblanks dev`,
    the compose demo): the tool's own factory knows nothing of the demo.
    """
    app = web.create_app(test_config)
    mount_demo(app)
    return app


def mount_demo(app: Flask) -> None:
    """Serve the demo LMS at <base>/demo (its registration comes once the app serves)."""
    app.register_blueprint(create_demo_blueprint(demo_config(extensions.settings(app))))


def demo_config(settings: Settings) -> DemoConfig:
    """Return the demo LMS's settings: mounted at <base>/demo, its state in the instance dir."""
    base = settings.base_url.rstrip("/")
    return DemoConfig(
        base_url=base + "/demo", state_dir=settings.instance_dir / "demo", tool_url=base
    )


def register_demo(
    settings: Settings, store: Store, catalog: Catalog, timeout_s: float = 30
) -> bool:
    """Register the demo LMS with the serving tool by dynamic registration; seed its links.

    Return False if there was nothing left to do. Each step is done only if it is not done
    yet, so a call after one that failed half-way (registered, links not all made) finishes
    the work. Safe to call from several processes at once.
    """
    issuer = demo_config(settings).issuer
    base = settings.base_url.rstrip("/")
    lock_path = prepare(settings.instance_dir) / "demo-registration.lock"
    with lock_path.open("w") as lock, requests.Session() as admin:  # the LMS admin's browser
        fcntl.flock(lock, fcntl.LOCK_EX)
        client_id = _demo_client_id(store, issuer)
        did = client_id is None
        if client_id is None:
            url = registration.registration_url(
                store, base, name=PLATFORM_NAME, valid_hours=1, now=utcnow()
            )
            started = admin.post(
                issuer + "/admin/registrations", json={"register_url": url}, timeout=timeout_s
            )
            started.raise_for_status()
            page = admin.get(started.json()["url"], timeout=timeout_s)
            if page.status_code != 200 or "org.imsglobal.lti.close" not in page.text:
                raise RuntimeError(f"the demo LMS's registration failed: HTTP {page.status_code}")
            client_id = _demo_client_id(store, issuer)
            if client_id is None:
                raise RuntimeError("the registration ended, but no demo platform is stored")
        listed = admin.get(issuer + "/admin/links", timeout=timeout_s)
        listed.raise_for_status()
        linked = {
            link["custom"].get("lesson") for link in listed.json() if link["client_id"] == client_id
        }
        for lesson_id in SEED_LESSONS:
            lesson = catalog.lesson(lesson_id)
            if lesson is not None and lesson.id not in linked:
                admin.post(
                    issuer + "/admin/links",
                    json={
                        "client_id": client_id,
                        "title": lesson.title,
                        "custom": {"lesson": lesson.id},
                        "score_maximum": lesson.points,
                    },
                    timeout=timeout_s,
                ).raise_for_status()
                did = True
        return did


def register_within(
    settings: Settings, store: Store, catalog: Catalog, deadline_s: float = 600
) -> bool:
    """Call `register_demo` until it succeeds, waiting longer after each failure.

    A slow or just-started host may not answer the first try in time; each failure is said
    on stderr, and the last one is raised once `deadline_s` has passed.
    """
    deadline = time.monotonic() + deadline_s
    pause = 1.0
    while True:
        try:
            return register_demo(settings, store, catalog)
        except (requests.RequestException, RuntimeError) as exc:
            if time.monotonic() + pause > deadline:
                raise
            print(
                f"codeblanks: the demo LMS is not registered yet ({exc}); trying again",
                file=sys.stderr,
            )
            time.sleep(pause)
            pause = min(pause * 2, 30.0)


def _demo_client_id(store: Store, issuer: str) -> str | None:
    """Return the client id the demo LMS is registered with, or None."""
    found = [p for p in registration.list_platforms(store) if p.issuer == issuer]
    return found[0].client_id if found else None


def main() -> int:
    """Wait for the web app to serve, then register the demo LMS (`-m service.dev.demo_mount`)."""
    settings = Settings.from_env()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if requests.get(settings.base_url.rstrip("/") + "/healthz", timeout=2).ok:
                break
        except requests.RequestException:
            pass
        time.sleep(0.2)
    store = Store(settings.database)
    try:
        done = register_within(settings, store, load_catalog(settings.lessons_dir))
    except (requests.RequestException, RuntimeError, ValueError) as exc:
        print(f"codeblanks: the demo LMS could not be registered: {exc}", file=sys.stderr)
        return 1
    finally:
        store.dispose()
    print("codeblanks: demo LMS registered" if done else "codeblanks: demo LMS was registered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
