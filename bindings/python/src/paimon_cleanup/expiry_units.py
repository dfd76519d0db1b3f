"""Snapshot expiry as units, for engines that schedule the work on their own workers (Ray,
Dask, Spark through PySpark, ...): the C functions ``paimon_cleanup_expiry_*``.

Every unit and every partial result is an opaque, versioned ``bytes`` value: pickle it, ship it,
store it, retry it. The result equals :meth:`Table.expire_snapshots` (same report, same files
left)::

    from paimon_cleanup import expiry_units as eu

    plan = eu.plan(table, retain_min=10)                        # driver
    candidates = b""                                            # workers, any order:
    for unit in plan.units:
        candidates = eu.merge(candidates, eu.execute(unit))
    protect = eu.protect(table, plan.state, candidates)
    kept = ...       # merge of execute() over protect.units (b"" when there is none)
    decision = eu.decide(table, protect.state, candidates, kept)
    deleted = ...    # merge of execute() over decision.units (the delete units)
    report = eu.finish(table, decision.state, deleted)

The sharded decision (no process holds every candidate) replaces :func:`protect` and
:func:`decide`: :func:`split` each candidate result into a summary and K pieces, :func:`gate` on
the driver with the merged summaries, :func:`decide_shard` per shard with its merged pieces,
:func:`execute` the shards' delete units, :func:`conclude` with every shard's report, then
:func:`finish`.

Ownership: every ``bytes`` value returned is a Python copy (the native buffers are freed before
a function returns, also when it raises); arguments are only read during the call.
Thread-safety: every function may be called from many threads at once; the calls release the
GIL. Errors: :class:`PaimonCleanupError` subclasses with the library's status
(:class:`InvalidArgument` for foreign, corrupted or doubled bytes, :class:`StorageError` when a
delete unit failed and :func:`finish` stops before the metadata, :class:`Cancelled`, ...).
Driver steps take a :class:`Table` and run on its executor; worker steps take ``executor=``
(default: :func:`default_executor`). Every step that runs takes the keyword arguments
``progress``, ``cancel``, ``log``, ``log_level`` and ``max_memory`` of the table operations.
"""

from __future__ import annotations

import ctypes
from contextlib import ExitStack, contextmanager
from typing import Any, Callable, Iterator, List, Mapping, NamedTuple, Optional, Sequence

from ._native import call, cstr, lib
from ._run import Run
from .report import Report, read_report
from .table import Executor, Table, _ExpireConfig, default_executor

__all__ = [
    "ExpiryStep",
    "ExpirySplit",
    "ExpiryGated",
    "ShardDecision",
    "Executed",
    "plan",
    "execute",
    "execute_handing_paths",
    "merge",
    "protect",
    "decide",
    "finish",
    "split",
    "gate",
    "decide_shard",
    "conclude",
]


class ExpiryStep(NamedTuple):
    """What a driver step returns."""

    #: The plan state (plan), the new state (protect) or the decision (decide): keep it on the
    #: driver for the next step.
    state: bytes
    #: The units to :func:`execute` (possibly none).
    units: List[bytes]


class ExpirySplit(NamedTuple):
    """A candidate result split for the sharded decision."""

    #: For the driver: merge every summary and pass it to :func:`gate`.
    summary: bytes
    #: One piece per shard (``shards[i]`` is shard ``i``): merge each shard's pieces for
    #: :func:`decide_shard`.
    shards: List[bytes]


class ExpiryGated(NamedTuple):
    """What :func:`gate` returns."""

    #: The decision so far, for :func:`conclude` (keep it on the driver).
    decision: bytes
    #: What every shard decides with (ship it to the shard tasks).
    gate: bytes


class ShardDecision(NamedTuple):
    """What :func:`decide_shard` returns."""

    #: The shard's report, for :func:`conclude`.
    report: bytes
    #: Executed after :func:`conclude` succeeded (none in a dry run).
    delete_units: List[bytes]
    #: With a gate that hands the paths to the tasks, in a dry run: every path the shard would
    #: delete (in the single-process order); otherwise empty.
    paths: List[str]


class Executed(NamedTuple):
    """What :func:`execute_handing_paths` returns."""

    #: The unit's partial result, merged like :func:`execute`'s.
    result: bytes
    #: For a delete unit of a gate that hands the paths to the tasks: every path it deleted, in
    #: order; otherwise empty.
    paths: List[str]


# ---- native buffers -------------------------------------------------------------------------


