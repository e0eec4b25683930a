"""The Celery worker's entry: `celery -A workers.app worker` (what `codeblanks worker` runs).

The worker makes its own small context (workers.context) from the settings, without Flask:
no blueprints, no sessions, no web modules.
"""

import logging
import os
import warnings

from celery.signals import worker_process_init, worker_process_shutdown, worker_shutdown

from core.errors import GraderError
from service import logs
from service.queue import Queue
from service.queue.broker import make_celery
from service.settings import Settings
from workers import tasks  # the tasks register themselves by name
from workers.context import WorkerContext
from workers.sweep import SweepTimer

settings = Settings.from_env()
logs.configure(settings.log_format)
context = WorkerContext.start(settings)
celery_app = make_celery(settings)
context.attach(celery_app)
# every case of an exercise may run, one after another, while its lease is renewed: only a
# grading that outlasts all of them (and a lease more) is stuck, and killed
celery_app.conf.task_time_limit = settings.lease_s + context.catalog.longest_grading_s()
celery_app.steps["worker"].add(SweepTimer)
if (
    os.geteuid() == 0
    and settings.sandbox in ("warm", "bwrap")
    and "pickle" not in celery_app.conf.accept_content
):
    # Celery warns every worker that runs as root ("absolutely not recommended"), for fear of
    # pickled messages, which would run code as root: this app takes JSON only. The warm and
    # bwrap sandboxes need root (a uid and cgroups per slot), so say that instead, once; a
    # docker-backend worker needs no root, and keeps Celery's warning
    warnings.filterwarnings("ignore", message="You're running the worker with superuser")
    logging.getLogger(__name__).info(
        "the worker runs as root: its %s sandbox makes a uid and cgroups per slot, and it takes "
        "JSON messages only (docs/operations.md, 'Warnings a new admin reads')",
        settings.sandbox,
    )


def grades() -> bool:
    """Return whether this worker takes gradings: one on the `sync` queue alone runs no sandbox."""
    consumed = celery_app.amqp.queues.consume_from  # None: every queue
    return consumed is None or bool(set(consumed) - {Queue.SYNC.value})


@worker_process_init.connect
def _prepare_sandbox(**_: object) -> None:
    """Get each pool process's sandbox ready as it starts, not on its first submission."""
    if not grades():
        return
    try:
        tasks.prepare_sandbox(context)
    except (GraderError, OSError) as exc:  # the first task meets the same error, with its run
        logging.getLogger(__name__).warning("the sandbox is not ready: %s", exc)


@worker_process_shutdown.connect
@worker_shutdown.connect
def _close_sandbox(**_: object) -> None:
    """Close the exiting process's sandbox, so that no zygote or run cgroup outlives it.

    A prefork pool process exits by os._exit, which skips the pool's own exit handler: without
    this, a stopped worker left its warm runs' cgroups for the next worker's sweep.
    """
    context.close_sandbox()
