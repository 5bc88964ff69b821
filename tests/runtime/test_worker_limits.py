"""How many workers eval starts inside a container: no more than the cgroup's CPU quota
(Docker's --cpus, Kubernetes' CPU limit) and, under a cgroup memory limit, which the workers
share, no more than fit beside each other."""

from __future__ import annotations

import os

from trecqr.api import many as api_many
from trecqr.runtime import memory
from trecqr.runtime import workers

MB = 1 << 20


def _cgroup(tmp_path, proc_lines, files):
    tmp_path.mkdir(parents=True, exist_ok=True)
    proc = tmp_path / "cgroup"
    proc.write_text("".join(line + "\n" for line in proc_lines))
    for rel, text in files.items():
        path = tmp_path / "fs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(proc), str(tmp_path / "fs")


def test_v2_quota_is_the_tightest_on_the_way_to_the_root(tmp_path):
    proc, root = _cgroup(tmp_path, ["0::/kubepods/pod1/c1"], {
        "kubepods/cpu.max": "max 100000\n",
        "kubepods/pod1/cpu.max": "150000 100000\n",   # 1.5 CPUs
        "kubepods/pod1/c1/cpu.max": "300000 100000\n",
    })
    assert workers.cpu_quota(proc, root) == 1.5


def test_v1_quota_and_no_quota(tmp_path):
    proc, root = _cgroup(tmp_path, ["4:memory:/x", "3:cpu,cpuacct:/docker/abc"], {
        "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000\n",
        "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
        "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
        "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
    })
    assert workers.cpu_quota(proc, root) == 0.5
    proc, root = _cgroup(tmp_path / "none", ["0::/", "1:cpu:/"], {
        "cpu.max": "max 100000\n", "cpu/cpu.cfs_quota_us": "-1\n",
        "cpu/cpu.cfs_period_us": "100000\n"})
    assert workers.cpu_quota(proc, root) is None


def test_usable_cpus_rounds_the_quota_up_within_the_affinity(monkeypatch):
    cpus = len(os.sched_getaffinity(0))
    monkeypatch.setattr(workers, "cpu_quota", lambda: 0.5)
    assert workers.usable_cpus() == 1
    monkeypatch.setattr(workers, "cpu_quota", lambda: cpus + 7.0)
    assert workers.usable_cpus() == cpus
    monkeypatch.setattr(workers, "cpu_quota", lambda: None)
    assert workers.usable_cpus() == cpus


def test_workers_that_fit_under_a_cgroup_memory_limit(monkeypatch):
    monkeypatch.setattr(memory, "cgroup_limit", lambda: None)
    assert memory.pool_workers(8, 500 * MB) == 8  # no cgroup limit: every core
    # 2 GB limit, 100 MB used: (2048 - 100 - 48) MB / (128 MB + 4 x 100 MB) = 3.6 -> 3
    monkeypatch.setattr(memory, "cgroup_limit", lambda: (2048 * MB, 100 * MB))
    assert memory.pool_workers(8, 100 * MB) == 3
    assert memory.pool_workers(2, 100 * MB) == 2
    assert memory.pool_workers(8, 1000 * MB) == 1  # not even one whole run: one, streaming


def test_eval_default_jobs_follow_the_limits(monkeypatch, tmp_path):
    runs = []
    for i in range(6):
        path = tmp_path / f"run{i}"
        with open(path, "wb") as fh:
            fh.truncate(100 * MB)  # sparse: only the size is read
        runs.append(str(path))
    monkeypatch.setattr(api_many, "usable_cpus", lambda: 4)
    monkeypatch.setattr(memory, "cgroup_limit", lambda: None)
    assert api_many._pool_jobs(runs, None) == 4
    monkeypatch.setattr(memory, "cgroup_limit", lambda: (2048 * MB, 100 * MB))
    assert api_many._pool_jobs(runs, None) == 3
    assert api_many._pool_jobs(runs, 6) == 6  # -j N is taken as given
