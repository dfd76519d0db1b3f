"""Reads the latest Iceberg metadata of a Paimon table (metadata.iceberg.storage =
table-location) with pyiceberg and prints one JSON line: the row count and a SHA-256 of the
sorted rows, or {"error": ...} when pyiceberg cannot read it.

    python iceberg_read.py <table-dir>
"""

import hashlib
import json
import os
import sys


def main() -> None:
    table = sys.argv[1]
    meta = os.path.join(table, "metadata")
    try:
        with open(os.path.join(meta, "version-hint.text"), encoding="utf-8") as f:
            version = f.read().strip()
        from pyiceberg.table import StaticTable

        t = StaticTable.from_metadata(os.path.join(meta, f"v{version}.metadata.json"))
        mapped = False
        try:
            rows = t.scan().to_arrow().to_pylist()
        except ValueError as e:
            if "field-ids" not in str(e):
                raise
            # Paimon's data files carry no Iceberg field ids, and Paimon's metadata sets no
            # name mapping: read with the mapping of the Iceberg schema, by column name.
            from pyiceberg.table.name_mapping import (
                MappedField,
                NameMapping,
                create_mapping_from_schema,
            )

            fields = list(create_mapping_from_schema(t.schema()))
            # Primary-key tables' files also hold Paimon's system columns (the key copies,
            # sequence number, row kind): mapped to ids no Iceberg column has, so not read.
            system = ["_SEQUENCE_NUMBER", "_VALUE_KIND"]
            system += ["_KEY_" + f.name for f in t.schema().fields]
            top = max([f.field_id for f in fields] + [0]) + 100000
            fields += [MappedField(field_id=top + i, names=[n]) for i, n in enumerate(system)]
            props = dict(t.metadata.properties)
            props["schema.name-mapping.default"] = NameMapping(fields).model_dump_json()
            t.metadata = t.metadata.model_copy(update={"properties": props})
            rows = t.scan().to_arrow().to_pylist()
            mapped = True
        lines = sorted(
            json.dumps(sorted(r.items()), default=str, ensure_ascii=False) for r in rows
        )
        h = hashlib.sha256()
        for line in lines:
            h.update(line.encode("utf-8"))
            h.update(b"\n")
        print(
            json.dumps(
                {
                    "version": version,
                    "rows": len(lines),
                    "hash": h.hexdigest(),
                    "name_mapping": mapped,
                }
            )
        )
    except Exception as e:  # every failure is the answer: pyiceberg could not read it
        print(json.dumps({"error": f"{type(e).__name__}: {e}"[:2000]}))


if __name__ == "__main__":
    main()
