"""A run's private, size- and inode-bounded tmpfs, and the uid slot that owns it."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath

from core.errors import GraderError

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_MS_NOSUID, _MS_NODEV = 2, 4
_MNT_DETACH = 2
FIRST_UID = 61000
SLOTS = 256


class Scratch:
    """A tmpfs mounted at `path` with `work/`, `tmp/` and `shm/`, owned by the run's uid."""

    def __init__(self, path: Path, uid: int, size_mb: int, inodes: int) -> None:
        self.path = path
        self.uid = uid
        path.mkdir(mode=0o700)
        options = f"size={size_mb}m,nr_inodes={inodes},mode=0700,uid={uid},gid={uid}"
        if _libc.mount(b"tmpfs", bytes(path), b"tmpfs", _MS_NOSUID | _MS_NODEV, options.encode()):
            err = ctypes.get_errno()
            path.rmdir()
            raise GraderError(f"cannot mount the run's tmpfs at {path}: {os.strerror(err)}")
        for sub in ("work", "tmp", "shm"):
            (path / sub).mkdir(mode=0o700)
            os.chown(path / sub, uid, uid)

    def write(self, files: Mapping[str, bytes]) -> None:
        """Write the run's files into work/, owned by the run's uid."""
        work = (self.path / "work").resolve()
        for name, data in files.items():
            rel = PurePosixPath(name)
            if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                raise GraderError(f"refusing a file name outside the work dir: {name!r}")
            target = work.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chown(target, self.uid, self.uid)
            for parent in target.relative_to(work).parents:
                if str(parent) != ".":
                    os.chown(work / parent, self.uid, self.uid)

    def remove(self) -> None:
        """Unmount the tmpfs (everything the run wrote goes with it) and remove the mount point."""
        if _libc.umount2(bytes(self.path), _MNT_DETACH):
            err = ctypes.get_errno()
            if err not in (errno.EINVAL, errno.ENOENT):
                raise GraderError(f"cannot unmount {self.path}: {os.strerror(err)}")
        with contextlib.suppress(FileNotFoundError):
            self.path.rmdir()


@contextlib.contextmanager
def uid_slot(lock_dir: Path, first_uid: int = FIRST_UID) -> Iterator[int]:
    """Hold one uid of the slot range for the duration of a run (an flock per uid)."""
    uid, lock = take_slot(lock_dir, first_uid)
    try:
        yield uid
    finally:
        os.close(lock)


def take_slot(lock_dir: Path, first_uid: int = FIRST_UID) -> tuple[int, int]:
    """Take a free uid of the slot range; return it and its lock's fd (close it to give it back)."""
    lock_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    start = os.getpid() % SLOTS
    for offset in range(SLOTS):
        uid = first_uid + (start + offset) % SLOTS
        fd = _try_lock(lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT)
        if fd is not None:
            return uid, fd
    raise GraderError(f"all {SLOTS} sandbox uids are busy")


def free_slots(lock_dir: Path, first_uid: int = FIRST_UID) -> Iterator[int]:
    """Yield each uid of the range that no run holds now, holding its lock while yielded."""
    if not lock_dir.is_dir():
        return
    for uid in range(first_uid, first_uid + SLOTS):
        path = lock_dir / f"{uid}.lock"
        if not path.exists():
            continue
        fd = _try_lock(path, os.O_RDWR)
        if fd is None:
            continue
        try:
            yield uid
        finally:
            os.close(fd)


def _try_lock(path: Path, flags: int) -> int | None:
    """Open and flock a slot's lock file without waiting; None when a run holds it."""
    fd = os.open(path, flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def sweep_slot(runs_dir: Path, uid: int) -> int:
    """Unmount and remove scratch dirs a crashed run of this uid left; call holding its slot."""
    removed = 0
    for child in runs_dir.glob(f"{uid}-*"):
        _libc.umount2(bytes(child), _MNT_DETACH)
        shutil.rmtree(child, ignore_errors=True)
        removed += 1
    return removed
