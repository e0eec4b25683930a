"""Rows that outlive their use: logins in flight, used nonces, old tokens and failure counts.

Each kind of row has an expiry; the sweep deletes what passed it, so that requests nobody
needs to authenticate (an OIDC login start, a wrong admin password) cannot grow the database
without bound.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete

from service.store.database import Store, changed
from service.store.models import LoginFailures, LtiLogin, RegistrationToken, UsedNonce

TOKENS_KEPT = timedelta(days=90)  # spent and expired registration tokens, shown to admins
FAILURES_KEPT = timedelta(days=1)  # longer than any throttle's window


def purge(store: Store, now: datetime) -> int:
    """Delete every expired row; return how many went."""
    with store.session() as session:
        gone = changed(session, delete(LtiLogin).where(LtiLogin.expires_at < now))
        gone += changed(session, delete(UsedNonce).where(UsedNonce.expires_at < now))
        gone += changed(
            session,
            delete(RegistrationToken).where(RegistrationToken.expires_at < now - TOKENS_KEPT),
        )
        gone += changed(
            session, delete(LoginFailures).where(LoginFailures.window_start < now - FAILURES_KEPT)
        )
    return gone
