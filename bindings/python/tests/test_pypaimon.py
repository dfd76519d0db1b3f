"""``Table.from_pypaimon`` on a real pypaimon table object, and the branch option.

pypaimon lives in the harness venv (``$PAIMON_PYTHON``), not in the venv the wheel is tested in,
so the pypaimon side runs there with the installed package put on its path (a directory holding
only a link to it: the package is pure Python over ctypes and has no dependencies)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import paimon_cleanup as pc
from conftest import pypaimon_python, run_cli, without_times

SCRIPT = r"""
import dataclasses, json, sys
sys.path.insert(0, sys.argv[1])
import paimon_cleanup as pc
from pypaimon import CatalogFactory

catalog = CatalogFactory.create({"warehouse": sys.argv[2]})
base = catalog.get_table("db." + sys.argv[3])
assert pc.__file__.startswith(sys.argv[1]), pc.__file__
out = {}
with pc.Table.from_pypaimon(base, threads=1) as table:
    out["main"] = {
        "uri": table.uri,
        "branch": table.branch,
        "options": table.options,
        "summary": dataclasses.asdict(table.inspect()),
        "dry_run": table.expire_snapshots(retain_min=1, older_than="0s", dry_run=True).to_json(),
    }
with pc.Table.from_pypaimon(base.copy({"branch": sys.argv[4]}), threads=1) as table:
    out["branch"] = {"branch": table.branch, "options": table.options}
print(json.dumps(out))
"""


def run_in_pypaimon(tmp_path: Path, warehouse: Path, name: str, branch: str) -> dict:
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "paimon_cleanup").symlink_to(Path(pc.__file__).parent, target_is_directory=True)
    args = [pypaimon_python(), "-c", SCRIPT, str(shim), str(warehouse), name, branch]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def own_warehouse(warehouse, tmp_path):
    """A warehouse holding a copy of append_unaware (pypaimon's catalog finds it by path)."""
    root = tmp_path / "wh"
    shutil.copytree(Path(warehouse["append_unaware"]["path"]), root / "db.db" / "append_unaware")
    return root


def test_from_pypaimon(tmp_path, own_warehouse):
    """Inside the pypaimon interpreter: from_pypaimon(table) equals Table(path), and a table
    copied onto a branch is opened on that branch."""
    table_dir = own_warehouse / "db.db" / "append_unaware"
    out = run_in_pypaimon(tmp_path, own_warehouse, "append_unaware", "b1")
    main = out["main"]
    uri = main["uri"].replace("file://", "").replace("file:", "")
    assert Path(uri).resolve() == table_dir.resolve()
    assert main["branch"] is None and "branch" not in main["options"]
    with pc.Table(table_dir) as table:
        summary = table.inspect()
        dry = table.expire_snapshots(retain_min=1, older_than="0s", dry_run=True)
    assert main["summary"] == summary.__dict__
    assert without_times(main["dry_run"]) == without_times(dry.to_json())
    assert dry.total_files > 0
    assert out["branch"]["branch"] == "b1" and out["branch"]["options"]["branch"] == "b1"


def test_branch_option(own_warehouse):
    """The branch reaches the library as the context option ``branch``: the branch's own
    history is what the table shows, as ``inspect -o branch=b1`` shows it."""
    table_dir = own_warehouse / "db.db" / "append_unaware"
    with pc.Table(table_dir, branch="b1") as table:
        assert table.options == {"branch": "b1"} and table.branch == "b1"
        summary = table.inspect()
    with pytest.raises(pc.InvalidArgument):
        pc.Table(table_dir, options={"branch": "x"}, branch="b1")
    cli = run_cli("inspect", str(table_dir), "-o", "branch=b1")
    main = run_cli("inspect", str(table_dir))
    assert cli["snapshots"] != main["snapshots"], "the CLI ignored -o branch=b1"
    with pc.Table(table_dir) as table:
        assert table.inspect() != summary
    assert summary.latest_snapshot_id == cli["latest_snapshot_id"]
    assert summary.snapshot_count == len(cli["snapshots"])
