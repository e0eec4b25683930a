"""A link is not an account: whose session a page is, in a real browser beside the demo LMS.

A lesson link carries a link token (`s`, service.web.auth). Here, with a real worker grading:
Berna's browser opening Ali's copied link asks before anything is done as Ali; a token never
leaves in a Referer nor stays in the address bar; a page left idle leaves links that die
while its script keeps working; and the whole launch works inside the LMS's iframe when the
browser sends the tool no cookie at all (a third party, its cookies blocked).
"""

import http.server
import re
import threading
import time
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from sqlalchemy import select

from service.store.models import Submission, User
from testkit.chromium import headless
from testkit.lms import lms_with_a_worker
from testkit.waits import wait_for
from tests.service.web import test_pages_browser as pages
from tests.service.web.a11y import assert_accessible
from tests.service.web.test_pages_browser import (
    FAILING,
    SOLUTION,
    TIMEOUT_MS,
    Watch,
    expect_text,
    launch,
    submit_code,
)

# the fixtures: the tool beside the demo LMS with a real worker, and Debian's Chromium
lms, chromium = pages.lms, pages.chromium

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]


def submitted_by(lms):
    """Return the name of the author of every submission, oldest first."""
    with lms.store.session() as session:
        return list(
            session.scalars(
                select(User.name).join(Submission, Submission.user_id == User.id)
                .order_by(Submission.id)
            )
        )  # fmt: skip


def address_of(frame):
    return frame.locator("body").evaluate("() => window.location.href")


def test_bernas_browser_opening_alis_link_submits_nothing_as_ali_unasked(lms, chromium):
    lms.link()
    ali, ali_frame, _ = launch(chromium, lms, "Ali Student")
    ali_frame.get_by_role("heading", name="What is attention?", level=1).wait_for()
    expect_text(ali_frame.locator(".bar"), "Signed in as Ali Student")
    copied = address_of(ali_frame)  # the lesson's address, as "copy frame address" gives it
    assert "s=" in copied

    # Berna launches herself, then opens Ali's link in the same browser
    berna, berna_frame, _ = launch(chromium, lms, "Berna Student")
    berna_frame.get_by_role("heading", name="What is attention?", level=1).wait_for()
    expect_text(berna_frame.locator(".bar"), "Signed in as Berna Student")
    tab = berna.context.new_page()
    watch = Watch(tab)
    answer = tab.goto(copied)
    assert answer.status == 409
    expect_text(tab.locator("main"), "The link you opened carries the session of Ali Student")
    expect_text(tab.locator("main"), "This browser is signed in as Berna Student")
    expect_text(tab.locator(".bar"), "Signed in as Berna Student")
    assert tab.locator("#lesson").count() == 0  # not Ali's lesson page
    assert "s=" not in tab.url  # nor his token in the address bar
    assert_accessible(tab, "another user's link")

    # she goes on as herself: what she submits is hers
    tab.get_by_role("link", name="Continue as Berna Student").click()
    tab.get_by_role("heading", name="What is attention?", level=1).wait_for()
    expect_text(tab.locator(".bar"), "Signed in as Berna Student")
    submit_code(tab, tab, FAILING)
    expect_text(tab.locator("#verdict h3"), "Output differs")
    assert submitted_by(lms) == ["Berna Student"]

    # the visible switch: from then on the page says Ali, and so is what it sends
    tab.goto(copied)
    tab.get_by_role("button", name="Switch to Ali Student").click()
    tab.get_by_role("heading", name="What is attention?", level=1).wait_for()
    expect_text(tab.locator(".bar"), "Signed in as Ali Student")
    submit_code(tab, tab, SOLUTION)
    expect_text(tab.locator("#verdict h3"), "Passed")
    assert submitted_by(lms) == ["Berna Student", "Ali Student"]
    # the two asks (409, which the console notes too), nothing else
    assert watch.errors.count("409 " + copied) == 2
    assert [e for e in watch.errors if "409" not in e] == []


class Recorder(http.server.BaseHTTPRequestHandler):
    """A page of another origin that notes the Referer of every request it gets."""

    seen: list[str | None] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        self.seen.append(self.headers.get("Referer"))
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>elsewhere</title><p>elsewhere</p>")

    def log_message(self, *args):
        pass


@pytest.fixture
def elsewhere():
    """Another origin (a page on its own loopback port) that records the Referers it gets."""
    Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", Recorder.seen
    finally:
        server.shutdown()
        server.server_close()


