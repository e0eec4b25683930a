"""Exhausting resources: processes, threads, memory, CPU, time, disk, inodes, descriptors."""

from tests.workers.sandbox.hostile import S, case

CASES = [
    case(
        "fork bomb",
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        {S.TIMEOUT, S.ERROR},
        timed=True,
    ),
    case(
        "thread bomb",
        """
        import threading, time
        while True:
            threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()
        """,
        {S.ERROR, S.TIMEOUT, S.MEMORY_LIMIT},
        timed=True,
    ),
    case(
        "memory bomb",
        "x = []\nwhile True:\n    x.append(bytearray(32 * 2**20))\n",
        {S.MEMORY_LIMIT},
        timed=True,
    ),
    case(
        "children under the per-process limit, over the total",
        """
        import os, time
        kids = []
        for i in range(8):
            pid = os.fork()
            if pid == 0:
                b = bytearray(40 * 2**20)
                b[::4096] = b"x" * len(b[::4096])
                time.sleep(3)
                os._exit(0)
            kids.append(pid)
        for k in kids:
            os.waitpid(k, 0)
        """,
        {S.MEMORY_LIMIT},
        timed=True,
    ),
    case(
        "numpy ones of 10 GiB",
        "import numpy as np\nprint(np.ones(10 * 2**30 // 8).sum())\n",
        {S.MEMORY_LIMIT},
        timed=True,
    ),
    case(
        "mmap bomb (shared anonymous pages)",
        """
        import ctypes, mmap
        maps = []
        while True:
            m = mmap.mmap(-1, 64 * 2**20)
            ctypes.memset(ctypes.addressof(ctypes.c_char.from_buffer(m)), 1, len(m))
            maps.append(m)
        """,
        {S.MEMORY_LIMIT},
        timed=True,
    ),
    case("cpu spin", "while True:\n    pass\n", {S.TIMEOUT}, timed=True),
    case(
        "cpu spin ignoring SIGXCPU and SIGTERM",
        """
        import signal
        for sig in (signal.SIGXCPU, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            pass
        """,
        {S.TIMEOUT},
        timed=True,
    ),
    case("sleep forever", "import time\ntime.sleep(10**6)\n", {S.TIMEOUT}, timed=True),
    case(
        "disk flood",
        """
        n = 0
        try:
            while True:
                for d in ("/work", "/tmp"):
                    with open(f"{d}/big{n}", "wb") as f:
                        for _ in range(8):
                            f.write(b"x" * 2**20)
                    n += 1
        except OSError as exc:
            print("disk stopped after", n * 8, "MiB", exc.errno)
        """,
        {S.FAILED},
        require=("disk stopped",),
        timed=True,
        check=lambda v: int(v.stdout.split()[3]) <= 3 * 32,
    ),
    case(
        "one file over the file size limit",
        """
        try:
            with open("/work/huge", "wb") as f:
                for _ in range(64):
                    f.write(b"x" * 2**20)
        except OSError as exc:
            print("file stopped", exc.errno)
        """,
        {S.FAILED},
        require=("file stopped 27",),  # EFBIG: RLIMIT_FSIZE, before the disk fills
    ),
    case(
        "inode flood",
        """
        n = 0
        try:
            while True:
                open(f"/tmp/f{n}", "w").close()
                n += 1
        except OSError as exc:
            print("inodes stopped at", n, exc.errno)
        """,
        {S.FAILED},
        require=("inodes stopped",),
        timed=True,
        check=lambda v: int(v.stdout.split()[3]) <= 2048,
    ),
    case(
        "/dev/shm flood",
        """
        from multiprocessing import shared_memory
        n = 0
        try:
            while True:
                with open(f"/dev/shm/f{n}", "wb") as f:
                    f.write(b"x" * 2**20)
                n += 1
        except OSError as exc:
            print("shm stopped after", n, "MiB", exc.errno)
        try:
            block = shared_memory.SharedMemory(create=True, size=2**30)
            block.buf[::4096] = b"x" * len(block.buf[::4096])
            print("SHM GiB")
        except OSError as exc:
            print("shared memory stopped", exc.errno)
        """,
        {S.FAILED, S.ERROR, S.MEMORY_LIMIT},
        forbid=("SHM GiB",),
        timed=True,
    ),
    case(
        "file descriptor exhaustion",
        """
        import os, socket
        fds = []
        try:
            while True:
                fds.append(os.open("/dev/null", os.O_RDONLY))
                fds.extend(os.pipe())
                fds.extend(s.detach() for s in socket.socketpair())
        except OSError as exc:
            print("fds stopped at", len(fds), exc.errno)
        """,
        {S.FAILED},
        require=("fds stopped",),
        check=lambda v: int(v.stdout.split()[3]) <= 64,
    ),
]
