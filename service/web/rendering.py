"""Lesson text to HTML: Markdown with Pygments-highlighted code, each text rendered once.

Lessons are trusted content from the repository, so their Markdown may hold HTML. Code a
student wrote goes through highlight() only, which escapes it.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import TYPE_CHECKING

import markdown
from markupsafe import Markup
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

if TYPE_CHECKING:
    from flask import Flask

CSS_CLASS = "highlight"  # service/web/static/pygments.css styles this class
_EXTENSIONS = ["fenced_code", "codehilite", "tables", "sane_lists"]
_CONFIG = {"codehilite": {"css_class": CSS_CLASS, "guess_lang": False}}
STATUS_LABELS = {
    "passed": "Passed",
    "failed": "Output differs",
    "error": "Error",
    "timeout": "Time limit exceeded",
    "memory_limit": "Memory limit exceeded",
    "output_limit": "Too much output",
    "rejected": "Not run",
}


def init_app(app: Flask) -> None:
    """Give every template the lesson filters (markdown, python) and the small formatters."""
    app.add_template_filter(lesson_markdown, "markdown")
    app.add_template_filter(lesson_code, "python")
    app.add_template_filter(points, "points")
    app.add_template_filter(when, "when")
    app.add_template_global(status_label, "status_label")
    app.add_template_global(case_label, "case_label")
    app.add_template_global(blank_parts, "blank_parts")
    app.add_template_global(highlight, "highlight")


def points(value: float | None) -> str:
    """Return points without a useless '.0' or float noise (7.5, 10, 0.33)."""
    return "" if value is None else f"{round(value, 2):g}"


def when(moment: datetime | None) -> str:
    """Return a time as the pages show it (UTC)."""
    return "" if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"


def status_label(run_status: str | None) -> str:
    """Return a run status as words."""
    return STATUS_LABELS.get(run_status or "", run_status or "")


def case_label(run_status: str | None) -> str:
    """Return a case's status as words: a failed case may be a value, not an output."""
    return "Failed" if run_status == "failed" else status_label(run_status)


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
