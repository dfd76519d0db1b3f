#!/usr/bin/env python3
"""Small Paimon tables with a random, seed-reproducible history, for the randomized safety
test (tests/random_safety.rs).

    python tests/py/random_history.py OUT_DIR --seeds A..B      # seeds A..B inclusive
    python tests/py/random_history.py OUT_DIR --seeds 7         # one seed
    python tests/py/random_history.py --missing TABLE_DIR [TABLE_DIR ...]

Generating: OUT_DIR is a filesystem-catalog warehouse; seed N gets database ``s<N>`` and the
table OUT_DIR/s<N>.db/t (an existing one is rebuilt). Next to it, in OUT_DIR/s<N>.db, the
script puts look-alike files that are NOT part of the table, with Paimon names (``t0/``,
``t-bak/`` (same prefix), ``t.json``, and ``manifest/`` and ``dt=a/bucket-0/`` right in the
database directory) so that a test can check that nothing outside the table directory
changes. Everything runs in this one process (about 0.1 to 0.3 s per seed).

The history of seed N comes from random.Random(N) only (file names carry fresh UUIDs, the
sequence of operations and the rows do not):

* kind: append-only with unaware buckets, or primary key with a fixed bucket count (1 or
  2; sometimes changelog-producer=input); 1 or 2 partition keys (dt STRING, hr INT),
  sometimes with partition values that need escaping;
* two appends, then 6 to 14 random operations (and maybe a last append): appends (one open StreamWriter on main, or a batch commit),
  static and dynamic overwrites, partition drops (truncate_partitions), tags (some with a
  short or long time_retained), one branch made from a tag with its own commits (and
  sometimes its own tag), consumers, tag deletion through pypaimon (leaves orphans),
  rollbacks (delete the latest snapshot file(s) and reset LATEST; their manifests and data
  files become orphans; never past a tagged snapshot, as Java deletes such tags), crashed
  writes (prepare_commit without commit) and stray files (data-<uuid>-0.parquet in a bucket
  dir, manifest-<uuid>-0 in manifest/, a `.snapshot-N.<uuid>.tmp`).
* At the end the mtime of every file under OUT_DIR/s<N>.db is set to now - 2 days.

Prints a JSON list, one object per seed:

    {"seed", "path", "kind", "partition_keys", "primary_keys", "bucket", "changelog",
     "partitions": [{"dt": "a", "hr": "0"}, ...]  (every partition ever written, as strings),
     "snapshots": [ids on main], "latest", "tags": [...], "tag_ttl": {"tag": "1 ms"},
     "branches": {"b1": {"snapshots": [...], "tags": [...]}}, "consumers": {"c1": next},
     "ops": ["append", "rollback 1", ...], "seconds"}

--missing: for each table, per version (snapshot, tag, long-lived changelog, every branch) the
files it needs that are not on disk, read with fastavro only (see needed_missing):
{"<dir>": {"versions": {"snapshot:3": ["manifest/...", "data:<name>"], "branch:b1:tag:t1":
[...], "changelog:5": [...]}, "error": null | "<why the metadata could not be read>"}};
versions that miss nothing are left out.
"""

import argparse
import json
import logging
import os
import random
import shutil
import sys
import time
import uuid
import warnings

warnings.filterwarnings("ignore")
logging.basicConfig(level=logging.WARNING)
logging.getLogger("pypaimon").setLevel(logging.WARNING)

TWO_DAYS = 2 * 86400


# --------------------------------------------------------------------------------------
# --missing


def _records(path):
    import fastavro

    with open(path, "rb") as f:
        return list(fastavro.reader(f))


