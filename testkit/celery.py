"""A Celery app that records what it is asked to send and sends nothing: given to create_app
(or a test's worker) in place of the real one, for tests that read what was sent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from celery import Celery

from service.queue.broker import celery_config
from service.settings import Settings


@dataclass(frozen=True)
class Sent:
    """One send: the task's name, its arguments and Celery's options (queue, priority, ...)."""

    name: str
    args: list[Any]
    kwargs: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)


class FakeCelery(Celery):  # type: ignore[misc]
    """Celery configured as service.queue.broker.make_celery does, whose send_task records.

    Its tasks run in the test's process (`app.tasks[name].apply()`), and what they send,
    Celery's own retries included, lands in `sent` too. `on_send` sees each send as it
    happens (a test that checks what was committed at that moment).
    """

    def __init__(self, settings: Settings, on_send: Callable[[Sent], None] | None = None):
        super().__init__("codeblanks")
        self.conf.update(celery_config(settings))
        self.sent: list[Sent] = []
        self.on_send = on_send
        self.set_default()  # as make_celery: a task reached by its module finds this app

    def send_task(self, name: str, args: Any = None, kwargs: Any = None, **options: Any) -> None:
        """Record a send by name; Celery's signature, which Task.retry calls by position."""
        sent = Sent(str(name), list(args or ()), kwargs, options)
        self.sent.append(sent)
        if self.on_send is not None:
            self.on_send(sent)
