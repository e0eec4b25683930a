"""The warm pool's side inside the sandbox: the zygote, its per-run setup and its seccomp filter.

Everything in this package runs with the runtime tree's python3 (3.11, stdlib and numpy only)
and imports nothing of ours: the host binds this directory read-only into each zygote's
sandbox and runs `python3 -m zygote`. The host imports two of its modules too: `wire`, to
speak the same frames, and `seccomp`, to hand the same filter to bubblewrap and Docker.
"""
