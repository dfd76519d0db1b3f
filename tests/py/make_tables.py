#!/usr/bin/env python3
"""Write real Apache Paimon tables with pypaimon 2.1.0 for the paimon-cleanup tests.

    python tests/py/make_tables.py OUT_DIR [--only NAME ...] [--quiet]

OUT_DIR becomes a filesystem-catalog warehouse with database ``db``; every table is
OUT_DIR/db.db/<name>. A table that already exists there is deleted and rebuilt, so a
run is repeatable. OUT_DIR/tables.json describes the tables (see tests/py/README.md):

    {"pypaimon_version": "2.1.0", "warehouse": "<abs OUT_DIR>", "database": "db",
     "tables": [{"name", "path", "kind", "features", "partition_keys", "primary_keys",
                 "options", "snapshots", "latest_snapshot", "tags", "branches",
                 "branch_snapshots", "consumers"}, ...]}

With --only the listed tables are rebuilt and merged into an existing tables.json
(entries of other tables whose directory still exists are kept).

Everything listed about a table after it is built (snapshots, tags, branches,
consumers) is read back through pypaimon's own managers, not from our own parsing.
"""

import argparse
import datetime
import json
import logging
import os
import shutil
import sys
import time
import warnings

warnings.filterwarnings("ignore")
logging.basicConfig(level=logging.WARNING)
logging.getLogger("pypaimon").setLevel(logging.WARNING)

import pyarrow as pa  # noqa: E402

from pypaimon import CatalogFactory, Schema  # noqa: E402
from pypaimon.common.identifier import Identifier  # noqa: E402
from pypaimon.consumer.consumer import Consumer  # noqa: E402

DB = "db"
PYPAIMON_VERSION = "2.1.0"

# --------------------------------------------------------------------------------------
# small helpers


def _d(s):
    return datetime.date.fromisoformat(s)


def _arrow(schema, rows):
    return pa.Table.from_pylist(rows, schema=schema)


def batch_commit(table, schema, rows, overwrite=None):
    """One batch commit (one snapshot unless empty). overwrite: None or a static spec."""
    wb = table.new_batch_write_builder()
    if overwrite is not None:
        wb = wb.overwrite(overwrite)
    w, c = wb.new_write(), wb.new_commit()
    try:
        w.write_arrow(_arrow(schema, rows))
        c.commit(w.prepare_commit())
    finally:
        w.close()
        c.close()


def stream_commits(table, schema, batches):
    """One StreamWriter kept open over all batches (pypaimon.md section 7: much faster
    for bucketed / PK tables); commit identifiers 1, 2, 3, ..."""
    wb = table.new_stream_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    try:
        for i, rows in enumerate(batches, 1):
            w.write_arrow(_arrow(schema, rows))
            c.commit(w.prepare_commit(i), i)
    finally:
        w.close()
        c.close()


def drop_partitions(table, specs):
    c = table.new_batch_write_builder().new_commit()
    try:
        c.truncate_partitions(specs)
    finally:
        c.close()


def create(cat, name, schema, partition_keys, primary_keys, options):
    cat.create_table(f"{DB}.{name}",
                     Schema.from_pyarrow_schema(schema, partition_keys=partition_keys,
                                                primary_keys=primary_keys, options=options),
                     False)
    return cat.get_table(f"{DB}.{name}")


# --------------------------------------------------------------------------------------
# the tables. Each builder returns (kind, features) and leaves the table on disk.

# STRING partition values that exercise partition-path escaping (paimon-spec.md 4.5).
# '' and None both land in dt=__DEFAULT_PARTITION__ but are different partitions in the
# manifests (different BinaryRow) and read back as '' and None.
ESCAPED_DT = ["a/b", "x=y", "%41", "ü日", "has space", "", None]


