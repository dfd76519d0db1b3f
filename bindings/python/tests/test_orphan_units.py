"""Orphan-file removal as units (``paimon_cleanup.orphan_units``) on copies of a Java-written
table with a branch, with planted orphans (manifest, manifest list, data files in an existing
and in a new partition, temp snapshot files of the main branch and of the branch), 3 days old:
the unsharded and the sharded unit sequences, units executed in reverse order and results merged
in other orders and groupings, give the report of the single-process
``Table.remove_orphan_files`` on an identical copy and leave the same files. Refusals (a
truncated unit, a result merged twice, a missing unit result, summary, piece or shard report,
an unconfirmed round, foreign bytes) raise ``InvalidArgument`` and delete nothing.

Fixture tables: ``$PAIMON_FIXTURES`` (default ``../shared/fixtures/java-written-tables`` beside
the repository, as scripts/test-python.sh); missing, the tests are skipped, or fail with
``PAIMON_REQUIRE_FIXTURES=1``."""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import pytest

import paimon_cleanup as pc
from paimon_cleanup import orphan_units as ou
from conftest import DAY_MS, REPO, listing, read_back, rows, without_times

FIXTURE = "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch"
SHARDS = 3
#: Planted orphans (table-relative path: size). ``pt=3`` is a partition no version has: its
#: directories are left empty and removed.
PLANTED: Dict[str, int] = {
    "manifest/manifest-planted-units-0": 7,
    "manifest/manifest-list-planted-units-0": 8,
    "snapshot/.snapshot-9.planted.tmp": 9,
    "pt=1/bucket-0/data-planted-units-0.parquet": 10,
    "pt=3/bucket-0/data-planted-units-1.parquet": 11,
    "branch/branch-test/snapshot/.snapshot-3.planted.tmp": 12,
}
#: The planted file the dry runs' veto keeps.
VETOED = "manifest/manifest-list-planted-units-0"
PLANTED_AGE_S = 3 * 86_400

Veto = Optional[Callable[[str], bool]]


@pytest.fixture(scope="module")
def source() -> Path:
    """The Java-written fixture table (read-only; the tests work on copies)."""
    root = Path(
        os.environ.get("PAIMON_FIXTURES")
        or REPO.parent / "shared" / "fixtures" / "java-written-tables"
    )
    table = root / FIXTURE
    if not table.is_dir():
        if os.environ.get("PAIMON_REQUIRE_FIXTURES") == "1":
            pytest.fail(f"fixture table not found: {table}")
        pytest.skip(f"fixture table not found: {table} (set PAIMON_FIXTURES)")
    return table


def planted_copy(source: Path, dst: Path) -> Path:
    """A writable copy of ``source`` with the orphans of :data:`PLANTED`, 3 days old (the
    fixture's files keep their own modification times)."""
    shutil.copytree(source, dst, symlinks=True)
    for dirpath, _dirs, files in os.walk(dst):
        os.chmod(dirpath, os.stat(dirpath).st_mode | stat.S_IWUSR)
        for name in files:
            f = Path(dirpath) / name
            os.chmod(f, os.stat(f).st_mode | stat.S_IWUSR)
    old = time.time() - PLANTED_AGE_S
    for rel, size in PLANTED.items():
        f = dst / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(b"o" * size)
        os.utime(f, (old, old))
    return dst


def cutoff_ms() -> int:
    """One cut-off for every run of a comparison (1 day ago)."""
    return time.time_ns() // 1_000_000 - DAY_MS


def merge_folded(parts: Sequence[bytes]) -> bytes:
    """Merges results left to right."""
    out = b""
    for p in parts:
        out = ou.merge(out, p)
    return out


