#!/usr/bin/env python3
"""Self-test of the Python test harness (make_tables.py + live_files.py).

    .venv/bin/python tests/py/selftest.py [--keep DIR]

Builds every table (standard set + extras) into a temp dir, runs live_files.py on every
version of every table exactly as the Rust tests do (a subprocess of $PAIMON_PYTHON,
default this interpreter), and checks: no version fails; every reported file exists on
disk; tags and branch copies read the same as the snapshot they were made from; the
table-specific facts (overwrite, dropped partition, escaped dirs, fully-deleted DV file,
changelog files, HASH index, retention options); and that the oracle fails loudly
(exit 2) once a live data file or a manifest is removed. Prints timings and a final
"N passed, M failed" line; exit status 1 if anything failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.environ.get("PAIMON_PYTHON") or sys.executable

passed, failed = 0, 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}", flush=True)


def run(args):
    t0 = time.monotonic()
    p = subprocess.run([PY] + args, capture_output=True, text=True)
    return p, time.monotonic() - t0


def live(table_dir, *extra):
    p, dt = run([os.path.join(HERE, "live_files.py"), table_dir] + list(extra))
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = None
    return p.returncode, out, dt, p.stderr


def same_version(a, b):
    keys = ("live_files", "deletion_vector_files", "row_count", "row_digest")
    return all(a.get(k) == b.get(k) for k in keys)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", metavar="DIR", help="build into DIR and keep it")
    args = ap.parse_args()
    out = args.keep or tempfile.mkdtemp(prefix="paimon-py-selftest-")
    os.makedirs(out, exist_ok=True)
    try:
        # ---- generate
        p, dt = run([os.path.join(HERE, "make_tables.py"), out, "--extras"])
        print(p.stderr.strip())
        print(f"make_tables.py (all 10 tables, incl. interpreter start): {dt:.2f} s")
        check(p.returncode == 0, f"make_tables exit {p.returncode}: {p.stderr[-2000:]}")
        if p.returncode != 0:
            return 1
        with open(os.path.join(out, "tables.json"), encoding="utf-8") as f:
            doc = json.load(f)
        tables = {e["name"]: e for e in doc["tables"]}
        expected = ["append_unaware", "append_fixed_bucket", "pk_fixed", "pk_dynamic",
                    "pk_changelog", "dv_table", "retention_opts", "external_paths",
                    "external_shared_a", "external_shared_b"]
        check(list(tables) == expected, f"table list {list(tables)}")
        for e in tables.values():
            for k in ("name", "path", "kind", "features", "snapshots", "tags", "branches",
                      "consumers", "latest_snapshot", "branch_snapshots", "options"):
                check(k in e, f"{e['name']}: key {k} in tables.json")
            check(os.path.isabs(e["path"]) and os.path.isdir(e["path"]), f"{e['name']} path")
            check(e["snapshots"] == sorted(e["snapshots"]) and e["snapshots"], f"{e['name']} snapshots")
            check(e["branches"][0] == "main", f"{e['name']} branches start with main")

        au = tables["append_unaware"]
        check(au["snapshots"] == [1, 2, 3, 4, 5, 6], "append_unaware snapshots")
        check(au["tags"] == {"t1": 2}, "append_unaware tags")
        check(au["branches"] == ["main", "b1"], "append_unaware branches")
        check(au["branch_snapshots"].get("b1") == [2, 3], "append_unaware b1 snapshots")
        check(au["consumers"] == {"c1": 3}, "append_unaware consumers")
        ro = tables["retention_opts"]["options"]
        check(ro.get("snapshot.num-retained.max") == "3" and
              ro.get("snapshot.num-retained.min") == "2", "retention options stored")

        # ---- every version of every table
        results = {}
        total = 0.0
        for name, e in tables.items():
            rc, res, dt, err = live(e["path"], "--all-versions")
            total += dt
            print(f"live_files.py --all-versions {name}: {dt:.2f} s, "
                  f"{len(res or {})} versions")
            check(rc == 0 and res is not None, f"{name}: --all-versions rc={rc} {err[-1000:]}")
            results[name] = res or {}
            for key, v in results[name].items():
                check("error" not in v and "changelog_error" not in v,
                      f"{name} {key}: {v.get('error') or v.get('changelog_error')}")
                for rel in (v.get("live_files", []) + v.get("deletion_vector_files", []) +
                            (v.get("changelog_files") or [])):
                    path = rel if os.path.isabs(rel) else os.path.join(e["path"], rel)
                    check(os.path.isfile(path), f"{name} {key}: {rel} exists")
            want = {f"snapshot:{i}" for i in e["snapshots"]} | {f"tag:{t}" for t in e["tags"]}
            check(want <= set(results[name]), f"{name}: all snapshots and tags reported")
            # default invocation == latest snapshot
            rc, latest, dt, err = live(e["path"])
            check(rc == 0 and latest and latest["snapshot_id"] == e["latest_snapshot"] and
                  same_version(latest, results[name][f"snapshot:{e['latest_snapshot']}"]),
                  f"{name}: default version is the latest snapshot")
            for t, sid in e["tags"].items():
                check(same_version(results[name][f"tag:{t}"], results[name][f"snapshot:{sid}"]),
                      f"{name}: tag {t} reads as snapshot {sid}")
        print(f"live_files.py over all versions of all tables: {total:.2f} s")

        r = results["append_unaware"]
        check(same_version(r["branch:b1:snapshot:2"], r["snapshot:2"]), "b1@2 == main@2")
        check(r["branch:b1"]["row_count"] == r["snapshot:2"]["row_count"] + 4, "b1 commit adds 4 rows")
        check(any(f.startswith("dt=branch-only/") for f in r["branch:b1"]["live_files"]),
              "branch-only partition is live on b1")
        check(not any(f.startswith("dt=branch-only/") for f in r["snapshot:6"]["live_files"]),
              "branch-only partition is not live on main")
        for d in ("dt=a%2Fb/", "dt=x%3Dy/", "dt=%2541/", "dt=ü日/", "dt=has space/",
                  "dt=__DEFAULT_PARTITION__/"):
            check(any(f.startswith(d) for f in r["snapshot:2"]["live_files"]), f"escaped dir {d}")
        check(any(f.startswith("dt=2024-01-02/") for f in r["snapshot:4"]["live_files"]) and
              not any(f.startswith("dt=2024-01-02/") for f in r["snapshot:5"]["live_files"]),
              "dropped partition dt=2024-01-02 gone at snapshot 5")
        ow3 = {f for f in r["snapshot:3"]["live_files"] if f.startswith("dt=2024-01-01/hr=0/")}
        ow4 = {f for f in r["snapshot:4"]["live_files"] if f.startswith("dt=2024-01-01/hr=0/")}
        check(len(ow3) == 3 and len(ow4) == 1 and not (ow3 & ow4), "overwrite replaced dt=2024-01-01/hr=0")

        r = results["dv_table"]
        first = r["snapshot:1"]["live_files"]
        check(len(first) == 1 and first[0] in r["snapshot:3"]["live_files"] and
              first[0] in r["snapshot:5"]["live_files"], "fully deleted DV file stays live")
        check(r["snapshot:3"]["row_count"] == 10 and r["snapshot:4"]["row_count"] == 8 and
              r["snapshot:5"]["row_count"] == 11, "DV row counts")
        check(not r["snapshot:2"]["deletion_vector_files"] and
              all(f.startswith("index/index-") for f in r["snapshot:4"]["deletion_vector_files"]) and
              len(r["snapshot:4"]["deletion_vector_files"]) == 2, "DV index files")

        r = results["pk_changelog"]
        for sid in tables["pk_changelog"]["snapshots"]:
            cl = r[f"snapshot:{sid}"]["changelog_files"]
            check(cl and all(f.split("/")[-1].startswith("changelog-") for f in cl),
                  f"pk_changelog snapshot {sid} has changelog files")
        r = results["pk_fixed"]
        check([r[f"snapshot:{i}"]["row_count"] for i in (1, 2, 3, 4)] == [10, 10, 13, 13],
              "pk_fixed row counts (updates + one -D)")
        r = results["pk_dynamic"]
        check(r["snapshot:3"]["row_count"] == 15, "pk_dynamic row count")
        check(any(n.startswith("index-") for n in os.listdir(os.path.join(tables["pk_dynamic"]["path"], "index"))),
              "pk_dynamic HASH index files")
        r = results["external_paths"]
        check(all(os.path.isabs(f) and "/external/external_paths/" in f
                  for v in r.values() for f in v.get("live_files", [])), "external files absolute")

        # ---- the oracle fails loudly on data loss (on a copy)
        scratch = os.path.join(out, "scratch")
        victim = os.path.join(scratch, "append_unaware")
        shutil.copytree(tables["append_unaware"]["path"], victim)
        os.remove(os.path.join(victim, r_latest_file(results["append_unaware"])))
        rc, res, _, _ = live(victim)
        check(rc == 2 and res and "FileNotFoundError" in res.get("error", ""),
              f"missing data file -> exit 2 FileNotFoundError (got {rc} {res})")
        rc, res, _, _ = live(victim, "--files-only")
        check(rc == 0, "missing data file still plans with --files-only")
        shutil.rmtree(victim)
        shutil.copytree(tables["append_unaware"]["path"], victim)
        mdir = os.path.join(victim, "manifest")
        for n in os.listdir(mdir):
            if n.startswith("manifest-") and not n.startswith("manifest-list-"):
                os.remove(os.path.join(mdir, n))
                break
        rc, res, _, _ = live(victim, "--all-versions")
        check(rc == 2 and res and any("error" in v for v in res.values()),
              "missing manifest -> exit 2 with an error entry")
        shutil.rmtree(scratch)
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def r_latest_file(res):
    latest = max(int(k.split(":")[1]) for k in res if k.startswith("snapshot:"))
    return res[f"snapshot:{latest}"]["live_files"][0]


if __name__ == "__main__":
    sys.exit(main())
