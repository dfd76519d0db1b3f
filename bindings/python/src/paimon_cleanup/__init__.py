"""paimon_cleanup: Apache Paimon table maintenance for Python (pypaimon, Ray, Daft, PyArrow).

Snapshot / changelog / tag / consumer expiry, orphan-file removal, partition drop and expiry,
through the library's C ABI (the native library is bundled in the wheel). See docs/python.md.

    import paimon_cleanup as pc

    table = pc.Table("/data/wh/db.db/t")
    report = table.expire_snapshots(retain_min=10, older_than="1 h", dry_run=True)
    print(report.total_files, [p.path for p in report.paths])
"""

from ._native import ABI_VERSION, lib as _lib, library_path, text as _text
from ._run import CancelToken, Progress
from .errors import (
    Cancelled,
    Conflict,
    InternalError,
    InvalidArgument,
    InvalidUtf8,
    Malformed,
    MemoryLimit,
    NotFound,
    NullPointer,
    PaimonCleanupError,
    Panic,
    PathRefused,
    StorageError,
    Unsupported,
)
from .report import FILE_CLASSES, DeletedPath, FailedDelete, FileCount, Report, TableSummary
from .table import Executor, Table, default_executor, parse_duration, parse_older_than
from .warehouse import TableOutcome, Warehouse, list_tables
from . import expiry_units, orphan_units

__version__ = "0.1.0"


def library_version() -> str:
    """The version of the bundled native library (``paimon_cleanup_version()``)."""
    return _text(_lib.paimon_cleanup_version()) or ""


__all__ = [
    "ABI_VERSION",
    "FILE_CLASSES",
    "CancelToken",
    "Cancelled",
    "Conflict",
    "DeletedPath",
    "Executor",
    "TableOutcome",
    "Warehouse",
    "list_tables",
    "FailedDelete",
    "FileCount",
    "InternalError",
    "InvalidArgument",
    "InvalidUtf8",
    "Malformed",
    "MemoryLimit",
    "NotFound",
    "NullPointer",
    "PaimonCleanupError",
    "Panic",
    "PathRefused",
    "Progress",
    "Report",
    "StorageError",
    "Table",
    "TableSummary",
    "Unsupported",
    "default_executor",
    "expiry_units",
    "orphan_units",
    "library_path",
    "library_version",
    "parse_duration",
    "parse_older_than",
]