class _Out:
    """One buffer or buffer-list out-parameter, freed by :meth:`free` (NULL is fine)."""

    def __init__(self, free: Callable[[Any], None]):
        self.ptr = ctypes.c_void_p()
        self._free = free

    def ref(self):
        return ctypes.byref(self.ptr)

    def free(self) -> None:
        if self.ptr.value:
            self._free(self.ptr)
            self.ptr = ctypes.c_void_p()


def _copy_buffer(buffer) -> bytes:
    size = lib.paimon_cleanup_buffer_len(buffer)
    return ctypes.string_at(lib.paimon_cleanup_buffer_data(buffer), size) if size else b""


class _Buffer(_Out):
    def __init__(self):
        super().__init__(lib.paimon_cleanup_buffer_free)

    def bytes(self) -> bytes:
        return _copy_buffer(self.ptr)


class _BufferList(_Out):
    def __init__(self):
        super().__init__(lib.paimon_cleanup_buffer_list_free)

    def bytes(self) -> List[bytes]:
        n = lib.paimon_cleanup_buffer_list_count(self.ptr)
        return [_copy_buffer(lib.paimon_cleanup_buffer_list_get(self.ptr, i)) for i in range(n)]

    def strings(self) -> List[str]:
        return [b.decode("utf-8") for b in self.bytes()]


_U8P = ctypes.POINTER(ctypes.c_uint8)


def _arg(data: Any, what: str):
    """``(pointer, length)`` over a bytes-like value for one call (no copy for ``bytes``)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what} must be bytes, not {type(data).__name__}")
    raw = bytes(data)
    return ctypes.cast(ctypes.c_char_p(raw), _U8P), len(raw)


def _byte_arrays(parts: Sequence[Any], what: str):
    """``(pointers, lengths, count, keep)`` over byte strings, as the conclude calls take them;
    ``keep`` holds the buffers and must live until the call returns."""
    keep = [_arg(p, what) for p in parts]
    n = len(keep)
    pointers = (_U8P * max(n, 1))(*[ptr for ptr, _ in keep])
    lengths = (ctypes.c_size_t * max(n, 1))(*[size for _, size in keep])
    return pointers, lengths, n, keep


@contextmanager
def _outs(*kinds: type) -> Iterator[tuple]:
    """Fresh out-parameters, freed when the block ends (also when it raises)."""
    with ExitStack() as stack:
        outs = tuple(kind() for kind in kinds)
        for out in outs:
            stack.callback(out.free)
        yield outs


class _HostOptions:
    """The C arrays of a host's options (credentials, endpoint...) for one call."""

    def __init__(self, options: Optional[Mapping[str, str]]):
        items = list((options or {}).items())
        keys = [cstr(k, "an option key") for k, _ in items]
        values = [cstr(v, f"option {k!r}") for k, v in items]
        self.keys = (ctypes.c_char_p * max(len(keys), 1))(*keys)
        self.values = (ctypes.c_char_p * max(len(values), 1))(*values)
        self.count = len(keys)


def _invoke(fn: Callable, args: Callable[[Any], tuple], run_kwargs: dict) -> None:
    """One native call ``fn(*args(run_options))`` with the run control of ``run_kwargs``."""
    run = Run(**run_kwargs)
    try:
        run.invoke(lambda: call(fn, *args(run.options)))
    finally:
        run.close()


def _on_driver(table: Table, fn: Callable, args: Callable[[Any], tuple], run_kwargs: dict) -> None:
    """A driver step: ``fn(ctx, executor, *args(run_options))`` on the table's handles."""
    if not isinstance(table, Table):
        raise TypeError(f"table must be a paimon_cleanup.Table, not {type(table).__name__}")
    with table._handles() as (ctx, exe):
        _invoke(fn, lambda o: (ctx, exe) + args(o), run_kwargs)


def _on_executor(
    executor: Optional[Executor], fn: Callable, args: Callable[[Any], tuple], run_kwargs: dict
) -> None:
    """A worker step: ``fn(executor, *args(run_options))``."""
    executor = executor or default_executor()
    with executor._handle.use() as exe:
        _invoke(fn, lambda o: (exe,) + args(o), run_kwargs)


# ---- driver steps ---------------------------------------------------------------------------


