"""The admin's self-test page in Chromium: reached and run by keyboard alone, and it passes
the axe audit, before and after a run."""

import pytest
import requests

from demo.browser import run_launch
from testkit.chromium import headless
from testkit.lms import make_lms
from tests.service.web.a11y import assert_accessible


@pytest.fixture
def lms(tmp_path):
    found, tool_server = make_lms(tmp_path, settings_changes={"admin_password": "s3cret"})
    yield found
    found.demo.stop()
    tool_server.stop()
    found.store.dispose()


def tab_to(page, text, limit=40):
    """Press Tab until the focused element's text holds `text`; fail past `limit` presses."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if text in (page.evaluate("document.activeElement.innerText") or ""):
            return
    raise AssertionError(f"no focusable element with {text!r}")


def test_the_admin_runs_the_self_test_by_keyboard_and_reads_each_check(lms):
    link = lms.link()
    with requests.Session() as browser:  # a launch: the course to test grades in
        run_launch(browser, lms.platform.launch("ali", link.id))
    before = len(lms.platform.lineitems())
    with headless() as chromium:
        context = chromium.new_context(http_credentials={"username": "admin", "password": "s3cret"})
        page = context.new_page()
        page.goto(lms.tool_url + "/admin/platforms")
        assert_accessible(page, "admin platforms, self-test not run")
        tab_to(page, "Not run yet")
        page.keyboard.press("Enter")
        page.wait_for_url("**/check")
        assert "No self-test has run for this platform yet." in page.inner_text("main")
        assert_accessible(page, "admin self-test, none yet")
        tab_to(page, "Run the self-test now")
        page.keyboard.press("Enter")
        page.wait_for_selector("text=Grades can be sent to this LMS.", timeout=60_000)
        main = page.inner_text("main")
        for check in ("key_set", "scopes", "line_item", "score", "read_back", "cleanup"):
            assert check in main
        assert "None met." in main
        assert_accessible(page, "admin self-test, grades can be sent")
        page.goto(lms.tool_url + "/admin/platforms")
        assert "Grades can be sent" in page.inner_text("main")
        context.close()
    assert len(lms.platform.lineitems()) == before
