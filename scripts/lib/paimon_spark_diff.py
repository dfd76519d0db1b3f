"""Paimon's own Spark procedures beside ours, on identical copies of the same tables.

Run with the python of scripts/setup-paimon-spark.sh (pyspark 3.5.2) by
scripts/test-paimon-spark.sh; one Spark session (Paimon's catalog over the warehouse) serves
every case. A case names a table of the warehouse's database `db` that exists three times:
`<t>_base` (never touched), `<t>_paimon` and `<t>_ours` (identical copies of it). Per case:

1. Paimon's procedure runs on the `paimon` copy (`CALL sys.…`), our command on the `ours` copy
   (the CLI or our Spark job, `--json`);
2. the deleted sets (the files that left each copy) are compared; every difference must have a
   reason of docs/java-differences.md, decided by `classify` below;
3. our report lists exactly the files that left our copy;
4. Paimon reads every version (snapshots, tags, branches) left on the `ours` copy and the same
   versions of the untouched `base` copy: row count and a hash of the multiset of rows, or of
   the `$files` rows for tables whose data files hold no rows; each must read alike, and none
   may fail.

A case with op `control` deletes a data file the latest snapshot reads instead of running ours:
it passes only when step 4 reports it.

Prints `CASE <name>: ok …` or `CASE <name>: FAILED: …` per case and writes every detail to the
JSON file given with --out. Exit status 0 when every case passed.

    paimon_spark_diff.py --jar paimon-spark-3.5-0.9.0.jar --warehouse DIR --cases cases.json \
        --out result.json
"""

import argparse
import json
import os
import subprocess
import sys
import time

# The harness venv's python (fastavro), set by --helper-python.
HELPER_PYTHON = "python3"


def spark_session(jar, warehouse):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("paimon-spark-diff")
        .config("spark.jars", jar)
        .config("spark.sql.extensions",
                "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions")
        .config("spark.sql.catalog.paimon", "org.apache.paimon.spark.SparkCatalog")
        .config("spark.sql.catalog.paimon.warehouse", "file:" + warehouse)
        # Our process changes the table between two reads: no cached table metadata.
        .config("spark.sql.catalog.paimon.cache-enabled", "false")
        .config("spark.sql.defaultCatalog", "paimon")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def files_under(root):
    """Every regular file under root, relative, sorted."""
    out = set()
    for d, _, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


def version_ids(table_dir):
    """Snapshot ids and tag names of main, and branch names, as on disk."""
    snaps, tags, branches = [], [], []
    sd = os.path.join(table_dir, "snapshot")
    for n in os.listdir(sd) if os.path.isdir(sd) else []:
        if n.startswith("snapshot-") and n[len("snapshot-"):].isdigit():
            snaps.append(int(n[len("snapshot-"):]))
    td = os.path.join(table_dir, "tag")
    for n in os.listdir(td) if os.path.isdir(td) else []:
        if n.startswith("tag-"):
            tags.append(n[len("tag-"):])
    bd = os.path.join(table_dir, "branch")
    for n in os.listdir(bd) if os.path.isdir(bd) else []:
        if n.startswith("branch-"):
            branches.append(n[len("branch-"):])
    return sorted(snaps), sorted(tags), sorted(branches)


def read_versions(spark, name, table_dir, mode, only=None):
    """What Paimon reads from every version of db.<name> (or the versions in `only`):
    {key: {rows, hash} | {error}}. One Spark job reads all versions: per version the row count
    and the sum of the rows' xxhash64, a hash of the multiset of rows (independent of the order
    Paimon returns them in). When that job fails, each version is read alone for its error."""
    snaps, tags, branches = version_ids(table_dir)
    if mode == "rows":
        what = "*"
        rel = name
    else:
        # Generated tables: data files hold no rows; Paimon still plans every file of a version.
        what = "partition, bucket, file_path, level, record_count"
        rel = f"`{name}$files`"
    queries = [(f"snapshot:{s}", f"SELECT {what} FROM db.{rel} VERSION AS OF {s}")
               for s in snaps]
    for t in tags:
        quoted = t.replace("'", "\\'")
        queries.append((f"tag:{t}", f"SELECT {what} FROM db.{rel} VERSION AS OF '{quoted}'"))
    for b in branches:
        brel = f"`{name}$branch_{b}`" if mode == "rows" else f"`{name}$branch_{b}$files`"
        queries.append((f"branch:{b}", f"SELECT {what} FROM db.{brel}"))
    queries = [(k, q) for k, q in queries if only is None or k in only]

    def summed(sql):
        return (f"SELECT v__, count(*) AS n, sum(cast(h__ AS decimal(38, 0))) AS s FROM ({sql}) "
                "GROUP BY v__")

    def hashed(i, q):
        return f"SELECT {i} AS v__, xxhash64(*) AS h__ FROM ({q})"

    def result(i, got):
        r = got.get(i)
        return {"rows": r["n"], "hash": str(r["s"])} if r else {"rows": 0, "hash": "0"}

    out = {}
    if not queries:
        return out
    try:
        union = " UNION ALL ".join(hashed(i, q) for i, (_, q) in enumerate(queries))
        got = {r["v__"]: r for r in spark.sql(summed(union)).collect()}
        return {k: result(i, got) for i, (k, _) in enumerate(queries)}
    except Exception:  # noqa: BLE001 - find the versions that fail
        pass
    for i, (k, q) in enumerate(queries):
        try:
            got = {r["v__"]: r for r in spark.sql(summed(hashed(i, q))).collect()}
            out[k] = result(i, got)
        except Exception as e:  # noqa: BLE001 - a version Paimon cannot read is a result
            out[k] = {"error": str(e).splitlines()[0][:300]}
    return out


