"""Every operation through Python gives the same report as the CLI on an identical copy, leaves
the same files, and pypaimon reads the same rows afterwards (surviving versions unchanged)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any, Dict, Iterable, List

import pytest

import paimon_cleanup as pc
from conftest import (
    DAY_MS,
    listing,
    plant_orphans,
    read_back,
    rows,
    run_cli,
    set_mtime,
    without_times,
)

STEP_KEYS = {
    "expire_tags": "tags",
    "expire_partitions": "partitions",
    "expire_consumers": "consumers",
    "expire_snapshots": "snapshots",
    "expire_changelogs": "changelogs",
}


def cli_options(options: Dict[str, str]) -> List[str]:
    out: List[str] = []
    for k, v in options.items():
        out += ["-o", f"{k}={v}"]
    return out


def check_fields(report: pc.Report, doc: Dict[str, Any]) -> None:
    """The dataclass says what the CLI's JSON says."""
    deletion = doc.get("deletion")
    if deletion is not None:
        assert report.dry_run == deletion["dry_run"]
        assert report.deleted == {
            k: pc.FileCount(v["files"], v["bytes"]) for k, v in deletion["deleted"].items()
        }
        assert report.total_files == sum(v["files"] for v in deletion["deleted"].values())
        assert report.total_bytes == sum(v["bytes"] for v in deletion["deleted"].values())
        assert [(p.kind, p.path) for p in report.paths] == [
            (p["class"], p["path"]) for p in deletion["paths"]
        ]
        assert [(f.path, f.error) for f in report.failed] == [
            (f["path"], f["error"]) for f in deletion["failed"]
        ]
        assert report.dirs_removed == deletion["dirs_removed"]
    kind = report.kind
    if kind in ("expire_snapshots", "expire_changelogs"):
        expired = doc["snapshots_expired" if kind == "expire_snapshots" else "changelogs_expired"]
        assert report.expired_count == expired
        first, last = doc["first_expired"], doc["last_expired"]
        assert report.expired_range == (None if first is None else (first, last))
    if kind == "expire_snapshots":
        assert report.earliest_after == doc["earliest_after"]
        assert report.changelogs_written == doc["changelogs_written"]
    if kind in ("delete_tag", "expire_tags"):
        assert report.names == doc["tags_deleted"]
        assert report.missing == doc["tags_not_found"]
    if kind == "expire_consumers":
        assert report.names == doc["expired"]
    if kind == "remove_orphan_files":
        assert report.cutoff_ms == doc["older_than_ms"]
        assert (report.candidates, report.referenced, report.vetoed) == (
            doc["candidates"],
            doc["referenced"],
            doc["vetoed"],
        )
    if kind in ("drop_partitions", "expire_partitions"):
        assert report.dry_run == doc["dry_run"]
        assert report.partitions == doc["partitions"]
        assert (
            report.files_marked_deleted,
            report.rows_marked_deleted,
            report.bytes_marked_deleted,
        ) == (doc["files_marked_deleted"], doc["rows_marked_deleted"], doc["bytes_marked_deleted"])
        assert report.committed_snapshots == doc["snapshot_ids"]
    if kind == "maintain":
        ran = [k for k in STEP_KEYS.values() if doc.get(k) is not None]
        assert sorted(STEP_KEYS[s.kind] for s in report.steps) == sorted(ran)
        for step in report.steps:
            check_fields(step, doc[STEP_KEYS[step.kind]])
            assert without_times(step.to_json()) == without_times(doc[STEP_KEYS[step.kind]])
        assert report.total_files == sum(s.total_files for s in report.steps)


def check_same(pair, report: pc.Report, doc: Dict[str, Any], commits: bool = False) -> None:
    """Same report, same files left (up to the UUIDs of new files when the operation commits)."""
    assert without_times(report.to_json()) == without_times(doc)
    check_fields(report, doc)
    assert listing(pair.py, commits) == listing(pair.cli, commits)