def build_append_unaware(cat, name):
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   pa.field("dt", pa.string()), pa.field("hr", pa.int32(), nullable=False)])
    t = create(cat, name, s, ["dt", "hr"], None, {"bucket": "-1"})
    ids = iter(range(1_000_000))

    def rows(parts, per=2, tag="v"):
        return [{"id": next(ids), "v": f"{tag}{k}", "dt": dt, "hr": hr}
                for dt, hr in parts for k in range(per)]

    base = [("2024-01-01", 0), ("2024-01-01", 1), ("2024-01-02", 0), ("2024-01-02", 1)]
    # 1: plain partitions + the first escaped ones
    batch_commit(t, s, rows(base + [("a/b", 0), ("x=y", 0)], tag="s1-"))
    # 2: the remaining escaped values, '' and NULL
    batch_commit(t, s, rows([(dt, 0) for dt in ESCAPED_DT[2:]] + [("2024-01-01", 0)], tag="s2-"))
    # tag t1 on snapshot 2, branch b1 from it
    t.create_tag("t1", snapshot_id=2)
    cat.create_branch(Identifier.from_string(f"{DB}.{name}"), "b1", "t1")
    # 3: more appends
    batch_commit(t, s, rows(base[:3] + [("a/b", 1)], tag="s3-"))
    # 4: static OVERWRITE of one partition (dt=2024-01-01, hr=0)
    batch_commit(t, s, rows([("2024-01-01", 0)], per=3, tag="ow-"),
                 overwrite={"dt": "2024-01-01", "hr": 0})
    # 5: drop partition dt=2024-01-02 (both hr) -> OVERWRITE snapshot with DELETE entries
    drop_partitions(t, [{"dt": "2024-01-02"}])
    # 6: append again (also to an escaped partition)
    batch_commit(t, s, rows([("2024-01-01", 1), ("x=y", 0), ("ü日", 0)], tag="s6-"))
    # one commit on branch b1 (its snapshot 3); files land in the main partition dirs
    tb = cat.get_table(f"{DB}.{name}$branch_b1")
    batch_commit(tb, s, rows([("a/b", 0), ("branch-only", 5)], tag="b1-"))
    # consumer c1 (pypaimon has an API: ConsumerManager.reset_consumer)
    t.consumer_manager().reset_consumer("c1", Consumer(next_snapshot=3))
    return "append", ["partitioned", "multi-partition-keys", "bucket-unaware",
                      "partition-escaping", "default-partition", "non-ascii-partition",
                      "overwrite", "drop-partition", "tag", "branch", "branch-commit",
                      "consumer"]


def build_append_fixed_bucket(cat, name):
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   pa.field("p", pa.int32(), nullable=False)])
    t = create(cat, name, s, ["p"], None, {"bucket": "3", "bucket-key": "id"})
    batches = [[{"id": i, "v": f"c{c}-{i}", "p": i % 2} for i in range(c * 12, c * 12 + 12)]
               for c in range(3)]
    stream_commits(t, s, batches)
    return "append", ["partitioned", "int-partition", "fixed-bucket", "bucket-key",
                      "stream-write"]


def build_pk_fixed(cat, name):
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   ("op", pa.string()), pa.field("d", pa.date32(), nullable=False)])
    t = create(cat, name, s, ["d"], ["id", "d"], {"bucket": "2", "rowkind.field": "op"})
    days = [_d("2024-01-01"), _d("2024-01-02")]

    def r(i, v, op="+I"):
        return {"id": i, "v": v, "op": op, "d": days[i % 2]}

    batches = [
        [r(i, f"a{i}") for i in range(10)],                                   # inserts
        [r(i, f"b{i}", "+U") for i in range(5)],                              # updates
        [r(i, f"c{i}") for i in range(10, 14)] + [r(5, "a5", "-D")],          # insert + delete
        [r(i, f"d{i}", "+U") for i in (0, 1, 2, 11)],                         # updates
    ]
    stream_commits(t, s, batches)
    return "primary-key", ["partitioned", "date-partition", "fixed-bucket", "updates",
                           "deletes-rowkind", "stream-write"]


def build_pk_dynamic(cat, name):
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   pa.field("p", pa.int32(), nullable=False)])
    t = create(cat, name, s, ["p"], ["id", "p"], {"bucket": "-1"})
    batches = [
        [{"id": i, "v": f"a{i}", "p": i % 2} for i in range(10)],
        [{"id": i, "v": f"b{i}", "p": i % 2} for i in range(0, 10, 3)] +
        [{"id": i, "v": f"b{i}", "p": i % 2} for i in range(10, 14)],
        [{"id": i, "v": f"c{i}", "p": i % 2} for i in (1, 2, 12, 20)],
    ]
    stream_commits(t, s, batches)
    return "primary-key", ["partitioned", "int-partition", "dynamic-bucket",
                           "hash-index", "index-manifest", "updates", "stream-write"]


