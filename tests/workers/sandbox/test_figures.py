"""A run's figures on every backend (conftest.py's `sandbox`): what a program draws comes
back re-encoded, bounded, with its text alternative; what lies, links or floods does not."""

import os
import tempfile
import textwrap
from pathlib import Path

import pytest

from core.figures import MAX_FIGURES, DropReason
from core.runs import Limits, RunOutcome, RunRequest
from service.settings import Settings
from testkit import slowness
from tests.workers.sandbox import pngs
from workers.sandbox.runtime import Runtime
from workers.sandbox.warm import WarmSandbox

LIMITS = slowness.stretch(Limits(time_s=10, memory_mb=256))

HEAT_MAP = textwrap.dedent("""
    import matplotlib.pyplot as plt
    import numpy as np
    kelimeler = ["ben", "kediyi", "sever"]
    agirlik = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    fig, ax = plt.subplots()
    im = ax.imshow(agirlik)
    ax.set_xticks(range(3), kelimeler)
    ax.set_yticks(range(3), kelimeler)
    ax.set_title("Dikkat ağırlıkları")
    ax.set_xlabel("anahtar")
    ax.set_ylabel("sorgu")
    fig.colorbar(im)
""")


def run(sandbox, source: str, figures: bool = True, **extra: bytes):
    files = {"main.py": textwrap.dedent(source).encode(), **extra}
    return sandbox.run(RunRequest(files, "main.py", LIMITS, figures=figures))


def test_a_shown_and_a_saved_figure_come_back_re_encoded_with_their_text(sandbox):
    result = run(sandbox, HEAT_MAP + "plt.savefig('isi.png')\nplt.show()\nprint('ok')\n")
    assert (result.outcome, result.exit_code, result.stdout) == (RunOutcome.EXITED, 0, b"ok\n")
    assert [(f.width, f.height) for f in result.figures] == [(640, 480), (640, 480)]
    assert {f.alt for f in result.figures} == {"Dikkat ağırlıkları, x: anahtar, y: sorgu"}
    for figure in result.figures:  # written anew by the host: pixels, and nothing else
        assert pngs.chunk_types(figure.png)[0] == b"IHDR"
        assert set(pngs.chunk_types(figure.png)) <= {b"IHDR", b"IDAT", b"IEND"}
    assert result.dropped == ()


def test_a_run_that_draws_nothing_has_no_figure(sandbox):
    assert run(sandbox, "print(1)\n").figures == ()
    # a figure made but neither shown nor saved is no figure, as in python3
    drawn = run(sandbox, HEAT_MAP + "print(len(plt.get_fignums()))\n")
    assert (drawn.stdout, drawn.figures, drawn.dropped) == (b"1\n", (), ())


def test_no_figure_is_left_for_the_next_run(sandbox):
    """A warm zygote imported pyplot ahead: each run starts with no figure, no shown file."""
    left = HEAT_MAP + "plt.show()\nplt.figure()\n"  # one shown, one left open
    assert len(run(sandbox, left).figures) == 1
    look = """
        import os
        import matplotlib
        import matplotlib.pyplot as plt
        print(plt.get_fignums(), os.path.exists("/tmp/.codeblanks-figures"), os.listdir("."))
        print(matplotlib.get_backend())
    """
    result = run(sandbox, look)
    assert result.stdout == b"[] False ['main.py']\nmodule://codeblanks_drawing\n"
    assert result.figures == ()


def test_a_program_that_asks_for_a_window_still_draws_on_agg(sandbox):
    source = """
        import matplotlib
        matplotlib.use("TkAgg")
        import matplotlib.pyplot as plt
        plt.switch_backend("QtAgg")
        plt.plot([1, 2, 3])
        plt.title("still here")
        plt.show()
        print(matplotlib.get_backend())
    """
    result = run(sandbox, source)
    assert result.stdout == b"module://codeblanks_drawing\n", result.stderr
    assert [f.alt for f in result.figures] == ["still here"]


def test_a_hidden_case_s_figures_never_leave_the_sandbox(sandbox):
    result = run(sandbox, HEAT_MAP + "plt.show()\n", figures=False)
    assert (result.exit_code, result.figures, result.dropped) == (0, (), ())


def test_past_the_fourth_figure_none_is_kept_and_each_is_named(sandbox):
    source = """
        import matplotlib.pyplot as plt
        for n in range(6):
            plt.figure()
            plt.title(f"figure {n}")
        plt.show()
    """
    result = run(sandbox, source)
    assert [f.alt for f in result.figures] == [f"figure {n}" for n in range(MAX_FIGURES)]
    assert [(d.name, d.reason) for d in result.dropped] == [
        ("figure-05.png", DropReason.TOO_MANY),
        ("figure-06.png", DropReason.TOO_MANY),
    ]