def check_read_back(pair, before: Dict[str, Any], gone: Iterable[str] = ()) -> Dict[str, Any]:
    """pypaimon reads both copies alike, every surviving version as before, and nothing fails."""
    views = read_back(pair.py, pair.cli)
    py_view, cli_view = views[str(pair.py)], views[str(pair.cli)]
    assert {k: rows(v) for k, v in py_view.items()} == {k: rows(v) for k, v in cli_view.items()}
    for key, version in py_view.items():
        assert "error" not in version and "changelog_error" not in version, (key, version)
        if key in before:
            assert rows(version) == rows(before[key]), key
    for key in gone:
        assert key not in py_view, key
    return py_view


def unchanged(pair, source_listing: List[str]) -> None:
    assert listing(pair.py) == source_listing
    assert listing(pair.cli) == source_listing


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["append_unaware", "pk_fixed", "pk_changelog"])
def test_inspect_matches_cli(copy_table, name):
    table_dir = copy_table(name)
    doc = run_cli("inspect", str(table_dir))
    with pc.Table(table_dir) as table:
        s = table.inspect()
    assert s.has_snapshots == (doc["latest_snapshot_id"] is not None)
    assert (s.earliest_snapshot_id, s.latest_snapshot_id) == (
        doc["earliest_snapshot_id"],
        doc["latest_snapshot_id"],
    )
    assert s.snapshot_count == len(doc["snapshots"]) > 0
    assert s.tag_count == len(doc["tags"])
    assert s.branch_count == len(doc["branches"]) - 1
    assert (s.live_file_count, s.live_file_bytes) == (
        len(doc["live_files"]),
        doc["live_file_bytes"],
    )


@pytest.mark.parametrize("name", ["append_unaware", "pk_fixed", "pk_changelog"])
def test_expire_snapshots(pair, versions_before, name):
    p = pair(name)
    source = listing(p.py)
    args = ["--retain-min", "1", "--time-retained", "0s", "--max-deletes", "1000"]

    with pc.Table(p.py) as table:
        dry = table.expire_snapshots(retain_min=1, older_than="0s", max_deletes=1000, dry_run=True)
    dry_doc = run_cli("expire-snapshots", str(p.cli), *args, "--dry-run")
    check_same(p, dry, dry_doc)
    unchanged(p, source)
    assert dry.dry_run and dry.expired_count > 0 and dry.total_files > 0

    with pc.Table(p.py) as table:
        real = table.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), max_deletes=1000)
    doc = run_cli("expire-snapshots", str(p.cli), *args)
    check_same(p, real, doc)
    assert not real.dry_run
    # the dry run listed exactly what the real run deleted
    assert sorted(x.path for x in dry.paths) == sorted(x.path for x in real.paths)
    for path in real.paths:
        assert not (p.py / path.path).exists()
    first, last = real.expired_range
    check_read_back(
        p, versions_before[name], gone=[f"snapshot:{i}" for i in range(first, last + 1)]
    )


def test_expire_changelogs(pair, versions_before):
    p = pair("pk_changelog")
    # decoupled changelog lifecycle: changelogs outlive the snapshots they came from
    opts = {
        "snapshot.num-retained.min": "1",
        "snapshot.num-retained.max": "1",
        "snapshot.time-retained": "0s",
        "changelog.num-retained.min": "3",
        "changelog.num-retained.max": "3",
    }
    with pc.Table(p.py, options=opts) as table:
        snaps = table.expire_snapshots()
    snaps_doc = run_cli("expire-snapshots", str(p.cli), *cli_options(opts))
    check_same(p, snaps, snaps_doc)
    assert snaps.changelogs_written > 0

    with pc.Table(p.py, options=opts) as table:
        dry = table.expire_changelogs(retain_min=1, older_than="0s", dry_run=True)
        real = table.expire_changelogs(retain_min=1, older_than="0s")
    cli_args = [
        "expire-changelogs",
        str(p.cli),
        *cli_options(opts),
        "--retain-min",
        "1",
        "--time-retained",
        "0s",
    ]
    dry_doc = run_cli(*cli_args, "--dry-run")
    doc = run_cli(*cli_args)
    assert without_times(dry.to_json()) == without_times(dry_doc)
    check_same(p, real, doc)
    assert real.expired_count > 0 and real.deleted.get("changelog_meta")
    assert sorted(x.path for x in dry.paths) == sorted(x.path for x in real.paths)

    with pc.Table(p.py, options=opts) as table:
        rest = table.expire_changelogs(delete_all=True)
    check_same(
        p, rest, run_cli("expire-changelogs", str(p.cli), *cli_options(opts), "--delete-all")
    )
    check_read_back(p, versions_before["pk_changelog"])


