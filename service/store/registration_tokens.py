"""Registration tokens: an admin's single-use, expiring permission for one dynamic registration.

The token itself is shown once (in the registration URL); only its SHA-256 is stored. A
registration claims its token before it fetches anything, so that one URL cannot register
twice at once; a registration that fails gives the claim back (the admin may retry with the
same URL, and the LMS makes a fresh registration token of its own each time); one that
succeeds spends the token for good.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update

from core.errors import Refusal
from core.messages import say
from service.store.database import Store, changed
from service.store.models import Platform, RegistrationToken

# a claim older than this belongs to a registration that died midway: it may be taken again
CLAIM_TIMEOUT = timedelta(minutes=2)
MAX_VALID = timedelta(days=30)


@dataclass(frozen=True)
class Grant:
    """A claimed token: its row, the name it gives the platform, the one it may replace."""

    id: int
    name: str
    replaces_id: int | None


class TokenRefused(Refusal):
    """Why a registration token cannot be used: missing, unknown, spent, expired or busy."""

    status = 403
    code = "registration_refused"


def issue(
    store: Store, now: datetime, valid: timedelta, name: str = "", replaces_id: int | None = None
) -> str:
    """Make a token valid for `valid` and return it (the only time it is readable)."""
    if not timedelta(hours=1) <= valid <= MAX_VALID:
        hours = int(MAX_VALID.total_seconds() // 3600)
        raise ValueError(f"a registration URL is valid for 1 to {hours} hours")
    if len(name) > 255:
        raise ValueError("the name must be at most 255 characters")
    token = secrets.token_urlsafe(32)
    with store.session() as session:
        if replaces_id is not None and session.get(Platform, replaces_id) is None:
            raise ValueError(f"there is no platform {replaces_id} to replace")
        session.add(
            RegistrationToken(
                token_hash=_hash(token),
                name=name,
                replaces_id=replaces_id,
                created_at=now,
                expires_at=now + valid,
            )
        )
    return token


def claim(store: Store, token: str, now: datetime) -> Grant:
    """Take a valid token for one registration in progress; raise TokenRefused otherwise."""
    if not token:
        raise TokenRefused(say("this registration URL carries no token"))
    if len(token) > 128:
        raise TokenRefused(say("this registration URL's token is not one of this tool's"))
    digest = _hash(token)
    with store.session() as session:
        won = changed(
            session,
            update(RegistrationToken)
            .where(
                RegistrationToken.token_hash == digest,
                RegistrationToken.used_at.is_(None),
                RegistrationToken.expires_at > now,
                or_(
                    RegistrationToken.claimed_at.is_(None),
                    RegistrationToken.claimed_at < now - CLAIM_TIMEOUT,
                ),
            )
            .values(claimed_at=now),
        )
        row = session.scalar(
            select(RegistrationToken).where(RegistrationToken.token_hash == digest)
        )
        if row is None:
            raise TokenRefused(say("this registration URL's token is not one of this tool's"))
        if not won:
            if row.used_at is not None:
                raise TokenRefused(say("this registration URL was used already"))
            if row.expires_at <= now:
                expired = f"{row.expires_at:%Y-%m-%d %H:%M}"
                raise TokenRefused(
                    say("this registration URL expired at {expired} UTC", expired=expired)
                )
            raise TokenRefused(say("a registration with this URL is in progress; wait a minute"))
        return Grant(row.id, row.name, row.replaces_id)


def release(store: Store, grant: Grant) -> None:
    """Give a claimed token back after a failed registration, for the admin to retry."""
    with store.session() as session:
        changed(
            session,
            update(RegistrationToken)
            .where(RegistrationToken.id == grant.id, RegistrationToken.used_at.is_(None))
            .values(claimed_at=None),
        )


def spend(store: Store, grant: Grant, platform_id: int, now: datetime) -> None:
    """Mark a claimed token as used for good, by the registration of `platform_id`."""
    with store.session() as session:
        changed(
            session,
            update(RegistrationToken)
            .where(RegistrationToken.id == grant.id)
            .values(used_at=now, platform_id=platform_id),
        )


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
