"""Run a submission in the program process as `python3 -E -s -B /work/ENTRY` would.

The interpreter is already up (with numpy), so what differs from a fresh one is undone here:
argv, sys.path[0], __main__, the zygote's own modules, numpy's global random state. The end
is the interpreter's exit minus its slow teardown of every module (about 16 ms with numpy):
non-daemon threads are joined, atexit handlers run, open files and std streams are flushed,
then the process exits with the code Python would have used.
"""

from __future__ import annotations

import atexit
import builtins
import gc
import importlib.machinery
import io
import os
import signal
import sys
import threading
import types
from typing import Any, NoReturn

_HERE = os.path.dirname(os.path.abspath(__file__))
# programs compiled once in the zygote, by their name in /work: (their text, their code)
_PREPARED: dict[str, tuple[bytes, types.CodeType]] = {}
# the zygote's own modules, named once in the zygote (remember_own): a run that looked for
# them in sys.modules would touch every module name's reference count, copying a page of
# the zygote per few names (200 pages, 1.5 ms a run, with matplotlib loaded)
_OWN: list[str] = []


def remember_own() -> None:
    """Name the zygote's own modules, which each run takes out of its sys.modules."""
    _OWN[:] = [n for n in sys.modules if n == "zygote" or n.startswith("zygote.")]


def compile_prepared(directory: str) -> None:
    """Compile the installed prepared programs (slot.install_zygote), as /work/NAME would be."""
    if not os.path.isdir(directory):
        return
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as handle:
            text = handle.read()
        path = f"/work/{name}"
        _PREPARED[path] = (text, compile(text, path, "exec", dont_inherit=True))


def prepare() -> None:
    """Undo what the program process copied from the zygote, before any code has arrived."""
    for name in _OWN:
        sys.modules.pop(name, None)  # still referenced by our frames; gone from the program's view
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # a fork copies the zygote's seed; `random` reseeds itself at fork
    signal.signal(signal.SIGINT, signal.default_int_handler)


def execute(job: dict[str, Any]) -> NoReturn:
    """Run the job's entrypoint from /work as the __main__ module, then exit the process."""
    path = f"/work/{job['entrypoint']}"
    sys.argv[:] = [path]
    sys.path[0] = os.path.dirname(path)
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main.__dict__["__builtins__"] = builtins
    main.__spec__ = None
    sys.modules["__main__"] = main
    _exit(*_run(path, main.__dict__))


def _run(path: str, namespace: dict[str, Any]) -> tuple[int, int | None]:
    """Run the file; return its exit code, and the signal python3 would end by (SIGINT)."""
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        prepared = _PREPARED.get(path)
        if prepared is not None and prepared[0] == source:
            code = prepared[1]  # the same text, compiled the same way, before the fork
        else:
            code = compile(source, path, "exec", dont_inherit=True)
    except OSError as exc:
        print(f"python3: can't open file {path!r}: {exc}", file=sys.stderr)
        return 2, None
    except (SyntaxError, ValueError) as exc:
        _report(exc)
        return 1, None
    try:
        exec(code, namespace)
    except SystemExit as exc:
        return _exit_code(exc), None
    except BaseException as exc:  # noqa: B036 - the interpreter reports everything, so do we
        _report(exc)
        return 1, signal.SIGINT if isinstance(exc, KeyboardInterrupt) else None
    return 0, None


def _report(exc: BaseException) -> None:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_HERE):
        tb = tb.tb_next  # the student's traceback starts at their own file, as in python3
    try:
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
    except BaseException:  # noqa: B036 - a broken excepthook must not hide the exit code
        sys.__excepthook__(type(exc), exc, tb)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _exit(code: int, by_signal: int | None) -> NoReturn:
    try:
        threading._shutdown()  # type: ignore[attr-defined]  # joins threads, as Py_Finalize
    except BaseException:  # noqa: B036, S110 - interrupted while joining: exit all the same
        pass
    atexit._run_exitfuncs()
    code = _flush_everything(code)
    if by_signal is not None:  # an uncaught KeyboardInterrupt: python3 ends by SIGINT
        signal.signal(by_signal, signal.SIG_DFL)
        os.kill(os.getpid(), by_signal)
    os._exit(code & 0xFF)


def _flush_everything(code: int) -> int:
    # python3 flushes open files when it tears modules down; unflushed output must not vanish
    for obj in gc.get_objects():
        if isinstance(obj, io.IOBase):
            try:
                if not obj.closed and obj.writable():
                    obj.flush()
            except Exception:  # noqa: S112 - as at exit: a file that cannot flush is dropped
                continue
    for stream in (sys.stdout, sys.__stdout__, sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: S112
            if stream in (sys.stdout, sys.__stdout__) and code == 0:
                code = 120  # what python3 exits with when it cannot flush stdout
    return code
