"""Words of an LTI problem: English where they are made, the reader's language where shown.

A launch or registration problem is made below Flask (and may be kept: a key set's failure
is cached and raised again to later launches), so its title and sentences cannot be
translated where it is raised. `_l` makes them `Said`: a `str` that is the English (for
logs, tests and the CLI) and remembers its msgid and arguments, so that the error page says
it again in the request's language with `translated()`. Being a real `str` (not a lazy
object with `__html__`), it is escaped like any text when a page shows it.
"""

from __future__ import annotations

from typing import Any


class Said(str):
    """An English sentence that knows its msgid and arguments, for a later translation."""

    template: str
    args: dict[str, Any]

    def __new__(cls, template: str, /, **args: Any) -> Said:
        """Make the English sentence: `template` %-formatted with `args` (if any)."""
        said = super().__new__(cls, template % args if args else template)
        said.template = template
        said.args = args
        return said

    def translated(self) -> str:
        """Return the sentence in the request's language (its arguments translated too)."""
        from flask_babel import gettext

        if not self.args:
            return str(gettext(self.template))
        args = {name: translated(value) for name, value in self.args.items()}
        return str(gettext(self.template, **args))


def _l(template: str, /, **args: Any) -> Said:  # the extraction keyword `_l`
    """Mark words for the catalog, to be translated where they are shown (see Said)."""
    return Said(template, **args)


def translated(value: Any) -> Any:
    """Return `value` in the request's language if it is Said, else as it is."""
    return value.translated() if isinstance(value, Said) else value
