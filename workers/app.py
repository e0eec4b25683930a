"""The Celery worker's entry: `celery -A workers.app worker` (what `codeblanks worker` runs)."""

import logging

from celery.signals import worker_process_init

import workers.tasks  # the tasks register themselves by name
from core.errors import GraderError
from service.web import create_app
from workers.sweep import SweepTimer

flask_app = create_app()
celery_app = flask_app.extensions["celery"]
celery_app.steps["worker"].add(SweepTimer)


@worker_process_init.connect
def _prepare_sandbox(**_: object) -> None:
    """Get each pool process's sandbox ready as it starts, not on its first submission."""
    try:
        with flask_app.app_context():
            workers.tasks.prepare_sandbox()
    except (GraderError, OSError) as exc:  # the first task meets the same error, with its run
        logging.getLogger(__name__).warning("the sandbox is not ready: %s", exc)
