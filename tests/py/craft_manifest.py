"""Rewrite one entry of a Paimon manifest (Avro) to simulate crafted or corrupt metadata.

usage: craft_manifest.py MANIFEST_PATH --kind add|delete [--file-name NAME] [--external-path PATH]
                         [--level N] [--extra-file NAME]... [--append]
Rewrites the FIRST entry: sets _KIND, and _FILE._FILE_NAME / _FILE._EXTERNAL_PATH / _FILE._LEVEL
when given (and _FILE._EXTRA_FILES with --extra-file). With --append the first entry stays as it is and a modified copy of it is appended.
Keeps the writer schema and codec. Prints the entry's original file name.
"""
import argparse
import copy
import sys

import fastavro


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("--kind", choices=["add", "delete"], required=True)
    ap.add_argument("--file-name")
    ap.add_argument("--external-path")
    ap.add_argument("--level", type=int)
    ap.add_argument("--extra-file", action="append", help="set _FILE._EXTRA_FILES (repeatable)")
    ap.add_argument("--append", action="store_true")
    a = ap.parse_args()
    with open(a.manifest, "rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        codec = reader.codec
        records = list(reader)
    first = records[0]
    if a.append:
        first = copy.deepcopy(first)
        records.append(first)
    original = first["_FILE"]["_FILE_NAME"]
    first["_KIND"] = 0 if a.kind == "add" else 1
    if a.file_name is not None:
        first["_FILE"]["_FILE_NAME"] = a.file_name
    if a.external_path is not None:
        first["_FILE"]["_EXTERNAL_PATH"] = a.external_path
    if a.level is not None:
        first["_FILE"]["_LEVEL"] = a.level
    if a.extra_file:
        first["_FILE"]["_EXTRA_FILES"] = list(a.extra_file)
    with open(a.manifest, "wb") as f:
        fastavro.writer(f, schema, records, codec=codec)
    print(original)
    return 0


if __name__ == "__main__":
    sys.exit(main())
