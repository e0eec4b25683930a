"""`codeblanks regrade`: grade a placement's graded submissions again, on the bulk queue."""

from __future__ import annotations

import click


@click.command()
@click.argument("placement_id", type=int)
def regrade(placement_id: int) -> None:
    """Grade every graded submission of PLACEMENT_ID again, on the bulk `regrade` queue."""
    from service.queue import send
    from service.web import create_app, extensions
    from service.web.teacher.regrading import queue_regrade

    app = create_app()
    gradings = queue_regrade(extensions.store(app), placement_id)
    send(extensions.celery_app(app), gradings)
    click.echo(f"codeblanks: {len(gradings)} submissions queued for regrading")
