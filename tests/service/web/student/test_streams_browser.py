"""The lesson page follows a submission across short streams, and by polling when refused."""

import re
from dataclasses import replace

import pytest

from service.web import extensions
from testkit.apps import swap
from tests.service.web import test_pages_browser as pages
from tests.service.web.test_pages_browser import FAILING, expect_text, launch, submit_code

# the fixtures: the tool beside the demo LMS with a real worker, and Debian's Chromium
lms = pages.lms
chromium = pages.chromium

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

EVENTS = re.compile(r"/api/submissions/\d+/events\?")
POLLS = re.compile(r"/api/submissions/\d+$")


# a run that takes a few seconds: the page must keep following meanwhile
SLOW_FAILING = "import time\ntime.sleep(4)\n" + FAILING


@pytest.mark.parametrize(
    ("caps", "streams", "polls"),
    [
        # 1 s streams and a 4 s grade: the browser reconnects, the page keeps following
        ({"stream_max_s": 1}, "several", "none"),
        # every stream refused (`busy`): the page polls the submission instead
        ({"streams_per_session": 0}, "one", "some"),
    ],
    ids=["short-streams", "refused"],
)
def test_the_page_shows_the_verdict(lms, chromium, caps, streams, polls):
    swap(lms.app, settings=replace(extensions.settings(lms.app), **caps))
    lms.link()
    page, frame, watch = launch(chromium, lms, "Ali Student")
    submit_code(page, frame, SLOW_FAILING)
    # a worker may take it before the page's first status arrives: either shows it followed
    expect_text(frame.locator("#run-status"), re.compile("Waiting for a grader|Running your code"))
    expect_text(frame.locator("#verdict h3"), "Output differs")
    expect_text(frame.locator("#run-status"), "Graded")
    opened = [url for url in watch.requests if EVENTS.search(url)]
    polled = [url for url in watch.requests if POLLS.search(url)]
    assert (len(opened) > 1) == (streams == "several") and opened
    assert bool(polled) == (polls == "some")
    assert watch.errors == []
    assert lms.worker.errors() == []