def plan(
    table: Table,
    retain_min: Optional[int] = None,
    retain_max: Optional[int] = None,
    older_than: Any = None,
    max_deletes: Optional[int] = None,
    dry_run: bool = False,
    *,
    clean_empty_dirs: Optional[bool] = None,
    refuse_if_tags_pin: bool = False,
    **run: Any,
) -> ExpiryStep:
    """Plans an expiry of the table's branch (driver; reads only). The settings are those of
    :meth:`Table.expire_snapshots`; returns the plan state and the candidate units."""
    cfg = _ExpireConfig(retain_min, retain_max, older_than, max_deletes, dry_run)
    try:
        if clean_empty_dirs is not None:
            cfg.set(lib.paimon_cleanup_expire_config_set_clean_empty_dirs, bool(clean_empty_dirs))
        if refuse_if_tags_pin:
            cfg.set(lib.paimon_cleanup_expire_config_set_refuse_if_tags_pin, True)
        with _outs(_Buffer, _BufferList) as (state, units):
            _on_driver(
                table,
                lib.paimon_cleanup_expiry_units_plan,
                lambda o: (cfg.ptr, o, state.ref(), units.ref()),
                run,
            )
            return ExpiryStep(state.bytes(), units.bytes())
    finally:
        cfg.free()


def protect(table: Table, state: bytes, candidates: bytes, **run: Any) -> ExpiryStep:
    """After the candidate units (driver): ``candidates`` is every candidate unit's result,
    merged. Reads every version that protects files; returns the new state and the protect
    units. Nothing is deleted."""
    s, c = _arg(state, "state"), _arg(candidates, "candidates")
    with _outs(_Buffer, _BufferList) as (out, units):
        _on_driver(
            table,
            lib.paimon_cleanup_expiry_units_protect,
            lambda o: (o, *s, *c, out.ref(), units.ref()),
            run,
        )
        return ExpiryStep(out.bytes(), units.bytes())


def decide(
    table: Table, state: bytes, candidates: bytes, protected: bytes, **run: Any
) -> ExpiryStep:
    """After the protect units (driver): ``state`` from :func:`protect`, ``candidates`` what was
    given to it, ``protected`` every protect unit's result merged (``b""`` when there was none).
    Builds and checks the deletion plan; returns the decision (as ``state``) and the delete
    units (none in a dry run). Nothing is deleted."""
    s, c, p = _arg(state, "state"), _arg(candidates, "candidates"), _arg(protected, "protected")
    with _outs(_Buffer, _BufferList) as (out, units):
        _on_driver(
            table,
            lib.paimon_cleanup_expiry_units_decide,
            lambda o: (o, *s, *c, *p, out.ref(), units.ref()),
            run,
        )
        return ExpiryStep(out.bytes(), units.bytes())


def finish(table: Table, decision: bytes, deleted: bytes, **run: Any) -> Report:
    """After every delete unit (driver): ``decision`` from :func:`decide` or :func:`conclude`,
    ``deleted`` every delete unit's result merged (``b""`` when there was none). Deletes the
    metadata in the crash-safe order and returns the report :meth:`Table.expire_snapshots`
    returns; :class:`StorageError`, before any metadata is deleted, when a delete unit could not
    delete a file (a rerun finishes)."""
    d, r = _arg(decision, "decision"), _arg(deleted, "deleted")
    out = ctypes.c_void_p()
    try:
        _on_driver(
            table,
            lib.paimon_cleanup_expiry_units_finish,
            lambda o: (o, *d, *r, ctypes.byref(out)),
            run,
        )
    except BaseException:
        if out.value:  # e.g. a callback raised although the run itself succeeded
            lib.paimon_cleanup_report_free(out.value)
        raise
    return read_report(out.value)


def gate(
    table: Table,
    state: bytes,
    summary: bytes,
    shards: int,
    paths_to_tasks: bool = False,
    **run: Any,
) -> ExpiryGated:
    """The gate of the sharded decision (driver), instead of :func:`protect` and :func:`decide`:
    ``summary`` is every candidate unit's summary merged, split into ``shards``. Decides and
    checks the metadata the expiry deletes; returns the decision so far and the gate. Nothing is
    deleted. ``paths_to_tasks``: each freed data or changelog path stays with the task that
    frees it (:attr:`ShardDecision.paths`, :func:`execute_handing_paths`); the final report then
    holds the counts, every failure and a sample of the paths."""
    s, m = _arg(state, "state"), _arg(summary, "summary")
    with _outs(_Buffer, _Buffer) as (decision, gated):
        _on_driver(
            table,
            lib.paimon_cleanup_expiry_units_gate_with_paths,
            lambda o: (o, *s, *m, shards, bool(paths_to_tasks), decision.ref(), gated.ref()),
            run,
        )
        return ExpiryGated(decision.bytes(), gated.bytes())


