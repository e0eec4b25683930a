"""The few Linux calls that Python 3.11's os module lacks, through ctypes: namespaces, mounts,
capabilities and prctl. Each raises OSError on failure, like os does."""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2

PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_CAPABILITY_VERSION_3 = 0x20080522
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint32) for name in ("effective", "permitted", "inheritable")]


def _check(result: int, what: str) -> None:
    if result == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    """Move this process into new namespaces (for CLONE_NEWPID: its future children)."""
    _check(_libc.unshare(flags), f"unshare({flags:#x})")


def setns(fd: int, nstype: int) -> None:
    """Enter the namespace that `fd` (an open /proc/PID/ns/* file) refers to."""
    _check(_libc.setns(fd, nstype), "setns")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    """Mount, bind or remount, as mount(2)."""
    fs = fstype.encode() if fstype else None
    result = _libc.mount(source.encode(), target.encode(), fs, flags, data.encode() or None)
    _check(result, f"mount {target}")


def umount(target: str) -> None:
    """Detach a mount (lazily: whatever still uses it keeps it until done)."""
    _check(_libc.umount2(target.encode(), MNT_DETACH), f"umount {target}")


def prctl(option: int, arg2: int = 0, arg3: int = 0) -> None:
    """Call prctl(2) with up to two arguments."""
    _check(_libc.prctl(option, arg2, arg3, 0, 0), f"prctl({option})")


def loopback_up() -> None:
    """Bring up `lo` in this (new) network namespace, as bwrap does: 127.0.0.1 then works."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        (flags,) = struct.unpack_from("H", fcntl.ioctl(sock, _SIOCGIFFLAGS, request), 16)
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def map_user(inside: int) -> None:
    """Map `inside` to our own uid and gid in the user namespace we just unshared."""
    for name, text in (("uid_map", f"{inside} 0 1"), ("setgroups", "deny")):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)
    with open("/proc/self/gid_map", "w") as handle:  # only after setgroups is denied
        handle.write(f"{inside} 0 1")


def drop_capabilities(bounding: bool) -> None:
    """Drop every capability: ambient, effective, permitted, inheritable and, if asked, the
    bounding set (that needs CAP_SETPCAP, which a fresh user namespace's first process has)."""
    if bounding:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            last = int(handle.read())
        for cap in range(last + 1):
            prctl(PR_CAPBSET_DROP, cap)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def install_filter(program: bytes) -> None:
    """Install a classic-BPF seccomp filter (no_new_privs must be set first)."""

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    fprog = SockFprog(len(program) // 8, program)
    _check(
        _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0),
        "seccomp",
    )