def build_pk_changelog(cat, name):
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   pa.field("d", pa.date32(), nullable=False)])
    t = create(cat, name, s, ["d"], ["id", "d"],
               {"bucket": "2", "changelog-producer": "input"})
    days = [_d("2024-03-01"), _d("2024-03-02")]
    batches = [
        [{"id": i, "v": f"a{i}", "d": days[i % 2]} for i in range(8)],
        [{"id": i, "v": f"b{i}", "d": days[i % 2]} for i in range(0, 8, 2)],
        [{"id": i, "v": f"c{i}", "d": days[i % 2]} for i in (1, 3, 8, 9)],
    ]
    stream_commits(t, s, batches)
    return "primary-key", ["partitioned", "date-partition", "fixed-bucket", "updates",
                           "changelog-producer-input", "changelog-files",
                           "changelog-manifests", "stream-write"]


def build_dv_table(cat, name):
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   pa.field("dt", pa.string(), nullable=False)])
    t = create(cat, name, s, ["dt"], None, {
        "row-tracking.enabled": "true", "data-evolution.enabled": "true",
        "deletion-vectors.enabled": "true"})
    batch_commit(t, s, [{"id": i, "v": f"a{i}", "dt": "a"} for i in range(5)])
    batch_commit(t, s, [{"id": i, "v": f"b{i}", "dt": "a" if i < 10 else "b"}
                        for i in range(5, 15)])
    pb = t.new_read_builder().new_predicate_builder()

    def delete(pred):
        wb = t.new_batch_write_builder()
        msgs = wb.new_update().delete_by_predicate(pred)
        c = wb.new_commit()
        try:
            c.commit(msgs)
        finally:
            c.close()

    # every row of the first file (ids 0..4): the file stays live, fully deleted
    delete(pb.less_than("id", 5))
    # one row of the second file + one of partition b
    delete(pb.is_in("id", [7, 12]))
    batch_commit(t, s, [{"id": i, "v": f"c{i}", "dt": "b"} for i in range(15, 18)])
    return "append", ["partitioned", "data-evolution", "row-tracking", "deletion-vectors",
                      "dv-index", "index-manifest", "fully-deleted-file"]


def build_retention_opts(cat, name):
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   pa.field("dt", pa.string(), nullable=False)])
    t = create(cat, name, s, ["dt"], None, {
        "bucket": "-1",
        "snapshot.num-retained.min": "2",
        "snapshot.num-retained.max": "3",
        "snapshot.time-retained": "1 h",
    })
    for c in range(6):
        batch_commit(t, s, [{"id": c * 4 + k, "v": f"c{c}", "dt": f"2024-02-0{1 + c % 3}"}
                            for k in range(4)])
    return "append", ["partitioned", "bucket-unaware", "retention-options"]


def build_external_paths(cat, name):
    """Opt-in (not built by default): data files under external roots outside the table
    dir, OUT_DIR/external/<name>/ext1 and ext2, round-robin; _EXTERNAL_PATH is stored as
    file:/abs/path, so the table is not relocatable."""
    roots = [os.path.join(EXTERNAL_BASE[0], name, r) for r in ("ext1", "ext2")]
    for r in roots:
        os.makedirs(r, exist_ok=True)
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   pa.field("p", pa.int32(), nullable=False)])
    t = create(cat, name, s, ["p"], None, {
        "bucket": "-1",
        "data-file.external-paths": ",".join("file://" + r for r in roots),
        "data-file.external-paths.strategy": "round-robin"})
    for c in range(3):
        batch_commit(t, s, [{"id": c * 4 + k, "v": f"c{c}", "p": k % 2} for k in range(4)])
    batch_commit(t, s, [{"id": 100, "v": "ow", "p": 0}], overwrite={"p": 0})
    return "append", ["partitioned", "bucket-unaware", "external-data-paths", "overwrite"]


def build_external_shared(cat, name):
    """Opt-in (not built by default): external_shared_a and external_shared_b both write their
    data files under ONE external root, OUT_DIR/external/shared (Paimon puts no table name
    there, so the two tables share p=*/bucket-0 directories)."""
    root = os.path.join(EXTERNAL_BASE[0], "shared")
    os.makedirs(root, exist_ok=True)
    s = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                   pa.field("p", pa.int32(), nullable=False)])
    t = create(cat, name, s, ["p"], None, {
        "bucket": "-1",
        "data-file.external-paths": "file://" + root,
        "data-file.external-paths.strategy": "round-robin"})
    for c in range(2):
        batch_commit(t, s, [{"id": c * 4 + k, "v": f"{name}-{c}", "p": k % 2} for k in range(4)])
    return "append", ["partitioned", "bucket-unaware", "external-data-paths", "shared-root"]


