"""Shared helpers of the Python binding tests.

The tables are written by pypaimon (``tests/py/make_tables.py`` of the repository, run with
``$PAIMON_PYTHON``, the harness venv with pypaimon 2.1.0) once per session; every test works on
copies. The reference is the CLI (``$PAIMON_CLEANUP_CLI``, default ``target/release/
paimon-cleanup``) run with ``--json`` on an identical copy, and pypaimon reads the tables back
(``tests/py/live_files.py --all-versions``) after each operation.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

REPO = Path(os.environ.get("PAIMON_CLEANUP_REPO") or Path(__file__).resolve().parents[3])
TABLES = ["append_unaware", "append_fixed_bucket", "pk_fixed", "pk_changelog"]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
DAY_MS = 86_400_000


def _required_file(env: str, default: Optional[Path], what: str) -> str:
    value = os.environ.get(env) or (str(default) if default else "")
    if not value or not Path(value).is_file():
        pytest.exit(f"{what} not found ({env}={value or 'unset'})", returncode=1)
    return value


def pypaimon_python() -> str:
    return _required_file("PAIMON_PYTHON", REPO / ".venv" / "bin" / "python", "pypaimon python")


def cli_path() -> str:
    return _required_file(
        "PAIMON_CLEANUP_CLI", REPO / "target" / "release" / "paimon-cleanup", "paimon-cleanup CLI"
    )


class CliError(Exception):
    """The CLI exited non-zero."""


def run_cli(*args: str) -> Dict[str, Any]:
    """``paimon-cleanup ARGS --json``, parsed."""
    proc = subprocess.run(
        [cli_path(), *args, "--json"], capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        raise CliError(proc.stderr.strip())
    return json.loads(proc.stdout)


def without_times(value: Any) -> Any:
    """A report document without its wall times (``elapsed_ms``)."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k != "elapsed_ms"}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def listing(root: Path, ignore_uuids: bool = False) -> List[str]:
    """Every file under ``root`` as ``path size`` (UUIDs masked on request: commits name new
    files with fresh UUIDs)."""
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            entry = f"{rel} {full.stat().st_size}"
            if ignore_uuids:
                entry = UUID.sub("UUID", rel)  # sizes differ too (names inside metadata)
            out.append(entry)
    return sorted(out)


def read_back(*dirs: Path) -> Dict[str, Dict[str, Any]]:
    """pypaimon's view of every version of each table: {dir: {version key: {...}}}."""
    proc = subprocess.run(
        [
            pypaimon_python(),
            str(REPO / "tests" / "py" / "live_files.py"),
            *map(str, dirs),
            "--all-versions",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode not in (0, 2) or not proc.stdout.strip():
        raise AssertionError(f"live_files.py failed ({proc.returncode}): {proc.stderr[-2000:]}")
    result = json.loads(proc.stdout)
    return {str(dirs[0]): result} if len(dirs) == 1 else result


def rows(version: Dict[str, Any]) -> Any:
    """What must not change for a version that survives: its rows (or its error)."""
    return version.get("error") or (version.get("row_count"), version.get("row_digest"))


def set_mtime(root: Path, age_ms: int) -> None:
    """Every file and directory under ``root`` gets an mtime ``age_ms`` in the past."""
    t = time.time() - age_ms / 1000
    for dirpath, dirs, files in os.walk(root):
        for name in files + dirs:
            os.utime(Path(dirpath) / name, (t, t))


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory) -> Dict[str, Dict[str, Any]]:
    """The pypaimon-written tables by name (entries of tables.json), never modified."""
    out = tmp_path_factory.mktemp("warehouse")
    subprocess.run(
        [
            pypaimon_python(),
            str(REPO / "tests" / "py" / "make_tables.py"),
            str(out),
            "--only",
            *TABLES,
            "--quiet",
        ],
        check=True,
        timeout=300,
    )
    info = json.loads((out / "tables.json").read_text())
    return {t["name"]: t for t in info["tables"]}


@pytest.fixture(scope="session")
def versions_before(warehouse) -> Dict[str, Dict[str, Any]]:
    """pypaimon's view of every source table, read once."""
    dirs = [Path(warehouse[name]["path"]) for name in TABLES]
    views = read_back(*dirs)
    return {name: views[str(d)] for name, d in zip(TABLES, dirs)}


class Pair:
    """Two identical copies of one table: ``py`` for the binding, ``cli`` for the CLI."""

    def __init__(self, name: str, source: Path, base: Path):
        self.name = name
        self.py = base / "py" / name
        self.cli = base / "cli" / name
        for dst in (self.py, self.cli):
            shutil.copytree(source, dst, symlinks=True)

    def both(self):
        return (self.py, self.cli)


@pytest.fixture
def pair(warehouse, tmp_path):
    """``pair(name)``: two fresh copies of a table."""

    def make(name: str) -> Pair:
        return Pair(name, Path(warehouse[name]["path"]), tmp_path)

    return make


@pytest.fixture
def copy_table(warehouse, tmp_path):
    """``copy_table(name)``: one fresh copy of a table."""

    def make(name: str, where: str = "copy") -> Path:
        dst = tmp_path / where / name
        shutil.copytree(Path(warehouse[name]["path"]), dst, symlinks=True)
        return dst

    return make


def plant_orphans(table: Path, count: int, prefix: str = "planted") -> List[str]:
    """Writes ``count`` files no version references (data-file look-alikes in the first bucket
    directory, and a manifest look-alike); returns their table-relative paths."""
    bucket = next(p for p in sorted(table.rglob("bucket-*")) if p.is_dir())
    paths = []
    for i in range(count):
        f = bucket / f"data-{prefix}-{i}.parquet"
        f.write_bytes(b"x" * (10 + i % 7))
        paths.append(f.relative_to(table).as_posix())
    m = table / "manifest" / f"manifest-{prefix}-orphan"
    m.write_bytes(b"0123456789")
    paths.append(m.relative_to(table).as_posix())
    return paths
