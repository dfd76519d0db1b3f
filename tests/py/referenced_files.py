#!/usr/bin/env python3
"""Every file name a Paimon table's metadata references, read with fastavro only (no pypaimon,
no paimon-cleanup code): an independent oracle for orphan-file tests.

    python tests/py/referenced_files.py TABLE_DIR [TABLE_DIR ...]

Prints one JSON object keyed by the given directories:

    {"<dir>": {"manifest_dir": [...], "index": [...], "statistics": [...], "data": [...],
               "versions": N}}

* Versions: every `snapshot-<id>`, `changelog-<id>` and `tag-<name>` file (regular files
  only, ids must parse) of the main branch and of every `branch/branch-*` directory,
  whether or not that branch has a schema.
* manifest_dir: base / delta / changelog manifest lists, every manifest they list, index
  manifests. index: `_FILE_NAME` of every index-manifest entry. statistics: `statistics`.
  data: `_FILE._FILE_NAME` and every `_FILE._EXTRA_FILES` name of every manifest entry
  (ADD or DELETE). All names, sorted.
* Avro (fastavro), and the legacy ORC / Parquet manifests of older Java tables (pyarrow),
  told apart by their magic bytes. A file that cannot be read is an error (exit 1).
"""

import json
import os
import sys

import fastavro


def _records(path):
    with open(path, "rb") as f:
        magic = f.read(4)
        f.seek(0)
        if magic == b"Obj\x01":
            return list(fastavro.reader(f))
    if magic[:3] == b"ORC":
        import pyarrow.orc as orc
        return orc.read_table(path).to_pylist()
    if magic == b"PAR1":
        import pyarrow.parquet as pq
        return pq.read_table(path).to_pylist()
    raise ValueError(f"{path}: not an Avro, ORC or Parquet file")


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
                yield json.load(f)


def referenced(table_dir):
    roots = [table_dir]
    bdir = os.path.join(table_dir, "branch")
    if os.path.isdir(bdir):
        roots += [os.path.join(bdir, b) for b in sorted(os.listdir(bdir))
                  if b.startswith("branch-") and os.path.isdir(os.path.join(bdir, b))]
    mdir = os.path.join(table_dir, "manifest")
    manifest_dir, index, stats, data = set(), set(), set(), set()
    read_lists, read_manifests = {}, set()
    versions = 0
    for r in roots:
        for v in _versions(r):
            versions += 1
            for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
                lst = v.get(key)
                if not lst:
                    continue
                manifest_dir.add(lst)
                if lst not in read_lists:
                    read_lists[lst] = [m["_FILE_NAME"] for m in _records(os.path.join(mdir, lst))]
                for m in read_lists[lst]:
                    manifest_dir.add(m)
                    if m in read_manifests:
                        continue
                    read_manifests.add(m)
                    for e in _records(os.path.join(mdir, m)):
                        data.add(e["_FILE"]["_FILE_NAME"])
                        data.update(e["_FILE"].get("_EXTRA_FILES") or [])
            im = v.get("indexManifest")
            if im:
                manifest_dir.add(im)
                index.update(e["_FILE_NAME"] for e in _records(os.path.join(mdir, im)))
            if v.get("statistics"):
                stats.add(v["statistics"])
    return {"manifest_dir": sorted(manifest_dir), "index": sorted(index),
            "statistics": sorted(stats), "data": sorted(data), "versions": versions}


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 1
    print(json.dumps({d: referenced(os.path.abspath(d)) for d in argv}, indent=1,
                     ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
