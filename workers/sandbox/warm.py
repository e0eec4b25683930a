"""The `warm` backend: a pool of zygotes with Python and numpy loaded, one run = one fork.

Each slot has a uid of its own, a zygote and, between runs, the next
run already prepared: its own pid/mount/ipc/net namespaces, a fresh tmpfs, its own /proc, its
own cgroup, and a program process in its own user namespace, without capabilities and under
the seccomp filter, waiting for code. A run sends the code there, reads the output, and kills
the cgroup; the slot's keeper thread then prepares the next one. A run that misbehaved (time,
memory or output limit, a signal, anything unexpected) costs the slot its zygote: the keeper
replaces it in the background, and the other slots go on serving. See slot.py and zygote/.

start() starts every slot (one per core by default); without it, the pool starts one slot on
first use and adds one whenever a run has to wait while every slot is running, so a process
that runs one submission at a time (a prefork worker) keeps a single zygote.

If no zygote can start (three failures in a row on every slot), runs go to the cold `bwrap`
backend, with the reason logged, until a slot recovers (the keepers keep trying).

Only a student's program decides a run's outcome, never a grader fault. A run the grader lost
(armed.RunLost: its zygote died, its code never reached its supervisor, or its supervisor
vanished without a report while the run's cgroup shows no limit reached) runs again from fresh
state on another armed run, its slot's zygote restarted; after _WARM_TRIES losses it runs on
the cold backend, whose result stands. Running again is safe: a run has no effect outside its
sandbox, and what the lost try printed is dropped. A run that reached a limit, or that exited,
crashed or was signalled on its own, is never run again, so a fork bomb costs one run. Each
retry and fallback is logged at WARNING with its cause, and counted in `retries` and
`fallbacks`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import threading
import time
import weakref
from pathlib import Path
from types import TracebackType

from core.cases import HARNESS, HARNESS_SOURCE
from core.errors import GraderError
from core.runs import Limits, RunOutcome, RunRequest, RunResult, Sandbox
from workers.sandbox import cgroups, scratch
from workers.sandbox.armed import Execution, RunLost
from workers.sandbox.outcomes import ended
from workers.sandbox.runtime import Runtime
from workers.sandbox.slot import (
    ARMED_AHEAD,
    IDLE_RESERVE,
    Slot,
    install_zygote,
    sweep_orphans,
)

log = logging.getLogger(__name__)

_STATE = Path("/run/codeblanks")
FIRST_UID = 62000  # apart from bwrap's per-run uids: a warm slot keeps its uid for its life
_ACQUIRE_TIMEOUT_S = 120.0
_MAX_FAILURES = 3  # on every slot, in a row: then runs go cold until a slot recovers
_MAX_BACKOFF_S = 30.0
_WARM_TRIES = 3  # a run the grader lost is tried this often warm, then cold


class _Keeper:
    """A slot and the thread that (re)starts and arms it while no run holds it."""

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.todo: str | None = "start"  # "start", "arm", or None while ready or running
        self.busy = False  # a run holds the slot
        self.restart = False  # being retired: the run that holds it must not put it back
        self.failures = 0
        self.error = ""
        self.thread: threading.Thread | None = None


class WarmSandbox:
    """Runs requests in pre-started sandboxes; thread-safe, one run per slot at a time."""

    def __init__(
        self,
        runtime: Runtime,
        slots: int | None = None,
        state_dir: Path = _STATE,
        fallback: Sandbox | None = None,
        drawing: bool = False,
    ) -> None:
        self.runtime = runtime
        self.drawing = drawing  # its zygotes import matplotlib ahead (Settings.warm_drawing)
        self.size = slots or os.cpu_count() or 1
        self.state_dir = state_dir / "warm"
        self._fallback = fallback
        self._cond = threading.Condition()
        self._keepers: list[_Keeper] = []
        self._ready: list[_Keeper] = []
        self._stop = threading.Event()
        self._uids = contextlib.ExitStack()
        self._code: Path | None = None  # the installed zygote package
        self._closed = False
        self._broken: str | None = None
        self._limits = Limits()  # the next run is armed for the last run's limits
        self._running = 0  # runs in flight: while there are any, keepers arm only what is due
        self.retries = 0  # lost runs tried again on a warm slot
        self.fallbacks = 0  # runs sent to the cold backend (lost too often, or no warm slot)
        self._finalizer = weakref.finalize(self, _discard_all, self._keepers, self._stop)

    @property
    def parallel_runs(self) -> int:
        """Return the pool's size: one run per slot at a time."""
        return self.size

    def check(self) -> None:
        """Raise GraderError saying what is missing when this backend cannot run here."""
        self.runtime.check()
        if shutil.which("bwrap") is None:
            raise GraderError("the warm sandbox needs bwrap (apt-get install bubblewrap)")
        problem = cgroups.available()
        if problem:
            raise GraderError(f"the warm sandbox cannot run here: {problem}")

    def start(self, slots: int | None = None) -> None:
        """Start the zygotes of `slots` slots (default: every slot) in the background.

        Without it, run() starts them lazily, the first run waiting for its zygote.
        """
        want = self.size if slots is None else min(slots, self.size)
        with self._cond:
            while not self._closed and self._broken is None and len(self._keepers) < want:
                self._grow()

    def _grow(self) -> None:
        """Add one slot and its keeper thread; call holding the lock."""
        try:
            if self._code is None:
                self.check()
                self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o711)
                self._code = install_zygote(self.state_dir, {HARNESS: HARNESS_SOURCE})
                sweep_orphans(self.state_dir / "slots", FIRST_UID)
            locks = self.state_dir / "slots"
            uid = self._uids.enter_context(scratch.uid_slot(locks, FIRST_UID))
        except (GraderError, OSError) as exc:
            if not self._keepers:
                self._broken = str(exc)
                log.error("the warm pool cannot start (%s); runs go cold", exc)
            self.size = len(self._keepers)  # no more uids (or none at all): stay this size
            return
        written = self.state_dir / f"{uid}.log"
        keeper = _Keeper(Slot(self.runtime, uid, self._code, written, self.drawing))
        keeper.thread = threading.Thread(
            target=self._keep, args=(keeper,), name=f"warm-{uid}", daemon=True
        )
        self._keepers.append(keeper)
        keeper.thread.start()

    def run(self, request: RunRequest) -> RunResult:
        """Run the request in a warm slot (waiting for one if all are busy).

        A run the grader lost runs again on a fresh slot, then cold (see the module's doc).
        """
        for tries in range(1, _WARM_TRIES + 1):
            keeper = self._acquire()
            if keeper is None:
                why = self._broken or f"no warm slot was ready within {_ACQUIRE_TIMEOUT_S:g} s"
                return self._run_cold(request, why)
            try:
                return self._run_on(keeper, request)
            except RunLost as exc:
                log.warning(
                    "warm slot %d lost a run (try %d of %d): %s",
                    keeper.slot.uid,
                    tries,
                    _WARM_TRIES,
                    exc,
                )
                if tries < _WARM_TRIES:
                    with self._cond:
                        self.retries += 1
        return self._run_cold(request, f"the warm pool lost it {_WARM_TRIES} times")

    def _run_on(self, keeper: _Keeper, request: RunRequest) -> RunResult:
        """Run the request on a slot acquired for it; raise RunLost if the grader lost it."""
        healthy = False
        try:
            execution = keeper.slot.execute(request)
            result, healthy = _result(request.limits, execution)
            return result
        except OSError as exc:  # the host's side of the run broke (pipes, cgroup files)
            raise RunLost(f"the warm sandbox failed: {exc}") from exc
        finally:
            with self._cond:
                self._limits = request.limits
                self._running -= 1
                keeper.busy = False
                if healthy and keeper.slot.alive and not keeper.restart:
                    keeper.todo = keeper.todo or "arm"  # top up what this run used
                    if keeper.slot.armed:
                        self._ready.append(keeper)  # the next run is armed already
                else:
                    keeper.todo = "start"
                self._cond.notify_all()

    def close(self) -> None:
        """Kill every zygote and armed run, and give the slots' uids back.

        When it returns, their processes are gone and their cgroups removed (see Slot.discard).
        """
        with self._cond:
            self._closed = True
            self._stop.set()
            self._cond.notify_all()
        for keeper in self._keepers:
            if keeper.thread is not None:
                keeper.thread.join(timeout=60)
        self._finalizer()
        self._uids.close()
        getattr(self._fallback, "close", lambda: None)()  # a cold fallback's armed launchers

    def __enter__(self) -> WarmSandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def slots(self) -> list[Slot]:
        """Return the slots (for tests and diagnostics)."""
        return [keeper.slot for keeper in self._keepers]

    def _acquire(self) -> _Keeper | None:
        ends = time.monotonic() + _ACQUIRE_TIMEOUT_S
        with self._cond:
            while True:
                if self._closed:
                    raise GraderError("the warm sandbox is closed")
                if self._ready:
                    keeper = self._ready.pop()
                    keeper.busy = True
                    self._running += 1
                    return keeper
                if self._broken is not None:
                    return None
                if len(self._keepers) < self.size and all(k.busy for k in self._keepers):
                    self._grow()  # every slot is running a submission: this one needs another
                    continue
                remaining = ends - time.monotonic()
                if remaining <= 0:
                    return None  # the run goes cold rather than fail
                self._cond.wait(remaining)

    def _run_cold(self, request: RunRequest, why: str) -> RunResult:
        with self._cond:
            self.fallbacks += 1
        log.warning("a run goes to the cold sandbox: %s", why)
        if self._fallback is None:
            from workers.sandbox.bwrap import BwrapSandbox

            self._fallback = BwrapSandbox(self.runtime)
        return self._fallback.run(request)

    def _keep(self, keeper: _Keeper) -> None:
        """Start and arm one slot whenever it needs it, until the pool closes."""
        while True:
            with self._cond:
                while not self._closed and not self._has_work(keeper):
                    self._cond.wait()
                if self._closed:
                    while keeper.busy:  # a run in flight ends within its time limit
                        self._cond.wait()
                    break
                todo, limits = keeper.todo, self._limits
            try:
                if todo == "start":
                    keeper.slot.start(self._stop)
                if keeper.slot.armed < self._target():  # a run may have asked after we topped up
                    keeper.slot.arm(limits)
            except Exception as exc:  # whatever went wrong, the keeper lives on and retries
                self._retire(keeper)
                _discard(keeper.slot)
                if self._stop.is_set():
                    break  # closing: a start cut short is no failure
                self._failed(keeper, str(exc) or repr(exc))
                self._stop.wait(min(0.2 * keeper.failures, _MAX_BACKOFF_S))
                continue
            with self._cond:
                if keeper.todo == todo:  # else a run's end asked for a new zygote meanwhile
                    keeper.failures = 0
                    self._broken = None  # a slot that works again ends the cold fallback
                    keeper.todo = "arm" if keeper.slot.armed < ARMED_AHEAD else None
                    if not keeper.busy and keeper not in self._ready:
                        self._ready.append(keeper)
                    self._cond.notify_all()
            try:
                keeper.slot.finish_spent()
            except Exception as exc:  # a run's processes would not die: replace the zygote
                log.warning("warm slot %d: %s", keeper.slot.uid, str(exc) or repr(exc))
                self._retire(keeper)
                with self._cond:
                    keeper.todo = "start"
        _discard(keeper.slot)

    def _target(self) -> int:
        """Return how many armed runs a slot should hold now (read without the lock: a hint)."""
        return ARMED_AHEAD + (IDLE_RESERVE if self._running == 0 else 0)

    def _has_work(self, keeper: _Keeper) -> bool:
        """Say whether the keeper should start, arm or clean up now; call holding the lock.

        While runs are in flight, a keeper arms only up to ARMED_AHEAD and leaves ended runs'
        clean-up for later: what it would do beside them slows them down.
        """
        if keeper.todo == "start":
            return True
        if keeper.slot.armed < self._target():
            return True
        return self._running == 0 and keeper.slot.has_spent

    def _retire(self, keeper: _Keeper) -> None:
        """Take a slot out of service and wait until no run holds it (keeper thread only)."""
        with self._cond:
            if keeper in self._ready:
                self._ready.remove(keeper)
            keeper.restart = True  # a run that holds it now will not put it back
            while keeper.busy:  # a run in flight ends within its time limit
                self._cond.wait()
            keeper.restart = False

    def _failed(self, keeper: _Keeper, error: str) -> None:
        log.warning("warm slot %d failed: %s", keeper.slot.uid, error)
        with self._cond:
            keeper.todo, keeper.error = "start", error
            keeper.failures += 1
            if self._broken is None and all(k.failures >= _MAX_FAILURES for k in self._keepers):
                self._broken = "; ".join(sorted({k.error for k in self._keepers}))
                log.error("the warm pool cannot start (%s); runs go cold", self._broken)
                self._cond.notify_all()


