"""Sentences for a student that can be translated: an English template and its arguments.

Every student-visible sentence of core is made by `say("Line {line} differs: {shown}.",
line=2, shown=...)`. `str()` gives the English that the CLI, the store and the tests have
always held; `render(translate, number, percent)` words it in the viewer's language with
functions the web app passes in per request (core imports no Flask or Babel). A template is
the catalog's msgid (the extraction keyword is `say`, so it must be a string literal at each
call site); its fields are plain names, filled with already formatted text.

An argument is text (shown as it is: program output, names, values), an int or a float (a
number the locale formats: "2.5 s" reads "2,5 sn" in Turkish), a `Percent` (0.5 reads "50%",
"%50"), or a nested `Message`/`Joined` (a verdict word, a refusal's reason) translated too.
Stored as JSON beside the English (`to_json`), read back defensively (`from_json`): anything
malformed gives None, and the page shows the stored English instead.

This is the tool's one form of words said later (a refusal's, a verdict's, an LTI problem's);
`N_` (defined here only) marks a table's English for the catalog, and the web words it
where the page is made. No lazy_gettext.
"""

from __future__ import annotations

import functools
import math
import string
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeAlias

Translate: TypeAlias = Callable[[str], str]
TranslatePlural: TypeAlias = Callable[[str, str, int], str]  # gettext's ngettext
FormatNumber: TypeAlias = Callable[[float], str]
FormatMoment: TypeAlias = Callable[[datetime], str]

_MAX_DEPTH = 8  # a verdict nests four deep (cases' summaries in a sentence list)
_MAX_NODES = 2000  # 50 cases, each with a summary of a few parts
_MAX_TEXT = 20_000  # a template or a text argument (shown values are cut to 300 characters)


@dataclass(frozen=True)
class Percent:
    """A share (0.5) that the locale writes as a percentage ("50%", "%50")."""

    ratio: float

    def __str__(self) -> str:
        return english_percent(self.ratio)


@dataclass(frozen=True)
class Moment:
    """A point in time that the locale writes ("Jan 31, 2027, 23:59 UTC"); aware, or UTC."""

    at: datetime

    def __str__(self) -> str:
        return english_moment(self.at)


@dataclass(frozen=True)
class Wording:
    """How a reader's language words a text: its catalog (singular and plural) and formats."""

    translate: Translate
    number: FormatNumber
    percent: FormatNumber
    translate_n: TranslatePlural
    moment: FormatMoment


class _Rendered:
    """A text that renders itself in a reader's language: what Message and Joined share."""

    def __str__(self) -> str:
        return self.render(_same, english_number)

    def render(
        self,
        translate: Translate,
        number: FormatNumber,
        percent: FormatNumber | None = None,
        *,
        translate_n: TranslatePlural | None = None,
        moment: FormatMoment | None = None,
    ) -> str:
        """Return the text with its templates translated and its arguments formatted."""
        wording = Wording(
            translate, number, percent or english_percent, translate_n or english_plural,
            moment or english_moment,
        )  # fmt: skip
        return self.worded(wording)

    def worded(self, wording: Wording) -> str:
        """Return the text as `wording` words it."""
        raise NotImplementedError


@dataclass(frozen=True)
class Message(_Rendered):
    """One sentence (or phrase): its English template and its named arguments.

    With a `plural`, the template is the singular and the argument `num` (an int) chooses,
    as gettext's ngettext does: `say_n`.
    """

    template: str
    args: tuple[tuple[str, Arg], ...] = ()
    plural: str | None = None

    def worded(self, wording: Wording) -> str:
        """Return the sentence as `wording` words it."""
        fields = {name: _render_arg(value, wording) for name, value in self.args}
        english = self.template
        if self.plural is None:
            translated = wording.translate(english)
        else:
            count = dict(self.args).get("num")
            count = count if isinstance(count, int) else 0
            english = english_plural(self.template, self.plural, count)
            translated = wording.translate_n(self.template, self.plural, count)
        if translated != english:
            try:
                return _fill(translated, fields)
            except ValueError:  # a translation whose fields do not fit: the English instead
                pass
        return _fill(english, fields)


@dataclass(frozen=True)
class Joined(_Rendered):
    """Sentences shown one after another, separated by a space."""

    parts: tuple[Text, ...]

    def worded(self, wording: Wording) -> str:
        """Return every part as `wording` words it, joined by spaces."""
        return " ".join(part.worded(wording) for part in self.parts)


Text: TypeAlias = Message | Joined
Arg: TypeAlias = "str | int | float | Percent | Moment | Message | Joined"


def say(template: str, /, **args: Arg) -> Message:
    """Return the sentence `template` (a literal: it is the msgid) with its named arguments."""
    missing = set(_fields(template)) - args.keys()
    if missing:
        raise ValueError(f"{template!r} needs {sorted(missing)}")
    return Message(template, tuple(sorted(args.items())))


def say_n(singular: str, plural: str, /, *, num: int, **args: Arg) -> Message:
    """Return a sentence with a singular and a plural (literals: the msgid pair), chosen by
    `num` as ngettext chooses, with its named arguments (`num` among them)."""
    given = {**args, "num": num}
    missing = (set(_fields(singular)) | set(_fields(plural))) - given.keys()
    if missing:
        raise ValueError(f"{singular!r} needs {sorted(missing)}")
    return Message(singular, tuple(sorted(given.items())), plural)


