"""Reports of the maintenance operations, copied out of the native report into dataclasses."""

from __future__ import annotations

import json
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ._native import lib, text

#: Number of file classes this package knows (``PAIMON_CLEANUP_FILE_CLASS_COUNT``). A newer
#: library may report more; their files still count in ``total_files`` / ``total_bytes``.
FILE_CLASS_COUNT = 12

#: The file class names, in class-number order (the keys of the CLI's ``deleted`` object).
FILE_CLASSES: Tuple[str, ...] = tuple(
    text(lib.paimon_cleanup_file_class_name(i)) or "unknown" for i in range(FILE_CLASS_COUNT)
)


@dataclass(frozen=True)
class TableSummary:
    """Overview of a table's branch (``Table.inspect()``; the C ``PaimonCleanupTableSummary``)."""

    #: True when the branch has at least one snapshot.
    has_snapshots: bool
    #: Earliest / latest snapshot id (None without snapshots).
    earliest_snapshot_id: Optional[int]
    latest_snapshot_id: Optional[int]
    #: Number of snapshot files.
    snapshot_count: int
    #: Number of tags.
    tag_count: int
    #: Number of branches other than main.
    branch_count: int
    #: Live data files of the latest snapshot, and their total size.
    live_file_count: int
    live_file_bytes: int


@dataclass(frozen=True)
class FileCount:
    """Files and bytes of one file class."""

    files: int
    bytes: int


@dataclass(frozen=True)
class DeletedPath:
    """A deleted (dry run: deletable) file: table-relative when under the table root."""

    path: str
    #: Its file class (``"data"``, ``"manifest"``, ... see :data:`FILE_CLASSES`).
    kind: str


@dataclass(frozen=True)
class FailedDelete:
    """A deletion that failed: the file is still there; a rerun retries it."""

    path: str
    error: str


class _NativeReport:
    """Owns a native report; freed when the last Python report using it goes away."""

    def __init__(self, ptr: int):
        self.ptr = ptr
        self._json_lock = threading.Lock()
        self._finalizer = weakref.finalize(self, lib.paimon_cleanup_report_free, ptr)

    # dataclasses.asdict / copy.deepcopy of a Report must share the owner, never duplicate the
    # finalizer (that would free the native report twice).
    def __copy__(self) -> "_NativeReport":
        return self

    def __deepcopy__(self, memo) -> "_NativeReport":
        return self


@dataclass(frozen=True)
class Report:
    """The outcome of one maintenance operation.

    Fields that do not apply to the operation's kind are empty / 0 / None. ``to_json()`` gives
    the whole report as the CLI's ``--json`` prints it (including fields that have no attribute
    here yet).
    """

    #: Which operation: ``"expire_snapshots"``, ``"expire_changelogs"``, ``"delete_tag"``,
    #: ``"expire_tags"``, ``"expire_consumers"``, ``"remove_orphan_files"``,
    #: ``"drop_partitions"``, ``"expire_partitions"``, ``"maintain"``.
    kind: str
    #: Nothing was changed; the counts and paths describe what a real run would do.
    dry_run: bool
    #: Files and bytes deleted per file class (only classes with files).
    deleted: Dict[str, FileCount]
    total_files: int
    total_bytes: int
    #: Every deleted (dry run: deletable) file, in deletion order; a sample when
    #: ``paths_elsewhere``.
    paths: List[DeletedPath]
    #: Deletions that failed.
    failed: List[FailedDelete]
    dirs_removed: int
    elapsed_ms: int
    #: Snapshots / changelogs / tags / consumers / partitions removed, by kind.
    expired_count: int
    #: First and last expired snapshot (or changelog) id.
    expired_range: Optional[Tuple[int, int]]
    #: Earliest snapshot after a snapshot expiry.
    earliest_after: Optional[int]
    #: Long-lived changelogs a snapshot expiry wrote (decoupled changelog lifecycle).
    changelogs_written: int
    #: Tags deleted, consumer ids expired, partitions dropped (``k=v/k2=v2``).
    names: List[str]
    #: Requested items that did not exist (the tag of a ``delete_tag``).
    missing: List[str]
    #: Dropped partitions as ``{key: value}`` (values as in the directory name).
    partitions: List[Dict[str, str]]
    #: What a partition drop / expiry marked deleted (the files go with a later snapshot expiry).
    files_marked_deleted: int
    rows_marked_deleted: int
    bytes_marked_deleted: int
    #: Snapshots a partition drop / expiry committed.
    committed_snapshots: List[int]
    #: Orphan-file removal: the cut-off used (epoch ms; None for other kinds) and what happened
    #: to the candidates.
    cutoff_ms: Optional[int]
    candidates: int
    referenced: int
    vetoed: int
    #: What the run deliberately left alone and why.
    warnings: List[str]
    #: ``maintain``: one report per step that ran.
    steps: List["Report"]
    #: ``paths`` is a sample, not every file: a snapshot expiry as units whose gate handed the
    #: freed data and changelog paths to the tasks (each task returned its own). Counts and
    #: failures are complete.
    paths_elsewhere: bool = False
    _native: Optional[_NativeReport] = field(default=None, repr=False, compare=False)
    _step_index: Optional[int] = field(default=None, repr=False, compare=False)

    def count(self, kind: str) -> FileCount:
        """Files and bytes of one file class (zero when none)."""
        return self.deleted.get(kind, FileCount(0, 0))

    def to_json(self) -> Dict[str, Any]:
        """The whole report as the CLI's ``--json`` document (parsed)."""
        native = self._native
        if native is None:
            raise ValueError("this report has no native report to render")
        with native._json_lock:
            ptr = native.ptr
            if self._step_index is not None:
                ptr = lib.paimon_cleanup_report_step(ptr, self._step_index)
            raw = text(lib.paimon_cleanup_report_json(ptr)) or "{}"
        return json.loads(raw)


