"""Lesson text to HTML (Markdown, Pygments-highlighted code), and the pages' small formatters.

Lessons are trusted content from the repository, so their Markdown may hold HTML. Code a
student wrote goes through highlight() only, which escapes it. The formatters (points, when, ago,
percent, duration_ms, number) follow the request's language; outside a request they speak
English. The status words are service/web/labels.py's.
"""

from __future__ import annotations

import functools
import math
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

import markdown
from babel import Locale
from babel.dates import format_date, format_time, format_timedelta
from babel.numbers import format_decimal, format_percent
from flask_babel import get_locale
from flask_babel import gettext as _
from markupsafe import Markup
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

if TYPE_CHECKING:
    from flask import Flask

CSS_CLASS = "highlight"  # service/web/static/pygments.css styles this class
_EXTENSIONS = ["fenced_code", "codehilite", "tables", "sane_lists"]
_CONFIG = {"codehilite": {"css_class": CSS_CLASS, "guess_lang": False}}
_ENGLISH = Locale("en")
# Moodle's grade display (its default: 2 decimals) and what it stores (decimal(10,5))
_SHOWN = Decimal("0.01")
_STORED = Decimal("0.00001")


def init_app(app: Flask) -> None:
    """Give every template the lesson filters (markdown, python) and the small formatters."""
    app.add_template_filter(lesson_markdown, "markdown")
    app.add_template_filter(lesson_code, "python")
    app.add_template_filter(points, "points")
    app.add_template_filter(when, "when")
    app.add_template_filter(ago, "ago")
    app.add_template_filter(percent, "percent")
    app.add_template_filter(duration_ms, "duration_ms")
    app.add_template_filter(number, "number")
    app.add_template_global(blank_parts, "blank_parts")
    app.add_template_global(highlight, "highlight")


def locale() -> Locale:
    """Return the request's locale (English outside a request)."""
    found = get_locale()
    return found if isinstance(found, Locale) else _ENGLISH


def points(value: float | None) -> str:
    """Return points as the LMS shows them: rounded half up at its decimals, no useless
    zeros ("7.5", "7,5" in Turkish; 3.125 reads "3.13", as Moodle shows it)."""
    if value is None:
        return ""
    return format_decimal(lms_rounded(value), "0.##", locale=locale())


def lms_rounded(value: float) -> Decimal:
    """Round points as the LMS does: half up (away from zero) at its decimals.

    Babel rounds half to even (3.125 to 3.12) while Moodle shows 3.13 (FINDINGS.md). The
    half is decided on the number the LMS keeps: Moodle stores five decimals (3.12500), so
    a float just below a half (2.675 is 2.67499999... in binary) is first rounded there.
    """
    if not math.isfinite(value):
        return Decimal(repr(float(value)))
    kept = Decimal(repr(float(value))).quantize(_STORED, ROUND_HALF_UP)
    return kept.quantize(_SHOWN, ROUND_HALF_UP) + 0  # + 0: -0.00 reads 0


def number(value: float | None) -> str:
    """Return a number as the locale writes it ("1,234.5"; "1.234,5" in Turkish)."""
    return "" if value is None else format_decimal(value, locale=locale())


def percent(share: float | None) -> str:
    """Return a share (0.62) as a whole percentage as the locale writes it ("62%", "%62")."""
    return "" if share is None else format_percent(share, locale=locale())


def duration_ms(value: float | None) -> str:
    """Return a run's duration: milliseconds below a second ("135 ms"), else seconds ("2.5 s")."""
    if value is None:
        return ""
    if value < 1000:
        return str(_("%(ms)s ms", ms=format_decimal(round(value), "0", locale=locale())))
    seconds = format_decimal(value / 1000, "0.#", locale=locale())
    return str(_("%(seconds)s s", seconds=seconds))


def when(moment: datetime | None) -> str:
    """Return a time in UTC as the locale writes it, saying UTC ("Jan 31, 2027, 23:59 UTC")."""
    if moment is None:
        return ""
    at = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    here = locale()
    date = format_date(at, "medium", locale=here)
    time = format_time(at, "HH:mm", tzinfo=UTC, locale=here)
    both = str(here.datetime_formats["medium"]).format(time, date)
    return str(_("%(moment)s UTC", moment=both))


def ago(moment: datetime | None, now: datetime | None = None) -> str:
    """Return how long ago a time was, as the locale says it ("2 minutes ago", "2 dakika önce")."""
    if moment is None:
        return ""
    at = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    since = (now or datetime.now(UTC)) - at
    # babel words no time at all as the future ("in 0 seconds"): a second is the least said
    past = -max(since, timedelta(seconds=1))
    return str(format_timedelta(past, add_direction=True, locale=locale()))


def blank_parts(template: str) -> tuple[str, str]:
    """Split a blank question's template around its one `____`."""
    before, _, after = template.partition("____")
    return before, after


@functools.lru_cache(maxsize=512)
def lesson_markdown(text: str) -> Markup:
    """Return a lesson's Markdown as HTML, fenced code highlighted; cached by text."""
    # a Markdown instance keeps state between conversions: one per call, never shared
    converter = markdown.Markdown(
        extensions=_EXTENSIONS, extension_configs=_CONFIG, output_format="html"
    )
    return Markup(_focusable(converter.convert(text)))  # trusted lesson text


@functools.lru_cache(maxsize=256)
def lesson_code(code: str) -> Markup:
    """Return a lesson's Python code (starter, solution) highlighted; cached by text."""
    return highlight(code)


def highlight(code: str) -> Markup:
    """Return Python code as highlighted, escaped HTML (safe for any code, a student's too)."""
    formatter = HtmlFormatter(cssclass=CSS_CLASS)
    return Markup(_focusable(pygments_highlight(code, PythonLexer(), formatter)))  # escaped


def _focusable(html: str) -> str:
    # a code block wider than a narrow frame scrolls; a keyboard can scroll only what it focuses
    return html.replace(
        f'<div class="{CSS_CLASS}"><pre>', f'<div class="{CSS_CLASS}"><pre tabindex="0">'
    )
