"""Executors and tables: the handles of the C ABI behind a Pythonic API."""

from __future__ import annotations

import ctypes
import datetime as _dt
import os
import re
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Union

from ._native import PartitionSpec, call, cstr, lib
from ._native import TableSummary as _CTableSummary
from ._run import CancelToken, LogArg, ProgressArg, Run
from .errors import InvalidArgument
from .report import Report, TableSummary, read_report

Instant = Union[_dt.datetime, int]
Duration = Union[_dt.timedelta, str, int]
Age = Union[_dt.datetime, _dt.timedelta, str, int]

_DURATION = re.compile(r"^\s*(\d+)\s*(\S*)\s*$")
_NANOS_PER_UNIT = {}
for _names, _nanos in (
    (("", "ms", "milli", "millis", "millisecond", "milliseconds"), 1_000_000),
    (("d", "day", "days"), 86_400_000_000_000),
    (("h", "hour", "hours"), 3_600_000_000_000),
    (("min", "m", "minute", "minutes"), 60_000_000_000),
    (("s", "sec", "secs", "second", "seconds"), 1_000_000_000),
    (("µs", "us", "micro", "micros", "microsecond", "microseconds"), 1_000),
    (("ns", "nano", "nanos", "nanosecond", "nanoseconds"), 1),
):
    for _name in _names:
        _NANOS_PER_UNIT[_name] = _nanos


def parse_duration(value: str) -> int:
    """A Paimon duration (``"0s"``, ``"30 min"``, ``"1 h"``, ``"7d"``; no unit = ms), in
    milliseconds — the syntax of the table options and of the CLI."""
    m = _DURATION.match(value)
    if not m:
        raise InvalidArgument(f"duration {value!r} does not start with a number")
    unit = m.group(2).lower()
    if unit not in _NANOS_PER_UNIT:
        raise InvalidArgument(f"duration {value!r} has unknown unit {m.group(2)!r}")
    return int(m.group(1)) * _NANOS_PER_UNIT[unit] // 1_000_000


def parse_older_than(text: str, now_ms: Optional[int] = None) -> int:
    """An ``older_than`` cut-off as Paimon Java's procedures and the CLI's ``--older-than`` take
    it, in epoch milliseconds: a timestamp (``"2024-01-01 12:00:00"``, local time zone unless it
    ends with ``Z`` or an offset) or a duration counted back from ``now_ms`` (default: now;
    ``"1 d"``, ``"30 min"``). Parsed by the library, as every binding does. A bare number, an
    invalid date or a cut-off after now raise :class:`InvalidArgument`. Pass the result as
    ``older_than=`` (an ``int`` is epoch milliseconds there)."""
    now = _now_ms() if now_ms is None else now_ms
    out = ctypes.c_int64()
    call(lib.paimon_cleanup_parse_older_than, cstr(text, "older_than"), now, ctypes.byref(out))
    return out.value


