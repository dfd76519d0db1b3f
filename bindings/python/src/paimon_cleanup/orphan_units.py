"""Orphan-file removal as units, for engines that schedule the work on their own workers (Ray,
Dask, Spark through PySpark, ...): the C functions ``paimon_cleanup_orphan_*``.

Every unit and every partial result is an opaque, versioned ``bytes`` value: pickle it, ship it,
store it, retry it. The result equals :meth:`Table.remove_orphan_files` (same report, same files
left)::

    from paimon_cleanup import orphan_units as ou

    plan = ou.plan(table, older_than="1 d")                     # driver, reads only
    merged = b""                                                # workers, any order:
    for unit in plan.units:
        merged = ou.merge(merged, ou.execute(unit))
    decision = ou.decide(table, plan.state, merged)             # nothing deleted yet
    deleted = b""
    for unit in decision.units:                                 # the delete units
        deleted = ou.merge(deleted, ou.execute(unit))
    report = ou.finish(table, decision.state, deleted)

The sharded decision (no process holds every candidate and reference) replaces :func:`decide`:
:func:`split` each plan unit's result into a summary and K pieces, :func:`gate` on the driver
with the merged summaries, :func:`decide_shard` per shard with its merged pieces, :func:`gate`
again until it confirms the round (``decide`` false; while it is true the shards decide again
with the new gate), :func:`conclude` with the confirming gate's state and every shard's report,
:func:`execute` the shards' delete units, then :func:`finish`.

Ownership: every ``bytes`` value returned is a Python copy (the native buffers are freed before
a function returns, also when it raises); arguments are only read during the call.
Thread-safety: every function may be called from many threads at once; the calls release the
GIL. Errors: :class:`PaimonCleanupError` subclasses with the library's status
(:class:`InvalidArgument` for foreign, corrupted or doubled bytes, a missing unit result or
shard report, and a cut-off the single-process run refuses; :class:`Conflict` when versions keep
appearing; :class:`Cancelled`, ...). Driver steps take a :class:`Table` and run on its executor;
:func:`execute` takes ``executor=`` (default: :func:`default_executor`). Every step that runs
takes the keyword arguments ``progress``, ``cancel``, ``log``, ``log_level`` and ``max_memory``
of the table operations. The plan's cut-off, dry-run flag and roots hold for the whole run.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, List, Mapping, NamedTuple, Optional, Sequence

from ._native import call, lib
from ._run import Run
from .expiry_units import (
    _arg,
    _Buffer,
    _BufferList,
    _byte_arrays,
    _HostOptions,
    _on_driver,
    _on_executor,
    _outs,
)
from .report import Report, read_report
from .table import Age, Executor, Table, _OrphanConfig

__all__ = [
    "OrphanStep",
    "OrphanSplit",
    "OrphanGated",
    "OrphanShardDecision",
    "plan",
    "execute",
    "merge",
    "decide",
    "finish",
    "split",
    "gate",
    "decide_shard",
    "conclude",
]


class OrphanStep(NamedTuple):
    """What :func:`plan` and :func:`decide` return."""

    #: The plan state (plan) or the decision (decide): keep it on the driver for the next step.
    state: bytes
    #: The units to :func:`execute`: the plan units (list directories, read manifests), or the
    #: delete units (none in a dry run or when nothing is to be deleted).
    units: List[bytes]


class OrphanSplit(NamedTuple):
    """A plan unit's result split for the sharded decision."""

    #: For the driver: merge every summary and pass it to :func:`gate` and :func:`conclude`.
    summary: bytes
    #: One piece per shard (``shards[i]`` is shard ``i``): merge each shard's pieces for
    #: :func:`decide_shard`.
    shards: List[bytes]


class OrphanGated(NamedTuple):
    """What :func:`gate` returns."""

    #: The driver's updated state, for the next :func:`gate` and for :func:`conclude`.
    state: bytes
    #: What every shard of this round decides with (ship it to the shard tasks).
    gate: bytes
    #: True when the shards must decide (again) with :attr:`gate`: after the first gate, and
    #: after one that found a new version. False confirms the round the shards decided.
    decide: bool


class OrphanShardDecision(NamedTuple):
    """What :func:`decide_shard` returns."""

    #: The shard's report, for :func:`conclude`.
    report: bytes
    #: Executed after :func:`conclude` succeeded (none in a dry run).
    delete_units: List[bytes]


# ---- the native orphan config ---------------------------------------------------------------


