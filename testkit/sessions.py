"""A signed-in session without an LTI launch, written by the launch's own service.web.auth."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flask import Flask, session
from flask.testing import FlaskClient

from service.web import auth


def launched(
    app: Flask, user_id: int, placements: Iterable[int] = (), teaches: Iterable[int] = ()
) -> dict[str, Any]:
    """Return the session a launch leaves: the user, the placements opened, the courses taught."""
    with app.test_request_context():
        auth.sign_in(user_id, placements, teaches)
        return dict(session)


def session_token(app: Flask, user_id: int, placements: Iterable[int] = ()) -> str:
    """Return the token a launched page's script sends in its header, for the same session."""
    with app.test_request_context():
        auth.sign_in(user_id, placements)
        return auth.session_token()


def sign_in(
    client: FlaskClient, user_id: int, placements: Iterable[int] = (), teaches: Iterable[int] = ()
) -> None:
    """Stand in for the LTI launch: the user, the placements they opened, the courses taught."""
    with client.session_transaction() as held:
        held.clear()
        held.update(launched(client.application, user_id, placements, teaches))
