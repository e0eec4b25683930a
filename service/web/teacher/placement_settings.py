"""The teacher's settings of a placement: the form's fields, their checks, and saving them.

Times on the form are UTC (`datetime-local` values, which carry no zone); the late penalty
is a percentage there and a share (0..1) in the store. Holding the scores, and when to
release them, are service.store.releases's to keep.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from flask_babel import gettext as _

from core.placements import Reveal
from service.queue import SyncMessage
from service.store import placement_rows, releases
from service.store.database import Store
from service.store.models import Placement

MAX_ATTEMPTS = 1000
_FORM_TIME = "%Y-%m-%dT%H:%M"
_DECIMAL = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,4})?")


@dataclass(frozen=True)
class PlacementSettings:
    """A placement's policy, checked."""

    reveal: Reveal
    reveal_after_attempts: int | None
    max_attempts: int | None
    due_at: datetime | None
    late_penalty: float | None  # None: late work is refused
    hold: bool = False  # the scores wait for a release
    release_at: datetime | None = None  # the sweep releases them then


def form_of(placement: Placement) -> dict[str, str]:
    """Return the placement's settings as the form's field values."""
    return {
        "reveal": placement.reveal,
        "reveal_after_attempts": _text(placement.reveal_after_attempts),
        "max_attempts": _text(placement.max_attempts),
        "due_at": form_time(placement.due_at),
        "late": "refuse" if placement.late_penalty is None else "accept",
        "late_penalty": f"{placement.late_penalty * 100:g}"
        if placement.late_penalty is not None
        else "",
        "hold": "1" if placement.hold_scores else "",
        "release_at": form_time(placement.release_at),
    }


def parse(form: Mapping[str, str]) -> tuple[PlacementSettings | None, dict[str, str]]:
    """Check the form; return the settings, or None and a message per faulty field."""
    errors: dict[str, str] = {}
    try:
        reveal = Reveal(form.get("reveal", ""))
    except ValueError:
        errors["reveal"] = _("Choose when the answers are shown.")
        reveal = Reveal.NEVER
    max_attempts = count(form, "max_attempts", errors, required=False)
    after = None
    if reveal is Reveal.AFTER_ATTEMPTS:
        # shown while attempts are left, the solution would be worth its points: "after N
        # attempts" is only "after the last attempt"
        after = count(form, "reveal_after_attempts", errors, required=False)
        if max_attempts is None and "max_attempts" not in errors:
            errors["max_attempts"] = _(
                "Showing the answers after a number of attempts needs a maximum number of "
                "attempts: they are shown once none are left."
            )
        elif max_attempts is not None and after is not None and after != max_attempts:
            errors["reveal_after_attempts"] = _(
                "Must be the maximum attempts (%(most)d): answers shown while attempts are left "
                "would be worth points.",
                most=max_attempts,
            )
        elif max_attempts is not None and "reveal_after_attempts" not in errors:
            after = max_attempts
    due_at = moment(form, "due_at", errors)
    if reveal is Reveal.AFTER_DUE and due_at is None and "due_at" not in errors:
        errors["due_at"] = _("Showing the answers after the due date needs a due date.")
    penalty = None
    if form.get("late", "refuse") == "accept":
        penalty = _percent(form.get("late_penalty", "").strip(), errors)
    elif form.get("late") != "refuse":
        errors["late"] = _("Choose whether late work is accepted.")
    if reveal is Reveal.AFTER_DUE and penalty is not None:
        errors["late"] = _(
            "Late work cannot be taken once the answers are shown at the due date: refuse "
            "late work, or show the answers at another moment."
        )
    hold = form.get("hold", "") == "1"
    release_at = moment(form, "release_at", errors)
    if release_at is not None and not hold:
        errors["release_at"] = _("A release date needs the scores held: tick the box above.")
    if errors:
        return None, errors
    return PlacementSettings(reveal, after, max_attempts, due_at, penalty, hold, release_at), {}


def save(
    store: Store, placement_id: int, settings: PlacementSettings, now: datetime
) -> tuple[SyncMessage, ...]:
    """Store the placement's new settings; return the syncs of scores a lifted hold let go."""
    placement_rows.save_policy(
        store,
        placement_id,
        reveal=settings.reveal.value,
        reveal_after_attempts=settings.reveal_after_attempts,
        max_attempts=settings.max_attempts,
        due_at=settings.due_at,
        late_penalty=settings.late_penalty,
    )
    with store.session() as session:
        users = releases.set_hold(session, placement_id, settings.hold, settings.release_at, now)
    return tuple(SyncMessage(user_id, placement_id) for user_id in users)


def form_time(at: datetime | None) -> str:
    """Return a time as a `datetime-local` field's value, in UTC ("" for none)."""
    return at.astimezone(UTC).strftime(_FORM_TIME) if at else ""


def moment(form: Mapping[str, str], name: str, errors: dict[str, str]) -> datetime | None:
    """Return the form's UTC date and time of field `name`, None when blank or faulty."""
    raw = form.get(name, "").strip()
    if not raw:
        return None
    try:
        return datetime.strptime(raw, _FORM_TIME).replace(tzinfo=UTC)
    except ValueError:
        errors[name] = _("Give a date and time like 2027-01-31T23:59 (UTC), or nothing.")
        return None


def count(form: Mapping[str, str], name: str, errors: dict[str, str], required: bool) -> int | None:
    """Return the form's number of attempts in field `name`, None when blank or faulty."""
    raw = form.get(name, "").strip()
    if not raw:
        if required:
            errors[name] = _("Give a number of attempts.")
        return None
    # ASCII digits, few of them: "²".isdigit() holds and int() refuses it, and int() of
    # thousands of digits raises
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 4) or not 1 <= int(raw) <= MAX_ATTEMPTS:
        errors[name] = (
            _("Give a whole number from 1 to %(most)d.", most=MAX_ATTEMPTS)
            if required
            else _(
                "Give a whole number from 1 to %(most)d, or nothing for no limit.",
                most=MAX_ATTEMPTS,
            )
        )
        return None
    return int(raw)


def _percent(raw: str, errors: dict[str, str]) -> float | None:
    # float() takes "nan", "1e2", and digits of any script: only plain decimals here
    value = float(raw) if _DECIMAL.fullmatch(raw) else -1.0
    if not 0 <= value <= 100:
        errors["late_penalty"] = _("Give the share taken off late work, from 0 to 100 (%).")
        return None
    return value / 100


def _text(value: int | None) -> str:
    return "" if value is None else str(value)