def _on_driver_vetoed(
    table: Table,
    fn: Callable,
    veto: Optional[Callable[[str], bool]],
    args: Callable[[Any], tuple],
    run_kwargs: dict,
) -> None:
    """A driver step asking a veto: ``fn(ctx, executor, config, *args(run_options))``. Only the
    config's veto is read by these steps (the cut-off, dry run and roots are the plan's), so
    the config is a default one carrying ``veto``, tied to this call's run: a veto that raises
    cancels the call and its exception propagates."""
    if not isinstance(table, Table):
        raise TypeError(f"table must be a paimon_cleanup.Table, not {type(table).__name__}")
    cfg = _OrphanConfig()
    try:
        run = Run(**run_kwargs)
        try:
            if veto is not None:
                call(lib.paimon_cleanup_orphan_config_set_veto, cfg.ptr, run.veto(veto), None)
            with table._handles() as (ctx, exe):
                run.invoke(lambda: call(fn, ctx, exe, cfg.ptr, *args(run.options)))
        finally:
            run.close()
    finally:
        cfg.free()


# ---- driver steps ---------------------------------------------------------------------------


def plan(
    table: Table,
    older_than: Optional[Age] = None,
    dry_run: bool = False,
    *,
    no_writers_running: bool = False,
    external_roots_owned: bool = False,
    list_concurrency: int = 0,
    **run: Any,
) -> OrphanStep:
    """Plans an orphan-file removal (driver; reads only). The settings are those of
    :meth:`Table.remove_orphan_files` (``older_than`` default 1 day; a cut-off within the last
    hour raises :class:`InvalidArgument` unless ``no_writers_running``); the veto is given to
    :func:`decide` / :func:`decide_shard`, and deletions run at the executor's I/O concurrency
    (there is no ``delete_concurrency``). Walks the partition directories, reads every version
    of every branch and its manifest lists; returns the plan state and the plan units ("list
    these directories", "read these manifests"). Orphan removal is table-wide: any branch of
    the table plans the same run."""
    cfg = _OrphanConfig(
        older_than, dry_run, no_writers_running, external_roots_owned, list_concurrency
    )
    try:
        with _outs(_Buffer, _BufferList) as (state, units):
            _on_driver(
                table,
                lib.paimon_cleanup_orphan_units_plan,
                lambda o: (cfg.ptr, o, state.ref(), units.ref()),
                run,
            )
            return OrphanStep(state.bytes(), units.bytes())
    finally:
        cfg.free()


def decide(
    table: Table,
    state: bytes,
    merged: bytes,
    veto: Optional[Callable[[str], bool]] = None,
    **run: Any,
) -> OrphanStep:
    """After the plan units (driver): ``state`` from :func:`plan`, ``merged`` every plan unit's
    result merged (one missing or included twice raises :class:`InvalidArgument`). Lists the
    versions again until no new one appears, keeps every referenced file, every file whose name
    is referenced at another location and every file ``veto(path)`` keeps (True keeps it; as
    for :meth:`Table.remove_orphan_files`), checks every path; returns the decision (as
    ``state``) and the delete units (none in a dry run). Nothing is deleted."""
    s, m = _arg(state, "state"), _arg(merged, "merged")
    with _outs(_Buffer, _BufferList) as (out, units):
        _on_driver_vetoed(
            table,
            lib.paimon_cleanup_orphan_units_decide,
            veto,
            lambda o: (o, *s, *m, out.ref(), units.ref()),
            run,
        )
        return OrphanStep(out.bytes(), units.bytes())


def finish(table: Table, decision: bytes, deleted: bytes, **run: Any) -> Report:
    """After every delete unit (driver): ``decision`` from :func:`decide` or :func:`conclude`,
    ``deleted`` every delete unit's result merged (``b""`` when there was none; a missing one
    raises :class:`InvalidArgument`). Removes the data directories the deletions left empty
    (not in a dry run) and returns the report :meth:`Table.remove_orphan_files` returns; files a
    delete unit could not delete are in ``report.failed``."""
    d, r = _arg(decision, "decision"), _arg(deleted, "deleted")
    out = ctypes.c_void_p()
    try:
        _on_driver(
            table,
            lib.paimon_cleanup_orphan_units_finish,
            lambda o: (o, *d, *r, ctypes.byref(out)),
            run,
        )
    except BaseException:
        if out.value:  # e.g. a callback raised although the run itself succeeded
            lib.paimon_cleanup_report_free(out.value)
        raise
    return read_report(out.value)


