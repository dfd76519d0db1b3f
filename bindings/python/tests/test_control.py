"""Run control through Python: progress, cancellation from another thread, the veto callable,
the GIL released during native calls, executors and threads, errors by status."""

from __future__ import annotations

import datetime
import logging
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import paimon_cleanup as pc
from conftest import DAY_MS, listing, plant_orphans, set_mtime

# How long a cancelled run may take to return once cancelled (the C tests allow the same).
CANCEL_LIMIT_S = 1.0


def dt_days(n: int) -> datetime.timedelta:
    return datetime.timedelta(days=n)


@pytest.fixture
def orphan_table(copy_table):
    """``orphan_table(where)``: a copy of a table with 12,000 planted orphan files, everything
    three days old."""

    def make(where: str = "orphans") -> Path:
        table_dir = copy_table("append_unaware", where)
        plant_orphans(table_dir, 12_000)
        set_mtime(table_dir, 3 * DAY_MS)
        return table_dir

    return make


def test_progress_callable(orphan_table):
    table_dir = orphan_table()
    calls = []
    with pc.Table(table_dir) as table:
        report = table.remove_orphan_files(
            older_than=dt_days(1), dry_run=True, progress=calls.append
        )
    assert calls and all(isinstance(c, pc.Progress) for c in calls)
    phases = [c.phase for c in calls]
    assert "list candidates" in phases
    for c in calls:
        assert c.total == 0 or c.done <= c.total
    assert calls[-1].bytes == report.total_bytes > 0


def test_progress_tqdm(copy_table, capsys):
    pytest.importorskip("tqdm")
    table_dir = copy_table("pk_fixed")
    with pc.Table(table_dir) as table:
        report = table.expire_snapshots(retain_min=1, older_than="0s", dry_run=True, progress=True)
    assert report.total_files > 0
    err = capsys.readouterr().err
    # one bar per phase, drawn on stderr (and cleared: leave=False)
    assert "data files" in err or "manifest" in err, err


def test_log_to_logger(copy_table, caplog):
    table_dir = copy_table("pk_fixed")
    logger = logging.getLogger("paimon_cleanup.test")
    with caplog.at_level(logging.DEBUG, logger="paimon_cleanup.test"):
        with pc.Table(table_dir) as table:
            table.remove_orphan_files(older_than=dt_days(1), dry_run=True, log=logger)
    messages = [r.getMessage() for r in caplog.records if r.name == "paimon_cleanup.test"]
    assert any("orphan" in m for m in messages), messages


def test_progress_exception_cancels_and_propagates(copy_table):
    table_dir = copy_table("pk_fixed")
    source = listing(table_dir)

    class Boom(Exception):
        pass

    def progress(_p):
        raise Boom("stop")

    with pc.Table(table_dir) as table:
        with pytest.raises(Boom):
            table.expire_snapshots(retain_min=1, older_than="0s", progress=progress)
        # the table is consistent: a rerun finishes the job
        table.expire_snapshots(retain_min=1, older_than="0s")
    assert listing(table_dir) != source


def test_cancelled_token_before_every_operation(copy_table):
    table_dir = copy_table("append_unaware")
    source = listing(table_dir)
    token = pc.CancelToken()
    token.cancel()
    assert token.cancelled
    calls = [
        lambda t: t.expire_snapshots(retain_min=1, older_than="0s", cancel=token),
        lambda t: t.expire_changelogs(retain_min=1, older_than="0s", cancel=token),
        lambda t: t.delete_tag("t1", cancel=token),
        lambda t: t.expire_tags(older_than=int(time.time() * 1000), cancel=token),
        lambda t: t.expire_consumers(expiration_time="1 ms", cancel=token),
        lambda t: t.remove_orphan_files(older_than=dt_days(1), cancel=token),
        lambda t: t.drop_partitions([{"dt": "2024-01-01"}], cancel=token),
        lambda t: t.expire_partitions(strategy="update-time", expiration_time="1 ms", cancel=token),
        lambda t: t.maintain(cancel=token),
    ]
    with pc.Table(table_dir) as table:
        for fn in calls:
            with pytest.raises(pc.Cancelled) as info:
                fn(table)
            assert info.value.status == 7 and info.value.status_name == "cancelled"
    assert listing(table_dir) == source