def _result(limits: Limits, execution: Execution) -> tuple[RunResult, bool]:
    """Map a warm run to a result, as the bwrap backend does; say if its slot may serve again."""
    out, usage, status = execution.captured, execution.usage, execution.status
    signalled: int | None = None
    code: int | None = None
    if status is not None:
        if os.WIFSIGNALED(status):
            signalled = os.WTERMSIG(status)
            code = 128 + signalled
        else:
            code = os.waitstatus_to_exitcode(status)
    result = ended(
        limits,
        out,
        code=code,
        signal=signalled,
        duration_ms=execution.duration_ms,
        oom_killed=usage.oom_killed,
        usage=usage,
        drawn=execution.drawn,
    )
    if result.outcome is not RunOutcome.EXITED:
        return result, False
    if code is None:  # its supervisor vanished, and no limit was reached: the grader's fault
        raise RunLost("the warm run ended without its supervisor's report")
    return result, signalled is None


def _discard_all(keepers: list[_Keeper], stop: threading.Event) -> None:
    """Kill every slot's processes; also runs at interpreter exit if close() was never called."""
    stop.set()
    for keeper in keepers:
        _discard(keeper.slot)


def _discard(slot: Slot) -> None:
    """Discard a slot, logging what would not go (the next pool's sweep tries again)."""
    try:
        slot.discard()
    except GraderError as exc:
        log.error("warm slot %d: %s", slot.uid, exc)
