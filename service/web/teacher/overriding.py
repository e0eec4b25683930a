"""The teacher's override of a student's score: the form's checks, and each change kept.

Set (the lesson's score, or the exercise's part with the questions as answered), removed
(back to the automatic score, or a newer automatic result taken), or kept over a newer
automatic result. Each change is a row of service.store.override_rows and, when it changes
the score, a grade sync: the LMS gets the score with the teacher's comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from flask_babel import gettext as _

from core.lessons import Lesson
from core.messages import say
from core.overrides import MAX_COMMENT, Change, Override, Part, Scored
from service.queue import SyncMessage
from service.store import grades, override_rows
from service.store.database import Store
from service.store.models import Placement
from service.web.rendering import points
from service.web.student.actions import Refused

# points as a teacher types them: "7", "7.5", "7,5" (a decimal comma, as Turkish writes it);
# float() would take "nan", "1e3" and digits of any script
_POINTS = re.compile(r"[0-9]{1,6}(?:[.,][0-9]{1,4})?")
# the automatic points a page showed, as it wrote them in its form (six places, as scores keep)
_SEEN = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,6})?")
# what a comment may hold besides printable text: line breaks and tabs, nothing else
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Setting:
    """An override as the form gave it, checked."""

    part: Part
    given: float
    comment: str


def parse(form: Mapping[str, str], scored: Scored) -> tuple[Setting | None, dict[str, str]]:
    """Check the form against the score it overrides; return the override or the faults."""
    errors: dict[str, str] = {}
    try:
        part = Part(form.get("part", ""))
    except ValueError:
        part = Part.LESSON
        errors["part"] = _("Choose what the score replaces: the lesson's or the exercise's.")
    if part is Part.EXERCISE and scored.exercise is None:
        errors["part"] = _("This lesson has no exercise: override the lesson's score.")
    most = scored.maximum(part)
    raw = form.get("given", "").strip()
    given = float(raw.replace(",", ".")) if _POINTS.fullmatch(raw) else -1.0
    if not 0 <= given <= most:
        errors["given"] = _("Give a number of points from 0 to %(most)s.", most=points(most))
    comment = form.get("comment", "").replace("\r\n", "\n").strip()
    if len(comment) > MAX_COMMENT:
        errors["comment"] = _(
            "Keep the comment to %(most)d characters (this one has %(count)d).",
            most=MAX_COMMENT,
            count=len(comment),
        )
    elif _CONTROL.search(comment):
        errors["comment"] = _("The comment holds a control character: type it again.")
    if errors:
        return None, errors
    return Setting(part, given, comment), {}


def scored_now(store: Store, placement: Placement, lesson: Lesson, user_id: int) -> Scored:
    """Return the student's automatic score now, and the override that stands on it."""
    with store.reading() as session:
        return grades.scored(session, placement, lesson, user_id)


def set_override(
    store: Store,
    placement: Placement,
    lesson: Lesson,
    user_id: int,
    teacher_id: int,
    setting: Setting,
    now: datetime,
) -> tuple[SyncMessage, ...]:
    """Keep the teacher's override and its grade sync; return the sync, to send once kept."""
    with store.session() as session:
        automatic = grades.scored(session, placement, lesson, user_id).part(setting.part)
        override_rows.record(
            session, placement.id, user_id, Change.SET, setting.part, setting.given,
            setting.comment, automatic, teacher_id, now,
        )  # fmt: skip
        grades.needs_sync(session, placement.id, user_id, now)
    return (SyncMessage(user_id, placement.id),)


def remove_override(
    store: Store, placement: Placement, lesson: Lesson, user_id: int, teacher_id: int, now: datetime
) -> tuple[SyncMessage, ...]:
    """Go back to the automatic score (the newest result); return the sync, to send once kept."""
    with store.session() as session:
        scored = grades.scored(session, placement, lesson, user_id)
        standing = _standing(scored)
        override_rows.record(
            session, placement.id, user_id, Change.REMOVED, standing.part, None, "",
            scored.part(standing.part), teacher_id, now,
        )  # fmt: skip
        grades.needs_sync(session, placement.id, user_id, now)
    return (SyncMessage(user_id, placement.id),)


def keep_override(
    store: Store,
    placement: Placement,
    lesson: Lesson,
    user_id: int,
    teacher_id: int,
    seen: str,
    now: datetime,
) -> None:
    """Keep the override over the automatic result the teacher saw (`seen`, its points).

    The score does not change, so nothing goes to the LMS. A result newer than the one seen
    shows again.
    """
    raw = seen.strip()
    if not _SEEN.fullmatch(raw):
        raise Refused(400, "bad_request", say("The form is incomplete: open the page again."))
    with store.session() as session:
        standing = _standing(grades.scored(session, placement, lesson, user_id))
        override_rows.record(
            session, placement.id, user_id, Change.KEPT, standing.part, standing.given,
            standing.comment, float(raw), teacher_id, now,
        )  # fmt: skip


def _standing(scored: Scored) -> Override:
    if scored.override is None:
        raise Refused(
            409, "no_override", say("No override stands on this score: it is the automatic one.")
        )
    return scored.override