@pytest.mark.parametrize("stage", ["read references", "delete"])
def test_cancel_from_another_thread(orphan_table, stage):
    """Cancelled by another thread while it reads references / while it deletes: the call
    returns within the limit, and nothing beyond what the dry run listed is gone."""
    for attempt in range(2):  # one retry of a run over the limit, for a loaded machine
        table_dir = orphan_table(f"cancel-{attempt}")
        before = set(listing(table_dir))
        with pc.Table(table_dir) as table:
            dry = table.remove_orphan_files(older_than=dt_days(1), dry_run=True)
            deletable = {p.path for p in dry.paths}
            assert len(deletable) > 10_000

            reached = threading.Event()
            cancelled_at = []
            token = pc.CancelToken()

            def progress(p):
                in_stage = (
                    p.phase == "read references"
                    if stage == "read references"
                    else (p.phase not in ("list candidates", "read references") and p.done > 0)
                )
                if in_stage and not reached.is_set():
                    reached.set()
                    # progress calls are synchronous: the run waits here, so the cancel lands
                    # in this stage even on a loaded machine
                    time.sleep(0.2)

            def canceller():
                reached.wait(60)
                cancelled_at.append(time.monotonic())
                token.cancel()

            thread = threading.Thread(target=canceller)
            thread.start()
            with pytest.raises(pc.Cancelled):
                table.remove_orphan_files(older_than=dt_days(1), progress=progress, cancel=token)
            returned_at = time.monotonic()
            thread.join()
        assert reached.is_set()
        after = {line.rsplit(" ", 1)[0] for line in listing(table_dir)}
        for line in before:
            path = line.rsplit(" ", 1)[0]
            if path not in deletable:
                assert path in after, f"{path} was deleted although the dry run kept it"
        gone = {line.rsplit(" ", 1)[0] for line in before} - after
        if stage == "read references":
            assert not gone
        else:
            assert gone and gone <= deletable and len(gone) < len(deletable)
        elapsed = returned_at - cancelled_at[0]
        if elapsed <= CANCEL_LIMIT_S:
            break
    assert elapsed <= CANCEL_LIMIT_S, f"returned {elapsed:.3f} s after the cancel"
    # the table still reads as before, and a rerun converges
    with pc.Table(table_dir) as table:
        table.remove_orphan_files(older_than=dt_days(1))
    assert not (Path(table_dir) / "manifest" / "manifest-planted-orphan").exists()


def test_veto_keeps_files(copy_table):
    table_dir = copy_table("append_unaware")
    planted = plant_orphans(table_dir, 3)
    set_mtime(table_dir, 3 * DAY_MS)
    seen = []
    threads = set()

    def veto(path):
        seen.append(path)
        threads.add(threading.get_ident())
        return path == planted[0]

    with pc.Table(table_dir) as table:
        dry = table.remove_orphan_files(older_than=dt_days(1), dry_run=True, veto=veto)
        assert sorted(seen) == sorted(planted) and dry.vetoed == 1
        seen.clear()
        report = table.remove_orphan_files(older_than=dt_days(1), veto=veto)
    assert sorted(seen) == sorted(planted)
    assert report.vetoed == 1 and report.total_files == len(planted) - 1
    assert (table_dir / planted[0]).exists()
    for path in planted[1:]:
        assert not (table_dir / path).exists()


def test_veto_that_raises_aborts_cleanly(copy_table):
    table_dir = copy_table("append_unaware")
    plant_orphans(table_dir, 5)
    set_mtime(table_dir, 3 * DAY_MS)
    source = listing(table_dir)
    mtimes = {p: p.stat().st_mtime_ns for p in table_dir.rglob("*")}
    error = RuntimeError("veto service unreachable")
    calls = []

    def veto(path):
        calls.append(path)
        if len(calls) == 2:
            raise error
        return False

    with pc.Table(table_dir) as table:
        with pytest.raises(RuntimeError) as info:
            table.remove_orphan_files(older_than=dt_days(1), veto=veto)
        assert info.value is error
        assert len(calls) == 2  # no further call once it raised
        assert listing(table_dir) == source
        assert {p: p.stat().st_mtime_ns for p in table_dir.rglob("*")} == mtimes
        # the same table works afterwards
        report = table.remove_orphan_files(older_than=dt_days(1))
    assert report.total_files == 6


def test_gil_released_during_native_call(orphan_table):
    table_dir = orphan_table()
    counter = [0]
    running = threading.Event()
    done = threading.Event()

    def count():
        running.set()
        while not done.is_set():
            counter[0] += 1

    with pc.Table(table_dir) as table:
        thread = threading.Thread(target=count)
        thread.start()
        running.wait()
        start = counter[0]
        t0 = time.monotonic()
        table.remove_orphan_files(older_than=dt_days(1), dry_run=True)
        elapsed = time.monotonic() - t0
        during = counter[0] - start
        done.set()
        thread.join()
    # a Python thread kept running while the call blocked (at least 100k loop turns per second
    # of native call; with the GIL held it would be stuck near 0)
    assert elapsed > 0.05
    assert during > 100_000 * elapsed * 0.1, (during, elapsed)


