"""`codeblanks doctor`: check that this host can run the sandbox, and say how to fix it."""

from __future__ import annotations

import sys

import click

from service.cli.command_context import Context
from workers.sandbox import BACKENDS, checkup
from workers.sandbox.runtime import Runtime


@click.command()
@click.option("--backend", type=click.Choice(BACKENDS), help="Sandbox backend to check.")
@click.option("--quick", is_flag=True, help="Skip the timed cold and warm runs.")
@click.pass_obj
def doctor(obj: Context, backend: str | None, quick: bool) -> None:
    """Check what the sandbox needs of this host; exit 1 if it cannot run safely here.

    User namespaces, cgroups (version, controllers, delegation), seccomp, bubblewrap, the
    runtime tree, and how long a cold and a warm run take here.
    """
    chosen = backend or obj.settings.sandbox
    click.echo(f"codeblanks doctor: the {chosen} sandbox on this host")
    findings = checkup.examine(chosen, Runtime(obj.settings.runtime_dir), timed=not quick)
    click.echo(checkup.report(findings))
    sys.exit(1 if checkup.failed(findings) else 0)