def _duration_ms(value: Duration, what: str) -> int:
    if isinstance(value, _dt.timedelta):
        ms = (value.days * 86_400 + value.seconds) * 1000 + value.microseconds // 1000
    elif isinstance(value, str):
        ms = parse_duration(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        ms = value
    else:
        raise TypeError(f"{what} must be a datetime.timedelta, a duration string or milliseconds")
    if ms < 0:
        raise InvalidArgument(f"{what} must not be negative")
    return ms


def _epoch_ms(value: Instant, what: str) -> int:
    if isinstance(value, _dt.datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"{what} must be a datetime.datetime or epoch milliseconds (int)")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class _Handle:
    """A native handle used by many threads: ``use()`` during a call, ``close()`` waits for the
    calls in flight and frees it once (a finalizer frees it if it is never closed)."""

    def __init__(self, ptr: int, free: Callable[[int], None], what: str):
        self._ptr = ptr
        self._what = what
        self._cond = threading.Condition()
        self._users = 0
        self._closed = False
        self._finalizer = weakref.finalize(self, free, ptr)

    @contextmanager
    def use(self) -> Iterator[int]:
        with self._cond:
            if self._closed:
                raise InvalidArgument(f"the {self._what} is closed")
            self._users += 1
        try:
            yield self._ptr
        finally:
            with self._cond:
                self._users -= 1
                self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            while self._users:
                self._cond.wait()
        self._finalizer()


class Executor:
    """The library's worker threads and I/O concurrency. A process normally shares one.

    ``threads``: worker threads (0 = one per CPU); inside a host with its own pools 2-4 are
    usually enough. ``io_concurrency``: storage requests in flight per operation (0 = automatic:
    8 on a local file system, 64 on object stores). Thread-safe; ``close()`` (or leaving a
    ``with`` block) waits for the calls in flight, then stops the threads.
    """

    def __init__(self, threads: int = 0, io_concurrency: int = 0):
        if not isinstance(threads, int) or threads < 0:
            raise InvalidArgument("threads must be an int >= 0")
        ptr = ctypes.c_void_p()
        call(lib.paimon_cleanup_executor_new, threads, ctypes.byref(ptr))
        self._handle = _Handle(ptr.value, lib.paimon_cleanup_executor_free, "executor")
        if io_concurrency:
            self.io_concurrency = io_concurrency

    @property
    def threads(self) -> int:
        """The resolved number of worker threads."""
        with self._handle.use() as ptr:
            return lib.paimon_cleanup_executor_worker_threads(ptr)

    @property
    def io_concurrency(self) -> int:
        """Storage requests kept in flight by operations started afterwards (0 = automatic)."""
        with self._handle.use() as ptr:
            return lib.paimon_cleanup_executor_io_concurrency(ptr)

    @io_concurrency.setter
    def io_concurrency(self, value: int) -> None:
        with self._handle.use() as ptr:
            call(lib.paimon_cleanup_executor_set_io_concurrency, ptr, value)

    def close(self) -> None:
        """Waits for the calls in flight, stops the worker threads, frees the executor.
        Never call it from a callback of one of its own runs."""
        self._handle.close()

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_default_executor: Optional[Executor] = None
_default_lock = threading.Lock()


def default_executor() -> Executor:
    """The process-wide executor used by tables created without ``threads`` or ``executor``
    (one worker per CPU, automatic I/O concurrency), created on first use."""
    global _default_executor
    with _default_lock:
        if _default_executor is None or _default_executor._handle.closed:
            _default_executor = Executor()
        return _default_executor


def _table_uri(uri: Union[str, "os.PathLike[str]"]) -> str:
    uri = os.fspath(uri)
    if not isinstance(uri, str):
        raise TypeError("uri must be a str or a path")
    if "://" in uri or uri.lower().startswith("file:") or os.path.isabs(uri):
        return uri
    # a relative local path, as the CLI takes it: relative to the current directory
    return os.path.realpath(uri)


class Table:
    """A Paimon table: its location, the options used to reach and read it, and the branch.

    ``uri``: a local path or a ``file://``, ``s3://``, ``gs://``, ``az://`` URI. ``options``: one
    map of Paimon option names: storage options (``s3.endpoint``, ``s3.access-key``, ...) and
    overrides of the table's own options (``snapshot.num-retained.min``, ...). ``branch``: the
    branch to work on (passed as the option ``branch``). ``threads`` / ``io_concurrency``: give
    the table an executor of its own (closed with the table); ``executor``: use this one;
    neither: the process-wide :func:`default_executor`.

    Thread-safe: many threads may run operations on one table at once. Every operation blocks
    until done with the GIL released; the keyword arguments ``progress``, ``cancel``, ``log``,
    ``log_level`` and ``max_memory`` are described in docs/python.md.
    """

    def __init__(
        self,
        uri: Union[str, "os.PathLike[str]"],
        options: Optional[Mapping[str, str]] = None,
        branch: Optional[str] = None,
        *,
        threads: Optional[int] = None,
        io_concurrency: Optional[int] = None,
        executor: Optional[Executor] = None,
    ):
        opts: Dict[str, str] = {}
        for key, value in (options or {}).items():
            if not isinstance(key, str) or not isinstance(value, (str, int, float, bool)):
                raise TypeError("options must map str to str")
            opts[key] = value if isinstance(value, str) else _option_text(value)
        if branch is not None:
            if not isinstance(branch, str) or not branch:
                raise InvalidArgument("branch must be a non-empty str")
            if opts.get("branch", branch) != branch:
                raise InvalidArgument(
                    f"branch={branch!r} contradicts options['branch']={opts['branch']!r}"
                )
            opts["branch"] = branch
        if executor is not None and (threads is not None or io_concurrency is not None):
            raise InvalidArgument("give either executor or threads / io_concurrency, not both")
        self.uri = _table_uri(uri)
        self.options = dict(opts)
        self.branch = opts.get("branch")
        keys = [cstr(k, "an option key") for k in opts]
        values = [cstr(v, f"option {k!r}") for k, v in opts.items()]
        key_array = (ctypes.c_char_p * max(len(keys), 1))(*keys)
        value_array = (ctypes.c_char_p * max(len(values), 1))(*values)
        ptr = ctypes.c_void_p()
        call(
            lib.paimon_cleanup_context_new,
            cstr(self.uri, "the table URI"),
            key_array,
            value_array,
            len(keys),
            ctypes.byref(ptr),
        )
        self._handle = _Handle(ptr.value, lib.paimon_cleanup_context_free, "table")
        self._own_executor = None
        if threads is not None or io_concurrency is not None:
            try:
                self._own_executor = Executor(threads or 0, io_concurrency or 0)
            except BaseException:
                self._handle.close()
                raise
        self._executor = executor

    @classmethod
    def from_pypaimon(
        cls,
        table: Any,
        options: Optional[Mapping[str, str]] = None,
        branch: Optional[str] = None,
        **kwargs: Any,
    ) -> "Table":
        """A table opened from a pypaimon table object (``catalog.get_table(...)``): its path,
        its file IO's options (storage credentials, endpoint, ...) and its branch when it is not
        main. ``options`` are added on top; ``branch`` overrides the table's own."""
        path = getattr(table, "table_path", None)
        if not path:
            raise TypeError("from_pypaimon needs a pypaimon table (with table_path and file_io)")
        merged: Dict[str, str] = {}
        props = getattr(getattr(table, "file_io", None), "properties", None)
        if props is not None:
            mapping = props.to_map() if hasattr(props, "to_map") else dict(props)
            merged.update({str(k): _option_text(v) for k, v in mapping.items() if v is not None})
        merged.update(options or {})
        if branch is None and hasattr(table, "current_branch"):
            current = table.current_branch()
            if current and current != "main":
                branch = current
        if branch is not None:
            merged.pop("branch", None)
        return cls(str(path), merged, branch, **kwargs)

    # ---- handles -------------------------------------------------------------------------

    @property
    def executor(self) -> Executor:
        """The executor this table's operations run on."""
        return self._own_executor or self._executor or default_executor()

    def close(self) -> None:
        """Waits for the operations in flight and frees the table (and its own executor)."""
        self._handle.close()
        if self._own_executor is not None:
            self._own_executor.close()

    def __enter__(self) -> "Table":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        branch = f", branch={self.branch!r}" if self.branch else ""
        return f"Table({self.uri!r}{branch})"

    @contextmanager
    def _handles(self) -> Iterator[tuple]:
        executor = self.executor
        with self._handle.use() as ctx, executor._handle.use() as exe:
            yield ctx, exe

    def _run(
        self,
        fn: Callable,
        args: tuple,
        progress: ProgressArg,
        cancel: Optional[CancelToken],
        log: LogArg,
        log_level: Union[str, int],
        veto: Optional[Callable[[str], bool]] = None,
        veto_config: Optional[int] = None,
        *,
        max_memory: Optional[int] = None,
    ) -> Report:
        run = Run(progress, cancel, log, log_level, max_memory)
        out = ctypes.c_void_p()
        try:
            if veto is not None:
                call(lib.paimon_cleanup_orphan_config_set_veto, veto_config, run.veto(veto), None)
            with self._handles() as (ctx, exe):
                run.invoke(lambda: call(fn, ctx, exe, *args, run.options, ctypes.byref(out)))
        except BaseException:
            # e.g. a callback raised although the run itself succeeded
            if out.value:
                lib.paimon_cleanup_report_free(out.value)
            raise
        finally:
            run.close()
        return read_report(out.value)

    # ---- operations ----------------------------------------------------------------------

    def inspect(self) -> TableSummary:
        """An overview of the branch: snapshot range and count, tags, branches, live files.
        Read-only."""
        summary = _CTableSummary()
        with self._handles() as (ctx, exe):
            call(lib.paimon_cleanup_table_summary, ctx, exe, ctypes.byref(summary))
        has = bool(summary.has_snapshots)
        return TableSummary(
            has_snapshots=has,
            earliest_snapshot_id=summary.earliest_snapshot_id if has else None,
            latest_snapshot_id=summary.latest_snapshot_id if has else None,
            snapshot_count=summary.snapshot_count,
            tag_count=summary.tag_count,
            branch_count=summary.branch_count,
            live_file_count=summary.live_file_count,
            live_file_bytes=summary.live_file_bytes,
        )

    def expire_snapshots(
        self,
        retain_min: Optional[int] = None,
        retain_max: Optional[int] = None,
        older_than: Optional[Age] = None,
        max_deletes: Optional[int] = None,
        dry_run: bool = False,
        *,
        clean_empty_dirs: Optional[bool] = None,
        refuse_if_tags_pin: bool = False,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Expires old snapshots and deletes every file only they referenced
        (``paimon-cleanup expire-snapshots``).

        Unset settings take the table's options (``snapshot.num-retained.min/max``,
        ``snapshot.time-retained``, ``snapshot.expire.limit``), then Paimon's defaults.
        ``older_than``: a ``timedelta`` or duration string keeps snapshots younger than that
        (``--time-retained``); a ``datetime`` or epoch ms is an absolute cut-off
        (``--older-than-ms``). ``max_deletes``: at most this many snapshots in this run.
        """
        cfg = _ExpireConfig(retain_min, retain_max, older_than, max_deletes, dry_run)
        try:
            if clean_empty_dirs is not None:
                cfg.set(
                    lib.paimon_cleanup_expire_config_set_clean_empty_dirs, bool(clean_empty_dirs)
                )
            if refuse_if_tags_pin:
                cfg.set(lib.paimon_cleanup_expire_config_set_refuse_if_tags_pin, True)
            return self._run(
                lib.paimon_cleanup_expire_snapshots, (cfg.ptr,), progress, cancel, log, log_level,
                max_memory=max_memory,
            )
        finally:
            cfg.free()

    def expire_changelogs(
        self,
        retain_min: Optional[int] = None,
        retain_max: Optional[int] = None,
        older_than: Optional[Age] = None,
        max_deletes: Optional[int] = None,
        dry_run: bool = False,
        *,
        delete_all: bool = False,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Expires long-lived changelogs (decoupled changelog lifecycle;
        ``paimon-cleanup expire-changelogs``). Unset settings take ``changelog.num-retained.*``
        and ``changelog.time-retained`` first, then the snapshot options. ``delete_all``: delete
        every changelog older than the earliest snapshot."""
        cfg = _ExpireConfig(retain_min, retain_max, older_than, max_deletes, dry_run)
        try:
            if delete_all:
                cfg.set(lib.paimon_cleanup_expire_config_set_delete_all_changelogs, True)
            return self._run(
                lib.paimon_cleanup_expire_changelogs, (cfg.ptr,), progress, cancel, log, log_level,
                max_memory=max_memory,
            )
        finally:
            cfg.free()

    def delete_tag(
        self,
        name: str,
        dry_run: bool = False,
        *,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Deletes one tag and the files only it kept (``paimon-cleanup delete-tag``). A missing
        tag is not an error: it is listed in ``report.missing``."""
        return self._run(
            lib.paimon_cleanup_delete_tag,
            (cstr(name, "the tag name"), bool(dry_run)),
            progress,
            cancel,
            log,
            log_level,
            max_memory=max_memory,
        )

    def delete_tags(
        self,
        names: Union[str, Iterable[str]],
        dry_run: bool = False,
        **run_kwargs: Any,
    ) -> List[Report]:
        """Deletes tags one after the other (one report each, in order). A dry run of several
        tags previews each on its own (the files a later tag would free with the earlier ones
        gone are not counted)."""
        if isinstance(names, str):
            names = [names]
        return [self.delete_tag(name, dry_run, **run_kwargs) for name in names]

    def expire_tags(
        self,
        older_than: Optional[Instant] = None,
        dry_run: bool = False,
        *,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Deletes the tags whose own retention passed and, with ``older_than`` (a ``datetime``
        or epoch ms), the tags created before it (``paimon-cleanup expire-tags``)."""
        cutoff = 0 if older_than is None else _epoch_ms(older_than, "older_than")
        if older_than is not None and cutoff <= 0:
            raise InvalidArgument("older_than must be after the epoch")
        return self._run(
            lib.paimon_cleanup_expire_tags,
            (cutoff, bool(dry_run)),
            progress,
            cancel,
            log,
            log_level,
            max_memory=max_memory,
        )

    def expire_consumers(
        self,
        expiration_time: Optional[Duration] = None,
        dry_run: bool = False,
        *,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Deletes consumers that have not advanced for longer than ``expiration_time`` (a
        ``timedelta`` or duration string; default: the table's ``consumer.expiration-time``)
        (``paimon-cleanup expire-consumers``)."""
        ms = 0
        if expiration_time is not None:
            ms = _duration_ms(expiration_time, "expiration_time")
            if ms == 0:
                raise InvalidArgument("expiration_time must be at least 1 ms")
        return self._run(
            lib.paimon_cleanup_expire_consumers,
            (ms, bool(dry_run)),
            progress,
            cancel,
            log,
            log_level,
            max_memory=max_memory,
        )

    def remove_orphan_files(
        self,
        older_than: Optional[Age] = None,
        dry_run: bool = False,
        veto: Optional[Callable[[str], bool]] = None,
        *,
        no_writers_running: bool = False,
        external_roots_owned: bool = False,
        list_concurrency: int = 0,
        delete_concurrency: int = 0,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Deletes files under the table that no snapshot, tag, branch or changelog references
        and that are older than ``older_than`` (a ``timedelta`` / duration string: that long
        ago; a ``datetime`` / epoch ms: absolute; default 1 day) (``paimon-cleanup
        remove-orphan-files``). A cut-off within the last hour is refused unless
        ``no_writers_running``.

        The table's external data roots (``data-file.external-paths``) are skipped (and named
        in the report's warnings) unless ``external_roots_owned``: Paimon writes external files
        without the table name, so tables configured with one root share its directories and
        each one's live files look like orphans to the other. Set it only when no other table
        writes under these roots.

        ``veto(path) -> bool`` is called once per deletable file (table-relative path) before
        anything is deleted, also in a dry run; True keeps the file. If it raises, the run is
        cancelled, nothing is deleted and the exception propagates.
        """
        cfg = _OrphanConfig(
            older_than,
            dry_run,
            no_writers_running,
            external_roots_owned,
            list_concurrency,
            delete_concurrency,
        )
        try:
            return self._run(
                lib.paimon_cleanup_remove_orphan_files,
                (cfg.ptr,),
                progress,
                cancel,
                log,
                log_level,
                veto=veto,
                max_memory=max_memory,
                veto_config=cfg.ptr,
            )
        finally:
            cfg.free()

    def drop_partitions(
        self,
        partitions: Iterable[Mapping[str, Optional[str]]],
        dry_run: bool = False,
        *,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Drops partitions with one OVERWRITE commit (``paimon-cleanup drop-partitions``); their
        files go with a later snapshot expiry. Each spec is ``{key: value}``: a prefix of the
        partition keys selects everything below it. Values are matched against the partition
        values, not the directory names, as Paimon Java reads a spec: ``None`` or the default
        partition name (``__DEFAULT_PARTITION__``) is NULL, ``""`` the empty string and ``" "``
        one space, although all three share one directory. ``dry_run`` reports what would be
        dropped and commits nothing."""
        if isinstance(partitions, Mapping):
            raise TypeError("partitions must be a list of dicts, e.g. [{'dt': '2024-01-01'}]")
        specs = list(partitions)
        if not specs:
            raise InvalidArgument("drop_partitions needs at least one partition spec")
        keep: list = []
        array = (PartitionSpec * len(specs))()
        for i, spec in enumerate(specs):
            if not isinstance(spec, Mapping) or not spec:
                raise InvalidArgument(f"partition spec {i} must be a non-empty dict")
            keys = [cstr(k, "a partition key") for k in spec]
            values = [
                None if v is None else cstr(_option_text(v), f"partition value of {k!r}")
                for k, v in spec.items()
            ]
            karr = (ctypes.c_char_p * len(keys))(*keys)
            varr = (ctypes.c_char_p * len(values))(*values)
            keep += [karr, varr]
            array[i] = PartitionSpec(karr, varr, len(keys))
        fn = (
            lib.paimon_cleanup_preview_drop_partitions
            if dry_run
            else lib.paimon_cleanup_drop_partitions
        )
        return self._run(
            fn, (array, len(specs)), progress, cancel, log, log_level, max_memory=max_memory
        )

    def expire_partitions(
        self,
        expiration_time: Optional[Duration] = None,
        *,
        strategy: Optional[str] = None,
        timestamp_formatter: Optional[str] = None,
        timestamp_pattern: Optional[str] = None,
        max_num: Optional[int] = None,
        batch_size: Optional[int] = None,
        now: Optional[Instant] = None,
        dry_run: bool = False,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Drops the partitions older than ``expiration_time`` (``paimon-cleanup
        expire-partitions``). Unset settings take ``partition.expiration-*`` and
        ``partition.timestamp-*`` of the table. ``strategy``: ``"values-time"`` or
        ``"update-time"``; ``max_num``: at most this many partitions; ``batch_size``: partitions
        per commit; ``now``: the reference time (default the clock)."""
        cfg = ctypes.c_void_p()
        call(lib.paimon_cleanup_partition_expire_config_new, ctypes.byref(cfg))
        try:
            if expiration_time is not None:
                ms = _duration_ms(expiration_time, "expiration_time")
                call(lib.paimon_cleanup_partition_expire_config_set_expiration_time_ms, cfg, ms)
            if strategy is not None:
                codes = {"values-time": 0, "update-time": 1}
                if strategy not in codes:
                    raise InvalidArgument(
                        f"strategy must be 'values-time' or 'update-time', not {strategy!r}"
                    )
                call(lib.paimon_cleanup_partition_expire_config_set_strategy, cfg, codes[strategy])
            if timestamp_formatter is not None:
                call(
                    lib.paimon_cleanup_partition_expire_config_set_timestamp_formatter,
                    cfg,
                    cstr(timestamp_formatter, "timestamp_formatter"),
                )
            if timestamp_pattern is not None:
                call(
                    lib.paimon_cleanup_partition_expire_config_set_timestamp_pattern,
                    cfg,
                    cstr(timestamp_pattern, "timestamp_pattern"),
                )
            if max_num is not None:
                max_expires = _positive(max_num, "max_num")
                call(lib.paimon_cleanup_partition_expire_config_set_max_expires, cfg, max_expires)
            if batch_size is not None:
                size = _positive(batch_size, "batch_size")
                call(lib.paimon_cleanup_partition_expire_config_set_batch_size, cfg, size)
            if now is not None:
                now_ms = _epoch_ms(now, "now")
                call(lib.paimon_cleanup_partition_expire_config_set_now_ms, cfg, now_ms)
            call(lib.paimon_cleanup_partition_expire_config_set_dry_run, cfg, bool(dry_run))
            return self._run(
                lib.paimon_cleanup_expire_partitions, (cfg,), progress, cancel, log, log_level,
                max_memory=max_memory,
            )
        finally:
            lib.paimon_cleanup_partition_expire_config_free(cfg)

    def maintain(
        self,
        dry_run: bool = False,
        *,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ) -> Report:
        """Runs what the table's options ask for, in Java's order: partition, tag, consumer,
        snapshot and changelog expiry (``paimon-cleanup maintain``). ``report.steps`` has one
        report per step that ran; the top-level counts are their sums."""
        cfg = ctypes.c_void_p()
        call(lib.paimon_cleanup_maintain_config_new, ctypes.byref(cfg))
        try:
            call(lib.paimon_cleanup_maintain_config_set_dry_run, cfg, bool(dry_run))
            return self._run(
                lib.paimon_cleanup_maintain,
                (cfg,),
                progress,
                cancel,
                log,
                log_level,
                max_memory=max_memory,
            )
        finally:
            lib.paimon_cleanup_maintain_config_free(cfg)


def _positive(value: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidArgument(f"{what} must be an int >= 1")
    return value


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _OrphanConfig:
    """A native ``PaimonCleanupOrphanConfig`` filled from the keyword arguments of
    :meth:`Table.remove_orphan_files`; the defaults when none is given. Also used by the
    orphan units (``orphan_units``)."""

    def __init__(
        self,
        older_than: Optional[Age] = None,
        dry_run: bool = False,
        no_writers_running: bool = False,
        external_roots_owned: bool = False,
        list_concurrency: int = 0,
        delete_concurrency: int = 0,
    ):
        ptr = ctypes.c_void_p()
        call(lib.paimon_cleanup_orphan_config_new, ctypes.byref(ptr))
        self.ptr = ptr.value
        try:
            if older_than is not None:
                if isinstance(older_than, (_dt.timedelta, str)):
                    cutoff = _now_ms() - _duration_ms(older_than, "older_than")
                else:
                    cutoff = _epoch_ms(older_than, "older_than")
                self.set(lib.paimon_cleanup_orphan_config_set_older_than_ms, cutoff)
            self.set(lib.paimon_cleanup_orphan_config_set_dry_run, bool(dry_run))
            if no_writers_running:
                self.set(lib.paimon_cleanup_orphan_config_set_no_writers_running, True)
            if external_roots_owned:
                self.set(lib.paimon_cleanup_orphan_config_set_external_roots_owned, True)
            if list_concurrency:
                self.set(lib.paimon_cleanup_orphan_config_set_list_concurrency, list_concurrency)
            if delete_concurrency:
                self.set(
                    lib.paimon_cleanup_orphan_config_set_delete_concurrency, delete_concurrency
                )
        except BaseException:
            self.free()
            raise

    def set(self, setter: Callable, value: Any) -> None:
        call(setter, self.ptr, value)

    def free(self) -> None:
        if self.ptr:
            lib.paimon_cleanup_orphan_config_free(self.ptr)
            self.ptr = None


class _ExpireConfig:
    """A native ``PaimonCleanupExpireConfig`` filled from the keyword arguments."""

    def __init__(self, retain_min, retain_max, older_than, max_deletes, dry_run):
        ptr = ctypes.c_void_p()
        call(lib.paimon_cleanup_expire_config_new, ctypes.byref(ptr))
        self.ptr = ptr.value
        try:
            if retain_min is not None:
                self.set(
                    lib.paimon_cleanup_expire_config_set_retain_min, _int(retain_min, "retain_min")
                )
            if retain_max is not None:
                self.set(
                    lib.paimon_cleanup_expire_config_set_retain_max, _int(retain_max, "retain_max")
                )
            if older_than is not None:
                if isinstance(older_than, (_dt.timedelta, str)):
                    ms = _duration_ms(older_than, "older_than")
                    self.set(lib.paimon_cleanup_expire_config_set_time_retained_ms, ms)
                else:
                    ms = _epoch_ms(older_than, "older_than")
                    self.set(lib.paimon_cleanup_expire_config_set_older_than_ms, ms)
            if max_deletes is not None:
                self.set(
                    lib.paimon_cleanup_expire_config_set_max_expires,
                    _int(max_deletes, "max_deletes"),
                )
            self.set(lib.paimon_cleanup_expire_config_set_dry_run, bool(dry_run))
        except BaseException:
            self.free()
            raise

    def set(self, setter: Callable, value: Any) -> None:
        call(setter, self.ptr, value)

    def free(self) -> None:
        if self.ptr:
            lib.paimon_cleanup_expire_config_free(self.ptr)
            self.ptr = None


def _int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{what} must be an int")
    return value
