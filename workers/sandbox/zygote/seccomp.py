"""The seccomp filter every run lives under, on every backend: one definition, two forms.

Refused with EPERM: creating or entering namespaces (unshare, setns, clone with a namespace
flag), mounting (the old and the new mount API, pivot_root), reading or writing other
processes (ptrace, process_vm_readv/writev, pidfd_getfd), the kernel keyring, bpf, io_uring,
perf_event_open, userfaultfd, open_by_handle_at, and netlink and vsock sockets. clone3 gets
ENOSYS, since its flags sit in memory that a filter cannot read; libc then falls back to
clone, whose flags it can. A syscall of another ABI (i386 through int 0x80, or x32 numbers)
kills the process: nothing legitimate in a 64-bit Python makes one.

assemble() gives it as classic BPF (no libseccomp needed): the warm pool installs it itself,
and bubblewrap reads it from `--seccomp FD`. profile() gives it as a Docker seccomp profile
(libseccomp's terms, in JSON), for `docker run --security-opt seccomp=`.
"""

from __future__ import annotations

import errno
import functools
import operator
import struct
from typing import Any

from . import linux

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
AF_NETLINK = 16
AF_VSOCK = 40
NAMESPACES = (
    linux.CLONE_NEWNS,
    linux.CLONE_NEWCGROUP,
    linux.CLONE_NEWUTS,
    linux.CLONE_NEWIPC,
    linux.CLONE_NEWUSER,
    linux.CLONE_NEWPID,
    linux.CLONE_NEWNET,
)
NAMESPACE_FLAGS = functools.reduce(operator.or_, NAMESPACES)
FAMILIES = (AF_NETLINK, AF_VSOCK)  # refused as socket()'s and socketpair()'s first argument

# x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl)
CLONE, CLONE3, SOCKET, SOCKETPAIR = 56, 435, 41, 53
DENIED = {
    "ptrace": 101,
    "pivot_root": 155,
    "mount": 165,
    "umount2": 166,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "unshare": 272,
    "perf_event_open": 298,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "bpf": 321,
    "userfaultfd": 323,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "pidfd_getfd": 438,
    "mount_setattr": 442,
}

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # little-endian: an argument's low 32 bits come first
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_KILL_PROCESS = 0x80000000

Op = tuple[int, int, str | None, str | None]  # code, k, label if true, label if false


def _program() -> list[str | Op]:
    """Return the filter as instructions and labels; None as a jump target means "next"."""

    def ld(offset: int) -> Op:
        return (_LD_W_ABS, offset, None, None)

    def ret(action: int) -> Op:
        return (_RET, action, None, None)

    return [
        ld(_ARCH),
        (_JEQ, AUDIT_ARCH_X86_64, None, "kill"),
        ld(_NR),
        (_JGE, X32_SYSCALL_BIT, "kill", None),
        *[(_JEQ, nr, "deny", None) for nr in sorted(DENIED.values())],
        (_JEQ, CLONE, "clone", None),
        (_JEQ, CLONE3, "enosys", None),
        (_JEQ, SOCKET, "socket", None),
        (_JEQ, SOCKETPAIR, "socket", None),
        ret(_ALLOW),
        "clone",
        ld(_ARG0_LOW),
        (_JSET, NAMESPACE_FLAGS, "deny", None),
        ret(_ALLOW),
        "socket",
        ld(_ARG0_LOW),
        *[(_JEQ, family, "deny", None) for family in FAMILIES],
        ret(_ALLOW),
        "deny",
        ret(_ERRNO | errno.EPERM),
        "enosys",
        ret(_ERRNO | errno.ENOSYS),
        "kill",
        ret(_KILL_PROCESS),
    ]


def assemble() -> bytes:
    """Return the filter as struct sock_filter[] bytes, jumps resolved from labels."""
    listing = _program()
    labels: dict[str, int] = {}
    ops: list[Op] = []
    for item in listing:
        if isinstance(item, str):
            labels[item] = len(ops)
        else:
            ops.append(item)
    out = bytearray()
    for index, (code, k, if_true, if_false) in enumerate(ops):
        jumps = [labels[t] - index - 1 if t else 0 for t in (if_true, if_false)]
        if not all(0 <= j < 256 for j in jumps):
            raise ValueError(f"seccomp filter: jump out of range at instruction {index}")
        out += struct.pack("<HBBI", code, jumps[0], jumps[1], k)
    return bytes(out)


def profile() -> dict[str, Any]:
    """Return the same filter as a Docker seccomp profile: allow all but what it refuses."""

    def refuse(names: list[str], err: int = errno.EPERM, **rule: Any) -> dict[str, Any]:
        return {"names": names, "action": "SCMP_ACT_ERRNO", "errnoRet": err, **rule}

    def low_bits(mask: int, value: int) -> dict[str, Any]:
        # libseccomp compares all 64 bits of an argument, the kernel reads an int's low 32:
        # a masked compare keeps garbage in the high half from slipping past
        return {"index": 0, "value": mask, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"}

    return {
        "defaultAction": "SCMP_ACT_ALLOW",
        # only the native ABI: libseccomp kills a syscall of any other (i386, x32)
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [
            refuse(sorted(DENIED)),
            refuse(["clone3"], errno.ENOSYS),
            # a rule matches when all its conditions hold, and a syscall is refused when any
            # rule matches: so one rule per namespace flag refuses a clone with any of them
            *[refuse(["clone"], args=[low_bits(flag, flag)]) for flag in NAMESPACES],
            *[refuse(["socket", "socketpair"], args=[low_bits(0xFFFFFFFF, f)]) for f in FAMILIES],
        ],
    }


def install(program: bytes | None = None) -> None:
    """Set no_new_privs and install the filter (or an assembled copy of it) on this process."""
    linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
    linux.install_filter(program or assemble())
