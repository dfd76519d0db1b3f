"""``Warehouse(root, pattern).maintain()``: every table of a filesystem-catalog warehouse that a
``db.table`` pattern names (``paimon_cleanup_warehouse_list_tables``), one table's failure
recorded and the others run, each table's result the CLI's on an identical copy."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import paimon_cleanup as pc
from conftest import TABLES, cli_path, read_back, rows, run_cli


def build(warehouse, root: Path) -> Path:
    """``root/wh``: the pypaimon tables in ``db``, two of them again in ``db2``, and
    ``db2.broken`` whose ``snapshot/`` is a regular file; plus directories that are no table."""
    wh = root / "wh"
    for name in TABLES:
        shutil.copytree(Path(warehouse[name]["path"]), wh / "db.db" / name, symlinks=True)
    for name in TABLES[:2]:
        shutil.copytree(Path(warehouse[name]["path"]), wh / "db2.db" / name, symlinks=True)
    broken = wh / "db2.db" / "broken"
    shutil.copytree(Path(warehouse["pk_fixed"]["path"]), broken, symlinks=True)
    shutil.rmtree(broken / "snapshot")
    (broken / "snapshot").write_text("not a directory")
    (wh / "db.db" / "not_a_table" / "snapshot").mkdir(parents=True)
    (wh / "scratch" / "t" / "schema").mkdir(parents=True)
    return wh


def test_list_tables_follows_the_pattern(warehouse, tmp_path):
    wh = build(warehouse, tmp_path)
    db = pc.list_tables(wh, "db.*")
    assert list(db) == sorted(f"db.{n}" for n in TABLES)
    assert db["db.pk_fixed"] == str(wh / "db.db" / "pk_fixed")
    everything = pc.Warehouse(wh).tables()
    assert "db2.broken" in everything and "db.not_a_table" not in everything
    assert len(everything) == len(TABLES) + 3
    assert list(pc.list_tables(wh, "*.pk_*")) == ["db.pk_changelog", "db.pk_fixed"]
    with pytest.raises(pc.NotFound):
        pc.list_tables(wh, "db.nothing*")
    with pytest.raises(pc.InvalidArgument):
        pc.list_tables(wh, "nodot")
    with pytest.raises(pc.Unsupported):
        pc.list_tables("s3://bucket/wh", "db.*")


def test_maintain_a_warehouse_reports_the_broken_table_and_runs_the_others(warehouse, tmp_path):
    wh = build(warehouse, tmp_path / "py")
    cli_wh = build(warehouse, tmp_path / "cli")
    outcomes = pc.Warehouse(wh, "*.*").maintain(dry_run=True, parallel_tables=2)
    by_name = {o.table: o for o in outcomes}
    assert list(by_name) == sorted(by_name)
    broken = by_name.pop("db2.broken")
    assert not broken.ok and broken.report is None
    assert "snapshot" in str(broken.error)
    for name, o in by_name.items():
        assert o.ok, (name, o.error)
        db, table = name.split(".")
        expected = run_cli("maintain", str(cli_wh / f"{db}.db" / table), "--dry-run")
        steps = [expected.get(s) for s in ("tags", "consumers", "snapshots", "changelogs")]
        files = sum(
            c["files"] for step in steps if step for c in step["deletion"]["deleted"].values()
        )
        assert o.report.total_files == files, name


def test_expire_snapshots_over_a_warehouse_matches_the_cli_and_keeps_the_rows(
    warehouse, tmp_path
):
    wh = build(warehouse, tmp_path / "py")
    cli_wh = build(warehouse, tmp_path / "cli")
    before = read_back(*[wh / "db.db" / n for n in TABLES])
    outcomes = pc.Warehouse(wh, "db.*").expire_snapshots(retain_min=1, older_than="0s")
    assert [o.table for o in outcomes] == sorted(f"db.{n}" for n in TABLES)
    assert any(o.report.expired_count > 0 for o in outcomes)
    proc = subprocess.run(
        [
            cli_path(),
            "expire-snapshots",
            "--warehouse",
            str(cli_wh),
            "--table",
            "db.*",
            "--retain-min",
            "1",
            "--time-retained",
            "0s",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    swept = {t["table"]: t for t in json.loads(proc.stdout)["tables"]}
    for o in outcomes:
        assert o.ok, o.error
        assert o.report.total_files == swept[o.table]["files"], o.table
        assert o.report.expired_count == swept[o.table]["report"]["snapshots_expired"], o.table
    after = read_back(*[wh / "db.db" / n for n in TABLES])
    for d, views in after.items():
        latest = max(
            (k for k in views if k.startswith("snapshot:")), key=lambda k: int(k.split(":")[1])
        )
        assert rows(views[latest]) == rows(before[d][latest]), d
    with pytest.raises(pc.InvalidArgument):
        pc.Warehouse(wh, "db.*").maintain(parallel_tables=0)
