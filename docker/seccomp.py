"""Write the compose worker's seccomp profile: Docker's default profile plus bubblewrap's calls.

Usage: python3 docker/seccomp.py DEFAULT_JSON OUT_JSON

DEFAULT_JSON is the engine's own default (profiles/seccomp/default.json of Debian's
golang-github-docker-docker-dev, which docker/build.sh extracts; it is not kept in this repo).
Docker's default allows the namespace and mount calls only to a container granted
CAP_SYS_ADMIN; the worker has no capability at all on the host, but its sandboxes are made
with these calls inside user namespaces the worker owns (see docs/operations.md, "What the
worker container is granted"). So exactly these are allowed, whatever the capabilities:
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# bwrap and the warm zygote: new namespaces (clone's flags, unshare), joining a run's
# namespaces (setns, the zygote), the sandbox's mounts and root (mount, umount2, pivot_root)
# and its own host name (sethostname): each found needed by taking it out (docs/operations.md).
# clone3 stays ENOSYS, as in the default: its flags sit in memory that seccomp cannot read,
# and glibc then falls back to clone.
ALLOWED = ["clone", "unshare", "setns", "mount", "umount2", "pivot_root", "sethostname"]
COMMENT = "codeblanks worker: bubblewrap's namespaces and mounts (docker/seccomp.py)"


def widen(profile: dict[str, object]) -> dict[str, object]:
    """Return `profile` with ALLOWED allowed unconditionally, and otherwise unchanged."""
    rules = profile["syscalls"]
    assert isinstance(rules, list), "not a Docker seccomp profile: no syscalls list"
    if profile.get("defaultAction") != "SCMP_ACT_ERRNO":
        raise SystemExit("seccomp: the default profile does not deny by default: refusing it")
    kept = []
    for rule in rules:
        # the conditional clone rules (no namespace flags unless CAP_SYS_ADMIN) would only
        # duplicate the unconditional rule below
        if rule["names"] == ["clone"] and rule["action"] == "SCMP_ACT_ALLOW":
            continue
        # nor may CAP_SYS_ADMIN, which the entrypoint holds for a moment, open more calls
        # (bpf, perf_event_open, the new mount API...) or close clone3's ENOSYS
        if "CAP_SYS_ADMIN" in rule.get("includes", {}).get("caps", []):
            continue
        excluded = rule.get("excludes", {}).get("caps", [])
        if "CAP_SYS_ADMIN" in excluded:
            caps = [cap for cap in excluded if cap != "CAP_SYS_ADMIN"]
            rule = {**rule, "excludes": {**rule["excludes"], "caps": caps}}
            if not caps:
                del rule["excludes"]["caps"]
        kept.append(rule)
    kept.append(
        {"names": ALLOWED, "action": "SCMP_ACT_ALLOW", "args": [], "comment": COMMENT,
         "includes": {}, "excludes": {}}
    )  # fmt: skip
    return {**profile, "syscalls": kept}


def main(argv: list[str]) -> int:
    """Read the default profile, write the worker's."""
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    source, target = map(Path, argv)
    profile = widen(json.loads(source.read_text()))
    target.write_text(json.dumps(profile, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
