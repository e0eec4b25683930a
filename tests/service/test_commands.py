import os
import sqlite3
import subprocess
import sys

from tests.conftest import REPO


def codeblanks(tmp_path, *args):
    env = {**os.environ, "CODEBLANKS_INSTANCE_DIR": str(tmp_path / "instance")}
    env.pop("CODEBLANKS_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "service", *args], capture_output=True, text=True, env=env, cwd=REPO
    )


def test_db_upgrade_makes_the_embedded_database_and_is_idempotent(tmp_path):
    for _ in range(2):
        done = codeblanks(tmp_path, "db", "upgrade")
        assert done.returncode == 0, done.stderr
        assert "sqlite database has the newest schema" in done.stdout
    database = sqlite3.connect(tmp_path / "instance" / "codeblanks.db")
    tables = {name for (name,) in database.execute("SELECT name FROM sqlite_master")}
    assert {"submissions", "grade_syncs", "placements"} <= tables


def test_regrade_of_an_empty_placement(tmp_path):
    done = codeblanks(tmp_path, "regrade", "1")
    assert done.returncode == 0, done.stderr
    assert "0 submissions queued for regrading" in done.stdout


def test_worker_and_serve_are_commands(tmp_path):
    for command in ("worker", "serve"):
        done = codeblanks(tmp_path, command, "--help")
        assert done.returncode == 0 and "Usage" in done.stdout
