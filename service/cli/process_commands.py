"""`codeblanks serve`, `codeblanks worker` and `codeblanks dev`: the long-running processes."""

from __future__ import annotations

import os
import sys

import click

from service.cli.command_context import Context


@click.command()
@click.option("--queues", default="grade,sync", show_default=True, help="Queues to serve.")
@click.option(
    "--concurrency",
    type=int,
    help="Pool processes (default: one per core; on --queues sync alone, "
    "CODEBLANKS_SYNC_CONCURRENCY).",
)
@click.option("--loglevel", default="info", show_default=True)
@click.pass_obj
def worker(obj: Context, queues: str, concurrency: int | None, loglevel: str) -> None:
    """Run a Celery worker that grades submissions, syncs grades and sweeps what is stuck.

    Run one with `--queues grade` and one with `--queues sync`, so that grade posts never wait
    behind gradings, and another with `--queues regrade` for bulk regrades, so that they never
    delay students. A worker that grades first runs the host check (`codeblanks doctor
    --quick`) and refuses to start on a host that fails it: a sandbox without its limits would
    grade, and contain, wrongly. One on `sync` alone runs no sandbox, and needs no check.
    """
    from service.queue import Queue

    served = {name.strip() for name in queues.split(",") if name.strip()}
    if served == {Queue.SYNC.value}:
        concurrency = concurrency or obj.settings.sync_concurrency
    else:
        _check_host(obj)
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", "worker"]
    argv += ["--queues", queues, "--loglevel", loglevel, "--without-gossip", "--without-mingle"]
    if concurrency:
        argv += ["--concurrency", str(concurrency)]
    os.execv(sys.executable, argv)


def _check_host(obj: Context) -> None:
    from workers.sandbox import checkup
    from workers.sandbox.runtime import Runtime

    findings = checkup.examine(obj.settings.sandbox, Runtime(obj.settings.runtime_dir), timed=False)
    if checkup.failed(findings):
        click.echo("codeblanks worker: this host fails the host check; not starting", err=True)
        click.echo(checkup.report(findings), err=True)
        sys.exit(1)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True)
@click.option("--workers", "processes", default=2, show_default=True, help="Web processes.")
@click.option("--threads", default=16, show_default=True, help="Threads per process.")
@click.pass_obj
def serve(obj: Context, host: str, port: int, processes: int, threads: int) -> None:
    """Run the web app with gunicorn (threaded: a live status stream holds a thread).

    Each request is read whole, under deadlines, before a thread takes it
    (service/web/buffering.py): a client that sends slowly holds no thread.
    """
    # live streams may hold half of a process's threads at most, whatever --threads says:
    # the other half answers pages, submissions and health checks
    streams = max(1, min(obj.settings.streams_per_process, threads // 2))
    # gunicorn's processes read their settings from the environment (with their own
    # Settings): this one goes to them there, changed
    os.environ["CODEBLANKS_STREAMS_PER_PROCESS"] = str(streams)
    argv = [sys.executable, "-m", "gunicorn", "--bind", f"{host}:{port}"]
    argv += ["--workers", str(processes), "--threads", str(threads)]
    argv += ["--worker-class", "service.web.buffering.BufferingWorker"]
    argv += ["--config", "python:service.web.serving"]
    # the demo LMS (`codeblanks dev`, the compose demo) is mounted by a factory of its own
    factory = (
        "service.dev.demo_mount:create_app()" if obj.settings.demo else "service.web:create_app()"
    )
    os.execv(sys.executable, [*argv, factory])


@click.command()
@click.option("--port", default=5000, show_default=True, help="Port of the web app.")
@click.pass_obj
def dev(obj: Context, port: int) -> None:
    """Run everything on this machine: Redis, the workers, the web app and a demo LMS."""
    from service.dev.supervisor import run_dev

    sys.exit(run_dev(obj.settings, port, lambda line: click.echo(line)))