def gate(table: Table, state: bytes, summary: bytes, shards: int, **run: Any) -> OrphanGated:
    """The gate of the sharded decision (driver), instead of :func:`decide`: ``state`` is the
    plan's state or the previous gate's, ``summary`` every plan unit's summary merged, split
    into ``shards``. Lists the versions again until no new one appears (reading the new ones'
    manifests); returns the new state, the gate and whether the shards decide (again). Call it
    before the shards decide and after; :func:`conclude` takes the state of the gate that
    returned ``decide`` false. Nothing is deleted. A missing or doubled summary, or another
    shard count, raises :class:`InvalidArgument`."""
    s, m = _arg(state, "state"), _arg(summary, "summary")
    decide_again = ctypes.c_bool()
    with _outs(_Buffer, _Buffer) as (out, gated):
        _on_driver(
            table,
            lib.paimon_cleanup_orphan_units_gate,
            lambda o: (o, *s, *m, shards, out.ref(), gated.ref(), ctypes.byref(decide_again)),
            run,
        )
        return OrphanGated(out.bytes(), gated.bytes(), bool(decide_again.value))


def decide_shard(
    table: Table,
    gate: bytes,
    shard: int,
    piece: bytes,
    veto: Optional[Callable[[str], bool]] = None,
    **run: Any,
) -> OrphanShardDecision:
    """Decides shard ``shard`` (on any host with the table: it takes a :class:`Table`, opened
    there with the credentials): ``gate`` from the round's :func:`gate`, ``piece`` every plan
    unit's piece of that shard merged (another shard's piece, or one missing a unit, raises
    :class:`InvalidArgument`). Keeps what is referenced by location or name and what ``veto``
    keeps, checks every remaining path; returns the shard's report and delete units. Nothing is
    deleted."""
    g, p = _arg(gate, "gate"), _arg(piece, "piece")
    with _outs(_Buffer, _BufferList) as (report, units):
        _on_driver_vetoed(
            table,
            lib.paimon_cleanup_orphan_shard_decide,
            veto,
            lambda o: (o, *g, shard, *p, report.ref(), units.ref()),
            run,
        )
        return OrphanShardDecision(report.bytes(), units.bytes())


# ---- worker steps ---------------------------------------------------------------------------


def execute(
    unit: bytes,
    options: Optional[Mapping[str, str]] = None,
    *,
    executor: Optional[Executor] = None,
    **run: Any,
) -> bytes:
    """Executes one unit (a plan unit or a delete unit) on any host and returns its partial
    result. ``options`` are added to the options the unit carries (they win): units never carry
    credentials, so pass them here. Plan units only read (a manifest that cannot be read is in
    the result; :func:`decide` judges it); a delete unit checks every path again before its
    first deletion and reports the files it could not delete."""
    u, h = _arg(unit, "unit"), _HostOptions(options)
    with _outs(_Buffer) as (out,):
        _on_executor(
            executor,
            lib.paimon_cleanup_orphan_unit_execute,
            lambda o: (*u, h.keys, h.values, h.count, o, out.ref()),
            run,
        )
        return out.bytes()


# ---- pure computations (any thread, no executor) --------------------------------------------


def merge(a: bytes, b: bytes) -> bytes:
    """Merges two partial results (plan units', delete units', summaries or pieces of one
    shard). Associative and commutative, byte for byte; ``b""`` is the neutral element. A
    unit's result included twice, results of two plans, or pieces of two shards raise
    :class:`InvalidArgument`."""
    x, y = _arg(a, "a"), _arg(b, "b")
    with _outs(_Buffer) as (out,):
        call(lib.paimon_cleanup_orphan_partials_merge, *x, *y, out.ref())
        return out.bytes()


def split(partial: bytes, shards: int) -> OrphanSplit:
    """Splits a plan unit's result (or several merged) into its summary and ``shards`` pieces
    (1 to 65,536) by the shard of each file name, for the sharded decision. A result already
    split raises :class:`InvalidArgument`."""
    p = _arg(partial, "partial")
    with _outs(_Buffer, _BufferList) as (summary, pieces):
        call(lib.paimon_cleanup_orphan_partial_split, *p, shards, summary.ref(), pieces.ref())
        return OrphanSplit(summary.bytes(), pieces.bytes())


def conclude(state: bytes, summary: bytes, reports: Sequence[bytes]) -> bytes:
    """Concludes the sharded decision (driver): ``state`` from the gate that confirmed the round
    (``decide`` false), ``summary`` every plan unit's summary merged, ``reports`` the round's
    report of every shard exactly once (any order). Returns the decision for :func:`finish`; an
    unconfirmed round, or a missing, doubled, stale or foreign report raises
    :class:`InvalidArgument`."""
    s, m = _arg(state, "state"), _arg(summary, "summary")
    pointers, lengths, n, _keep = _byte_arrays(reports, "a shard report")
    with _outs(_Buffer) as (out,):
        call(lib.paimon_cleanup_orphan_units_conclude, *s, *m, pointers, lengths, n, out.ref())
        return out.bytes()
