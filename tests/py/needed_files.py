#!/usr/bin/env python3
"""What the versions of a Paimon table still need, and what lies on disk, read with fastavro
only (no pypaimon, no paimon-cleanup code): the oracle for "no garbage left, nothing needed
lost".

    python tests/py/needed_files.py TABLE_DIR [--from-snapshot N]

With `--from-snapshot N`, the main branch's snapshots below N are left out: the versions a
snapshot expiry is removing. A run cut short after its data files went (the crash-safe order:
data, then manifests and lists, then snapshot files) leaves them behind for the rerun to finish,
and only the versions it keeps must stay whole.

Prints {"needed": {...}, "on_disk": {...}, "missing": [...]} where needed and on_disk map
"manifest_dir", "index", "statistics" and "data" to sorted file names.

Needed (every branch; versions are snapshot-N, tag-X and changelog-N files):
* A snapshot or tag: its base, delta and changelog lists and every manifest they list; its
  live data files (ADD minus DELETE over base + delta, keyed by partition, bucket, level and
  name) with their extra files; the files its changelog list adds; its index manifest and the
  index files it adds; its statistics file.
* A long-lived changelog: what an incremental reader uses. With a changelog list: that list,
  its manifests and the files it adds. Without: its delta and base lists and their manifests
  (Java keeps both), and with `changelog-producer` none the data files its delta adds.
  Never its index manifest or statistics (Java deletes them at snapshot expiry).
on_disk: the files in manifest/, index/, statistics/ and under the data directories
(`k=v` partition and `bucket-N` directories). missing: needed files that are not on disk.
"""

import json
import os
import sys

import fastavro


def _records(path):
    with open(path, "rb") as f:
        return list(fastavro.reader(f))


def _versions(branch_root):
    for sub, prefix in (("snapshot", "snapshot-"), ("changelog", "changelog-"), ("tag", "tag-")):
        d = os.path.join(branch_root, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if not os.path.isfile(p) or not name.startswith(prefix):
                continue
            if prefix != "tag-":
                try:
                    int(name[len(prefix):])
                except ValueError:
                    continue
            with open(p, encoding="utf-8") as f:
                yield sub, json.load(f)


def _producer_none(branch_root, table_dir):
    for root in (branch_root, table_dir):
        sdir = os.path.join(root, "schema")
        if not os.path.isdir(sdir):
            continue
        ids = [int(n[len("schema-"):]) for n in os.listdir(sdir) if n.startswith("schema-")]
        if ids:
            with open(os.path.join(sdir, f"schema-{max(ids)}"), encoding="utf-8") as f:
                opts = json.load(f).get("options", {})
            return opts.get("changelog-producer", "none").strip().lower() == "none"
    return True


def _on_disk(table_dir):
    out = {"manifest_dir": set(), "index": set(), "statistics": set(), "data": set()}
    for sub, key in (("manifest", "manifest_dir"), ("index", "index"),
                     ("statistics", "statistics")):
        d = os.path.join(table_dir, sub)
        if os.path.isdir(d):
            out[key].update(n for n in os.listdir(d) if os.path.isfile(os.path.join(d, n)))
    for top in os.listdir(table_dir):
        if "=" not in top and not top.startswith("bucket-"):
            continue
        for root, _, files in os.walk(os.path.join(table_dir, top)):
            out["data"].update(files)
    return out


def needed(table_dir, from_snapshot=None):
    mdir = os.path.join(table_dir, "manifest")
    roots = [table_dir]
    bdir = os.path.join(table_dir, "branch")
    if os.path.isdir(bdir):
        roots += [os.path.join(bdir, b) for b in sorted(os.listdir(bdir))
                  if b.startswith("branch-")]
    out = {"manifest_dir": set(), "index": set(), "statistics": set(), "data": set()}
    missing = set()
    cache = {}

    def records(name):
        if name not in cache:
            p = os.path.join(mdir, name)
            cache[name] = _records(p) if os.path.isfile(p) else None
        return cache[name]

    def entries(lst):
        if not lst:
            return []
        out["manifest_dir"].add(lst)
        metas = records(lst)
        if metas is None:
            missing.add(f"manifest/{lst}")
            return []
        es = []
        for m in metas:
            out["manifest_dir"].add(m["_FILE_NAME"])
            got = records(m["_FILE_NAME"])
            if got is None:
                missing.add(f"manifest/{m['_FILE_NAME']}")
            else:
                es.extend(got)
        return es

    def add_files(files):
        for f in files:
            out["data"].add(f["_FILE_NAME"])
            out["data"].update(f.get("_EXTRA_FILES") or [])

    def adds(es):
        return [e["_FILE"] for e in es if e["_KIND"] == 0]

    for root in roots:
        producer_none = _producer_none(root, table_dir)
        for sub, v in _versions(root):
            if (from_snapshot is not None and root == table_dir and sub == "snapshot"
                    and v["id"] < from_snapshot):
                continue
            if sub == "changelog":
                if v.get("changelogManifestList"):
                    add_files(adds(entries(v["changelogManifestList"])))
                else:
                    entries(v.get("baseManifestList"))
                    delta = adds(entries(v.get("deltaManifestList")))
                    if producer_none:
                        add_files(delta)
                continue
            live = {}
            for e in entries(v.get("baseManifestList")) + entries(v.get("deltaManifestList")):
                f = e["_FILE"]
                k = (e["_PARTITION"], e["_BUCKET"], f["_LEVEL"], f["_FILE_NAME"])
                if e["_KIND"] == 0:
                    live[k] = f
                else:
                    live.pop(k, None)
            add_files(live.values())
            add_files(adds(entries(v.get("changelogManifestList"))))
            im = v.get("indexManifest")
            if im:
                out["manifest_dir"].add(im)
                ies = records(im)
                if ies is None:
                    missing.add(f"manifest/{im}")
                else:
                    out["index"].update(e["_FILE_NAME"] for e in ies if e["_KIND"] == 0)
            if v.get("statistics"):
                out["statistics"].add(v["statistics"])
    disk = _on_disk(table_dir)
    for key in ("index", "statistics", "data"):
        missing.update(f"{key}/{n}" for n in out[key] - disk[key])
    return {"needed": {k: sorted(s) for k, s in out.items()},
            "on_disk": {k: sorted(s) for k, s in disk.items()},
            "missing": sorted(missing)}


def main(argv):
    from_snapshot = None
    if len(argv) == 3 and argv[1] == "--from-snapshot":
        from_snapshot = int(argv[2])
    elif len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 1
    out = needed(os.path.abspath(argv[0]), from_snapshot)
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