def test_threads_and_executors(copy_table):
    table_dir = copy_table("pk_fixed")
    with pc.Table(table_dir, threads=2, io_concurrency=5) as table:
        assert table.executor.threads == 2
        assert table.executor.io_concurrency == 5
        s1 = table.inspect()
    with pc.Executor(threads=3) as exe:
        assert exe.threads == 3
        tables = [pc.Table(table_dir, executor=exe) for _ in range(4)]
        results = [None] * 8
        errors = []

        def work(i):
            try:
                results[i] = tables[i % 4].inspect()
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        workers = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert not errors and all(r == s1 for r in results)
        for t in tables:
            t.close()
    with pytest.raises(pc.InvalidArgument):
        pc.Table(table_dir, executor=pc.default_executor(), threads=2)
    assert pc.default_executor().threads >= 1


def test_errors_by_status(copy_table, tmp_path):
    with pc.Table(tmp_path / "no-such-table") as table:
        with pytest.raises(pc.NotFound) as info:
            table.inspect()
    assert info.value.status == 2 and isinstance(info.value, FileNotFoundError)
    assert "not_found" in str(info.value)

    table_dir = copy_table("pk_fixed")
    source = listing(table_dir)
    with pc.Table(table_dir) as table:
        with pytest.raises(pc.InvalidArgument) as info:
            table.expire_snapshots(retain_min=0)
        assert "retain_min" in info.value.message and isinstance(info.value, ValueError)
        with pytest.raises(pc.InvalidArgument):
            table.expire_snapshots(retain_min=5, retain_max=2)
        with pytest.raises(pc.InvalidArgument):
            table.expire_snapshots(older_than=int(time.time() * 1000) + DAY_MS)
        with pytest.raises(pc.InvalidArgument):  # within the last hour, writers may be running
            table.remove_orphan_files(older_than="1 min")
        with pytest.raises(pc.InvalidArgument):
            table.expire_partitions(strategy="sometimes")
        with pytest.raises(pc.InvalidArgument):
            table.drop_partitions([])
        with pytest.raises(ValueError):
            table.delete_tag("a\x00b")
        with pytest.raises(pc.InvalidArgument):
            table.expire_snapshots(older_than="5 fortnights")
    with pc.Table(table_dir, options={"snapshot.num-retained.min": "0"}) as table:
        with pytest.raises(pc.InvalidArgument):
            table.expire_snapshots()
    assert listing(table_dir) == source
    table = pc.Table(table_dir)
    table.close()
    table.close()  # idempotent
    with pytest.raises(pc.InvalidArgument, match="closed"):
        table.inspect()
    # every status code has its class; unknown codes still raise the base class
    for status, cls in pc.errors.ERROR_CLASSES.items():
        assert cls.status == status
        assert pc._lib.paimon_cleanup_status_name(status).decode() == cls.status_name
    assert type(pc.errors.error_from_status(99, "x")) is pc.PaimonCleanupError


def test_cancel_is_idempotent_and_shared(copy_table):
    token = pc.CancelToken()
    token.cancel()
    token.cancel()
    table_dir = copy_table("pk_fixed")
    with pc.Table(table_dir) as a, pc.Table(table_dir) as b:
        for t in (a, b):
            with pytest.raises(pc.Cancelled):
                t.expire_snapshots(retain_min=1, cancel=token)


def test_parse_duration_matches_paimon():
    assert pc.parse_duration("0s") == 0
    assert pc.parse_duration("30 min") == 30 * 60_000
    assert pc.parse_duration("1 h") == 3_600_000
    assert pc.parse_duration("7d") == 7 * DAY_MS
    assert pc.parse_duration("250") == 250
    assert pc.parse_duration("1500us") == 1
    with pytest.raises(pc.InvalidArgument):
        pc.parse_duration("h")


def test_parse_older_than_is_the_library_parser():
    now = 1_700_000_000_000
    assert pc.parse_older_than("1 d", now) == now - DAY_MS
    assert pc.parse_older_than("2023-11-01 00:00:00Z", now) == 1_698_796_800_000
    for bad in ["", "12345", "yesterday", "2023-13-01 00:00:00", "2030-01-01 00:00:00Z"]:
        with pytest.raises(pc.InvalidArgument):
            pc.parse_older_than(bad, now)
    # Now by default: a duration lands just before the call's own clock.
    before = int(time.time() * 1000)
    got = pc.parse_older_than("1 h")
    assert before - 3_600_000 <= got <= int(time.time() * 1000) - 3_600_000


