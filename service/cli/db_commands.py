"""`codeblanks db upgrade`: bring the database to the newest schema."""

from __future__ import annotations

import click

from service.cli.command_context import Context


@click.group()
def db() -> None:
    """Work with the database."""


@db.command("upgrade")
@click.pass_obj
def db_upgrade(obj: Context) -> None:
    """Bring the database to the newest schema (every start does this too)."""
    from service.store import Store
    from service.store.migrate import upgrade

    store = Store(obj.settings.database)
    upgrade(store)
    store.dispose()
    click.echo(f"codeblanks: the {store.engine.dialect.name} database has the newest schema")
