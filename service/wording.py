"""The tool's catalogs and a reader's language, for words said inside a request or outside one.

A page words a core text (core.messages) for its request's locale (service.web.feedback); a
worker words the comment of a score it posts for the student's language, kept from their
launch (`users.locale`). Both take the same catalogs (service/web/translations, compiled at
set-up) and number formats from here, through `wording` (`worded` outside a request); no Flask.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Protocol

from babel import Locale
from babel.numbers import format_decimal, format_percent
from babel.support import NullTranslations, Translations

from core import messages
from core.messages import FormatMoment, Text, Wording

LANGUAGES = ("en", "tr")
DEFAULT = "en"
TRANSLATIONS = Path(__file__).parent / "web" / "translations"
TAG_SIZE = 35  # a BCP 47 tag as LMSs send them ("tr", "en-US", "zh-Hant-TW") fits
_TAG = re.compile(r"^[A-Za-z]{2,8}(?:[-_][A-Za-z0-9]{1,8}){0,4}$")
_DECIMALS = "#,##0.###############"  # every digit a limit or tolerance has (0.000001)


class Gettext(Protocol):
    """A language's catalog: gettext's two lookups (Babel's Translations, Flask-Babel's)."""

    def gettext(self, message: str) -> str: ...
    def ngettext(self, singular: str, plural: str, num: int) -> str: ...


def _same(msgid: str) -> str:
    return msgid


# the source language: the words and numbers as core writes them, byte for byte (what the
# CLI and the store hold)
ENGLISH = Wording(
    _same, messages.english_number, messages.english_percent, messages.english_plural,
    messages.english_moment,
)  # fmt: skip


def tag_of(tag: object) -> str | None:
    """Return a launch's locale tag ("tr", "en-US") if it is one, else None."""
    if not isinstance(tag, str) or len(tag) > TAG_SIZE or not _TAG.match(tag):
        return None
    return tag


def supported(tag: object) -> str | None:
    """Return the language of a locale tag ("tr-TR", "tr_TR", "TR") if the tool speaks it."""
    if tag_of(tag) is None:
        return None
    language = re.split(r"[-_]", str(tag), maxsplit=1)[0].lower()
    return language if language in LANGUAGES else None


def worded(text: Text, tag: str | None) -> str:
    """Return a core text in the language of a locale tag (outside a request: a worker's),
    English when the tool lacks it."""
    language = supported(tag) or DEFAULT
    if language == DEFAULT:
        return text.worded(ENGLISH)
    return text.worded(wording(translations_of(language), Locale.parse(language)))


def wording(
    catalog: Gettext, locale: Locale, moment: FormatMoment = messages.english_moment
) -> Wording:
    """Return how a language words a text: its catalog, its numbers and percentages, and
    `moment` for times (the pages write theirs, service.web.rendering.when)."""
    return Wording(
        catalog.gettext,
        functools.partial(number, locale=locale),
        functools.partial(percent, locale=locale),
        catalog.ngettext,
        moment,
    )


@functools.lru_cache(maxsize=len(LANGUAGES))
def translations_of(language: str) -> NullTranslations:
    """Return a language's compiled catalog (an empty one when it is not compiled)."""
    return Translations.load(str(TRANSLATIONS), [language], domain="messages")


def number(value: float, locale: Locale | str) -> str:
    """Write a number of a sentence as `locale` does (2,5 in Turkish), every digit kept."""
    if isinstance(value, int):
        return str(format_decimal(value, locale=locale))
    return str(format_decimal(value, format=_DECIMALS, locale=locale))


def percent(ratio: float, locale: Locale | str) -> str:
    """Write a share as `locale` writes a percentage ("%50" in Turkish)."""
    return str(format_percent(ratio, locale=locale))