def test_delete_tags(pair, versions_before):
    p = pair("append_unaware")
    source = listing(p.py)
    with pc.Table(p.py) as table:
        dry = table.delete_tag("t1", dry_run=True)
    check_same(p, dry, run_cli("delete-tag", str(p.cli), "t1", "--dry-run"))
    unchanged(p, source)
    assert dry.names == ["t1"] and dry.dry_run

    with pc.Table(p.py) as table:
        reports = table.delete_tags(["t1", "nope"])
    check_same(p, reports[0], run_cli("delete-tag", str(p.cli), "t1"))
    check_same(p, reports[1], run_cli("delete-tag", str(p.cli), "nope"))
    assert reports[0].names == ["t1"] and reports[0].deleted["tag_meta"].files == 1
    assert reports[1].names == [] and reports[1].missing == ["nope"]
    assert not (p.py / "tag" / "tag-t1").exists()
    check_read_back(p, versions_before["append_unaware"], gone=["tag:t1"])


def test_expire_tags(pair, versions_before):
    p = pair("append_unaware")
    cutoff = int(time.time() * 1000)
    with pc.Table(p.py) as table:
        report = table.expire_tags(older_than=cutoff)
    check_same(p, report, run_cli("expire-tags", str(p.cli), "--older-than-ms", str(cutoff)))
    assert report.names == ["t1"]
    check_read_back(p, versions_before["append_unaware"], gone=["tag:t1"])


def test_expire_consumers(pair, versions_before):
    p = pair("append_unaware")
    for d in p.both():
        set_mtime(d / "consumer", 2 * DAY_MS)
    with pc.Table(p.py) as table:
        dry = table.expire_consumers(expiration_time="1 d", dry_run=True)
        assert dry.names == ["c1"] and (p.py / "consumer" / "consumer-c1").exists()
        report = table.expire_consumers(expiration_time=dt.timedelta(days=1))
    check_same(p, report, run_cli("expire-consumers", str(p.cli), "--expiration-time", "1 d"))
    assert report.names == ["c1"] and report.deleted["consumer_meta"].files == 1
    check_read_back(p, versions_before["append_unaware"])


def test_remove_orphan_files(pair, versions_before):
    p = pair("append_unaware")
    for d in p.both():
        plant_orphans(d, 3)
        set_mtime(d, 3 * DAY_MS)
    source = listing(p.py)
    cutoff = int(time.time() * 1000) - DAY_MS
    with pc.Table(p.py) as table:
        dry = table.remove_orphan_files(older_than=cutoff, dry_run=True)
    check_same(
        p,
        dry,
        run_cli("remove-orphan-files", str(p.cli), "--older-than-ms", str(cutoff), "--dry-run"),
    )
    unchanged(p, source)
    assert dry.total_files == 4

    with pc.Table(p.py) as table:
        report = table.remove_orphan_files(older_than=cutoff)
    check_same(
        p, report, run_cli("remove-orphan-files", str(p.cli), "--older-than-ms", str(cutoff))
    )
    assert sorted(x.path for x in report.paths) == sorted(x.path for x in dry.paths)
    check_read_back(p, versions_before["append_unaware"])
    # every version survives an orphan removal
    assert set(read_back(p.py)[str(p.py)]) == set(versions_before["append_unaware"])


