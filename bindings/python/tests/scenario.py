"""The cross-binding scenario (bindings/SCENARIO.md) through the Python package.

    python scenario.py TABLE      # a prepared copy of parquet/pk_09 with the planted orphans

Prints the ``SCENARIO <step> <json>`` lines that the C, C++, Go and Java runners print;
scripts/test-python.sh compares them with the C runner's.
"""

from __future__ import annotations

import datetime
import sys
import time
from typing import List

import paimon_cleanup as pc


def quote(s: str) -> str:
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20:
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def strings(items: List[str]) -> str:
    return "[" + ",".join(quote(s) for s in items) + "]"


def paths_fnv1a(paths: List[str]) -> str:
    h = 0xCBF29CE484222325
    for p in sorted(p.encode("utf-8") for p in paths):
        for b in p + b"\n":
            h ^= b
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def summary_json(s: pc.TableSummary) -> str:
    return (
        '{"has_snapshots":%s,"earliest":%d,"latest":%d,"snapshots":%d,"tags":%d,"branches":%d,'
        '"live_files":%d,"live_bytes":%d}'
        % (
            "true" if s.has_snapshots else "false",
            s.earliest_snapshot_id or 0,
            s.latest_snapshot_id or 0,
            s.snapshot_count,
            s.tag_count,
            s.branch_count,
            s.live_file_count,
            s.live_file_bytes,
        )
    )


def report_json(r: pc.Report) -> str:
    rng = "null" if r.expired_range is None else "[%d,%d]" % r.expired_range
    after = "null" if r.earliest_after is None else str(r.earliest_after)
    files = ",".join('"%s":%d' % (k, c.files) for k, c in r.deleted.items() if c.files)
    sizes = ",".join('"%s":%d' % (k, c.bytes) for k, c in r.deleted.items() if c.files)
    return (
        '{"kind":"%s","dry_run":%s,"expired":%d,"expired_range":%s,"earliest_after":%s,'
        '"changelogs_written":%d,"files":{%s},"bytes":{%s},"total_files":%d,"total_bytes":%d,'
        '"dirs_removed":%d,"failed":%d,"paths":%d,"paths_fnv1a":"%s","names":%s,"missing":%s,'
        '"marked":{"files":%d,"rows":%d,"bytes":%d},"committed":[%s],'
        '"orphan":{"candidates":%d,"referenced":%d,"vetoed":%d},"warnings":%d,"steps":%d}'
        % (
            r.kind,
            "true" if r.dry_run else "false",
            r.expired_count,
            rng,
            after,
            r.changelogs_written,
            files,
            sizes,
            r.total_files,
            r.total_bytes,
            r.dirs_removed,
            len(r.failed),
            len(r.paths),
            paths_fnv1a([p.path for p in r.paths]),
            strings(r.names),
            strings(r.missing),
            r.files_marked_deleted,
            r.rows_marked_deleted,
            r.bytes_marked_deleted,
            ",".join(str(i) for i in r.committed_snapshots),
            r.candidates,
            r.referenced,
            r.vetoed,
            len(r.warnings),
            len(r.steps),
        )
    )


def main(table_dir: str) -> int:
    lines = []
    with pc.Table(table_dir, threads=2) as table:
        lines.append("summary-before " + summary_json(table.inspect()))

        def expire(dry_run: bool = False) -> pc.Report:
            now = datetime.datetime.now()
            return table.expire_snapshots(1, None, now, 1000, dry_run)

        lines.append("expire-dry-run " + report_json(expire(dry_run=True)))
        lines.append("expire " + report_json(expire()))
        lines.append("orphan-dry-run " + report_json(table.remove_orphan_files(dry_run=True)))
        lines.append("orphan " + report_json(table.remove_orphan_files()))
        lines.append("drop-partitions " + report_json(table.drop_partitions([{"f1": "20"}])))
        # Past the drop commit's millisecond: its snapshot is older than the next cut-off.
        time.sleep(0.005)
        lines.append("expire-after-drop " + report_json(expire()))
        lines.append("summary-after " + summary_json(table.inspect()))
    try:
        with pc.Table(table_dir.rstrip("/") + "/does-not-exist", threads=1) as missing:
            missing.inspect()
        lines.append('missing-table {"status":0}')
    except pc.PaimonCleanupError as e:
        lines.append('missing-table {"status":%d,"name":"%s"}' % (e.status, e.status_name))
    for line in lines:
        print("SCENARIO " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
