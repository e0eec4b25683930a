import sqlite3

from tests.service.cli import codeblanks_in


def test_db_upgrade_makes_the_embedded_database_and_is_idempotent(tmp_path):
    for _ in range(2):
        done = codeblanks_in(tmp_path, "db", "upgrade")
        assert done.returncode == 0, done.stderr
        assert "sqlite database has the newest schema" in done.stdout
    database = sqlite3.connect(tmp_path / "instance" / "codeblanks.db")
    tables = {name for (name,) in database.execute("SELECT name FROM sqlite_master")}
    assert {"submissions", "grade_syncs", "placements"} <= tables
