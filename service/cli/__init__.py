"""The `codeblanks` command: grade a file, check lessons, run the service, administer LTI.

One module per command group; each keeps its heavy imports (Flask, SQLAlchemy, Celery,
pylti1p3) inside the command that needs them, so that `codeblanks grade` starts fast.
"""

from __future__ import annotations

import click

from service.cli.command_context import Context
from service.cli.db_commands import db
from service.cli.doctor_command import doctor
from service.cli.grade_command import grade
from service.cli.lesson_commands import lessons
from service.cli.platform_commands import keys, platforms
from service.cli.process_commands import dev, serve, worker
from service.cli.regrade_command import regrade
from service.settings import Settings


@click.group()
@click.pass_context
def main(ctx: click.Context) -> None:
    """Grade interactive coding lessons, in a sandbox, for any LTI 1.3 LMS."""
    ctx.obj = Context(Settings.from_env())


for _command in (grade, lessons, db, doctor, worker, regrade, serve, dev, platforms, keys):
    main.add_command(_command)
