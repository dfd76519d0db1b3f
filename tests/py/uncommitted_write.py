#!/usr/bin/env python3
"""Leave a prepared-but-never-committed write in a Paimon table (real orphan files, as a
crashed writer leaves them): write rows with pypaimon, prepare_commit(), close the writer and
never commit.

    python tests/py/uncommitted_write.py TABLE_DIR ROWS_JSON

ROWS_JSON is a JSON list of row objects in the table's columns (e.g.
'[{"id": 900, "v": "x", "dt": "new", "hr": 7}]'). Prints the JSON list of the data files
written, relative to TABLE_DIR.
"""

import json
import logging
import os
import sys
import warnings

warnings.filterwarnings("ignore")
logging.basicConfig(level=logging.WARNING)
logging.getLogger("pypaimon").setLevel(logging.WARNING)

import pyarrow as pa  # noqa: E402

from pypaimon.schema.data_types import PyarrowFieldParser  # noqa: E402
from pypaimon.table.file_store_table import FileStoreTable  # noqa: E402


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    table_dir, rows = os.path.abspath(argv[0]), json.loads(argv[1])
    t = FileStoreTable.from_path(table_dir)
    schema = PyarrowFieldParser.from_paimon_schema(t.table_schema.fields)
    wb = t.new_batch_write_builder()
    w = wb.new_write()
    try:
        w.write_arrow(pa.Table.from_pylist(rows, schema=schema))
        msgs = w.prepare_commit()
    finally:
        w.close()
    files = []
    for m in msgs:
        for f in getattr(m, "new_files", None) or []:
            path = f.external_path or f.file_path
            files.append(os.path.relpath(str(path).replace("file:", "", 1), table_dir))
    print(json.dumps(sorted(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
