"""The embedded demo: the demo LMS inside the tool, registered by dynamic registration."""

import threading
from dataclasses import replace

import pytest
import requests
from sqlalchemy import select

from demo import platform_of, run_launch
from demo.server import BackgroundServer
from service.dev.demo_mount import create_app, register_demo, register_within
from service.lti import registration
from service.store.models import RegistrationToken, utcnow
from service.web import extensions


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
    extensions.store(app).dispose()


def test_demo_lms_is_registered_with_a_token_and_launches(demo):
    demo_settings, app, server = demo
    store, catalog = extensions.store(app), extensions.catalog(app)
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
    assert register_demo(demo_settings, extensions.store(again), catalog) is False
    assert len(platform_of(again).links()) == len(links)
    assert len(registration.list_platforms(store)) == 1
    extensions.store(again).dispose()


def test_registrations_started_together_register_the_demo_once(demo):
    demo_settings, app, _server = demo
    store, catalog = extensions.store(app), extensions.catalog(app)
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


def test_a_registration_left_without_its_links_is_finished_by_the_next_call(demo):
    demo_settings, app, _server = demo
    store, catalog = extensions.store(app), extensions.catalog(app)
    platform = platform_of(app)
    # Registered, then stopped before any link was made (a timeout, a restart).
    url = registration.registration_url(
        store, demo_settings.base_url, name="Demo LMS", now=utcnow()
    )
    with requests.Session() as admin:
        assert "org.imsglobal.lti.close" in admin.get(platform.start_registration(url)).text
    assert len(registration.list_platforms(store)) == 1 and platform.links() == []
    assert register_demo(demo_settings, store, catalog) is True
    lessons = [link.custom["lesson"] for link in platform.links()]
    assert lessons == ["expert/what-is-attention", "expert/scaled-dot-product"]
    assert register_demo(demo_settings, store, catalog) is False
    assert len(platform.links()) == 2 and len(registration.list_platforms(store)) == 1


def test_a_tool_that_is_not_ready_yet_is_registered_once_it_is(settings, capfd):
    server = BackgroundServer()  # answers 503 until the app is mounted
    demo_settings = replace(settings, demo=1, base_url=server.url)
    app = create_app({"TESTING": True, "SETTINGS": demo_settings})
    store, catalog = extensions.store(app), extensions.catalog(app)
    server.start()
    later = threading.Timer(1.5, server.mount, args=(app,))
    later.start()
    try:
        assert register_within(demo_settings, store, catalog, deadline_s=60) is True
        assert len(platform_of(app).links()) == 2
        assert "not registered yet" in capfd.readouterr().err
    finally:
        later.cancel()
        server.stop()
        store.dispose()


def test_a_tool_that_never_answers_is_given_up_at_the_deadline(settings):
    server = BackgroundServer().start()  # never mounted: 503 to everything
    demo_settings = replace(settings, demo=1, base_url=server.url)
    app = create_app({"TESTING": True, "SETTINGS": demo_settings})
    try:
        with pytest.raises(requests.HTTPError):
            register_within(
                demo_settings, extensions.store(app), extensions.catalog(app), deadline_s=2
            )
        assert registration.list_platforms(extensions.store(app)) == []
    finally:
        server.stop()
        extensions.store(app).dispose()
