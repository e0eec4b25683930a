"""A verdict's feedback in the viewer's language, from what the worker stored.

A verdict keeps its feedback as a core.messages text (core.student_views: a view's
`message`); a case record keeps each sentence as the JSON API shows it, in English
(`feedback`, `detail`), and as a text (`feedback_message`, `detail_message`). A page renders
the text with this request's catalog and number formats; a case record stored before texts
were kept, or one that does not read back, shows its English.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from flask_babel import get_locale, get_translations

from core import messages
from core.student_views import StudentView, shown_case
from service import wording
from service.web.rendering import when


def feedback_of(verdict: StudentView) -> str:
    """Return a verdict's feedback in the page's language."""
    locale = get_locale()
    if locale is None or locale.language == "en":
        return verdict.feedback  # the source language: the English as stored, byte for byte
    return rendered(verdict.message)


def case_feedback_of(case: Any) -> str:
    """Return a stored case's one-line verdict (its `feedback`) in the page's language."""
    return _field(case, "feedback")


def student_feedback_of(case: Any) -> str:
    """Return a stored case's line as its student reads it before a reveal (a teacher's aside)."""
    return case_feedback_of(shown_case(case, revealed=False)) if isinstance(case, Mapping) else ""


def case_detail_of(case: Any) -> str:
    """Return a stored case's detail (what went wrong) in the page's language."""
    return _field(case, "detail")


def localized(stored: object, english: str) -> str:
    """Return a stored text (core.messages.to_json) in the page's language, else `english`."""
    locale = get_locale()
    if stored is None or locale is None or locale.language == "en":
        return english  # the source language: the English as stored, byte for byte
    text = messages.from_json(stored)
    return english if text is None else rendered(text)


def rendered(text: messages.Text) -> str:
    """Return a core text (a verdict's, a refusal's words) in the page's language."""
    locale = get_locale()
    if locale is None or locale.language == "en":
        # the source language: the English as core words it, byte for byte, but for a time,
        # which the pages write their way (rendering.when: "Jan 31, 2027, 23:59 UTC")
        return text.worded(replace(wording.ENGLISH, moment=when))
    # the app's catalogs (a worker words its comments with the same ones: service.wording)
    return text.worded(wording.wording(get_translations(), locale, moment=when))


def _field(case: Any, key: str) -> str:
    """Read `key` and `key_message` of a case record (a dict, or anything with .get)."""
    get = getattr(case, "get", None)
    if not callable(get):
        return ""
    english = str(get(key) or "")
    return localized(get(f"{key}_message"), english)
