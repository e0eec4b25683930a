"""Helpers for page tests: record sends, read a page's tokens (testkit.sessions signs in)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock
from urllib.parse import parse_qs, urlsplit

import pytest
from itsdangerous import TimestampSigner

from core.runs import RunStatus
from service.store import submissions
from service.store.models import utcnow
from testkit import factories
from testkit.celery import FakeCelery


@pytest.fixture
def celery_app(settings):
    """The app's Celery app, recording every send instead of sending (import it to use it)."""
    return FakeCelery(settings)


@pytest.fixture
def sent(celery_app):
    """What the app has sent (testkit.celery.Sent), in order."""
    return celery_app.sent


def form_token(page: str) -> str:
    """Return the CSRF token of a page's first form."""
    return html.unescape(re.search(r'name="csrf" value="([^"]+)"', page).group(1))


def session_param(page: str) -> str:
    """Return the link token that a page's links carry (`s`)."""
    href = html.unescape(re.search(r'href="([^"]*[?&]s=[^"]+)"', page).group(1))
    return parse_qs(urlsplit(href).query)["s"][0]


def page_session(page: str) -> str:
    """Return the session token that a page gives its scripts (their header)."""
    found = re.search(r'<meta name="codeblanks-session" content="([^"]+)"', page)
    return html.unescape(found.group(1))


@contextmanager
def signed_ago(seconds: float) -> Iterator[None]:
    """Sign every token (session, link, CSRF) as if it were `seconds` ago: the token's clock."""
    real = TimestampSigner.get_timestamp
    with mock.patch.object(
        TimestampSigner, "get_timestamp", lambda self: int(real(self) - seconds)
    ):
        yield


def text_of(page: str, spaced: bool = False) -> str:
    """Return a page's text, tags stripped and entities decoded, whitespace squeezed.

    Tags go without a trace (highlighted code reads as written), or as a space (`spaced`).
    """
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " " if spaced else "", page)).split())


def grade(store, submission_id, status=RunStatus.PASSED, stdout="", stderr="", diff=None, ms=12):
    """Grade a queued submission as a worker would, with the verdict given."""
    claim = submissions.claim(store, submission_id, 30, utcnow())
    verdict = factories.verdict(status, stdout, stderr, diff, ms)
    assert submissions.finish(store, claim, verdict, utcnow()).saved
