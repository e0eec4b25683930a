"""The Celery worker's entry: `celery -A workers.worker worker` (what `codeblanks worker` runs)."""

import workers.tasks  # noqa: F401  the tasks register themselves by name
from service import create_app
from workers.sweep import SweepTimer

flask_app = create_app()
celery_app = flask_app.extensions["celery"]
celery_app.steps["worker"].add(SweepTimer)