# set by main(): the directory that holds the external roots of opt-in tables
EXTERNAL_BASE = [None]

BUILDERS = {
    "append_unaware": build_append_unaware,
    "append_fixed_bucket": build_append_fixed_bucket,
    "pk_fixed": build_pk_fixed,
    "pk_dynamic": build_pk_dynamic,
    "pk_changelog": build_pk_changelog,
    "dv_table": build_dv_table,
    "retention_opts": build_retention_opts,
}

# built only when named with --only or with --extras
EXTRA_BUILDERS = {
    "external_paths": build_external_paths,
    "external_shared_a": build_external_shared,
    "external_shared_b": build_external_shared,
}
ALL_BUILDERS = {**BUILDERS, **EXTRA_BUILDERS}

# --------------------------------------------------------------------------------------
# describe a built table through pypaimon's own managers


def describe(table_dir, name, kind, features):
    from pypaimon.table.file_store_table import FileStoreTable

    t = FileStoreTable.from_path(table_dir)

    def version_info(tt):
        snaps = sorted(sn.id for sn in tt.snapshot_manager().list_snapshots())
        tm = tt.tag_manager()
        tags = {}
        for tag_name in sorted(tm.list_tags()):
            tag = tm.get(tag_name)
            if tag is not None:
                tags[tag_name] = tag.id
        latest = tt.snapshot_manager().get_latest_snapshot()
        return snaps, tags, (latest.id if latest else None)

    snaps, tags, latest = version_info(t)
    other = sorted(t.branch_manager().branches())
    branch_snapshots, branch_tags = {"main": snaps}, {}
    for b in other:
        b_snaps, b_tags, _ = version_info(t.copy({"branch": b}))
        branch_snapshots[b] = b_snaps
        branch_tags[b] = b_tags
    consumers = dict(sorted(t.consumer_manager().consumers().items()))
    schema = t.table_schema
    return {
        "name": name,
        "path": os.path.abspath(table_dir),
        "kind": kind,
        "features": features,
        "partition_keys": list(schema.partition_keys),
        "primary_keys": list(schema.primary_keys),
        "options": dict(sorted(schema.options.items())),
        "snapshots": snaps,
        "latest_snapshot": latest,
        "tags": tags,
        "branches": ["main"] + other,
        "branch_snapshots": branch_snapshots,
        "branch_tags": branch_tags,
        "consumers": consumers,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="+", action="extend", metavar="NAME",
                    choices=sorted(ALL_BUILDERS),
                    help="build only these tables (default: all of the standard set)")
    ap.add_argument("--extras", action="store_true",
                    help="also build the opt-in tables (%s)" % ", ".join(EXTRA_BUILDERS))
    ap.add_argument("--quiet", action="store_true", help="no per-table timing on stderr")
    args = ap.parse_args(argv)

    out = os.path.abspath(args.out_dir)
    os.makedirs(out, exist_ok=True)
    cat = CatalogFactory.create({"warehouse": out})
    cat.create_database(DB, True)
    EXTERNAL_BASE[0] = os.path.join(out, "external")
    names = args.only or (list(ALL_BUILDERS) if args.extras else list(BUILDERS))

    t_all = time.monotonic()
    entries = {}
    for name in names:
        t0 = time.monotonic()
        table_dir = os.path.join(out, f"{DB}.db", name)
        for d in (table_dir, os.path.join(EXTERNAL_BASE[0], name)):
            if os.path.isdir(d):
                shutil.rmtree(d)
        kind, features = ALL_BUILDERS[name](cat, name)
        entries[name] = describe(table_dir, name, kind, features)
        if not args.quiet:
            print(f"make_tables: {name}: {time.monotonic() - t0:.2f} s", file=sys.stderr)

    manifest_path = os.path.join(out, "tables.json")
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            old = json.load(f)
        for e in old.get("tables", []):
            if e["name"] not in entries and os.path.isdir(e["path"]):
                entries[e["name"]] = e
    order = {n: i for i, n in enumerate(ALL_BUILDERS)}
    doc = {
        "pypaimon_version": PYPAIMON_VERSION,
        "warehouse": out,
        "database": DB,
        "tables": sorted(entries.values(), key=lambda e: order.get(e["name"], len(order))),
    }
    tmp = manifest_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, manifest_path)
    if not args.quiet:
        print(f"make_tables: {len(names)} table(s) in {time.monotonic() - t_all:.2f} s -> "
              f"{manifest_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