def _strings(ptr: int, count_fn, item_fn) -> List[str]:
    return [text(item_fn(ptr, i)) or "" for i in range(count_fn(ptr))]


def read_report(
    ptr: int, owner: Optional[_NativeReport] = None, step_index: Optional[int] = None
) -> Report:
    """Copies a native report (``ptr``) into a :class:`Report`. The top-level call takes
    ownership of ``ptr`` (freed when the report is garbage collected); steps borrow from it."""
    if owner is None:
        owner = _NativeReport(ptr)
    deleted = {}
    for i, name in enumerate(FILE_CLASSES):
        files = lib.paimon_cleanup_report_files(ptr, i)
        size = lib.paimon_cleanup_report_bytes(ptr, i)
        if files or size:
            deleted[name] = FileCount(files, size)
    paths = []
    for i in range(lib.paimon_cleanup_report_path_count(ptr)):
        cls = lib.paimon_cleanup_report_path_class(ptr, i)
        paths.append(
            DeletedPath(
                text(lib.paimon_cleanup_report_path(ptr, i)) or "",
                text(lib.paimon_cleanup_file_class_name(cls)) or "unknown",
            )
        )
    failed = [
        FailedDelete(
            text(lib.paimon_cleanup_report_failed_path(ptr, i)) or "",
            text(lib.paimon_cleanup_report_failed_error(ptr, i)) or "",
        )
        for i in range(lib.paimon_cleanup_report_failed_count(ptr))
    ]
    partitions = []
    for i in range(lib.paimon_cleanup_report_name_count(ptr)):
        n = lib.paimon_cleanup_report_partition_field_count(ptr, i)
        if n:
            partitions.append(
                {
                    text(lib.paimon_cleanup_report_partition_key(ptr, i, j))
                    or "": text(lib.paimon_cleanup_report_partition_value(ptr, i, j))
                    or ""
                    for j in range(n)
                }
            )
    kind = text(lib.paimon_cleanup_report_kind_name(lib.paimon_cleanup_report_kind(ptr)))
    expired_range = None
    if lib.paimon_cleanup_report_has_expired_range(ptr):
        expired_range = (
            lib.paimon_cleanup_report_first_expired_id(ptr),
            lib.paimon_cleanup_report_last_expired_id(ptr),
        )
    earliest_after = None
    if lib.paimon_cleanup_report_has_earliest_after(ptr):
        earliest_after = lib.paimon_cleanup_report_earliest_after_id(ptr)
    steps = []
    for i in range(lib.paimon_cleanup_report_step_count(ptr)):
        step = lib.paimon_cleanup_report_step(ptr, i)
        if step:
            steps.append(read_report(step, owner, i))
    return Report(
        kind=kind or "unknown",
        dry_run=bool(lib.paimon_cleanup_report_dry_run(ptr)),
        deleted=deleted,
        total_files=lib.paimon_cleanup_report_total_files(ptr),
        total_bytes=lib.paimon_cleanup_report_total_bytes(ptr),
        paths=paths,
        failed=failed,
        dirs_removed=lib.paimon_cleanup_report_dirs_removed(ptr),
        elapsed_ms=lib.paimon_cleanup_report_elapsed_ms(ptr),
        expired_count=lib.paimon_cleanup_report_expired_count(ptr),
        expired_range=expired_range,
        earliest_after=earliest_after,
        changelogs_written=lib.paimon_cleanup_report_changelogs_written(ptr),
        names=_strings(ptr, lib.paimon_cleanup_report_name_count, lib.paimon_cleanup_report_name),
        missing=_strings(
            ptr, lib.paimon_cleanup_report_missing_count, lib.paimon_cleanup_report_missing
        ),
        partitions=partitions,
        files_marked_deleted=lib.paimon_cleanup_report_files_marked_deleted(ptr),
        rows_marked_deleted=lib.paimon_cleanup_report_rows_marked_deleted(ptr),
        bytes_marked_deleted=lib.paimon_cleanup_report_bytes_marked_deleted(ptr),
        committed_snapshots=[
            lib.paimon_cleanup_report_committed_snapshot_id(ptr, i)
            for i in range(lib.paimon_cleanup_report_committed_snapshot_count(ptr))
        ],
        cutoff_ms=(
            lib.paimon_cleanup_report_cutoff_ms(ptr) if kind == "remove_orphan_files" else None
        ),
        candidates=lib.paimon_cleanup_report_candidates(ptr),
        referenced=lib.paimon_cleanup_report_referenced(ptr),
        vetoed=lib.paimon_cleanup_report_vetoed(ptr),
        warnings=_strings(
            ptr, lib.paimon_cleanup_report_warning_count, lib.paimon_cleanup_report_warning
        ),
        steps=steps,
        paths_elsewhere=bool(lib.paimon_cleanup_report_paths_elsewhere(ptr)),
        _native=owner,
        _step_index=step_index,
    )


__all__ = [
    "FILE_CLASSES",
    "DeletedPath",
    "FailedDelete",
    "FileCount",
    "Report",
    "TableSummary",
    "read_report",
]