# ---- worker steps ---------------------------------------------------------------------------


def execute(
    unit: bytes,
    options: Optional[Mapping[str, str]] = None,
    *,
    executor: Optional[Executor] = None,
    **run: Any,
) -> bytes:
    """Executes one unit (candidate, protect or delete) on any host and returns its partial
    result. ``options`` are added to the options the unit carries (they win): units never carry
    credentials, so pass them here. Candidate and protect units only read; a delete unit checks
    every path again before its first deletion and reports the files it could not delete."""
    u, h = _arg(unit, "unit"), _HostOptions(options)
    with _outs(_Buffer) as (out,):
        _on_executor(
            executor,
            lib.paimon_cleanup_expiry_unit_execute,
            lambda o: (*u, h.keys, h.values, h.count, o, out.ref()),
            run,
        )
        return out.bytes()


def execute_handing_paths(
    unit: bytes,
    options: Optional[Mapping[str, str]] = None,
    *,
    executor: Optional[Executor] = None,
    **run: Any,
) -> Executed:
    """:func:`execute`, also handing out the paths a delete unit of a gate with
    ``paths_to_tasks`` deleted (that unit's result then carries counts and a sample;
    :func:`execute` refuses it)."""
    u, h = _arg(unit, "unit"), _HostOptions(options)
    with _outs(_Buffer, _BufferList) as (out, paths):
        _on_executor(
            executor,
            lib.paimon_cleanup_expiry_unit_execute_paths,
            lambda o: (*u, h.keys, h.values, h.count, o, out.ref(), paths.ref()),
            run,
        )
        return Executed(out.bytes(), paths.strings())


def decide_shard(
    gate: bytes,
    shard: int,
    piece: bytes,
    options: Optional[Mapping[str, str]] = None,
    *,
    executor: Optional[Executor] = None,
    **run: Any,
) -> ShardDecision:
    """Decides shard ``shard`` on any host: ``piece`` is every candidate unit's piece of that
    shard, merged. Returns the shard's report and delete units (and, see
    :attr:`ShardDecision.paths`, its paths). ``options`` as for :func:`execute`. Nothing is
    deleted."""
    g, p, h = _arg(gate, "gate"), _arg(piece, "piece"), _HostOptions(options)
    with _outs(_Buffer, _BufferList, _BufferList) as (report, units, paths):
        _on_executor(
            executor,
            lib.paimon_cleanup_expiry_shard_decide_paths,
            lambda o: (
                *g, shard, *p, h.keys, h.values, h.count, o, report.ref(), units.ref(), paths.ref()
            ),
            run,
        )
        return ShardDecision(report.bytes(), units.bytes(), paths.strings())


# ---- pure computations (any thread, no executor) --------------------------------------------


def merge(a: bytes, b: bytes) -> bytes:
    """Merges two partial results of one stage. Associative and commutative; ``b""`` is the
    neutral element. A unit's result included twice, or results of two plans or stages, raise
    :class:`InvalidArgument`."""
    x, y = _arg(a, "a"), _arg(b, "b")
    with _outs(_Buffer) as (out,):
        call(lib.paimon_cleanup_expiry_partials_merge, *x, *y, out.ref())
        return out.bytes()


def split(partial: bytes, shards: int) -> ExpirySplit:
    """Splits a candidate unit's result (or several merged) into its summary and ``shards``
    pieces (1 to 65,536) for the sharded decision."""
    p = _arg(partial, "partial")
    with _outs(_Buffer, _BufferList) as (summary, pieces):
        call(lib.paimon_cleanup_expiry_partial_split, *p, shards, summary.ref(), pieces.ref())
        return ExpirySplit(summary.bytes(), pieces.bytes())


def conclude(decision: bytes, reports: Sequence[bytes]) -> bytes:
    """Concludes the sharded decision (driver): ``decision`` from :func:`gate`, ``reports`` every
    shard's report exactly once (any order). Returns the decision for :func:`finish`; a missing,
    doubled or foreign report raises :class:`InvalidArgument`."""
    d = _arg(decision, "decision")
    pointers, lengths, n, _keep = _byte_arrays(reports, "a shard report")
    with _outs(_Buffer) as (out,):
        call(lib.paimon_cleanup_expiry_units_conclude, *d, pointers, lengths, n, out.ref())
        return out.bytes()
