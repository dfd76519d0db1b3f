#!/usr/bin/env python3
"""Create a tag on a snapshot of a Paimon table with pypaimon (as a user does while another
job runs).

    python tests/py/create_tag.py TABLE_DIR TAG SNAPSHOT_ID
"""

import logging
import os
import sys
import warnings

warnings.filterwarnings("ignore")
logging.basicConfig(level=logging.WARNING)
logging.getLogger("pypaimon").setLevel(logging.WARNING)

from pypaimon.table.file_store_table import FileStoreTable  # noqa: E402


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 1
    table_dir, tag, snapshot = os.path.abspath(argv[0]), argv[1], int(argv[2])
    FileStoreTable.from_path(table_dir).create_tag(tag, snapshot_id=snapshot)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
