#!/usr/bin/env python3
"""pypaimon side of the partition drop / expiry tests (tests/partitions.rs).

    python tests/py/partitions.py run OPS_JSON       # run a list of operations, print results
    python tests/py/partitions.py race TABLE_DIR N   # N batch commits, one row each, into
                                                      # partitions race-0 .. race-<N-1>

OPS_JSON is a JSON list (or a path to a file holding one) of operations, run in order in one
process; the output is a JSON list with one result per operation:

    {"op": "create", "warehouse": W, "name": N, "fields": [[name, type, nullable], ...],
     "partition_keys": [...], "options": {...}}            -> {"path": table dir}
        types: int32, int64, string, date32 (dates as "YYYY-MM-DD" strings in rows)
    {"op": "append", "table": DIR, "rows": [{...}, ...]}    -> {"snapshot_id": latest}
    {"op": "sleep", "ms": M}                                -> {}
    {"op": "rows", "table": DIR, "snapshot": ID or null}    -> {"snapshot_id", "rows": [...]}
        rows are lists in schema column order (dates ISO, null as null), sorted by their JSON.

race prints {"commits": N, "commit_user": U} after committing; each commit is a separate
batch commit (commit identifier Long.MAX_VALUE), so it races any other committer.
"""

import datetime
import json
import logging
import os
import sys
import time
import warnings

warnings.filterwarnings("ignore")
logging.basicConfig(level=logging.WARNING)
logging.getLogger("pypaimon").setLevel(logging.ERROR)

import pyarrow as pa  # noqa: E402

from pypaimon import CatalogFactory, Schema  # noqa: E402
from pypaimon.schema.data_types import PyarrowFieldParser  # noqa: E402
from pypaimon.table.file_store_table import FileStoreTable  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_files import _json_value  # noqa: E402

TYPES = {"int32": pa.int32(), "int64": pa.int64(), "string": pa.string(), "date32": pa.date32()}


def arrow_schema(t):
    return PyarrowFieldParser.from_paimon_schema(t.table_schema.fields)


def to_arrow(t, rows):
    schema = arrow_schema(t)
    conv = []
    for r in rows:
        r = dict(r)
        for f in schema:
            v = r.get(f.name)
            if pa.types.is_date32(f.type) and isinstance(v, str):
                r[f.name] = datetime.date.fromisoformat(v)
        conv.append(r)
    return pa.Table.from_pylist(conv, schema=schema)


def append(table_dir, rows):
    t = FileStoreTable.from_path(table_dir)
    wb = t.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    try:
        w.write_arrow(to_arrow(t, rows))
        c.commit(w.prepare_commit())
    finally:
        w.close()
        c.close()
    latest = FileStoreTable.from_path(table_dir).snapshot_manager().get_latest_snapshot()
    return {"snapshot_id": latest.id if latest else None}


def rows(table_dir, snapshot):
    t = FileStoreTable.from_path(table_dir)
    if snapshot is not None:
        t = t.copy({"scan.snapshot-id": str(snapshot)})
    rb = t.new_read_builder()
    plan = rb.new_scan().plan()
    arrow = rb.new_read().to_arrow(plan.splits())
    out = []
    if arrow is not None:
        cols = arrow.column_names
        out = [[_json_value(r[c]) for c in cols] for r in arrow.to_pylist()]
    out.sort(key=lambda r: json.dumps(r, ensure_ascii=False))
    sid = plan.snapshot_id
    if sid is None:
        latest = t.snapshot_manager().get_latest_snapshot()
        sid = latest.id if latest else None
    return {"snapshot_id": sid if snapshot is None else snapshot, "rows": out}


def create(op):
    cat = CatalogFactory.create({"warehouse": op["warehouse"]})
    cat.create_database("db", True)
    fields = [pa.field(n, TYPES[ty], nullable=nullable) for n, ty, nullable in op["fields"]]
    cat.create_table(f"db.{op['name']}",
                     Schema.from_pyarrow_schema(pa.schema(fields),
                                                partition_keys=op.get("partition_keys"),
                                                primary_keys=op.get("primary_keys"),
                                                options=op.get("options", {})),
                     False)
    return {"path": os.path.join(op["warehouse"], "db.db", op["name"])}


def run(ops):
    out = []
    for op in ops:
        kind = op["op"]
        if kind == "create":
            out.append(create(op))
        elif kind == "append":
            out.append(append(op["table"], op["rows"]))
        elif kind == "sleep":
            time.sleep(op["ms"] / 1000.0)
            out.append({})
        elif kind == "rows":
            out.append(rows(op["table"], op.get("snapshot")))
        else:
            raise ValueError(f"unknown op {kind}")
    return out


def race(table_dir, n):
    t = FileStoreTable.from_path(table_dir)
    schema = arrow_schema(t)
    user = None
    for i in range(n):
        row = {}
        for f in schema:
            if pa.types.is_string(f.type):
                row[f.name] = f"race-{i}"
            elif pa.types.is_integer(f.type):
                row[f.name] = 1_000_000 + i
        t = FileStoreTable.from_path(table_dir)
        wb = t.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        try:
            w.write_arrow(pa.Table.from_pylist([row], schema=schema))
            c.commit(w.prepare_commit())
            user = getattr(c, "commit_user", user)
        finally:
            w.close()
            c.close()
    return {"commits": n, "commit_user": user}


def main(argv):
    if len(argv) >= 2 and argv[0] == "run":
        arg = argv[1]
        ops = json.loads(open(arg, encoding="utf-8").read() if os.path.exists(arg) else arg)
        print(json.dumps(run(ops), ensure_ascii=False))
        return 0
    if len(argv) == 3 and argv[0] == "race":
        print(json.dumps(race(argv[1], int(argv[2]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 1


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # The result is written: skip the interpreter's teardown, where pyarrow's thread pools once
    # aborted the process ("terminate called without an active exception") on a loaded machine.
    os._exit(code)
