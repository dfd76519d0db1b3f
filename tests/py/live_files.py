#!/usr/bin/env python3
"""pypaimon's own view of one version of a Paimon table: its live data files and rows.

    python tests/py/live_files.py TABLE_DIR [--branch NAME] [--snapshot ID | --tag NAME]
    python tests/py/live_files.py TABLE_DIR --all-versions
    (extra: --files-only  plan the scan but do not read rows)

Prints one JSON object on stdout. For one version:

    {"branch": "main", "snapshot_id": 6, "tag": null,
     "live_files": ["dt=a%2Fb/hr=0/bucket-0/data-<uuid>-0.parquet", ...],
     "deletion_vector_files": ["index/index-<uuid>-1", ...],
     "changelog_files": ["d=19783/bucket-0/changelog-<uuid>-0.parquet", ...],
     "row_count": 29, "row_digest": "<64 hex>"}

* live_files: every data file of the planned splits (rb.new_scan().plan().splits()),
  sorted, as a path relative to TABLE_DIR ("/"-separated, partition components escaped
  exactly as on disk), or the absolute local path for a file outside TABLE_DIR (an
  external data file). A file whose rows are all deleted by a deletion vector is still
  live (pypaimon keeps it in the split together with its deletion file).
* deletion_vector_files: the deletion-vector index files those splits need (same path
  convention; empty for tables without deletion vectors).
* changelog_files: the changelog files of exactly this snapshot (its
  changelogManifestList), as pypaimon's streaming changelog planner sees them; [] for
  tables without a changelog producer. If only that planning fails, changelog_files is
  null and "changelog_error" says why (the data read may still be fine; exit status 2).
* row_count / row_digest: the rows pypaimon reads from those splits
  (rb.new_read().to_arrow(splits)). Digest = sha256 over the rows, each encoded as a JSON
  array in schema column order (dates/timestamps as ISO strings, bytes as hex, decimals
  as strings), the encoded rows sorted and joined with "\\n" (UTF-8). With --files-only
  both are null.
* snapshot_id is the snapshot the scan used (null for a table without snapshots, which
  gives empty lists, row_count 0 and the digest of no rows).

If pypaimon fails (missing manifest or data file, unknown snapshot or tag ...) the object
is {"branch", "snapshot_id", "tag", "error": "<ExceptionType>: <message>"} and the exit
status is 2.

--all-versions prints {"snapshot:<id>": {...}, "tag:<name>": {...}} for every snapshot
and tag of the main branch, plus "branch:<b>" (latest), "branch:<b>:snapshot:<id>" and
"branch:<b>:tag:<name>" for every other branch. Versions that fail carry "error"; the exit
status is then 2. Argument errors exit with status 1 (argparse: 2 is reserved for us, so
usage errors are remapped to 1).
"""

import argparse
import datetime
import decimal
import hashlib
import json
import logging
import os
import sys
import warnings

warnings.filterwarnings("ignore")
logging.basicConfig(level=logging.WARNING)
logging.getLogger("pypaimon").setLevel(logging.WARNING)

from pypaimon.table.file_store_table import FileStoreTable  # noqa: E402


def _local_path(table, path):
    """The local filesystem path pypaimon itself opens for `path`."""
    try:
        return str(table.file_io._to_file(path))  # LocalFileIO: same resolution as reads
    except Exception:
        if path.startswith("file://"):
            return path[len("file://"):]
        if path.startswith("file:"):
            return path[len("file:"):]
        return path


def _display_path(table_real, local):
    """Path relative to the table dir, or absolute when the file lies outside it."""
    real = os.path.realpath(os.path.abspath(local))
    rel = os.path.relpath(real, table_real)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        return real
    return rel.replace(os.sep, "/")


