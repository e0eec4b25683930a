"""Reaching for what is not the run's: host files, secrets, other runs, the answer; writing out."""

from tests.workers.sandbox.hostile import S, case

# a probe helper pasted into sources: print what a path holds, or why it cannot be read
PEEK = """
import os
def peek(path):
    try:
        if os.path.isdir(path):
            print("LISTED", path, sorted(os.listdir(path))[:20])
        else:
            with open(path, "rb") as f:
                print("READ", path, f.read(4000))
    except OSError as exc:
        print("denied", path, type(exc).__name__)
"""

# every probe that writes prints WROTE when a write outside /work, /tmp and /dev/shm worked
TRY_WRITE = """
import os
def try_write(path, data=b"pwned"):
    try:
        with open(path, "ab") as f:
            f.write(data)
        print("WROTE", path)
    except OSError as exc:
        print("read-only", path, type(exc).__name__)
"""

CLEAN_PYTHON = """
import builtins, numpy, os, sys
ok = (numpy.__file__ == "/usr/lib/python3/dist-packages/numpy/__init__.py"
      and os.__file__ == "/usr/lib/python3.11/os.py" and not hasattr(builtins, "POISONED")
      and sorted(os.listdir("/work")) == ["model.py"] and os.listdir("/tmp") == [])
print("CLEAN" if ok else f"DIRTY {numpy.__file__} {os.__file__} {os.listdir('/work')}")
"""

CASES = [
    case(
        "/etc/shadow and root's files",
        "for p in ['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/root']: peek(p)\n",
        {S.FAILED},
        prelude=PEEK,
        forbid=("READ /etc/shadow", "READ /etc/gshadow", "root:"),
        require=("denied /etc/shadow",),
    ),
    case(
        "/proc of other processes",
        """
        me = os.getpid()
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        print("PIDS", len(pids))
        for pid in pids:
            if pid != me:
                for what in ("cmdline", "environ", "status", "cwd", "root", "maps"):
                    peek(f"/proc/{pid}/{what}")
        """,
        {S.FAILED},
        prelude=PEEK,
        forbid=("pytest", "CODEBLANKS_HOSTILE"),
        check=lambda v: int(v.stdout.split("PIDS ")[1].split()[0]) <= 3,
    ),
    case(
        "environment secrets",
        "print(sorted(os.environ))\nfor p in ['/proc/self/environ', '/proc/1/environ']: peek(p)\n",
        {S.FAILED},
        prelude=PEEK,
        forbid=("CODEBLANKS_HOSTILE",),
    ),
    case(
        "the tool's keys, database and config by absolute path",
        """
        for name in ("", "lti-private-key.pem", "codeblanks.db", "config.env", "submissions"):
            peek(os.path.join("$INSTANCE", name))
        for p in ("/var/lib/codeblanks", "/etc/codeblanks", "/work/../instance", "/run"):
            peek(p)
        """,
        {S.FAILED},
        prelude=PEEK,
        forbid=("READ $INSTANCE", "LISTED $INSTANCE"),
        require=("denied $INSTANCE/lti-private-key.pem",),
    ),
    case(
        "other submissions, stored and running",
        """
        import glob, time
        time.sleep(0.5)  # the other run is under way
        paths = ["$INSTANCE/submissions/41/model.py", "/run/codeblanks/runs"]
        for pattern in ("/run/codeblanks/runs/*/work/*", "/proc/*/cwd/*", "/proc/*/root/work/*",
                        "/var/lib/docker/containers/*", "/tmp/*", "/dev/shm/*"):
            paths += glob.glob(pattern)
        for p in paths:
            peek(p)
        """,
        {S.FAILED},
        prelude=PEEK,
        victim=True,
    ),
    case(
        "the reference solution and expected output by path",
        """
        for name in ("expected_output.txt", "solution/model.py", "exercise.yaml", ""):
            peek(os.path.join("$LESSON", name))
        for p in ("/work/../lessons", "/lessons", os.path.expanduser("~")):
            peek(p)
        """,
        {S.FAILED},
        prelude=PEEK,
        forbid=("0.787", "degerler", "READ $LESSON", "LISTED $LESSON"),
    ),
    case(
        "writing outside the work dir",
        """
        for p in ("/usr/lib/python3.11/os.py", "/etc/passwd", "/evil", "/var/tmp/x",
                  "/usr/local/x", "/dev/x", "/proc/sys/kernel/hostname", "/sys/kernel/x",
                  "$MARKER", "$LESSON/pwned"):
            try_write(p)
        with open("$HOST_TMP", "w") as f:
            f.write("only the run's own /tmp")
        """,
        {S.FAILED},
        prelude=TRY_WRITE,
        forbid=("WROTE",),
    ),
    case(
        "poisoning numpy and the standard library",
        """
        import sysconfig
        poison = b"\\nimport builtins; builtins.POISONED = True\\n"
        for p in ("/usr/lib/python3/dist-packages/numpy/__init__.py",
                  "/usr/lib/python3.11/os.py", "/usr/lib/python3.11/sitecustomize.py",
                  "/usr/lib/python3/dist-packages/usercustomize.py",
                  "/usr/lib/python3.11/__pycache__/os.cpython-311.pyc",
                  sysconfig.get_paths()["purelib"] + "/evil.pth"):
            try_write(p, poison)
        os.makedirs("/work/.local/lib/python3.11/site-packages", exist_ok=True)
        for p in ("/work/.local/lib/python3.11/site-packages/usercustomize.py", "/tmp/numpy.py",
                  "/work/numpy.py"):
            with open(p, "wb") as f:
                f.write(poison)
        """,
        {S.FAILED},
        prelude=TRY_WRITE,
        forbid=("WROTE",),
        after=CLEAN_PYTHON,
    ),
    case(
        "symlinks planted where the host might read or write",
        """
        import os
        for target, link in (("$MARKER", "/work/out.txt"), ("$LESSON/expected_output.txt",
                             "/work/expected_output.txt"), ("/etc/shadow", "/tmp/shadow"),
                             ("$LESSON", "/work/lesson"), ("/", "/tmp/root"),
                             ("$LESSON/solution/model.py", "/dev/shm/model.py")):
            try:
                os.symlink(target, link)
            except OSError as exc:
                print("no symlink", link, type(exc).__name__)
        os.replace("/work/out.txt", "/work/model.py")  # the entrypoint now points outside
        for src in ("/etc/passwd", "/usr/bin/python3"):
            try:
                os.link(src, "/work/hard")
                print("HARDLINK", src)
            except OSError as exc:
                print("no hard link", src, type(exc).__name__)
        print(os.path.exists("/work/lesson/expected_output.txt"))
        """,
        {S.FAILED},
        forbid=("HARDLINK",),
        after=CLEAN_PYTHON,
    ),
]