def _version_files(branch_root):
    """(key suffix, parsed JSON) of every snapshot-N, changelog-N and tag-X of one branch."""
    for sub, prefix in (("snapshot", "snapshot-"), ("changelog", "changelog-"), ("tag", "tag-")):
        d = os.path.join(branch_root, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if not os.path.isfile(p) or not name.startswith(prefix):
                continue
            rest = name[len(prefix):]
            if prefix != "tag-" and not rest.isdigit():
                continue
            with open(p, encoding="utf-8") as f:
                yield f"{sub}:{rest}", json.load(f)


def _producer_none(branch_root, table_dir):
    """Whether the branch's latest schema (else main's) has changelog-producer none."""
    for root in (branch_root, table_dir):
        sdir = os.path.join(root, "schema")
        ids = [int(n[len("schema-"):]) for n in (os.listdir(sdir) if os.path.isdir(sdir) else [])
               if n.startswith("schema-") and n[len("schema-"):].isdigit()]
        if ids:
            with open(os.path.join(sdir, f"schema-{max(ids)}"), encoding="utf-8") as f:
                opts = json.load(f).get("options", {})
            return str(opts.get("changelog-producer", "none")).strip().lower() == "none"
    return True


def needed_missing(table_dir):
    """Per version, the files it needs that are not on disk (fastavro only).

    A snapshot or tag needs its manifest lists, every manifest they list, its live data files
    (ADD minus DELETE over base + delta, by partition, bucket, level and name) with their
    extra files, the changelog files its changelog list adds, its index manifest and the index
    files that names, its statistics. A long-lived changelog-N needs what an incremental reader
    uses: its changelog list and the files it adds, or without one its delta list and (with
    changelog-producer none) the data files the delta adds (and its base list and manifests). Data files are looked up by name in
    the table's data directories (names carry UUIDs)."""
    mdir = os.path.join(table_dir, "manifest")
    idir = os.path.join(table_dir, "index")
    manifests = set(os.listdir(mdir)) if os.path.isdir(mdir) else set()
    index = set(os.listdir(idir)) if os.path.isdir(idir) else set()
    data = set()
    for root, _, files in os.walk(table_dir):
        top = os.path.relpath(root, table_dir).split(os.sep)[0]
        if "=" in top or top.startswith("bucket-"):
            data.update(files)
    roots = [("", table_dir)]
    bdir = os.path.join(table_dir, "branch")
    if os.path.isdir(bdir):
        roots += [(f"branch:{b[len('branch-'):]}:", os.path.join(bdir, b))
                  for b in sorted(os.listdir(bdir)) if b.startswith("branch-")]
    cache = {}

    def entries(name):  # the records of a manifest list or manifest, None if absent
        if name not in cache:
            cache[name] = _records(os.path.join(mdir, name)) if name in manifests else None
        return cache[name]

    out = {}
    for prefix, root in roots:
        producer_none = _producer_none(root, table_dir)
        for key, v in _version_files(root):
            miss = []

            def manifest_entries(lst):
                if not lst:
                    return []
                metas = entries(lst)
                if metas is None:
                    miss.append(f"manifest/{lst}")
                    return []
                es = []
                for m in metas:
                    got = entries(m["_FILE_NAME"])
                    if got is None:
                        miss.append(f"manifest/{m['_FILE_NAME']}")
                    else:
                        es.extend(got)
                return es

            def adds(es):
                return [e["_FILE"] for e in es if e["_KIND"] == 0]

            needed = []
            if key.startswith("changelog:"):
                if v.get("changelogManifestList"):
                    needed += adds(manifest_entries(v["changelogManifestList"]))
                else:
                    manifest_entries(v.get("baseManifestList"))
                    delta = adds(manifest_entries(v.get("deltaManifestList")))
                    if producer_none:
                        needed += delta
            else:
                live = {}
                for e in (manifest_entries(v.get("baseManifestList"))
                          + manifest_entries(v.get("deltaManifestList"))):
                    f = e["_FILE"]
                    k = (e["_PARTITION"], e["_BUCKET"], f["_LEVEL"], f["_FILE_NAME"])
                    if e["_KIND"] == 0:
                        live[k] = f
                    else:
                        live.pop(k, None)
                needed += live.values()
                needed += adds(manifest_entries(v.get("changelogManifestList")))
                im = v.get("indexManifest")
                if im:
                    ies = entries(im)
                    if ies is None:
                        miss.append(f"manifest/{im}")
                    else:
                        miss += [f"index/{e['_FILE_NAME']}" for e in ies
                                 if e["_KIND"] == 0 and e["_FILE_NAME"] not in index]
                st = v.get("statistics")
                if st and not os.path.exists(os.path.join(table_dir, "statistics", st)):
                    miss.append(f"statistics/{st}")
            for f in needed:
                for n in [f["_FILE_NAME"]] + list(f.get("_EXTRA_FILES") or []):
                    if n not in data:
                        miss.append(f"data:{n}")
            if miss:
                out[prefix + key] = sorted(set(miss))
    return out


def missing_files(table_dir):
    try:
        return {"versions": needed_missing(table_dir), "error": None}
    except Exception as e:  # unreadable metadata
        return {"versions": None, "error": f"{type(e).__name__}: {e}"}


# --------------------------------------------------------------------------------------
# generating


def _arrow(pa, schema, rows):
    return pa.Table.from_pylist(rows, schema=schema)


ESCAPING = ["a/b", "x=y", "ü日", "has space", "%41"]


class History:
    def __init__(self, cat, out_dir, seed):
        import pyarrow as pa
        from pypaimon import Schema

        self.pa = pa
        self.cat = cat
        self.seed = seed
        self.rng = rng = random.Random(seed)
        self.db = f"s{seed}"
        self.db_dir = os.path.join(out_dir, f"{self.db}.db")
        if os.path.exists(self.db_dir):
            shutil.rmtree(self.db_dir)
        cat.create_database(self.db, True)
        self.ident = f"{self.db}.t"
        self.path = os.path.join(self.db_dir, "t")

        self.kind = rng.choice(["append", "pk"])
        self.two_keys = rng.random() < 0.5
        dts = ["a", "b", "c"]
        if rng.random() < 0.3:
            dts[rng.randrange(3)] = rng.choice(ESCAPING)
        self.dts = dts
        self.hrs = [0, 1] if self.two_keys else [None]
        fields = [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()),
                  pa.field("dt", pa.string(), nullable=False)]
        keys = ["dt"]
        if self.two_keys:
            fields.append(pa.field("hr", pa.int32(), nullable=False))
            keys.append("hr")
        self.schema = pa.schema(fields)
        self.partition_keys = keys
        self.changelog = False
        if self.kind == "pk":
            self.bucket = rng.choice([1, 2])
            self.primary_keys = ["id"] + keys
            opts = {"bucket": str(self.bucket)}
            if rng.random() < 0.3:
                self.changelog = True
                opts["changelog-producer"] = "input"
        else:
            self.bucket = -1
            self.primary_keys = None
            opts = {"bucket": "-1"}
        cat.create_table(self.ident, Schema.from_pyarrow_schema(
            self.schema, partition_keys=keys, primary_keys=self.primary_keys, options=opts),
            False)
        self.t = cat.get_table(self.ident)
        self.ops = []
        self.partitions = set()
        self.next_id = 0
        self.tags = {}          # main tag -> snapshot id
        self.tag_ttl = {}
        self.branch = None      # (name, table)
        self.branch_tags = []
        self.consumers = {}
        self.stream = None      # [writer, commit]
        self.identifier = 1     # stream commit identifiers keep growing across writers
        self.tag_no = 0

    # ---- helpers

    def part(self):
        dt = self.rng.choice(self.dts)
        hr = self.rng.choice(self.hrs)
        return dt, hr

    def rows(self, nparts=None, per=None, label="v", parts=None):
        rng = self.rng
        if parts is None:
            parts = [self.part() for _ in range(nparts or rng.randint(1, 3))]
        out = []
        for dt, hr in parts:
            for _ in range(per or rng.randint(1, 3)):
                if self.kind == "pk" and self.next_id > 0 and rng.random() < 0.4:
                    i = rng.randrange(self.next_id)  # an update of an earlier key
                else:
                    i = self.next_id
                    self.next_id += 1
                r = {"id": i, "v": f"{label}{rng.randrange(1000)}", "dt": dt}
                if self.two_keys:
                    r["hr"] = hr
                out.append(r)
                self.partitions.add((dt, hr))
        return out

    def latest(self, t=None):
        s = (t or self.t).snapshot_manager().get_latest_snapshot()
        return s.id if s else None

    def snapshot_ids(self, t=None):
        return sorted(s.id for s in (t or self.t).snapshot_manager().list_snapshots())

    def close_stream(self):
        if self.stream:
            w, c = self.stream
            w.close()
            c.close()
            self.stream = None

    def stream_commit(self, rows, commit=True):
        if self.stream is None:
            wb = self.t.new_stream_write_builder()
            self.stream = [wb.new_write(), wb.new_commit()]
        w, c = self.stream
        i = self.identifier
        w.write_arrow(_arrow(self.pa, self.schema, rows))
        msgs = w.prepare_commit(i)
        if commit:
            c.commit(msgs, i)
        self.identifier = i + 1

    def batch_commit(self, t, rows, overwrite=None, commit=True):
        wb = t.new_batch_write_builder()
        if overwrite is not None:
            wb = wb.overwrite(overwrite)
        w, c = wb.new_write(), wb.new_commit()
        try:
            w.write_arrow(_arrow(self.pa, self.schema, rows))
            msgs = w.prepare_commit()
            if commit:
                c.commit(msgs)
        finally:
            w.close()
            c.close()

    def spec_of(self, dt, hr):
        s = {"dt": dt}
        if self.two_keys and hr is not None:
            s["hr"] = hr
        return s

    # ---- operations

    def op_append(self):
        if self.rng.random() < 0.7:
            self.stream_commit(self.rows())
            self.ops.append("append stream")
        else:
            self.close_stream()
            self.batch_commit(self.t, self.rows())
            self.ops.append("append batch")

    def op_overwrite(self):
        self.close_stream()
        rng = self.rng
        if rng.random() < 0.5:
            dt, hr = self.part()
            spec = self.spec_of(dt, hr if rng.random() < 0.5 else None)
            if self.two_keys and "hr" not in spec:
                parts = [(dt, h) for h in rng.sample(self.hrs, rng.randint(1, 2))]
            else:
                parts = [(dt, hr)]
            rows = self.rows(parts=parts, label="ow")
            self.batch_commit(self.t, rows, overwrite=spec)
            self.ops.append(f"overwrite {spec}")
        else:
            self.batch_commit(self.t, self.rows(), overwrite={})
            self.ops.append("overwrite dynamic")

    def op_drop(self):
        self.close_stream()
        dt, hr = self.part()
        spec = self.spec_of(dt, hr if self.rng.random() < 0.6 else None)
        c = self.t.new_batch_write_builder().new_commit()
        try:
            c.truncate_partitions([spec])
        finally:
            c.close()
        self.ops.append(f"drop {spec}")

    def op_tag(self):
        ids = self.snapshot_ids()
        if not ids:
            return self.op_append()
        sid = self.rng.choice(ids[-4:])
        self.tag_no += 1
        name = f"t{self.tag_no}"
        r = self.rng.random()
        ttl = None
        if r < 0.2:
            ttl = "1 ms"
        elif r < 0.3:
            ttl = "3 d"
        self.t.create_tag(name, snapshot_id=sid, time_retained=ttl)
        self.tags[name] = sid
        if ttl:
            self.tag_ttl[name] = ttl
        self.ops.append(f"tag {name}@{sid}" + (f" ttl {ttl}" if ttl else ""))

    def op_delete_tag(self):
        if not self.tags:
            return self.op_tag()
        name = self.rng.choice(sorted(self.tags))
        self.t.delete_tag(name)
        del self.tags[name]
        self.tag_ttl.pop(name, None)
        self.ops.append(f"pypaimon delete tag {name}")

    def op_branch(self):
        from pypaimon.common.identifier import Identifier

        if self.branch is not None:
            return self.op_branch_commit()
        if not self.tags:
            self.op_tag()
        name = self.rng.choice(sorted(self.tags))
        self.cat.create_branch(Identifier.from_string(self.ident), "b1", name)
        tb = self.cat.get_table(f"{self.ident}$branch_b1")
        self.branch = ("b1", tb)
        self.ops.append(f"branch b1 from {name}")
        self.op_branch_commit()

    def op_branch_commit(self):
        if self.branch is None:
            return self.op_branch()
        _, tb = self.branch
        rng = self.rng
        r = rng.random()
        if r < 0.15 and self.latest(tb) is not None:
            tb.create_tag(f"bt{len(self.branch_tags) + 1}")
            self.branch_tags.append(f"bt{len(self.branch_tags) + 1}")
            self.ops.append("branch tag")
        elif r < 0.3:
            self.batch_commit(tb, self.rows(nparts=1, label="bo"), overwrite={})
            self.ops.append("branch overwrite")
        else:
            self.batch_commit(tb, self.rows(label="b"))
            self.ops.append("branch append")

    def op_consumer(self):
        from pypaimon.consumer.consumer import Consumer

        ids = self.snapshot_ids()
        if not ids:
            return self.op_append()
        name = self.rng.choice(["c1", "c2"])
        nxt = self.rng.choice(ids + [ids[-1] + 1])
        self.t.consumer_manager().reset_consumer(name, Consumer(next_snapshot=nxt))
        self.consumers[name] = nxt
        self.ops.append(f"consumer {name}={nxt}")

    def op_rollback(self):
        self.close_stream()
        ids = self.snapshot_ids()
        n = self.rng.choice([1, 1, 2])
        pinned = set(self.tags.values())
        done = 0
        while done < n and len(ids) >= 2 and ids[-1] not in pinned:
            sid = ids.pop()
            os.remove(os.path.join(self.path, "snapshot", f"snapshot-{sid}"))
            done += 1
        if done == 0:
            return self.op_append()
        with open(os.path.join(self.path, "snapshot", "LATEST"), "w") as f:
            f.write(str(ids[-1]))
        self.ops.append(f"rollback {done} to {ids[-1]}")

    def op_crash(self):
        rng = self.rng
        r = rng.random()
        if r < 0.4:
            self.stream_commit(self.rows(label="lost"), commit=False)
            self.ops.append("crash stream prepare_commit")
        elif r < 0.6:
            self.close_stream()
            self.batch_commit(self.t, self.rows(label="lost"), commit=False)
            self.ops.append("crash batch prepare_commit")
        else:
            dt, hr = self.part()
            self.stray(dt, hr)

    def stray(self, dt, hr):
        """Stray files as a dead writer or a failed rename leaves them."""
        rng = self.rng
        what = rng.choice(["data", "manifest", "tmp"])
        if what == "data":
            # an existing partition/bucket dir if there is one, else a new one
            pdir = [d for d in os.listdir(self.path)
                    if d.startswith("dt=") and os.path.isdir(os.path.join(self.path, d))]
            if pdir:
                base = os.path.join(self.path, rng.choice(sorted(pdir)))
                if self.two_keys:
                    subs = sorted(d for d in os.listdir(base) if d.startswith("hr="))
                    if subs:
                        base = os.path.join(base, rng.choice(subs))
            else:
                base = os.path.join(self.path, "dt=stray") + ("/hr=9" if self.two_keys else "")
            d = os.path.join(base, f"bucket-{max(0, rng.randrange(max(1, self.bucket)))}")
            os.makedirs(d, exist_ok=True)
            p = os.path.join(d, f"data-{uuid.uuid4()}-0.parquet")
        elif what == "manifest":
            p = os.path.join(self.path, "manifest", f"manifest-{uuid.uuid4()}-0")
        else:
            p = os.path.join(self.path, "snapshot",
                             f".snapshot-{(self.latest() or 0) + 1}.{uuid.uuid4()}.tmp")
        with open(p, "wb") as f:
            f.write(os.urandom(rng.randint(1, 64)))
        self.ops.append(f"stray {what}")

    def outside(self):
        """Look-alikes next to the table: none of them belongs to it."""
        for rel in ("t0/manifest/manifest-list-%s-0" % uuid.uuid4(),
                    "t0/dt=a/bucket-0/data-%s-0.parquet" % uuid.uuid4(),
                    "t-bak/snapshot/snapshot-1",
                    "t-bak/dt=a/bucket-0/data-%s-0.parquet" % uuid.uuid4(),
                    "t.json",
                    "manifest/manifest-%s-0" % uuid.uuid4(),
                    "dt=a/bucket-0/data-%s-0.parquet" % uuid.uuid4()):
            p = os.path.join(self.db_dir, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(b"not part of table t\n")

    # ---- driver

    def run(self):
        rng = self.rng
        started = time.time()
        # at least two commits first, so tags and rollbacks have something to work on
        self.op_append()
        self.op_append()
        weights = [("append", 30), ("overwrite", 8), ("drop", 6), ("tag", 10),
                   ("delete_tag", 3), ("branch", 8), ("consumer", 5), ("rollback", 7),
                   ("crash", 10)]
        names = [w[0] for w in weights]
        ws = [w[1] for w in weights]
        for _ in range(rng.randint(6, 14)):
            getattr(self, "op_" + rng.choices(names, ws)[0])()
        if rng.random() < 0.5:  # end on a fresh commit, or on whatever came last
            self.op_append()
        self.close_stream()
        self.outside()
        old = time.time() - TWO_DAYS
        for root, _, files in os.walk(self.db_dir):
            for f in files:
                os.utime(os.path.join(root, f), (old, old))
        return self.describe(time.time() - started)

    def describe(self, seconds):
        branches = {}
        if self.branch:
            name, tb = self.branch
            branches[name] = {"snapshots": self.snapshot_ids(tb),
                              "tags": sorted(tb.tag_manager().list_tags())}
        parts = []
        for dt, hr in sorted(self.partitions, key=lambda p: (p[0], p[1] or 0)):
            p = {"dt": dt}
            if self.two_keys:
                p["hr"] = str(hr)
            parts.append(p)
        return {
            "seed": self.seed, "path": os.path.abspath(self.path), "kind": self.kind,
            "partition_keys": self.partition_keys, "primary_keys": self.primary_keys,
            "bucket": self.bucket, "changelog": self.changelog, "partitions": parts,
            "snapshots": self.snapshot_ids(), "latest": self.latest(),
            "tags": sorted(self.t.tag_manager().list_tags()), "tag_ttl": self.tag_ttl,
            "branches": branches, "consumers": self.consumers, "ops": self.ops,
            "seconds": round(seconds, 3),
        }


def parse_seeds(text):
    if ".." in text:
        a, b = text.split("..", 1)
        return range(int(a), int(b) + 1)
    return range(int(text), int(text) + 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="OUT_DIR, or table dirs with --missing")
    ap.add_argument("--seeds", help="A..B (inclusive) or one seed")
    ap.add_argument("--missing", action="store_true")
    args = ap.parse_args(argv)
    if args.missing:
        print(json.dumps({d: missing_files(os.path.abspath(d)) for d in args.dirs}, indent=1,
                         ensure_ascii=False))
        return 0
    if len(args.dirs) != 1 or not args.seeds:
        ap.error("give OUT_DIR and --seeds A..B")
    from pypaimon import CatalogFactory

    out_dir = os.path.abspath(args.dirs[0])
    os.makedirs(out_dir, exist_ok=True)
    cat = CatalogFactory.create({"warehouse": out_dir})
    index = []
    for seed in parse_seeds(args.seeds):
        index.append(History(cat, out_dir, seed).run())
    print(json.dumps(index, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