def test_orphan_relative_cutoff(copy_table):
    table_dir = copy_table("pk_fixed")
    before = int(time.time() * 1000) - DAY_MS
    with pc.Table(table_dir) as table:
        report = table.remove_orphan_files(older_than=dt.timedelta(days=1), dry_run=True)
        report2 = table.remove_orphan_files(older_than="1 d", dry_run=True)
    after = int(time.time() * 1000) - DAY_MS
    assert before <= report.cutoff_ms <= report2.cutoff_ms <= after


@pytest.mark.parametrize(
    "name,specs",
    [
        ("append_unaware", [{"dt": "2024-01-01"}]),
        ("append_fixed_bucket", [{"p": "0"}]),
        ("pk_fixed", [{"d": "2024-01-01"}]),
    ],
)
def test_drop_partitions(pair, versions_before, name, specs):
    p = pair(name)
    source = listing(p.py)
    cli_specs: List[str] = []
    for spec in specs:
        cli_specs += ["--partition", ",".join(f"{k}={v}" for k, v in spec.items())]
    with pc.Table(p.py) as table:
        dry = table.drop_partitions(specs, dry_run=True)
    check_same(p, dry, run_cli("drop-partitions", str(p.cli), *cli_specs, "--dry-run"))
    unchanged(p, source)
    assert dry.dry_run and dry.partitions and dry.committed_snapshots == []

    with pc.Table(p.py) as table:
        report = table.drop_partitions(specs)
    check_same(p, report, run_cli("drop-partitions", str(p.cli), *cli_specs), commits=True)
    assert report.partitions == dry.partitions and len(report.committed_snapshots) == 1
    view = check_read_back(p, versions_before[name])
    new_key = f"snapshot:{report.committed_snapshots[0]}"
    assert (
        view[new_key]["row_count"]
        < versions_before[name][f"snapshot:{report.committed_snapshots[0] - 1}"]["row_count"]
    )


def test_expire_partitions(pair, versions_before):
    p = pair("append_fixed_bucket")
    kwargs = dict(strategy="update-time", expiration_time="1 ms", max_num=1)
    cli_args = ["--strategy", "update-time", "--expiration-time", "1 ms", "--max-num", "1"]
    time.sleep(0.01)
    with pc.Table(p.py) as table:
        dry = table.expire_partitions(dry_run=True, **kwargs)
    check_same(p, dry, run_cli("expire-partitions", str(p.cli), *cli_args, "--dry-run"))
    assert dry.dry_run and len(dry.partitions) == 1 and dry.committed_snapshots == []

    with pc.Table(p.py) as table:
        report = table.expire_partitions(**kwargs)
    check_same(p, report, run_cli("expire-partitions", str(p.cli), *cli_args), commits=True)
    assert report.partitions == dry.partitions and report.expired_count == 1
    check_read_back(p, versions_before["append_fixed_bucket"])


def test_maintain(pair, versions_before):
    p = pair("append_unaware")
    opts = {
        "snapshot.num-retained.min": "2",
        "snapshot.time-retained": "0s",
        "consumer.expiration-time": "1 d",
    }
    for d in p.both():
        set_mtime(d / "consumer", 2 * DAY_MS)
    with pc.Table(p.py, options=opts) as table:
        dry = table.maintain(dry_run=True)
    check_same(p, dry, run_cli("maintain", str(p.cli), *cli_options(opts), "--dry-run"))
    with pc.Table(p.py, options=opts) as table:
        report = table.maintain()
    check_same(p, report, run_cli("maintain", str(p.cli), *cli_options(opts)))
    kinds = [s.kind for s in report.steps]
    assert "expire_snapshots" in kinds and "expire_consumers" in kinds
    snaps = next(s for s in report.steps if s.kind == "expire_snapshots")
    assert snaps.expired_count > 0
    assert sorted(x.path for x in dry.paths) == sorted(x.path for x in report.paths)
    check_read_back(p, versions_before["append_unaware"])
