"""OIDC logins in flight and the nonces launches used: one-time states, kept until they expire."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from service.store.database import Store, changed
from service.store.models import LtiLogin, Platform, UsedNonce


def record(
    store: Store,
    *,
    state: str,
    platform_id: int,
    nonce: str,
    browser_hash: str,
    storage_target: str | None,
    params: dict[str, Any],
    created_at: datetime,
    expires_at: datetime,
) -> None:
    """Store a new login's state, nonce and browser binding."""
    with store.session() as session:
        session.add(
            LtiLogin(
                state=state,
                platform_id=platform_id,
                nonce=nonce,
                browser_hash=browser_hash,
                storage_target=storage_target,
                params=params,
                created_at=created_at,
                expires_at=expires_at,
            )
        )


def by_state(store: Store, state: str) -> LtiLogin | None:
    """Return the login of a state (used or not), or None."""
    with store.session() as session:
        return session.scalar(select(LtiLogin).where(LtiLogin.state == state))


def use(store: Store, login_id: int, platform_id: int, now: datetime) -> Platform | None:
    """Mark a login used, once; return its platform, or None if it was used already (or the
    platform is gone)."""
    with store.session() as session:
        won = changed(
            session,
            update(LtiLogin)
            .where(LtiLogin.id == login_id, LtiLogin.used_at.is_(None))
            .values(used_at=now),
        )
        platform = session.get(Platform, platform_id)
    return platform if won else None


def use_nonce(store: Store, issuer: str, nonce: str, expires_at: datetime) -> bool:
    """Record a nonce as used for an issuer; return False if it was used before."""
    try:
        with store.session() as session:
            session.add(UsedNonce(issuer=issuer, nonce=nonce, expires_at=expires_at))
    except IntegrityError:
        return False
    return True
