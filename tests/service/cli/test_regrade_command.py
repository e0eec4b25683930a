from tests.service.cli import codeblanks_in


def test_regrade_of_an_empty_placement(tmp_path):
    done = codeblanks_in(tmp_path, "regrade", "1")
    assert done.returncode == 0, done.stderr
    assert "0 submissions queued for regrading" in done.stdout