def merge_tree(parts: Sequence[bytes]) -> bytes:
    """Merges results pairwise (another grouping), each pair with its arguments swapped."""
    level = list(parts)
    if not level:
        return b""
    while len(level) > 1:
        nxt = [ou.merge(level[i + 1], level[i]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def execute_reversed(units: Sequence[bytes], executor: pc.Executor) -> List[bytes]:
    """Every unit's result, the last unit executed first."""
    return [ou.execute(u, executor=executor) for u in reversed(units)]


def outcome(report: pc.Report):
    """What two runs must agree on: counts per class, totals, sorted paths, the counters."""
    return (
        report.kind,
        report.dry_run,
        dict(report.deleted),
        report.total_files,
        report.total_bytes,
        sorted((p.kind, p.path) for p in report.paths),
        report.failed,
        report.dirs_removed,
        report.cutoff_ms,
        report.candidates,
        report.referenced,
        report.vetoed,
        report.warnings,
    )


def run_single(root: Path, cutoff: int, dry_run: bool = False, veto: Veto = None) -> pc.Report:
    with pc.Table(root, threads=2) as t:
        return t.remove_orphan_files(cutoff, dry_run, veto)


def run_unsharded(
    table: pc.Table, root: Path, cutoff: int, dry_run: bool = False, veto: Veto = None
) -> pc.Report:
    """Plan, plan units (the last first), merge (another order and grouping), decide, delete
    units (the last first), finish; with the refusals of each step in a real run."""
    executor = table.executor
    plan = ou.plan(table, cutoff, dry_run)
    assert plan.state and len(plan.units) >= 2, "metadata and partitions: several plan units"
    parts = execute_reversed(plan.units, executor)
    merged = merge_tree(parts)
    assert merged == merge_folded(parts[::-1]), "merge is order and grouping free"

    if not dry_run:
        before = listing(root)
        with pytest.raises(pc.InvalidArgument):
            ou.execute(plan.units[0][: len(plan.units[0]) // 2], executor=executor)
        with pytest.raises(pc.InvalidArgument):
            ou.merge(merged, parts[0])  # a result merged twice
        with pytest.raises(pc.InvalidArgument):
            ou.decide(table, plan.state, merge_tree(parts[1:]))  # a unit's result missing
        with pytest.raises(RuntimeError, match="veto failed"):
            ou.decide(table, plan.state, merged, veto=_raising_veto)
        assert listing(root) == before, "a refused step changed the table"

    decision = ou.decide(table, plan.state, merged, veto)
    if dry_run:
        assert decision.units == [], "a dry run has no delete units"
        return ou.finish(table, decision.state, b"")
    assert decision.units
    before = listing(root)
    with pytest.raises(pc.InvalidArgument):
        ou.execute(decision.units[0][: len(decision.units[0]) // 2], executor=executor)
    assert listing(root) == before, "a refused delete unit changed the table"
    deleted = execute_reversed(decision.units, executor)
    after_units = listing(root)
    with pytest.raises(pc.InvalidArgument):
        ou.finish(table, decision.state, merge_tree(deleted[1:]))  # a delete result missing
    assert listing(root) == after_units, "a refused finish removed directories"
    return ou.finish(table, decision.state, merge_tree(deleted))


def run_sharded(
    table: pc.Table, root: Path, cutoff: int, dry_run: bool = False, veto: Veto = None
) -> pc.Report:
    """Plan, plan units (the last first) each split into :data:`SHARDS`, gate, one decision per
    shard (the last first), gate again until it confirms, conclude, delete units (the last
    first), finish; with the refusals of each step in a real run."""
    executor = table.executor
    plan = ou.plan(table, cutoff, dry_run)
    summaries: List[bytes] = []
    pieces: List[List[bytes]] = [[] for _ in range(SHARDS)]
    for unit in reversed(plan.units):
        s = ou.split(ou.execute(unit, executor=executor), SHARDS)
        assert len(s.shards) == SHARDS
        summaries.append(s.summary)
        for k in range(SHARDS):
            pieces[k].append(s.shards[k])
    summary = merge_tree(summaries)
    shard_pieces = [merge_tree(p) for p in pieces]
    before = listing(root)

    if not dry_run:
        with pytest.raises(pc.InvalidArgument):
            ou.split(pieces[0][0], 2)  # a piece cannot be split again
        with pytest.raises(pc.InvalidArgument):
            ou.merge(shard_pieces[0], shard_pieces[1])  # pieces of two shards
        with pytest.raises(pc.InvalidArgument):
            ou.merge(summary, summaries[0])  # a summary merged twice
        with pytest.raises(pc.InvalidArgument):
            ou.gate(table, plan.state, merge_tree(summaries[1:]), SHARDS)  # one missing
        with pytest.raises(pc.InvalidArgument):
            ou.gate(table, plan.state, summary, SHARDS + 1)

    gated = ou.gate(table, plan.state, summary, SHARDS)
    assert gated.decide, "the first gate lets the shards decide"
    if not dry_run:
        with pytest.raises(pc.InvalidArgument):
            ou.decide_shard(table, gated.gate, 0, shard_pieces[1])  # another shard's piece
        with pytest.raises(RuntimeError, match="veto failed"):
            ou.decide_shard(table, gated.gate, 0, shard_pieces[0], veto=_raising_veto)
    while True:
        decided: Dict[int, ou.OrphanShardDecision] = {}
        for k in reversed(range(SHARDS)):
            decided[k] = ou.decide_shard(table, gated.gate, k, shard_pieces[k], veto)
        unconfirmed = gated
        gated = ou.gate(table, gated.state, summary, SHARDS)
        if not gated.decide:
            break
    reports = [d.report for d in decided.values()]
    delete_units = [u for d in decided.values() for u in d.delete_units]

    if not dry_run:
        with pytest.raises(pc.InvalidArgument):
            ou.conclude(unconfirmed.state, summary, reports)  # the round is not confirmed
        with pytest.raises(pc.InvalidArgument):
            ou.conclude(gated.state, summary, reports[1:])  # a shard report missing
        with pytest.raises(pc.InvalidArgument):
            ou.conclude(gated.state, summary, reports + reports[:1])  # one twice
    assert listing(root) == before, "nothing is deleted before the delete units"
    decision = ou.conclude(gated.state, summary, reports)
    if dry_run:
        assert delete_units == [], "a dry run has no delete units"
        return ou.finish(table, decision, b"")
    assert delete_units
    return ou.finish(table, decision, merge_tree(execute_reversed(delete_units, executor)))


def _raising_veto(path: str) -> bool:
    raise RuntimeError(f"veto failed on {path}")


def three_runs(source: Path, base: Path) -> Dict[str, object]:
    """(a) single process, (b) unsharded units, (c) sharded units, each on its own planted
    copy with one cut-off: the copies and the reports."""
    cutoff = cutoff_ms()
    one, two, three = (planted_copy(source, base / n) for n in ("one", "two", "three"))
    single = run_single(one, cutoff)
    with pc.Executor(threads=2) as executor:
        with pc.Table(two, executor=executor) as t:
            unsharded = run_unsharded(t, two, cutoff)
        with pc.Table(three, executor=executor) as t:
            sharded = run_sharded(t, three, cutoff)
    return dict(roots=(one, two, three), single=single, unsharded=unsharded, sharded=sharded)


def test_units_equal_the_single_process_run(source, tmp_path):
    runs = three_runs(source, tmp_path)
    single: pc.Report = runs["single"]
    one, two, three = runs["roots"]

    assert single.kind == "remove_orphan_files" and not single.dry_run
    assert sorted(p.path for p in single.paths) == sorted(PLANTED), "exactly the planted files"
    assert single.total_files == len(PLANTED)
    assert single.total_bytes == sum(PLANTED.values())
    assert single.count("data") == pc.FileCount(2, 21)
    assert single.count("manifest") == pc.FileCount(1, 7)
    assert single.count("manifest_list") == pc.FileCount(1, 8)
    assert single.count("other") == pc.FileCount(2, 21)
    assert single.dirs_removed == 2, "pt=3/bucket-0 and pt=3 were left empty"
    assert not single.failed and single.vetoed == 0

    for name in ("unsharded", "sharded"):
        got: pc.Report = runs[name]
        assert outcome(got) == outcome(single), name
        # The whole report, in the single run's path order, as the CLI's --json document.
        assert without_times(got.to_json()) == without_times(single.to_json()), name

    assert listing(two) == listing(one)
    assert listing(three) == listing(one)
    for root in (one, two, three):
        for rel in PLANTED:
            assert not (root / rel).exists(), f"{root.name}: {rel} still there"
        assert not (root / "pt=3").exists()
    with pc.Table(one) as a, pc.Table(two) as b, pc.Table(three) as c:
        assert a.inspect() == b.inspect() == c.inspect(), "versions kept"


def test_dry_runs_with_a_veto(source, tmp_path):
    """Dry runs with a veto keeping one planted file: the same report from the three
    sequences, the veto asked by decide / decide_shard, nothing deleted."""
    cutoff = cutoff_ms()
    one, two, three = (planted_copy(source, tmp_path / n) for n in ("one", "two", "three"))
    before = listing(one)
    asked: Dict[str, List[str]] = {"single": [], "unsharded": [], "sharded": []}

    def veto_of(name: str) -> Callable[[str], bool]:
        def veto(path: str) -> bool:
            asked[name].append(path)
            return path == VETOED

        return veto

    single = run_single(one, cutoff, dry_run=True, veto=veto_of("single"))
    with pc.Executor(threads=2) as executor:
        with pc.Table(two, executor=executor) as t:
            unsharded = run_unsharded(t, two, cutoff, True, veto_of("unsharded"))
        with pc.Table(three, executor=executor) as t:
            sharded = run_sharded(t, three, cutoff, True, veto_of("sharded"))

    assert single.dry_run and single.vetoed == 1
    assert sorted(p.path for p in single.paths) == sorted(set(PLANTED) - {VETOED})
    assert sorted(asked["single"]) == sorted(PLANTED)
    for name, got in (("unsharded", unsharded), ("sharded", sharded)):
        assert outcome(got) == outcome(single), name
        assert without_times(got.to_json()) == without_times(single.to_json()), name
        assert sorted(asked[name]) == sorted(PLANTED), name
    for root in (one, two, three):
        assert listing(root) == before, f"a dry run changed {root.name}"


def test_pypaimon_reads_the_same_rows(source, tmp_path):
    """Every version of every branch reads the same rows after the three runs as before."""
    view = read_back(source)[str(source)]
    errors = {k: v["error"] for k, v in view.items() if "error" in v}
    if not view or errors:
        pytest.skip(f"pypaimon cannot read the fixture table: {errors}")
    expected = {k: rows(v) for k, v in view.items()}
    assert any(k.startswith("branch:") for k in expected), "the branch is read too"
    roots = three_runs(source, tmp_path)["roots"]
    views = read_back(*roots)
    for root in roots:
        got = {k: rows(v) for k, v in views[str(root)].items()}
        assert got == expected, root.name


def test_foreign_bytes_on_the_driver_steps(source, tmp_path):
    """Foreign bytes and bad settings are refused before anything is read or deleted."""
    root = planted_copy(source, tmp_path / "t")
    before = listing(root)
    with pc.Table(root, threads=1) as t:
        for step in (
            lambda: ou.decide(t, b"x", b"y"),
            lambda: ou.finish(t, b"x", b""),
            lambda: ou.gate(t, b"x", b"y", SHARDS),
            lambda: ou.decide_shard(t, b"x", 0, b"y"),
            # a cut-off within the last hour (writers assumed running), one in the future
            lambda: ou.plan(t, "10 min"),
            lambda: ou.plan(t, time.time_ns() // 1_000_000 + DAY_MS),
        ):
            with pytest.raises(pc.InvalidArgument):
                step()
        plan = ou.plan(t, "10 min", dry_run=True, no_writers_running=True)
        assert plan.units
        with pytest.raises(TypeError):
            ou.plan(str(root))
    assert listing(root) == before


def test_foreign_bytes_are_refused():
    with pytest.raises(pc.InvalidArgument):
        ou.execute(b"not a unit")
    with pytest.raises(pc.InvalidArgument):
        ou.merge(b"x", b"y")
    with pytest.raises(pc.InvalidArgument):
        ou.split(b"x", 2)
    with pytest.raises(pc.InvalidArgument):
        ou.conclude(b"x", b"y", [b"z"])
    empty = ou.merge(b"", b"")  # the result of no unit
    assert ou.merge(empty, b"") == ou.merge(b"", empty) == empty
    with pytest.raises(pc.InvalidArgument):
        ou.conclude(empty, empty, [])
    for shards in (0, 65_537, 2**32):
        with pytest.raises(pc.InvalidArgument):
            ou.split(empty, shards)
    with pytest.raises(TypeError):
        ou.merge("text", b"")
    with pytest.raises(ValueError):
        ou.execute(b"x", {"key\x00": "v"})