CTRL_C_SCRIPT = r"""
import datetime, os, signal, sys, threading, time
import paimon_cleanup as pc

first = threading.Event()
delivered = threading.Event()

def on_sigint(signum, frame):
    delivered.set()
    raise KeyboardInterrupt

signal.signal(signal.SIGINT, on_sigint)

def progress(p):
    if not first.is_set():
        first.set()
        # The run cannot go on before the main thread took the signal (however loaded the
        # machine), and then has time to cancel it.
        delivered.wait(60)
        time.sleep(0.5)

def interrupt():
    first.wait(60)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
with pc.Table(sys.argv[1]) as table:
    try:
        table.remove_orphan_files(older_than=datetime.timedelta(days=1), progress=progress)
        print("FINISHED")
    except KeyboardInterrupt:
        print("INTERRUPTED")
"""


def test_ctrl_c_cancels_the_run(orphan_table):
    """SIGINT while an operation blocks the main thread: the run is cancelled and
    KeyboardInterrupt is raised once it stopped; nothing the dry run kept is gone."""
    table_dir = orphan_table()
    with pc.Table(table_dir) as table:
        deletable = {
            p.path for p in table.remove_orphan_files(older_than=dt_days(1), dry_run=True).paths
        }
    before = {line.rsplit(" ", 1)[0] for line in listing(table_dir)}
    proc = subprocess.run(
        [sys.executable, "-c", CTRL_C_SCRIPT, str(table_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "INTERRUPTED", proc.stdout + proc.stderr
    after = {line.rsplit(" ", 1)[0] for line in listing(table_dir)}
    assert (before - after) <= deletable and len(before - after) < len(deletable)


def test_report_copies_share_the_native_report(copy_table):
    """asdict / deepcopy of a report and a maintain step outliving its parent stay valid (the
    native report is freed once, when the last Python object holding it is gone)."""
    import copy
    import dataclasses
    import gc

    table_dir = copy_table("append_unaware")
    with pc.Table(
        table_dir, options={"snapshot.num-retained.min": "1", "snapshot.time-retained": "0s"}
    ) as table:
        report = table.maintain(dry_run=True)
    doc = report.to_json()
    as_dict = dataclasses.asdict(report)
    clone = copy.deepcopy(report)
    assert as_dict["total_files"] == report.total_files > 0
    step = report.steps[0]
    del report, as_dict
    gc.collect()
    assert clone.to_json() == doc
    del clone
    gc.collect()
    assert (
        step.to_json()
        == doc[
            {
                "expire_tags": "tags",
                "expire_consumers": "consumers",
                "expire_snapshots": "snapshots",
                "expire_changelogs": "changelogs",
                "expire_partitions": "partitions",
            }[step.kind]
        ]
    )


@pytest.mark.parametrize("bound", [1, 512])
def test_max_memory_too_small_fails_and_deletes_nothing(copy_table, bound):
    table_dir = copy_table("pk_fixed")
    before = listing(table_dir)
    with pc.Table(table_dir) as table:
        with pytest.raises(pc.MemoryLimit) as info:
            table.expire_snapshots(retain_min=1, older_than="0s", max_memory=bound)
        assert info.value.status == 13 and info.value.status_name == "memory_limit"
        assert isinstance(info.value, MemoryError)
        assert "max_memory" in str(info.value) and str(bound) in str(info.value)
    assert listing(table_dir) == before


def test_max_memory_ample_runs_as_unbounded(copy_table):
    bounded_dir = copy_table("pk_fixed", "bounded")
    free_dir = copy_table("pk_fixed", "free")
    with pc.Table(bounded_dir) as bounded, pc.Table(free_dir) as free:
        got = bounded.expire_snapshots(retain_min=1, older_than="0s", max_memory=256 << 20)
        want = free.expire_snapshots(retain_min=1, older_than="0s")
    assert got.total_files == want.total_files > 0
    assert sorted(p.path for p in got.paths) == sorted(p.path for p in want.paths)
    assert listing(bounded_dir) == listing(free_dir)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1GiB"])
def test_max_memory_must_be_a_positive_int(copy_table, bad):
    with pc.Table(copy_table("pk_fixed")) as table:
        with pytest.raises(ValueError):
            table.expire_snapshots(dry_run=True, max_memory=bad)