def test_files_that_are_no_figure_are_dropped_with_why(sandbox):
    huge = pngs.png(100_000, 100_000, rows=b"\0")  # its header claims 10 billion pixels
    bomb = pngs.bomb(10_000)  # 300 KB of zeros, 300 MB of pixels
    source = f"""
        import os
        with open("big.png", "wb") as f:
            f.write({pngs.png(8, 8)[:33]!r} + b"\\0" * 1_200_000)
        with open("text.png", "w") as f:
            f.write("not a picture")
        with open("huge.png", "wb") as f:
            f.write({huge!r})
        with open("bomb.png", "wb") as f:
            f.write(bytes.fromhex({bomb.hex()!r}))
        os.mkfifo("pipe.png")
        os.mkdir("folder.png")
        os.symlink("/etc/passwd", "passwd.png")
        with open("small.png", "wb") as f:
            f.write({pngs.png(4, 3)!r})
        print(len(open("bomb.png", "rb").read()) < 1024 * 1024)
    """
    result = run(sandbox, source)
    assert (result.exit_code, result.stdout) == (0, b"True\n"), result.stderr
    assert [(f.width, f.height) for f in result.figures] == [(4, 3)]
    assert sorted((d.name, d.reason) for d in result.dropped) == [
        ("big.png", DropReason.TOO_LARGE),
        ("bomb.png", DropReason.TOO_MANY_PIXELS),
        ("folder.png", DropReason.NOT_A_FILE),
        ("huge.png", DropReason.TOO_MANY_PIXELS),
        ("passwd.png", DropReason.NOT_A_FILE),
        ("pipe.png", DropReason.NOT_A_FILE),
        ("text.png", DropReason.NOT_PNG),
    ]


def test_a_link_to_a_host_folder_or_file_is_never_followed(sandbox):
    """The bwrap backend reads the run's tmpfs from the host: a link the run planted there
    names a host path, which must stay unread (in the sandbox the same path does not exist)."""
    with tempfile.TemporaryDirectory() as host:
        Path(host, "secret.png").write_bytes(pngs.png(5, 5))
        os.chmod(host, 0o755)
        source = f"""
            import os
            os.symlink({host!r}, "/tmp/.codeblanks-figures")
            os.symlink({host + "/secret.png"!r}, "secret.png")
            print(os.path.exists({host!r}))
        """
        result = run(sandbox, source)
    assert (result.exit_code, result.stdout) == (0, b"False\n"), result.stderr
    assert result.figures == ()
    assert [(d.name, d.reason) for d in result.dropped] == [("secret.png", DropReason.NOT_A_FILE)]


def test_the_run_s_own_files_are_never_its_figures(sandbox):
    picture = pngs.png(6, 6)
    result = run(sandbox, "print(open('data.png', 'rb').read()[:4])\n", **{"data.png": picture})
    assert result.stdout == b"b'\\x89PNG'\n"
    assert (result.figures, result.dropped) == ((), ())


@pytest.mark.parametrize("ending", ["import sys\nsys.exit(3)\n", "raise SystemExit('no')\n"])
def test_a_program_that_fails_after_drawing_keeps_its_figures(sandbox, ending):
    result = run(sandbox, HEAT_MAP + "plt.show()\n" + ending)
    assert result.outcome is RunOutcome.EXITED and result.exit_code != 0
    assert len(result.figures) == 1


@pytest.fixture(scope="module")
def drawing_pool():
    """A warm pool whose zygotes import pyplot ahead and draw once (Settings.warm_drawing)."""
    pool = WarmSandbox(Runtime(Settings.from_env().runtime_dir), slots=1, drawing=True)
    pool.check()
    pool.start()
    yield pool
    pool.close()


@pytest.mark.bwrap
def test_a_zygote_with_pyplot_ahead_draws_and_leaves_nothing_to_the_next_run(drawing_pool):
    look = """
        import sys
        ahead = "matplotlib.pyplot" in sys.modules
        import matplotlib.pyplot as plt
        from matplotlib import _pylab_helpers
        print(ahead, plt.get_fignums(), len(_pylab_helpers.Gcf.figs), plt.gcf().number)
        plt.title("mine")
        plt.show()
    """
    for _ in range(3):  # each run: pyplot imported already, no figure, its own first figure
        result = run(drawing_pool, look)
        assert result.stdout == b"True [] 0 1\n", result.stderr
        assert [f.alt for f in result.figures] == ["mine"]
    left = run(drawing_pool, HEAT_MAP + "plt.figure()\nplt.savefig('x.png')\n")
    assert left.exit_code == 0 and len(left.figures) == 1
    assert run(drawing_pool, look).stdout == b"True [] 0 1\n"