def _json_value(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (datetime.date, datetime.datetime, datetime.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, datetime.timedelta):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    return str(v)


def row_digest(arrow_table):
    cols = arrow_table.column_names
    encoded = []
    for row in arrow_table.to_pylist():
        encoded.append(json.dumps([_json_value(row[c]) for c in cols],
                                  ensure_ascii=False, separators=(",", ":")))
    encoded.sort()
    return hashlib.sha256("\n".join(encoded).encode("utf-8")).hexdigest(), len(encoded)


def _first_line(e):
    return str(e).splitlines()[0] if str(e) else ""


def _has_changelog(t):
    return str(t.options.options.to_map().get("changelog-producer", "none")).lower() != "none"


def _changelog_files(t, table_real, snapshot_id, tag):
    """Changelog files of that one snapshot (its changelogManifestList), planned by
    pypaimon's streaming changelog planner. Uses the private
    AsyncStreamingTableScan._create_changelog_plan (no public per-snapshot call exists)."""
    if tag is not None:
        snapshot = t.tag_manager().get_or_throw(tag).trim_to_snapshot()
    else:
        snapshot = t.snapshot_manager().get_snapshot_by_id(snapshot_id)
    if snapshot is None or not snapshot.changelog_manifest_list:
        return []
    scan = t.new_stream_read_builder().new_streaming_scan()
    try:
        plan = scan._create_changelog_plan(snapshot)
    finally:
        ex = getattr(scan, "_prefetch_executor", None)
        if ex is not None:
            ex.shutdown(wait=False)
    files = set()
    for split in plan.splits():
        for f in split.files:
            files.add(_display_path(table_real, _local_path(t, f.external_path or f.file_path)))
    return sorted(files)


def one_version(base, table_dir, branch=None, snapshot=None, tag=None, files_only=False):
    out = {"branch": branch or "main", "snapshot_id": snapshot, "tag": tag}
    try:
        t = base
        if branch and branch != "main":
            # pypaimon reads a missing branch as an empty table; refuse it instead
            if branch not in base.branch_manager().branches():
                raise ValueError(f"Branch '{branch}' doesn't exist.")
            t = t.copy({"branch": branch})
        if snapshot is not None:
            t = t.copy({"scan.snapshot-id": str(snapshot)})
        elif tag is not None:
            t = t.copy({"scan.tag-name": tag})
        rb = t.new_read_builder()
        plan = rb.new_scan().plan()
        splits = plan.splits()
        if plan.snapshot_id is not None:
            out["snapshot_id"] = plan.snapshot_id
        elif snapshot is None and tag is None:
            latest = t.snapshot_manager().get_latest_snapshot()
            out["snapshot_id"] = latest.id if latest else None

        table_real = os.path.realpath(table_dir)
        live, dvs = set(), set()
        # Every live file of the version, as pypaimon's writers see it: plan_for_write() does
        # not skip level-0 files of primary-key tables with deletion vectors, as reads do.
        write_splits = rb.new_scan().plan_for_write().splits()
        for split in write_splits:
            for f in split.files:
                path = f.external_path or f.file_path
                if path is None:  # not expected: planners always resolve file_path
                    raise RuntimeError(f"no path for data file {f.file_name}")
                live.add(_display_path(table_real, _local_path(t, path)))
        for split in splits:
            for f in split.files:
                path = f.external_path or f.file_path
                if path is None:  # not expected: planners always resolve file_path
                    raise RuntimeError(f"no path for data file {f.file_name}")
                live.add(_display_path(table_real, _local_path(t, path)))
            for d in (getattr(split, "data_deletion_files", None) or []):
                if d is not None:
                    dvs.add(_display_path(table_real, _local_path(t, d.dv_index_path)))
        out["live_files"] = sorted(live)
        out["deletion_vector_files"] = sorted(dvs)
        out["changelog_files"] = []
        if _has_changelog(t) and out["snapshot_id"] is not None:
            try:
                out["changelog_files"] = _changelog_files(t, table_real, out["snapshot_id"], tag)
            except Exception as e:
                out["changelog_files"] = None
                out["changelog_error"] = f"{type(e).__name__}: {_first_line(e)}"
        if files_only:
            out["row_count"] = None
            out["row_digest"] = None
        else:
            arrow = rb.new_read().to_arrow(splits)
            if arrow is None:
                digest, n = hashlib.sha256(b"").hexdigest(), 0
            else:
                digest, n = row_digest(arrow)
            out["row_count"] = n
            out["row_digest"] = digest
    except Exception as e:  # the oracle reports pypaimon's failure, it does not hide it
        for k in ("live_files", "deletion_vector_files", "row_count", "row_digest"):
            out.pop(k, None)
        out.pop("changelog_files", None)
        out.pop("changelog_error", None)
        out["error"] = f"{type(e).__name__}: {_first_line(e)}"
    return out


def all_versions(base, table_dir, files_only):
    result = {}

    def versions_of(t):
        snaps = sorted(s.id for s in t.snapshot_manager().list_snapshots())
        tags = sorted(t.tag_manager().list_tags())
        return snaps, tags

    snaps, tags = versions_of(base)
    for sid in snaps:
        result[f"snapshot:{sid}"] = one_version(base, table_dir, snapshot=sid,
                                                files_only=files_only)
    for tag in tags:
        result[f"tag:{tag}"] = one_version(base, table_dir, tag=tag, files_only=files_only)
    for b in sorted(base.branch_manager().branches()):
        try:
            b_snaps, b_tags = versions_of(base.copy({"branch": b}))
        except Exception as e:
            result[f"branch:{b}"] = {"branch": b, "snapshot_id": None, "tag": None,
                                     "error": f"{type(e).__name__}: {e}"}
            continue
        result[f"branch:{b}"] = one_version(base, table_dir, branch=b, files_only=files_only)
        for sid in b_snaps:
            result[f"branch:{b}:snapshot:{sid}"] = one_version(
                base, table_dir, branch=b, snapshot=sid, files_only=files_only)
        for tag in b_tags:
            result[f"branch:{b}:tag:{tag}"] = one_version(
                base, table_dir, branch=b, tag=tag, files_only=files_only)
    return result


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(1)


def main(argv=None):
    ap = _Parser(description="pypaimon's live data files and row digest of a table version")
    ap.add_argument("table_dir", nargs="+",
                    help="table directory; several give one JSON object keyed by directory")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--snapshot", type=int, metavar="ID")
    g.add_argument("--tag", metavar="NAME")
    g.add_argument("--all-versions", action="store_true")
    ap.add_argument("--branch", metavar="NAME", help="read this branch (default main)")
    ap.add_argument("--files-only", action="store_true", help="do not read rows")
    args = ap.parse_args(argv)
    if args.all_versions and args.branch:
        ap.error("--all-versions covers every branch; do not combine it with --branch")

    results, failed = {}, False
    for given in args.table_dir:
        table_dir = os.path.abspath(given)
        try:
            base = FileStoreTable.from_path(table_dir)
        except Exception as e:
            results[given] = {"error": f"{type(e).__name__}: {e}"}
            failed = True
            continue
        if args.all_versions:
            res = all_versions(base, table_dir, args.files_only)
            failed |= any("error" in v or "changelog_error" in v for v in res.values())
        else:
            res = one_version(base, table_dir, branch=args.branch, snapshot=args.snapshot,
                              tag=args.tag, files_only=args.files_only)
            failed |= "error" in res or "changelog_error" in res
        results[given] = res
    out = results[args.table_dir[0]] if len(args.table_dir) == 1 else results
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
