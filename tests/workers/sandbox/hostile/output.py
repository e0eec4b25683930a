"""Attacking the output: floods, huge lines, bytes that are not text, lies about success."""

from tests.workers.sandbox.hostile import S, case

EXPECTED = "[0.787 0.107 0.107]\\n[0.893 0.213]\\nTrue"  # the seed's expected output

CASES = [
    case(
        "endless stdout flood",
        "while True:\n    print('x' * 1000)\n",
        {S.OUTPUT_LIMIT},
        timed=True,
    ),
    case(
        "endless stderr flood",
        "import sys\nwhile True:\n    sys.stderr.write('e' * 1000)\n",
        {S.OUTPUT_LIMIT},
        timed=True,
    ),
    case(
        "one 300 MiB line",
        """
        import sys
        chunk = "y" * 2**20
        for _ in range(300):
            sys.stdout.write(chunk)
        """,
        {S.OUTPUT_LIMIT},
        timed=True,
    ),
    case(
        "binary and non-UTF-8 bytes",
        """
        import os, sys
        sys.stdout.buffer.write(b"\\xff\\xfe\\x00\\x80\\xc3(" + os.urandom(256) + b"\\nok\\n")
        """,
        {S.FAILED},
        require=("ok",),
    ),
    case(
        "lone surrogates",
        """
        import sys
        sys.stdout.buffer.write("\\ud800 \\udfff\\n".encode("utf-8", "surrogatepass"))
        sys.stdout.flush()
        sys.stderr.buffer.write("\\udc80\\n".encode("utf-8", "surrogateescape"))
        print("\\udc80")  # surrogateescape or an error, by the locale: either is safe
        """,
        {S.FAILED, S.ERROR},
    ),
    case(
        "closing stdout and stderr, then spinning",
        "import os\nos.close(1)\nos.close(2)\nwhile True:\n    pass\n",
        {S.TIMEOUT},
        timed=True,
    ),
    case(
        "expected output from an atexit hook, then exit 3",
        f"""
        import atexit
        atexit.register(lambda: print("{EXPECTED}"))
        raise SystemExit(3)
        """,
        {S.ERROR},
        check=lambda v: v.exit_code == 3,
    ),
    case(
        "expected output, then killed by its own SIGKILL",
        f"""
        import os, signal, sys
        print("{EXPECTED}")
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        {S.ERROR},
        check=lambda v: "SIGKILL" in v.feedback,
    ),
    case(
        "expected output, then sleeping past the limit",
        f"""
        import sys, time
        print("{EXPECTED}")
        sys.stdout.flush()
        time.sleep(10**6)
        """,
        {S.TIMEOUT},
        timed=True,
    ),
]