def report_paths(doc, table_dir):
    """The deleted paths of one of our --json reports, relative to the table."""
    out = set()

    def walk(v):
        if isinstance(v, dict):
            if isinstance(v.get("path"), str) and "class" in v:
                p = v["path"]
                for pre in ("file://", "file:"):
                    if p.startswith(pre):
                        p = p[len(pre):]
                        break
                out.add(os.path.relpath(p, table_dir) if os.path.isabs(p) else p)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(doc)
    return out


# --- reasons (docs/java-differences.md, "Reasons for a difference") ------------------------------

def classify(case, side, path, ctx):
    """The reason of docs/java-differences.md that explains one difference, or None."""
    name = os.path.basename(path)
    op = case["op"]
    if op == "remove-orphan-files":
        # Paimon 0.9 lists every file of a partition directory and deletes the old unreferenced
        # ones, whatever their name; we list only the bucket directories there (Paimon writes
        # nothing else into a partition directory that has them), as Paimon 1.4.2 does.
        parts = path.split("/")
        if (side == "paimon-only" and len(parts) >= 2 and "=" in parts[-2]
                and os.path.isdir(os.path.join(ctx["base"], *parts[:-1]))
                and any(n.startswith("bucket-") for n in os.listdir(
                    os.path.join(ctx["base"], *parts[:-1])))):
            return "foreign-file-beside-buckets"
    if op == "expire-snapshots":
        # Paimon 0.9's snapshot expiry deletes an expired snapshot's changelog (its changelog
        # manifest list, the list's manifests and the changelog files they add) even where a
        # tag of that snapshot names the same list; we keep what a tag's changelog reads.
        if side == "paimon-only" and name in ctx["tag_changelog"]:
            return "tag-keeps-its-changelog"
        if side == "paimon-only" and ctx["changelogs"] and (
                name.startswith("manifest-list-") or name.startswith("data-")):
            return "changelog-keeps-lists-and-data"
    return None


def tag_changelog_names(table_dir):
    """The file names the changelogs of the table's tags read (every branch): each tag's
    changelog manifest list, its manifests and the changelog files they add. Read with fastavro
    in the harness venv (scripts/setup-python.sh), which the pyspark venv does not have."""
    p = subprocess.run([HELPER_PYTHON, os.path.abspath(__file__), "tag-changelog-names",
                        table_dir], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"tag-changelog-names {table_dir}: {p.stderr[-1000:]}")
    return set(json.loads(p.stdout))


