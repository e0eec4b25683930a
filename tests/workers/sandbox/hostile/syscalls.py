"""Calling what the seccomp filter refuses, on every backend; and what it must still allow."""

from tests.workers.sandbox.hostile import S, case

# each syscall the filter refuses, called raw (no libc wrapper to refuse it first)
REFUSED = """
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(256)
ns = os.open("/proc/self/ns/net", os.O_RDONLY)
L = ctypes.c_long

def call(name, nr, *args):
    ctypes.set_errno(0)
    result = libc.syscall(L(nr), *[L(a) if isinstance(a, int) else a for a in args])
    if result == 0 and nr in (56, 435):
        os._exit(0)  # a clone that got through: the child must not print
    print(name, errno.errorcode.get(ctypes.get_errno(), "OK") if result == -1 else "OK")

call("unshare", 272, 0x10000000)
call("unshare_mount", 272, 0x20000)
call("clone_newuser", 56, 0x10000000 | 17, 0, 0, 0, 0)
call("clone_newnet", 56, 0x40000000 | 17, 0, 0, 0, 0)
call("clone3", 435, buf, 88)
call("setns", 308, ns, 0)
call("mount", 165, b"none", b"/tmp", b"tmpfs", 0, None)
call("umount2", 166, b"/tmp", 2)
call("pivot_root", 155, b"/tmp", b"/tmp")
call("fsopen", 430, b"tmpfs", 0)
call("ptrace", 101, 0, 0, 0, 0)  # PTRACE_TRACEME
call("process_vm_readv", 310, os.getppid(), buf, 1, buf, 1, 0)
call("process_vm_writev", 311, os.getppid(), buf, 1, buf, 1, 0)
call("keyctl", 250, 0, -3, 0)
call("add_key", 248, b"user", b"k", b"v", 1, -3)
call("request_key", 249, b"user", b"k", None, 0)
call("bpf", 321, 0, buf, 72)
call("io_uring_setup", 425, 1, buf)
call("io_uring_enter", 426, 0, 0, 0, 0, 0, 0)
call("io_uring_register", 427, 0, 0, 0, 0)
call("perf_event_open", 298, buf, 0, -1, -1, 0)
call("userfaultfd", 323, 0)
# socket(2)'s family is an int: garbage in the upper half of the register must not pass
call("netlink_high_bits", 41, (1 << 32) | 16, socket.SOCK_RAW, 0)
for name, family, kind in (("netlink", 16, socket.SOCK_RAW), ("vsock", 40, 1)):
    try:
        socket.socket(family, kind).close()
        print(name, "OK")
    except OSError as exc:
        print(name, errno.errorcode[exc.errno])
"""
NAMES = [line.split('"')[1] for line in REFUSED.splitlines() if line.startswith("call(")]


def _answers(stdout: str) -> dict[str, str]:
    return dict(line.split() for line in stdout.splitlines() if len(line.split()) == 2)


def _all_refused(stdout: str) -> bool:
    answers = _answers(stdout)
    wanted = {name: "EPERM" for name in [*NAMES, "netlink", "vsock"]}
    wanted["clone3"] = "ENOSYS"  # so libc falls back to clone, whose flags the filter reads
    return {name: answers.get(name) for name in wanted} == wanted


# machine code run through ctypes: a syscall of another ABI, then a return if it came back
OTHER_ABI = """
import ctypes, mmap
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(bytes([{code}]))
address = ctypes.addressof(ctypes.c_char.from_buffer(page))
print("RETURNED", ctypes.CFUNCTYPE(ctypes.c_long)(address)(), flush=True)
"""

CASES = [
    case(
        "each syscall the seccomp filter refuses",
        REFUSED,
        {S.FAILED},
        timed=True,
        check=lambda v: _all_refused(v.stdout),
    ),
    case(
        "an i386 syscall through int 0x80",
        OTHER_ABI.format(code="0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3"),  # mov eax, 20 (getpid)
        {S.ERROR},
        forbid=("RETURNED",),
        check=lambda v: "SIGSYS" in v.feedback,
    ),
    case(
        "an x32 syscall",
        OTHER_ABI.format(code="0xB8, 39, 0, 0, 0x40, 0x0F, 0x05, 0xC3"),  # 0x40000027: getpid
        {S.ERROR},
        forbid=("RETURNED",),
        check=lambda v: "SIGSYS" in v.feedback,
    ),
    case(
        "threads, a subprocess and a process pool, under the filter",
        """
        import multiprocessing, subprocess, threading, numpy
        threads = [threading.Thread(target=numpy.linalg.inv, args=(numpy.eye(50),))]
        [t.start() for t in threads]; [t.join() for t in threads]
        code = "import numpy; print(numpy.ones(3).sum())"
        child = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        print("child", child.stdout.strip(), child.returncode)
        with multiprocessing.Pool(2) as pool:
            print("pool", pool.map(abs, [-1, -2]))
        """,
        {S.FAILED},
        require=("child 3.0 0\npool [1, 2]\n",),
    ),
]
