"""The teacher's pages' status words in the page's language: a grade sync's state.

A sync's raw status ("sent", "failed"...) stays the CSS class and what tests and the CSV read;
only the words shown beside it are translated. They carry the context "grade sync": a case
that "failed" is another word in Turkish than a sync that failed.
"""

from __future__ import annotations

from flask_babel import pgettext


def sync_label(status: str | None) -> str:
    """Return a grade sync's status as a word (an unknown status as it is)."""
    labels: dict[str, str] = {
        "sent": pgettext("grade sync", "sent"),
        "pending": pgettext("grade sync", "pending"),
        "held": pgettext("grade sync", "held"),
        "failed": pgettext("grade sync", "failed"),
        "skipped": pgettext("grade sync", "skipped"),
    }
    return labels.get(status or "", status or "")