def tag_changelog_names_here(table_dir):
    """`tag_changelog_names`, run in the harness venv."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "tests", "py"))
    from referenced_files import _records  # noqa: E402 - the helper venv only

    roots = [table_dir]
    bd = os.path.join(table_dir, "branch")
    if os.path.isdir(bd):
        roots += [os.path.join(bd, b) for b in sorted(os.listdir(bd))]
    out = set()
    for root in roots:
        td = os.path.join(root, "tag")
        for n in sorted(os.listdir(td)) if os.path.isdir(td) else []:
            with open(os.path.join(td, n), encoding="utf-8") as f:
                lst = json.load(f).get("changelogManifestList")
            if not lst:
                continue
            out.add(lst)
            for m in _records(os.path.join(table_dir, "manifest", lst)):
                out.add(m["_FILE_NAME"])
                for e in _records(os.path.join(table_dir, "manifest", m["_FILE_NAME"])):
                    out.add(e["_FILE"]["_FILE_NAME"])
    return sorted(out)


def has_changelogs(table_dir):
    d = os.path.join(table_dir, "changelog")
    return os.path.isdir(d) and any(n.startswith("changelog-") for n in os.listdir(d))


def run_case(spark, wh, case):
    t = case["table"]
    base = os.path.join(wh, "db.db", t + "_base")
    pdir = os.path.join(wh, "db.db", t + "_paimon")
    odir = os.path.join(wh, "db.db", t + "_ours")
    res = {"case": case["name"], "problems": []}
    before_files = files_under(base)
    if files_under(pdir) != before_files or files_under(odir) != before_files:
        res["problems"].append("the copies differ from the base table before the run")
        return res
    changelogs = has_changelogs(odir)

    t0 = time.time()
    call = case["call"].replace("{table}", f"db.{t}_paimon")
    prow = spark.sql(call).collect()
    res["paimon_s"] = round(time.time() - t0, 1)
    res["paimon_result_rows"] = len(prow)

    t0 = time.time()
    if case["op"] == "control":
        # The negative control: instead of a cleanup, one data file the latest snapshot reads
        # is deleted; the checks below must see it.
        victim = spark.sql(f"SELECT file_path FROM db.`{t}_ours$files`").collect()[0][0]
        for pre in ("file://", "file:"):
            if victim.startswith(pre):
                victim = victim[len(pre):]
                break
        if not os.path.isabs(victim):
            # Paimon 0.9's $files names a file by its name only: find it in the table's buckets.
            name = os.path.basename(victim)
            victim = next(os.path.join(d, name) for d, _, names in os.walk(odir)
                          if name in names and "/branch/" not in d)
        os.remove(victim)
        doc = {"deletion": {"paths": [{"class": "data", "path": victim}]}}
    else:
        argv = [a.replace("{table}", odir) for a in case["ours"]]
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            res["problems"].append(f"ours exited {p.returncode}: {p.stderr[-2000:]}")
            return res
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            res["problems"].append(f"our report is not JSON: {p.stdout[-500:]}")
            return res
    res["ours_s"] = round(time.time() - t0, 1)

    dp = before_files - files_under(pdir)
    do = before_files - files_under(odir)
    reported = report_paths(doc, odir)
    if reported != do:
        res["problems"].append(
            f"our report and the disk differ: {sorted(reported ^ do)[:10]}")
    res["deleted_paimon"] = len(dp)
    res["deleted_ours"] = len(do)
    res["deleted_both"] = len(dp & do)

    ctx = {"changelogs": changelogs, "base": base,
           "tag_changelog": tag_changelog_names(base)}
    reasons, unclassified = {}, []
    for side, paths in (("paimon-only", dp - do), ("ours-only", do - dp)):
        for path in sorted(paths):
            r = classify(case, side, path, ctx)
            if r is None:
                unclassified.append(f"{side} {path}")
            else:
                reasons[r] = reasons.get(r, 0) + 1
    res["reasons"] = reasons
    if unclassified:
        res["unclassified"] = unclassified
        res["problems"].append(
            f"{len(unclassified)} unclassified differences: {unclassified[:10]}")

    # Paimon reads every version left on our copy, and the same versions on the untouched base
    # copy (what it read before any run).
    t0 = time.time()
    after = read_versions(spark, t + "_ours", odir, case["read"])
    before = read_versions(spark, t + "_base", base, case["read"], only=set(after))
    res["read_s"] = round(time.time() - t0, 1)
    unreadable = [k for k, v in list(before.items()) + list(after.items()) if "error" in v]
    if unreadable:
        res["problems"].append(
            f"Paimon cannot read versions: {unreadable[:5]}: "
            + "; ".join(str(after.get(k, before.get(k))) for k in unreadable[:2]))
    changed = [k for k, v in after.items() if before.get(k) != v]
    if changed:
        res["problems"].append(
            "Paimon reads other rows after our run: "
            + "; ".join(f"{k}: {before.get(k)} -> {after[k]}" for k in changed[:5]))
    if not after:
        res["problems"].append("no version left on our copy")
    res["versions_read"] = len(after)
    return res


def main():
    global HELPER_PYTHON
    if len(sys.argv) == 3 and sys.argv[1] == "tag-changelog-names":
        print(json.dumps(tag_changelog_names_here(sys.argv[2])))
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--helper-python", default="python3")
    ap.add_argument("--jar", required=True)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    HELPER_PYTHON = a.helper_python
    cases = json.load(open(a.cases))
    t0 = time.time()
    spark = spark_session(a.jar, a.warehouse)
    print(f"Paimon's Spark session started in {time.time() - t0:.1f} s", flush=True)
    results, failed = [], 0
    for case in cases:
        try:
            r = run_case(spark, a.warehouse, case)
        except Exception as e:  # noqa: BLE001 - one broken case must not hide the others
            r = {"case": case["name"], "problems": [f"{type(e).__name__}: {str(e)[:1000]}"]}
        if case["op"] == "control":
            # Passes when the read check caught the deleted file.
            caught = [x for x in r["problems"] if x.startswith("Paimon reads other rows")
                      or x.startswith("Paimon cannot read versions")]
            r = dict(r, control_problems=r["problems"],
                     problems=[] if caught else ["the read check missed a deleted live file"])
            results.append(r)
            state = "ok: the read check caught it: " + caught[0][:200] if caught else (
                "FAILED: " + r["problems"][0])
            print(f"CASE {case['name']}: {state}", flush=True)
            if not caught:
                failed += 1
            continue
        results.append(r)
        if r["problems"]:
            failed += 1
            print(f"CASE {case['name']}: FAILED: " + " | ".join(r["problems"]), flush=True)
        else:
            print(f"CASE {case['name']}: ok: deleted Paimon {r['deleted_paimon']}, ours "
                  f"{r['deleted_ours']}, both {r['deleted_both']}; reasons {r['reasons']}; "
                  f"{r['versions_read']} versions read alike (Paimon {r['paimon_s']} s, "
                  f"ours {r['ours_s']} s)", flush=True)
    json.dump(results, open(a.out, "w"), indent=1, sort_keys=True)
    spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
