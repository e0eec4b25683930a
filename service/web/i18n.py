"""The tool's own words in the user's language: English (the source) and Turkish.

The language is the launch's: Moodle and Canvas send the user's LMS language as
`launch_presentation.locale` ("tr", "tr-TR", "en_US"...), which sign-in keeps in the session.
A page opened without one (the home page, an error before any launch) follows the browser's
Accept-Language; English is the last word. Lesson text, names and program output stay as written:
pages mark them `translate="no"`.

The catalogs live in service/web/translations as .po files; their .mo files are compiled at
set-up (scripts/setup.sh, the app image), never committed. A missing .mo leaves that language in
English and says so in the log at start.
"""

from __future__ import annotations

import logging
from pathlib import Path

from flask import Flask, request, session
from flask_babel import Babel, get_locale, gettext

from core.messages import N_
from core.student_views import stored_view
from service.web.feedback import (
    case_detail_of,
    case_feedback_of,
    feedback_of,
    rendered,
    student_feedback_of,
)
from service.wording import DEFAULT, LANGUAGES, TRANSLATIONS, supported

_LOCALE = "locale"  # the session key: the launch's language, as one of LANGUAGES

log = logging.getLogger(__name__)


def init_app(app: Flask) -> None:
    """Attach Flask-Babel: the catalogs, the locale per request, `lang` and the JS words."""
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT)
    app.config.setdefault("BABEL_DEFAULT_TIMEZONE", "UTC")
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(TRANSLATIONS))
    Babel(app, locale_selector=select_locale)
    app.add_template_global(language, "language")
    app.add_template_global(js_words, "js_words")
    app.add_template_global(stored_view, "verdict_of")
    app.add_template_global(rendered, "said")  # any core text, in the page's language
    app.add_template_global(feedback_of, "feedback_of")
    app.add_template_global(case_feedback_of, "case_feedback_of")
    app.add_template_global(case_detail_of, "case_detail_of")
    app.add_template_global(student_feedback_of, "student_feedback_of")
    app.jinja_env.policies["ext.i18n.trimmed"] = True
    for missing in missing_catalogs():
        log.warning(
            "the %s catalog is not compiled (%s): that language shows English; "
            "run scripts/setup.sh or `pybabel compile -d %s`",
            missing.parent.parent.name,
            missing,
            TRANSLATIONS,
        )


def missing_catalogs() -> list[Path]:
    """Return the .mo files that are absent or older than their .po."""
    stale = []
    for po in sorted(TRANSLATIONS.glob("*/LC_MESSAGES/*.po")):
        mo = po.with_suffix(".mo")
        if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
            stale.append(mo)
    return stale


def remember_launch_locale(tag: object) -> None:
    """Keep a launch's locale for the session's pages; a language we lack is forgotten.

    A launch in an unsupported language (German, say) drops any earlier launch's choice, so
    the browser's language decides, as it would have with no locale at all.
    """
    language = supported(tag)
    if language is None:
        session.pop(_LOCALE, None)
    else:
        session[_LOCALE] = language


def select_locale() -> str:
    """Return this request's language: the launch's, else the browser's, else English."""
    chosen = supported(session.get(_LOCALE))
    if chosen:
        return chosen
    return request.accept_languages.best_match(LANGUAGES) or DEFAULT


def language() -> str:
    """Return the current language as an HTML `lang` value."""
    return str(get_locale() or DEFAULT)


def js_words() -> dict[str, str]:
    """Return the words the pages' scripts show, in the current language, keyed by English.

    lesson.js and teacher.js look their words up here (`t("Draft saved")`); a test checks that
    every `t("...")` in them is a key.
    """
    return {english: gettext(english) for english in JS_WORDS}


# Every word the static scripts show; `{name}` fields are filled in by the script.
JS_WORDS: tuple[str, ...] = (
    N_("Waiting for a grader…"),
    N_("Running your code…"),
    N_("Graded."),
    N_("Graded: {verdict}"),
    N_("Correct."),
    N_("Partly right."),
    N_("Not right."),
    N_("You earned {earned} of {possible} point."),
    N_("You earned {earned} of {possible} points."),
    N_("Explanation:"),
    N_("The answer was not taken; try again."),
    N_("The answer could not be sent; check your connection and try again."),
    N_("Draft saved"),
    N_("Draft not saved"),
    N_("Draft not saved (offline?)"),
    N_("Replace your code with the starter code?"),
    N_("The submission could not be followed; reload."),
    N_("Connection lost; still trying…"),
    N_("Sending your code…"),
    N_("Your code was not taken; try again."),
    N_("Your code could not be sent; check your connection and try again."),
    # the attempts (lesson.js, its last section)
    N_("The attempt could not be shown; try again."),
    N_("The attempt could not be shown; check your connection and try again."),
    N_(
        "The code of attempt {number} is in the editor; it is saved as your draft. Ctrl+Z in "
        "the editor takes it back."
    ),
    # practice runs (the Run button)
    N_("Your practice run is waiting for a sandbox…"),
    N_("Running your code (a practice run)…"),
    N_("Practice run done."),
    N_("Practice run done: {verdict}"),
    N_("Waiting for your previous run to stop…"),
    N_("The practice run could not be followed; reload."),
)
