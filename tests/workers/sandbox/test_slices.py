"""workers/sandbox/slices.py: a docker run's slice under the systemd cgroup driver is named so
that systemd does not nest it, and the sweep's deadline reads from that name."""

import time

from workers.sandbox import docker, slices


def test_a_run_slice_has_no_dash_after_its_prefix_so_systemd_keeps_it_flat():
    run = slices.RunSlice("docker-1790000000-codeblanks-run-0a1b2c-3d4e5f")
    assert run.path == "codeblanks-docker_1790000000_codeblanks_run_0a1b2c_3d4e5f.slice"
    assert "-" not in run.path.removeprefix(slices.PREFIX)  # a dash would nest it a level down
    assert run.directory.name == run.path


def test_the_sweep_reads_a_slices_deadline_from_its_name():
    past = slices.RunSlice(f"docker-{time.time() - 5:.0f}-codeblanks-run-a-b").name
    future = slices.RunSlice(f"docker-{time.time() + 600:.0f}-codeblanks-run-a-b").name
    assert docker._expired(past.removeprefix(slices.PREFIX))
    assert not docker._expired(future.removeprefix(slices.PREFIX))
