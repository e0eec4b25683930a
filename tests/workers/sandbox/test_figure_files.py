"""The collector of a run's figures, on a folder of the test's own (as the bwrap backend runs
it on the host), its packing for the docker backend, and the trailer it rides on there."""

import os
import time

import pytest

from core.figures import BOUNDS
from tests.workers.sandbox import pngs
from workers.sandbox.capture import capture
from workers.sandbox.zygote.figure_files import collect, pack, unpack


@pytest.fixture
def root(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "tmp" / ".codeblanks-figures").mkdir(parents=True)
    return tmp_path


def test_shown_figures_come_first_in_order_then_the_work_dir_s_by_name(root):
    shown = root / "tmp" / ".codeblanks-figures"
    for name, size in [("figure-02.png", 2), ("figure-01.png", 1)]:
        (shown / name).write_bytes(pngs.png(size, 1))
    for name, size in [("b.PNG", 4), ("a.png", 3), ("main.py", 9), ("notes.txt", 9)]:
        (root / "work" / name).write_bytes(pngs.png(size, 1))
    (root / "work" / "sub").mkdir()
    (root / "work" / "sub" / "deep.png").write_bytes(pngs.png(9, 1))
    found, dropped = collect(str(root), ["main.py"], BOUNDS)
    assert [name for name, _ in found] == ["figure-01.png", "figure-02.png", "a.png", "b.PNG"]
    assert found[0][1] == pngs.png(1, 1) and dropped == []


def test_an_empty_shown_file_counts_as_one_too_many(root):
    (root / "tmp" / ".codeblanks-figures" / "figure-05.png").write_bytes(b"")
    (root / "work" / "empty.png").write_bytes(b"")
    assert collect(str(root), [], BOUNDS) == (
        [],
        [("figure-05.png", "too_many"), ("empty.png", "not_png")],
    )


def test_links_are_refused_never_followed(root, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("host")
    (elsewhere / "secret.png").write_bytes(pngs.png(2, 2))
    os.rmdir(root / "tmp" / ".codeblanks-figures")
    os.symlink(elsewhere, root / "tmp" / ".codeblanks-figures")
    os.symlink(elsewhere / "secret.png", root / "work" / "secret.png")
    assert collect(str(root), [], BOUNDS) == ([], [("secret.png", "not_a_file")])
    # the work dir itself, as a link
    os.rename(root / "work", root / "old")
    os.symlink(elsewhere, root / "work")
    assert collect(str(root), [], BOUNDS) == ([], [])


def test_a_pipe_is_not_read(root):
    os.mkfifo(root / "work" / "pipe.png")
    started = time.monotonic()
    assert collect(str(root), [], BOUNDS) == ([], [("pipe.png", "not_a_file")])
    assert time.monotonic() - started < 30  # it did not wait for a writer (never comes)


def test_a_folder_of_many_bad_files_gives_a_few_notes(root):
    for n in range(50):
        (root / "work" / f"x{n:02d}.png").write_bytes(b"no")
    found, dropped = collect(str(root), [], BOUNDS)
    assert found == [] and len(dropped) == 8


def test_pack_and_unpack_carry_names_bytes_and_reasons():
    found = [("a.png", b"\x89PNG-a"), ("b.png", b"")]
    dropped = [["c.png", "too_large"]]
    data = pack(found, dropped)
    assert unpack(data, len(data)) == (found, [("c.png", "too_large")])
    assert unpack(data, len(data) - 1) is None  # over the bound
    assert unpack(data[:-1], len(data)) is None  # cut short
    assert unpack(data + b"x", len(data) + 1) is None  # more than it says
    assert unpack(b"\0\0\0\x05[1,2]", 100) is None  # not the header's shape
    assert unpack(b"\xff\xff\xff\xff", 100) is None


def test_capture_splits_the_trailer_off_at_a_marker_cut_across_reads():
    marker = b"\0codeblanks-figures-0123\0"
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer: output, then the marker in two writes, then the trailer
        os.close(out_r)
        os.close(err_r)
        for part in (b"hello\n", marker[:7]):
            os.write(out_w, part)
            time.sleep(0.05)
        os.write(out_w, marker[7:] + b"TRAILER")
        os._exit(0)
    os.close(out_w)
    os.close(err_w)
    with open(out_r, "rb") as out, open(err_r, "rb") as err:
        got = capture(out, err, 100, time.monotonic() + 30, marker, 1000)
    os.waitpid(pid, 0)
    assert (bytes(got.stdout), bytes(got.trailer or b""), got.over_budget) == (
        b"hello\n",
        b"TRAILER",
        False,
    )


def test_the_output_budget_is_the_program_s_and_the_trailer_has_its_own():
    marker = b"\0m\0"
    for body, expect in [
        (b"x" * 10 + marker + b"t" * 50, (False, False)),
        (b"x" * 101 + marker, (True, False)),
        (b"x" + marker + b"t" * 2000, (False, True)),
    ]:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        os.write(out_w, body)
        os.close(out_w)
        os.close(err_w)
        with open(out_r, "rb") as out, open(err_r, "rb") as err:
            got = capture(out, err, 100, time.monotonic() + 30, marker, 1000)
        assert (got.over_budget, got.trailer_over) == expect
