import pytest

from tests.service.cli import codeblanks_in


def test_worker_and_serve_are_commands(tmp_path):
    for command in ("worker", "serve"):
        done = codeblanks_in(tmp_path, command, "--help")
        assert done.returncode == 0 and "Usage" in done.stdout


@pytest.mark.parametrize(("threads", "streams"), [(16, 8), (8, 4), (4, 2), (1, 1), (64, 8)])
def test_serve_leaves_half_of_each_processs_threads_to_pages(monkeypatch, threads, streams):
    import os

    from click.testing import CliRunner

    from service.cli import main

    monkeypatch.setenv("CODEBLANKS_STREAMS_PER_PROCESS", "8")
    started = []

    def execv(path, argv):
        started.append((argv, os.environ["CODEBLANKS_STREAMS_PER_PROCESS"]))
        raise SystemExit(0)

    monkeypatch.setattr(os, "execv", execv)
    result = CliRunner().invoke(main, ["serve", "--threads", str(threads)])
    assert result.exit_code == 0, result.output
    [(argv, cap)] = started
    assert int(cap) == streams and "python:service.web.serving" in argv


def test_serve_hands_gunicorn_an_app_factory_that_exists(monkeypatch):
    import importlib
    import os

    from click.testing import CliRunner

    from service.cli import main

    started = []

    def execv(path, argv):
        started.append(argv)
        raise SystemExit(0)

    monkeypatch.setattr(os, "execv", execv)
    assert CliRunner().invoke(main, ["serve"]).exit_code == 0
    [argv] = started
    module, call = argv[-1].split(":")
    assert call.endswith("()")
    assert callable(getattr(importlib.import_module(module), call.removesuffix("()")))


def test_a_sync_worker_runs_its_own_pool_and_needs_no_sandbox(monkeypatch, tmp_path):
    """A worker on the `sync` queue alone posts grades: its pool is CODEBLANKS_SYNC_CONCURRENCY,
    and a host without the sandbox's runtime tree does not stop it (a grading worker's does)."""
    import os

    from click.testing import CliRunner

    from service.cli import main

    monkeypatch.setenv("CODEBLANKS_RUNTIME_DIR", str(tmp_path / "no-runtime"))
    monkeypatch.setenv("CODEBLANKS_SYNC_CONCURRENCY", "3")
    started = []

    def execv(path, argv):
        started.append(argv)
        raise SystemExit(0)

    monkeypatch.setattr(os, "execv", execv)
    synced = CliRunner().invoke(main, ["worker", "--queues", "sync"])
    assert synced.exit_code == 0, synced.output
    [argv] = started
    assert argv[argv.index("--queues") + 1] == "sync"
    assert argv[argv.index("--concurrency") + 1] == "3"
    graded = CliRunner().invoke(main, ["worker", "--queues", "grade"])
    assert graded.exit_code == 1 and len(started) == 1  # the host check refused it
