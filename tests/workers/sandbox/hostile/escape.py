"""Getting out: the network, other processes, privileges, namespaces, and outliving the run."""

from tests.workers.sandbox.hostile import S, case

CASES = [
    case(
        "connect to a listener on 127.0.0.1 and ::1",
        """
        import socket
        for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            try:
                s = socket.socket(family)
                s.settimeout(1)
                s.connect((host, $PORT))
                print("CONNECTED", host)
            except OSError as exc:
                print("refused", host, type(exc).__name__)
        """,
        {S.FAILED},
        forbid=("CONNECTED",),
        require=("refused 127.0.0.1",),
    ),
    case(
        "Redis on 6379",
        """
        import socket
        for host in ("127.0.0.1", "localhost"):
            try:
                s = socket.create_connection((host, 6379), timeout=1)
                s.sendall(b"PING\\r\\n")
                print("CONNECTED", s.recv(100))
            except OSError as exc:
                print("refused", host, type(exc).__name__)
        """,
        {S.FAILED},
        forbid=("CONNECTED", "PONG"),
    ),
    case(
        # a UDP connect() sends no packet: it only asks the kernel for a route, so a sandbox
        # with a network would answer without any traffic leaving this machine
        "route to an outside address (1.1.1.1:53) and interfaces",
        """
        import socket
        try:
            print("interfaces", sorted(name for _, name in socket.if_nameindex()))
        except OSError as exc:  # a backend may refuse sockets altogether
            print("no interfaces", type(exc).__name__)
        for family, host in ((socket.AF_INET, "1.1.1.1"), (socket.AF_INET6, "2606:4700::1111")):
            try:
                s = socket.socket(family, socket.SOCK_DGRAM)
                s.connect((host, 53))
                print("ROUTE", host, s.getsockname())
            except OSError as exc:
                print("unreachable", host, type(exc).__name__)
        """,
        {S.FAILED},
        forbid=("ROUTE",),
        require=("unreachable 1.1.1.1",),
        check=lambda v: "interfaces ['lo']" in v.stdout or "no interfaces" in v.stdout,
    ),
    case(
        "DNS",
        """
        import socket
        try:
            print("RESOLVED", socket.getaddrinfo("example.com", 80))
        except OSError as exc:
            print("no dns", type(exc).__name__)
        """,
        {S.FAILED},
        forbid=("RESOLVED",),
        require=("no dns",),
    ),
    case(
        "killing pid 1, then every process it may signal",
        """
        import os, signal
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(1, sig)
                print("signalled 1", sig)
            except OSError as exc:
                print("cannot signal 1", type(exc).__name__)
        os.kill(-1, signal.SIGKILL)
        """,
        {S.ERROR},
    ),
    case(
        # attached and left stopped, pid 1 (bwrap's init, the container's init) would never
        # report the program's exit: the run would hang to its time limit, not end as it should
        "ptrace attach to pid 1 and the parent, left attached",
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        for pid in sorted({1, os.getppid()}):
            status = open(f"/proc/{pid}/status").read()
            print("seccomp", pid, status.split("Seccomp:")[1].split()[0])
            if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH, and never a detach
                print("ATTACHED", pid, open(f"/proc/{pid}/cmdline").read()[:60])
            else:
                print("refused", pid, ctypes.get_errno() in (1, 13, 38))  # EPERM EACCES ENOSYS
        print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
        """,
        {S.FAILED},
        forbid=("ATTACHED", "False", "pytest", "/usr/bin/sh", "bwrap --"),
        require=("refused 1 True",),
        timed=True,
        # every process the program can see lives under the filter, pid 1 included
        check=lambda v: all(
            line.endswith(" 2") for line in v.stdout.splitlines() if line.startswith("seccomp")
        ),
    ),
    case(
        "user, mount and network namespaces; mount(2)",
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        for name, flag in (("user", 0x10000000), ("mount", 0x20000), ("net", 0x40000000)):
            r = libc.unshare(flag)
            print("UNSHARED" if r == 0 else "no unshare", name, ctypes.get_errno())
        r = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
        print("MOUNTED" if r == 0 else "no mount", ctypes.get_errno())
        """,
        {S.FAILED},
        forbid=("UNSHARED", "MOUNTED"),
    ),
    case(
        "setuid binaries and setuid(0)",
        """
        import os, stat, subprocess
        found = []
        for d in ("/usr/bin", "/usr/sbin", "/usr/lib"):
            for root, _, names in os.walk(d):
                for n in names:
                    p = os.path.join(root, n)
                    try:
                        if os.lstat(p).st_mode & (stat.S_ISUID | stat.S_ISGID):
                            found.append(p)
                    except OSError:
                        pass
        print("setuid files", found)
        for argv in (["su", "-c", "id -u"], ["mount", "-t", "tmpfs", "none", "/mnt"],
                     *([p, "--help"] for p in found)):
            try:
                r = subprocess.run(argv, capture_output=True, timeout=1, stdin=subprocess.DEVNULL)
                print(argv[0], r.returncode, r.stderr[:80])
            except (OSError, subprocess.TimeoutExpired) as exc:
                print(argv[0], type(exc).__name__)
        for call in (os.setuid, os.setgid, os.seteuid):
            try:
                call(0)
                print("BECAME ROOT", call.__name__)
            except OSError as exc:
                print("no", call.__name__, type(exc).__name__)
        print("euid", os.geteuid())
        """,
        {S.FAILED},
        forbid=("BECAME ROOT", "euid 0"),
    ),
    case(
        "a background process that outlives its run",
        """
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                for fd in (0, 1, 2):
                    os.close(fd)
                time.sleep(60)
                os._exit(0)
            os._exit(0)
        print("spawned")
        """,
        {S.FAILED, S.TIMEOUT},
        timed=True,
    ),
    case(
        "state left for the next run",
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        for p in ("/tmp/state", "/work/state", "/dev/shm/state"):
            with open(p, "w") as f:
                f.write("left")
        print("shmget", libc.shmget(0xC0DE, 4096, 0o1666))  # IPC_CREAT, world-readable
        print("msgget", libc.msgget(0xC0DE, 0o1666))
        # the uid's user keyring outlives processes (x86_64 add_key; -4: the user keyring)
        print("add_key", libc.syscall(248, b"user", b"codeblanks", b"left", 4, -4))
        """,
        {S.FAILED},
        after="""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        ok = not any(os.path.exists(p) for p in ("/tmp/state", "/work/state", "/dev/shm/state"))
        ok = ok and libc.shmget(0xC0DE, 0, 0) == -1 and libc.msgget(0xC0DE, 0) == -1
        ok = ok and libc.syscall(250, 10, -4, b"user", b"codeblanks", 0) == -1  # KEYCTL_SEARCH
        print("CLEAN" if ok else "DIRTY")
        """,
    ),
    case(
        "cgroup escape and raising its own limits",
        """
        import functools, glob, os
        print = functools.partial(print, flush=True)  # the OOM kill at the end loses buffers
        targets = glob.glob("/sys/fs/cgroup/*/cgroup.procs") + glob.glob("/sys/fs/cgroup/*/tasks")
        targets += glob.glob("/sys/fs/cgroup/memory/memory.limit_in_bytes")
        targets += ["/sys/fs/cgroup/cgroup.procs", "/proc/self/oom_score_adj"]
        for p in targets:
            try:
                with open(p, "w") as f:
                    f.write("-1000" if "oom" in p else str(os.getpid()))
                print("ESCAPED", p)
            except OSError as exc:
                print("denied", p, type(exc).__name__)
        x = bytearray(512 * 2**20)
        x[::4096] = b"x" * len(x[::4096])
        print("ALLOCATED 512 MiB")
        """,
        {S.MEMORY_LIMIT},
        forbid=("ESCAPED", "ALLOCATED"),
    ),
    case(
        # issue 26.3: a cgroup namespace rooted above the run's cgroup showed
        # "0::/../../../codeblanks/62147-10ad5851": the slot's uid and the worker's depth
        "learning where it sits from /proc/self/cgroup",
        """
        for pid in ("self", "1"):
            with open(f"/proc/{pid}/cgroup") as f:
                for line in f:
                    path = line.rstrip("\\n").split(":", 2)[2]
                    print("rooted" if path == "/" else "REVEALED", pid, line.strip())
        """,
        {S.FAILED},
        forbid=("REVEALED", "codeblanks", ".."),
        require=("rooted",),
    ),
    case(
        "ctypes segfault",
        "import ctypes\nctypes.string_at(0)\n",
        {S.ERROR},
        check=lambda v: "SIGSEGV" in v.feedback,
    ),
    case(
        "runaway recursion",
        "import sys\nsys.setrecursionlimit(10**8)\ndef f(n):\n    return f(n + 1)\nf(0)\n",
        {S.ERROR, S.MEMORY_LIMIT},
        timed=True,
    ),
    case(
        "SIGSEGV to itself",
        "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
        {S.ERROR},
        check=lambda v: "SIGSEGV" in v.feedback,
    ),
    case(
        "sys.exit(42)",
        "import sys\nsys.exit(42)\n",
        {S.ERROR},
        check=lambda v: v.exit_code == 42,
    ),
    case(
        "a NUL byte in the source",
        "print('a')\x00\n",
        {S.REJECTED},
    ),
]
