"""The one exception of the demo platform: a refused request that says what to check."""

from __future__ import annotations

from typing import Any


class DemoError(Exception):
    """A request the platform refuses: HTTP status, OAuth-style error code, and a message."""

    def __init__(
        self, status: int, message: str, error: str = "invalid_request", body: Any = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error = error
        # the JSON to answer as it is, in place of {"error", "error_description"} (Canvas's)
        self.body = body

    def __str__(self) -> str:
        return f"{self.status} {self.error}: {self.message}"
