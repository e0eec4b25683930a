"""The embedded demo: the demo LMS inside the tool, registered by dynamic registration."""

import threading
from dataclasses import replace

import pytest
import requests
from sqlalchemy import select

from service.demo import platform_of, run_launch
from service.demo.server import BackgroundServer
from service.dev.demo_mount import register_demo
from service.lti import registration
from service.store.models import RegistrationToken
from service.web import create_app


@pytest.fixture
def demo(settings):
    """The tool with its demo LMS mounted, serving on a free port: (settings, app, server)."""
    server = BackgroundServer()
    demo_settings = replace(settings, demo=1, base_url=server.url)
    app = create_app({"TESTING": True, "SETTINGS": demo_settings})
    server.mount(app)
    server.start()
    yield demo_settings, app, server
    server.stop()
    app.extensions["store"].dispose()


def test_demo_lms_is_registered_with_a_token_and_launches(demo):
    demo_settings, app, server = demo
    store, catalog = app.extensions["store"], app.extensions["catalog"]
    platform = platform_of(app)
    assert platform.links() == [] and registration.list_platforms(store) == []
    assert register_demo(demo_settings, store, catalog) is True
    [registered] = registration.list_platforms(store)
    assert registered.issuer == server.url + "/demo" and registered.name == "Demo LMS"
    with store.session() as session:  # through the gate, like any LMS
        token = session.scalar(select(RegistrationToken))
        assert token.used_at is not None and token.platform_id == registered.id
    links = platform.links()
    assert [link.custom["lesson"] for link in links][:1] == ["expert/what-is-attention"]
    with requests.Session() as browser:
        course = browser.get(server.url + "/demo/")
        assert course.status_code == 200 and "What is attention?" in course.text
        trace = run_launch(browser, platform.launch("ali", links[0].id))
        assert trace.launch.status_code == 302
        assert "/lessons/" in trace.launch.headers["Location"]
    again = create_app({"TESTING": True, "SETTINGS": demo_settings})  # a restart
    assert register_demo(demo_settings, again.extensions["store"], catalog) is False
    assert len(platform_of(again).links()) == len(links)
    assert len(registration.list_platforms(store)) == 1
    again.extensions["store"].dispose()


def test_registrations_started_together_register_the_demo_once(demo):
    demo_settings, app, _server = demo
    store, catalog = app.extensions["store"], app.extensions["catalog"]
    results, errors = [], []

    def start():
        try:
            results.append(register_demo(demo_settings, store, catalog))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and sorted(results) == [False, False, True]
    assert len(registration.list_platforms(store)) == 1
    assert len(platform_of(app).tools()) == 1
