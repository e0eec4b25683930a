"""The program a case runs in the sandbox when plain `python3 ENTRY` is not enough.

Not imported by the grader: core/cases.py puts this file's text into the run's files, beside a
JSON file holding the case's input (never its expected result), and makes it the entrypoint.
It runs as the student's program does, with the run's uid and limits, and is trusted with
nothing: whatever it writes is read back on the host as data.

- mode "run": run the entrypoint as `__main__` with the case's argv (`python3 ENTRY ARGS...`).
- mode "value": import the entrypoint as a module (its top-level code runs; its prints go to
  stderr with its errors), evaluate the case's `expr` with `np` and the module's names, and
  write the value as tagged JSON (core/values.py reads it) on stdout, which carries nothing
  else. Only plain data crosses: an object of any other type, a subclass of a plain type
  included, is sent as `{"$unsupported": "what it was"}`, so an object that claims to equal
  anything never reaches a comparison.
"""

import sys

_HOME = sys.path.pop(0)  # the work dir: our own imports must not find the student's files

import builtins  # noqa: E402
import importlib  # noqa: E402
import importlib.machinery  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, _HOME)

CONFIG = "__codeblanks_case__.json"
_SELF = os.path.abspath(__file__)
_MAX_DEPTH = 64
_PLAIN = (bool, int, float, str, list, tuple, dict)


class _TooDeep(Exception):
    pass


def main() -> None:
    """Read the case and run it."""
    with open(os.path.join(_HOME, CONFIG), "rb") as handle:
        case = json.load(handle)
    if case["mode"] == "value":
        _value(case["entrypoint"], case["expr"])
    else:
        _run(case["entrypoint"], case["argv"])


def _run(entrypoint: str, argv: list[str]) -> None:
    path = os.path.join(_HOME, entrypoint)
    sys.argv[:] = [path, *argv]
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    module.__spec__ = None
    module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = module
    try:
        with open(path, "rb") as handle:
            code = compile(handle.read(), path, "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: B036 - reported as python3 would, without our frame
        _report(exc)
        sys.exit(1)


def _value(entrypoint: str, expr: str) -> None:
    channel = os.dup(1)  # the value's own channel: nothing but this harness writes there
    os.dup2(2, 1)  # the program's prints go to stderr, beside its errors
    name = entrypoint[: -len(".py")]
    try:
        module = importlib.import_module(name)
        namespace = dict(vars(module))
        namespace["np"] = importlib.import_module("numpy")
        value = eval(compile(expr, "<case>", "eval", dont_inherit=True), namespace)  # noqa: S307
    except SystemExit as exc:
        _flush_prints()
        print(
            f"The program ended (SystemExit: {exc.code!r}) before the case's expression gave "
            "a value; a value case imports your file, so leave exit() out of its top level.",
            file=sys.stderr,
        )
        sys.exit(1)
    except BaseException as exc:  # noqa: B036
        _flush_prints()
        _report(exc)
        sys.exit(1)
    try:
        text = json.dumps(_encode(value, 0), allow_nan=False)
    except _TooDeep:
        text = json.dumps({"$unsupported": "a value nested too deeply (or holding itself)"})
    except ValueError as exc:  # an int too long to write
        text = json.dumps({"$unsupported": f"a value that cannot be written ({exc})"})
    sys.stdout.flush()
    view = memoryview(text.encode())
    while view:
        view = view[os.write(channel, view) :]
    os.close(channel)


def _flush_prints() -> None:
    """Write out the module's buffered prints, so that the error comes last, as the student
    would read it (and as the grader's "last error line" takes it)."""
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001, S110 - a stdout the program broke must not hide the error
        pass


def _encode(value: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise _TooDeep
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        return {"$float": "nan" if value != value else "inf" if value > 0 else "-inf"}
    if kind is list:
        return [_encode(item, depth + 1) for item in value]
    if kind is tuple:
        return {"$tuple": [_encode(item, depth + 1) for item in value]}
    if kind is dict:
        if not all(type(key) is str for key in value):
            return {"$unsupported": "a dict whose keys are not all text"}
        return {"$dict": {key: _encode(item, depth + 1) for key, item in value.items()}}
    numpy: Any = sys.modules.get("numpy")
    if numpy is not None:
        if kind is numpy.ndarray:
            if value.dtype.kind not in "biufU":
                return {"$unsupported": f"a numpy array of dtype {value.dtype}"}
            data = _encode(value.tolist(), depth + 1)
            return {
                "$ndarray": {"dtype": str(value.dtype), "shape": list(value.shape), "data": data}
            }
        if issubclass(kind, numpy.generic) and kind.__module__ == "numpy":
            if value.dtype.kind not in "biufU":
                return {"$unsupported": f"a numpy {value.dtype} scalar"}
            item = _encode(value.item(), depth + 1)
            return {"$scalar": {"dtype": str(value.dtype), "value": item}}
    return {"$unsupported": _describe(value, kind)}


def _describe(value: object, kind: type) -> str:
    """Say what a value is from its type alone: its own repr or str could lie, hang or raise.

    Only the real type is asked (issubclass, never isinstance: a `__class__` property can lie
    or raise). A function's or a class's name is read through the type's own descriptor.
    """
    name = _qualname(type, kind)
    if issubclass(kind, types.FunctionType):
        return f"a function ({_qualname(types.FunctionType, value)})"
    if issubclass(kind, types.BuiltinFunctionType):
        return f"a function ({_qualname(types.BuiltinFunctionType, value)})"
    if issubclass(kind, types.MethodType):
        return "a method"
    if issubclass(kind, types.GeneratorType):
        return "a generator"
    if issubclass(kind, type):
        return f"a class ({_qualname(type, value)})"
    if issubclass(kind, types.ModuleType):
        return "a module"
    for plain in _PLAIN:
        if issubclass(kind, plain):
            return f"a {name} object (a subclass of {plain.__name__})"
    return f"a {name} object"


def _qualname(owner: type, value: object) -> str:
    """Read `__qualname__` through `owner`'s descriptor, so that no code of the value runs."""
    try:
        name = owner.__dict__["__qualname__"].__get__(value)
    except Exception:  # noqa: BLE001
        return "unnamed"
    return name[:80] if type(name) is str else "unnamed"


def _report(exc: BaseException) -> None:
    tb = exc.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) == _SELF:
        tb = tb.tb_next  # the student's traceback starts at their own file, as in python3
    traceback.print_exception(type(exc), exc, tb)


if __name__ == "__main__":
    main()
