"""The embedded demo: the demo LMS inside the tool, registered both ways, launch ready."""

from dataclasses import replace

import requests

from service import create_app
from service.demo import platform_of, run_launch
from service.demo.server import BackgroundServer
from service.lti import registration


def test_demo_lms_is_mounted_registered_and_launches(settings):
    server = BackgroundServer()
    demo_settings = replace(settings, demo=1, base_url=server.url)
    app = create_app({"TESTING": True, "SETTINGS": demo_settings})
    server.mount(app)
    server.start()
    try:
        platform = platform_of(app)
        links = platform.links()
        assert [link.custom["lesson"] for link in links][:1] == ["expert/what-is-attention"]
        with requests.Session() as browser:
            course = browser.get(server.url + "/demo/")
            assert course.status_code == 200 and "What is attention?" in course.text
            trace = run_launch(browser, platform.launch("ali", links[0].id))
            assert trace.launch.status_code == 302
            assert "/lessons/" in trace.launch.headers["Location"]
        again = create_app({"TESTING": True, "SETTINGS": demo_settings})  # a restart
        assert len(platform_of(again).links()) == len(links)
        assert len(registration.list_platforms(app.extensions["store"])) == 1
        again.extensions["store"].dispose()
    finally:
        server.stop()
        app.extensions["store"].dispose()


def test_web_processes_starting_together_register_the_demo_once(settings):
    import threading

    demo_settings = replace(settings, demo=1, base_url="http://127.0.0.1:5999")
    apps, errors = [], []

    def start():
        try:
            apps.append(create_app({"TESTING": True, "SETTINGS": demo_settings}))
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(registration.list_platforms(apps[0].extensions["store"])) == 1
    assert len(platform_of(apps[0]).tools()) == 1
    for app in apps:
        app.extensions["store"].dispose()
