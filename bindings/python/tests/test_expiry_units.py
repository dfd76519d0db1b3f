"""Snapshot expiry as units (``paimon_cleanup.expiry_units``) on a table written by paimon-gen
(compactions, so that expiry frees data files; tags, so that protect units have work): the
unsharded and the sharded unit sequences, units executed and results merged in reverse order,
give the report of the single-process ``Table.expire_snapshots`` on an identical copy and leave
the same files. A corrupted unit raises ``InvalidArgument`` and deletes nothing.

paimon-gen: ``$PAIMON_GEN``, else ``target/release/paimon-gen`` of the repository
(scripts/test-python.sh builds it)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import List, Sequence, Tuple

import pytest

import paimon_cleanup as pc
from paimon_cleanup import expiry_units as eu
from conftest import REPO, _required_file, listing

SHARDS = 3


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """A paimon-gen table (24 snapshots, compactions every 3 commits, 2 tags), never modified."""
    gen = _required_file("PAIMON_GEN", REPO / "target" / "release" / "paimon-gen", "paimon-gen")
    table = tmp_path_factory.mktemp("units") / "gen"
    subprocess.run(
        [
            gen, str(table), "--snapshots", "24", "--files-per-commit", "3", "--partitions", "2",
            "--buckets", "2", "--compact-every", "3", "--tags", "2", "--seed", "7",
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return table


def settings() -> dict:
    """Every snapshot but the last 3 expires."""
    return dict(retain_min=3, older_than=time.time_ns() // 1_000_000, max_deletes=1000)


def merge_reversed(parts: Sequence[bytes]) -> bytes:
    """Merges results in reverse order, alternating the argument order."""
    out = b""
    for i in reversed(range(len(parts))):
        out = eu.merge(out, parts[i]) if i % 2 == 0 else eu.merge(parts[i], out)
    return out


def execute_reversed(units: Sequence[bytes], executor: pc.Executor) -> bytes:
    """Executes every unit, the last one first, and merges their results."""
    return merge_reversed([eu.execute(u, executor=executor) for u in reversed(units)])


def outcome(report: pc.Report):
    """What two runs must agree on: expired snapshots, files and bytes per class, paths."""
    paths = sorted(f"{p.kind} {p.path}" for p in report.paths)
    return report.expired_count, dict(report.deleted), paths


def run_unsharded(table: pc.Table, root: Path) -> pc.Report:
    executor = table.executor
    plan = eu.plan(table, **settings())
    assert plan.state and plan.units
    candidates = execute_reversed(plan.units, executor)
    protect = eu.protect(table, plan.state, candidates)
    assert protect.units, "the retained snapshots and tags protect files"
    kept = execute_reversed(protect.units, executor)
    decision = eu.decide(table, protect.state, candidates, kept)
    assert decision.units

    before = listing(root)
    broken = decision.units[0][: len(decision.units[0]) // 2]
    with pytest.raises(pc.InvalidArgument):
        eu.execute(broken, executor=executor)
    assert listing(root) == before, "a refused delete unit changed the table"
    with pytest.raises(pc.InvalidArgument):
        eu.merge(candidates, candidates)

    deleted = execute_reversed(decision.units, executor)
    return eu.finish(table, decision.state, deleted)


def run_sharded(table: pc.Table, paths_to_tasks: bool = False) -> Tuple[pc.Report, List[str]]:
    """Split, gate, one decision per shard (the last first), conclude, delete units, finish.
    With ``paths_to_tasks`` the delete units hand out the paths they deleted (returned beside
    the report)."""
    executor = table.executor
    plan = eu.plan(table, **settings())
    summaries: List[bytes] = []
    pieces: List[List[bytes]] = [[] for _ in range(SHARDS)]
    for unit in reversed(plan.units):
        s = eu.split(eu.execute(unit, executor=executor), SHARDS)
        assert len(s.shards) == SHARDS
        summaries.append(s.summary)
        for k in range(SHARDS):
            pieces[k].append(s.shards[k])
    gated = eu.gate(table, plan.state, merge_reversed(summaries), SHARDS, paths_to_tasks=paths_to_tasks)
    reports: List[bytes] = []
    delete_units: List[bytes] = []
    for k in reversed(range(SHARDS)):
        d = eu.decide_shard(gated.gate, k, merge_reversed(pieces[k]), executor=executor)
        assert d.paths == []  # only a dry run's shards hand out paths
        reports.append(d.report)
        delete_units.extend(d.delete_units)
    assert delete_units
    with pytest.raises(pc.InvalidArgument):
        eu.conclude(gated.decision, reports[1:])
    decision = eu.conclude(gated.decision, reports)
    if not paths_to_tasks:
        return eu.finish(table, decision, execute_reversed(delete_units, executor)), []
    results: List[bytes] = []
    task_paths: List[str] = []
    for unit in reversed(delete_units):
        with pytest.raises(pc.InvalidArgument):
            eu.execute(unit, executor=executor)  # its paths would be lost
        x = eu.execute_handing_paths(unit, executor=executor)
        results.append(x.result)
        task_paths.extend(x.paths)
    return eu.finish(table, decision, merge_reversed(results)), task_paths


def test_units_equal_the_single_process_run(generated, tmp_path):
    one, units, sharded, handed = (tmp_path / n for n in ("one", "units", "sharded", "handed"))
    for dst in (one, units, sharded, handed):
        shutil.copytree(generated, dst, symlinks=True)
    with pc.Executor(threads=2) as executor:
        with pc.Table(one, executor=executor) as t:
            single = t.expire_snapshots(**settings())
        assert single.expired_count > 0
        assert single.count("data").files > 0, "the compactions freed data files"
        with pc.Table(units, executor=executor) as t:
            got = run_unsharded(t, units)
        assert got.kind == single.kind
        assert outcome(got) == outcome(single)
        assert listing(units) == listing(one)
        assert not single.paths_elsewhere
        with pc.Table(sharded, executor=executor) as t:
            by_shard, task_paths = run_sharded(t)
        assert outcome(by_shard) == outcome(single)
        assert not by_shard.paths_elsewhere and task_paths == []
        assert listing(sharded) == listing(one)
        # The paths handed to the tasks: the same files go and the same counts come back; the
        # listing is a sample (metadata files and at most 20 of the tasks' paths) and says so.
        with pc.Table(handed, executor=executor) as t:
            elsewhere, task_paths = run_sharded(t, paths_to_tasks=True)
        assert listing(handed) == listing(one)
        assert elsewhere.paths_elsewhere
        assert (elsewhere.expired_count, elsewhere.deleted) == (single.expired_count, single.deleted)
        assert task_paths
        assert len(elsewhere.paths) <= len(single.paths) - len(task_paths) + 20
        assert set(task_paths) | {p.path for p in elsewhere.paths} == {p.path for p in single.paths}


def test_foreign_bytes_are_refused():
    with pytest.raises(pc.InvalidArgument):
        eu.execute(b"not a unit")
    with pytest.raises(pc.InvalidArgument):
        eu.merge(b"x", b"y")
    with pytest.raises(pc.InvalidArgument):
        eu.split(b"x", 2)
    with pytest.raises(pc.InvalidArgument):
        eu.conclude(b"x", [b"y"])
    with pytest.raises(TypeError):
        eu.merge("text", b"")
    with pytest.raises(ValueError):
        eu.execute(b"x", {"key\x00": "v"})
    assert eu.merge(b"", b"") == b""
