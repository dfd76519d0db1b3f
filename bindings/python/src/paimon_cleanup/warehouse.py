"""Warehouses: every table of a local filesystem-catalog warehouse that a ``db.table`` pattern
names, maintained one after the other or several at once (``paimon-cleanup maintain
--warehouse ROOT --table 'db.*'``)."""

from __future__ import annotations

import ctypes
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Union

from ._native import call, cstr, lib, text
from .errors import InvalidArgument, PaimonCleanupError
from .report import Report
from .table import Executor, Table


def list_tables(root: Union[str, "os.PathLike[str]"], pattern: str = "*.*") -> Dict[str, str]:
    """The tables of the local warehouse ``root`` (``ROOT/<db>.db/<table>/`` with a
    ``schema/`` directory) that ``pattern`` names (``db.table``; either part may be or hold
    ``*``: ``"db.*"``, ``"*.*"``), as ``{"db.table": location}`` sorted by name
    (``paimon_cleanup_warehouse_list_tables``). No matching table raises :class:`NotFound`."""
    out = ctypes.c_void_p()
    call(
        lib.paimon_cleanup_warehouse_list_tables,
        cstr(os.fspath(root), "the warehouse root"),
        cstr(pattern, "the table pattern"),
        ctypes.byref(out),
    )
    try:
        tables: Dict[str, str] = {}
        for i in range(lib.paimon_cleanup_table_list_count(out.value)):
            name = text(lib.paimon_cleanup_table_list_name(out.value, i)) or ""
            tables[name] = text(lib.paimon_cleanup_table_list_location(out.value, i)) or ""
        return tables
    finally:
        lib.paimon_cleanup_table_list_free(out.value)


@dataclass
class TableOutcome:
    """One table of a warehouse run: its report, or the error that stopped it."""

    table: str
    location: str
    report: Optional[Report]
    error: Optional[PaimonCleanupError]
    millis: int

    @property
    def ok(self) -> bool:
        """True when the table's run succeeded."""
        return self.error is None


class Warehouse:
    """A local filesystem-catalog warehouse: the tables ``pattern`` names under ``root``.

    ``options`` and the keyword arguments ``threads`` / ``io_concurrency`` / ``executor`` are
    given to every :class:`Table`. A run over the warehouse runs each table on its own (up to
    ``parallel_tables`` at once); one table's failure is recorded in its outcome and the others
    go on, as the CLI's sweeps do.
    """

    def __init__(
        self,
        root: Union[str, "os.PathLike[str]"],
        pattern: str = "*.*",
        options: Optional[Mapping[str, str]] = None,
        *,
        executor: Optional[Executor] = None,
    ):
        self.root = os.fspath(root)
        self.pattern = pattern
        self.options = dict(options or {})
        self._executor = executor

    def tables(self) -> Dict[str, str]:
        """``{"db.table": location}`` of the tables the pattern names now."""
        return list_tables(self.root, self.pattern)

    def _each(self, parallel_tables: int, run) -> List[TableOutcome]:
        if not isinstance(parallel_tables, int) or isinstance(parallel_tables, bool) or not (
            1 <= parallel_tables <= 1024
        ):
            raise InvalidArgument("parallel_tables must be an int from 1 to 1024")
        tables = self.tables()

        def one(item) -> TableOutcome:
            name, location = item
            started = time.monotonic()
            try:
                with Table(location, self.options, executor=self._executor) as t:
                    report = run(t)
                return TableOutcome(name, location, report, None, _ms(started))
            except PaimonCleanupError as e:
                return TableOutcome(name, location, None, e, _ms(started))

        with ThreadPoolExecutor(max_workers=parallel_tables) as pool:
            return list(pool.map(one, tables.items()))

    def maintain(
        self, dry_run: bool = False, *, parallel_tables: int = 1, **kwargs: Any
    ) -> List[TableOutcome]:
        """:meth:`Table.maintain` on every table (the nightly job), in name order; the keyword
        arguments go to each table's call."""
        return self._each(parallel_tables, lambda t: t.maintain(dry_run, **kwargs))

    def expire_snapshots(self, *, parallel_tables: int = 1, **kwargs: Any) -> List[TableOutcome]:
        """:meth:`Table.expire_snapshots` on every table."""
        return self._each(parallel_tables, lambda t: t.expire_snapshots(**kwargs))

    def remove_orphan_files(
        self, *, parallel_tables: int = 1, **kwargs: Any
    ) -> List[TableOutcome]:
        """:meth:`Table.remove_orphan_files` on every table."""
        return self._each(parallel_tables, lambda t: t.remove_orphan_files(**kwargs))

    def __repr__(self) -> str:
        return f"Warehouse({self.root!r}, {self.pattern!r})"


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