def test_no_referer_carries_a_token_and_no_address_bar_keeps_one(lms, chromium, elsewhere):
    target, seen_elsewhere = elsewhere
    received = []  # the Referer of every request the tool gets
    app = lms.app.wsgi_app

    def recording(environ, start_response):
        received.append((environ.get("PATH_INFO"), environ.get("HTTP_REFERER")))
        return app(environ, start_response)

    lms.app.wsgi_app = recording
    lms.link()
    page, frame, _ = launch(chromium, lms, "Ali Student")
    frame.get_by_role("heading", name="What is attention?", level=1).wait_for()
    lesson = address_of(frame)
    frame.get_by_role("link", name="All lessons").click()
    frame.get_by_role("link", name="What is attention?").click()
    frame.get_by_role("heading", name="What is attention?", level=1).wait_for()

    # the lesson in a window of its own: the token leaves the address bar at once
    alone = page.context.new_page()
    alone.goto(lesson)
    alone.get_by_role("heading", name="What is attention?", level=1).wait_for()
    alone.wait_for_function("() => !window.location.search.includes('s=')")
    assert "s=" not in alone.url and urlsplit(alone.url).path == urlsplit(lesson).path
    alone.reload()  # the browser's own session (its cookie) opens it again
    expect_text(alone.locator(".bar"), "Signed in as Ali Student")
    # a link to another site, followed from the page and from its frame
    for where in (alone, frame):
        where.locator("main").evaluate(
            "(main, url) => { const a = document.createElement('a'); a.href = url;"
            " a.textContent = 'elsewhere'; main.append(a); }",
            f"{target}/page",
        )
    with alone.expect_navigation():
        alone.get_by_role("link", name="elsewhere").click()
    frame.get_by_role("link", name="elsewhere").click()
    wait_for(lambda: len(seen_elsewhere) == 2, "both visits elsewhere")

    tool = lms.tool_url
    from_tool = [(path, ref) for path, ref in received if ref and ref.startswith(tool)]
    assert from_tool == [], f"the tool's own pages sent Referers: {from_tool[:3]}"
    assert len(received) > 10 and any(path.startswith("/static/") for path, _ in received)
    assert seen_elsewhere == [None, None]


def test_an_idle_pages_links_die_while_its_script_keeps_the_session(lms, chromium):
    # the token's clock, not minutes of sleep: links live 3 s here
    lms.app.config["LINK_LIFETIME"] = timedelta(seconds=3)
    lms.link()
    page, frame, watch = launch(chromium, lms, "Ali Student")
    frame.get_by_role("heading", name="What is attention?", level=1).wait_for()
    back = frame.get_by_role("link", name="All lessons")
    rendered = back.get_attribute("href")
    assert "s=" in rendered
    time.sleep(4)  # the page left alone
    with requests.Session() as stranger:  # the link, copied now, opened in another browser
        dead = stranger.get(lms.tool_url + rendered, timeout=10)
    assert dead.status_code == 401 and "Ali Student" not in dead.text
    # while the page is in use, its script keeps its links fresh: typing, then submitting
    # the code after more than a link's life works, and is followed live
    editor = frame.locator("#exercise .cm-content")
    editor.click()
    editor.press("Control+a")
    page.keyboard.insert_text(FAILING)
    time.sleep(4)
    frame.get_by_role("button", name="Submit").click()
    expect_text(frame.locator("#verdict h3"), "Output differs")
    streams = [url for url in watch.requests if re.search(r"/events\?s=", url)]
    assert streams, "the verdict was not followed by its stream"
    assert all(parse_qs(urlsplit(url).query)["s"] != parse_qs(urlsplit(rendered).query)["s"]
               for url in streams)  # fmt: skip
    # and a link followed after the page sat idle past its token's life still opens
    time.sleep(4)
    back.click()
    frame.get_by_role("link", name="What is attention?").wait_for(timeout=TIMEOUT_MS)
    expect_text(frame.locator(".bar"), "Signed in as Ali Student")
    assert watch.errors == []


@pytest.fixture
def third_party(tmp_path, redis_server):
    """The tool on another site than its LMS (127.0.0.2 beside 127.0.0.1), platform storage."""
    options = {"tool_host": "127.0.0.2", "storage_target": "_parent"}
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", options) as found:
        yield found


@pytest.fixture
def no_third_party_cookies():
    # Chromium's switch that blocks third-party cookies as its phase-out does
    with headless("--test-third-party-cookie-phaseout") as browser:
        yield browser


def test_the_launch_works_in_an_lms_iframe_that_never_sends_a_cookie(
    third_party, no_third_party_cookies
):
    lms = third_party
    assert urlsplit(lms.tool_url).hostname == "127.0.0.2"
    lms.link()
    cookies = []  # every request that came to the tool with a cookie
    app = lms.app.wsgi_app

    def recording(environ, start_response):
        if environ.get("HTTP_COOKIE"):
            cookies.append(environ.get("PATH_INFO"))
        return app(environ, start_response)

    lms.app.wsgi_app = recording
    page, frame, watch = launch(no_third_party_cookies, lms, "Ali Student")
    frame.get_by_role("heading", name="What is attention?", level=1).wait_for()
    expect_text(frame.locator(".bar"), "Signed in as Ali Student")
    question = frame.locator("#q-rnn-advantage")
    question.get_by_label("It relates distant positions").check()
    question.get_by_role("button", name="Check answer").click()
    expect_text(question.locator("[data-feedback]"), "Correct.")
    submit_code(page, frame, SOLUTION)
    expect_text(frame.locator("#verdict h3"), "Passed")
    expect_text(frame.locator("#score"), "6 of 8 points")
    frame.get_by_role("link", name="All lessons").click()
    frame.get_by_role("link", name="What is attention?").click()
    expect_text(frame.locator("#verdict h3"), "Passed")

    teacher, tframe, twatch = launch(no_third_party_cookies, lms, "Ada Teacher")
    expect_text(tframe.locator(".bar"), "Signed in as Ada Teacher")
    tframe.get_by_role("link", name="Course gradebook").first.click()
    row = tframe.locator("table.gradebook tbody tr", has_text="Ali Student")
    expect_text(row, "6")
    assert cookies == [], f"the browser sent the tool cookies: {cookies[:3]}"
    wait_for(lambda: lms.platform.scores(user="ali"), "Ali's score in the LMS")
    assert any(re.search(r"/events\?s=", url) for url in watch.requests)
    assert watch.errors == [] and twatch.errors == []