def english_plural(singular: str, plural: str, num: int) -> str:
    """Choose as English does: the singular for one, else the plural."""
    return singular if num == 1 else plural


def english_moment(at: datetime) -> str:
    """Write a time the English way the messages always have (2027-01-31 23:59 UTC)."""
    utc = at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)
    return f"{utc:%Y-%m-%d %H:%M} UTC"


def N_(template: str) -> str:  # noqa: N802  the catalog's marker, as in gettext
    """Mark English for the catalog where it is written, to be worded where it is shown."""
    return template


def verbatim(text: str) -> Message:
    """Return text that is shown as it is in every language (it has no msgid of its own)."""
    return Message("{text}", (("text", text),))


def join(*parts: Text) -> Text:
    """Return the parts as one text, one after another (one part stays itself)."""
    return parts[0] if len(parts) == 1 else Joined(parts)


def english_number(value: float) -> str:
    """Write a number as the English messages always have (5, 2.5, 0.001, 1e-06)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def english_percent(ratio: float) -> str:
    """Write a share as a whole percentage, the English way (50%)."""
    return f"{ratio:.0%}"


def to_json(text: Text) -> dict[str, object]:
    """Return the text as plain JSON data, for the store."""
    if isinstance(text, Joined):
        return {"j": [to_json(part) for part in text.parts]}
    found: dict[str, object] = {"t": text.template}
    if text.plural is not None:
        found["p"] = text.plural
    found["a"] = {name: _arg_json(value) for name, value in text.args}
    return found


def from_json(data: object) -> Text | None:
    """Read back what to_json stored; None for anything malformed, too deep or too large."""
    budget = [_MAX_NODES]
    try:
        return _text(data, 0, budget)
    except (TypeError, ValueError):
        return None


def _same(msgid: str) -> str:
    return msgid


def _render_arg(value: Arg, wording: Wording) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Percent):
        return wording.percent(value.ratio)
    if isinstance(value, Moment):
        return wording.moment(value.at)
    if isinstance(value, int | float):
        return wording.number(value) if math.isfinite(value) else english_number(value)
    return value.worded(wording)


@functools.lru_cache(maxsize=512)
def _fields(template: str) -> tuple[str, ...]:
    """Return the template's field names; raise ValueError unless each is a plain name."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise ValueError(f"{template!r}: a field is a plain name, like {{line}}")
        names.append(name)
    return tuple(names)


def _fill(template: str, fields: dict[str, str]) -> str:
    """Fill a template's plain-name fields; raise ValueError when one is unknown or not plain."""
    if not set(_fields(template)) <= fields.keys():
        raise ValueError(f"{template!r} names a field it was not given")
    return template.format_map(fields)


def _arg_json(value: Arg) -> object:
    if isinstance(value, Percent):
        return {"%": value.ratio}
    if isinstance(value, Moment):
        return {"@": english_moment(value.at)}
    if isinstance(value, Message | Joined):
        return to_json(value)
    if isinstance(value, float) and not math.isfinite(value):
        return english_number(value)  # JSON has no nan; it reads the same in every language
    return value


def _text(data: object, depth: int, budget: list[int]) -> Text:
    budget[0] -= 1
    if depth > _MAX_DEPTH or budget[0] < 0 or not isinstance(data, dict):
        raise ValueError("not a stored message")
    if data.keys() == {"j"} and isinstance(data["j"], list) and data["j"]:
        return Joined(tuple(_text(part, depth + 1, budget) for part in data["j"]))
    template, args, plural = data.get("t"), data.get("a"), data.get("p")
    if data.keys() not in ({"t", "a"}, {"t", "p", "a"}) or not isinstance(args, dict):
        raise ValueError("not a stored message")
    if not isinstance(template, str) or not isinstance(plural, str | None):
        raise ValueError("not a stored message")
    if len(template) > _MAX_TEXT or len(plural or "") > _MAX_TEXT or len(args) > 20:
        raise ValueError("a stored message too large")
    read = {str(name): _arg(value, depth + 1, budget) for name, value in args.items()}
    named = set(_fields(template)) | set(_fields(plural or ""))
    if named - read.keys():
        raise ValueError("a stored message without its arguments")
    if plural is not None and (type(read.get("num")) is not int):
        raise ValueError("a stored plural without its count")
    return Message(template, tuple(sorted(read.items())), plural)


def _arg(data: object, depth: int, budget: list[int]) -> Arg:
    budget[0] -= 1
    if isinstance(data, str):
        if len(data) > _MAX_TEXT:
            raise ValueError("a stored argument too large")
        return data
    if isinstance(data, bool):
        raise ValueError("a stored argument is not a bool")
    if isinstance(data, int | float):
        return data
    if isinstance(data, dict) and data.keys() == {"@"} and isinstance(data["@"], str):
        try:
            at = datetime.strptime(data["@"], "%Y-%m-%d %H:%M UTC").replace(tzinfo=UTC)
        except ValueError:
            raise ValueError("a stored moment unreadable") from None
        return Moment(at)
    if isinstance(data, dict) and data.keys() == {"%"}:
        ratio = data["%"]
        if isinstance(ratio, bool) or not isinstance(ratio, int | float):
            raise ValueError("a stored percentage is not a number")
        return Percent(float(ratio))
    return _text(data, depth, budget)
