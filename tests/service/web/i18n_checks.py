"""What the translation tests share: a fresh extraction of the catalog, and a pseudo-Turkish.

The pseudo catalog translates every string as itself between ⟦ and ⟧. A page rendered in it
shows, outside those marks, only what no catalog holds: authored text (in `translate="no"`),
code and output, numbers. `unmarked()` finds the rest: words a user reads that nobody marked.
"""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[3]
TRANSLATIONS = ROOT / "service/web/translations"
OPEN, CLOSE = "⟦", "⟧"
_MARKED = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")
_LETTER = re.compile(r"[^\W\d_]")
# elements whose text is not the tool's words: code, program output, scripts, data for scripts
_VERBATIM = {"pre", "code", "script", "style", "textarea", "template", "kbd", "samp"}
_VOID = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
_SPOKEN_ATTRIBUTES = ("aria-label", "title", "placeholder", "alt", "aria-description")
# a translated sentence may hold inline elements (a link, <strong>, <code>): text is judged in
# runs between these, the elements that end a sentence
_BLOCKS = {
    "address", "article", "aside", "blockquote", "body", "button", "caption", "dd", "details",
    "div", "dl", "dt", "fieldset", "figcaption", "footer", "form", "h1", "h2", "h3", "h4",
    "h5", "h6", "header", "html", "label", "legend", "li", "main", "nav", "ol", "optgroup",
    "option", "p", "section", "select", "summary", "table", "tbody", "td", "tfoot", "th",
    "thead", "title", "tr", "ul", "progress", "head",
}  # fmt: skip


def extract(into: Path) -> Catalog:
    """Extract every marked string of the tool now (as scripts/i18n.sh update does)."""
    pot = into / "fresh.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    subprocess.run(
        [
            str(pybabel),
            "extract",
            "-F",
            str(TRANSLATIONS / "babel.cfg"),
            "-k",
            "say",
            "-k",
            "say_n:1,2",
            "-k",
            "N_",
            "--no-location",
            "-o",
            str(pot),
            ".",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    with pot.open("rb") as handle:
        return read_po(handle)


def pseudo_catalog(fresh: Catalog, into: Path) -> Path:
    """Write a compiled "tr" catalog that marks every string; return its translations dir."""
    pseudo = Catalog(locale="tr")
    for message in fresh:
        if not message.id:
            continue
        if isinstance(message.id, tuple):
            marked: str | tuple[str, ...] = tuple(OPEN + form + CLOSE for form in message.id)
        else:
            marked = OPEN + message.id + CLOSE
        pseudo.add(message.id, marked, context=message.context)
    target = into / "tr" / "LC_MESSAGES"
    target.mkdir(parents=True)
    with (target / "messages.mo").open("wb") as handle:
        write_mo(handle, pseudo)
    return into


def unmarked(page: str) -> list[str]:
    """Return the texts of a page a user reads that came from no catalog (see the module)."""
    finder = _Unmarked()
    finder.feed(page)
    finder.close()
    return finder.found


def leftover(text: str) -> str:
    """Return `text` with every marked (translated) span taken out, innermost first."""
    while True:
        shorter = _MARKED.sub(" ", text)
        if shorter == text:
            return text
        text = shorter


class _Unmarked(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.stack: list[tuple[str, bool]] = []  # (tag, whether its text is exempt)
        self.text: list[str] = []

    def exempt(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.flush()
        named = dict(attrs)
        exempt = self.exempt() or tag in _VERBATIM or named.get("translate") == "no"
        if not exempt or tag in _VERBATIM:
            for name in _SPOKEN_ATTRIBUTES:
                self.check(named.get(name), f"<{tag} {name}>")
        if tag == "input" and named.get("type") in ("submit", "button"):
            self.check(named.get("value"), "<input value>")
        if tag not in _VOID:
            self.stack.append((tag, exempt))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCKS:
            self.flush()
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                break

    def handle_data(self, data: str) -> None:
        if not self.exempt() and not (self.stack and self.stack[-1][0] == "title"):
            self.text.append(data)

    def close(self) -> None:
        super().close()
        self.flush()

    def flush(self) -> None:
        joined = "".join(self.text)
        self.text = []
        self.check(joined, "text")

    def check(self, text: str | None, where: str) -> None:
        rest = leftover(text or "")
        if _LETTER.search(rest) or OPEN in rest or CLOSE in rest:
            self.found.append(f"{where}: {' '.join(text.split())[:160]}")
