"""Run control of one operation: cancellation, progress / log / veto trampolines, Ctrl-C.

Every operation gets a native cancellation token of its own. A user's :class:`CancelToken`
cancels the native tokens of the runs it is attached to; an exception raised by a callback
cancels its run's token and is re-raised by the operation once the native call has returned
(exceptions never cross the C boundary).
"""

from __future__ import annotations

import ctypes
import logging
import threading
from dataclasses import dataclass
from typing import Callable, Optional, Set, Union

from ._native import LogFn, ProgressFn, VetoFn, call, lib, text
from .errors import PaimonCleanupError

#: ``PaimonCleanupLogLevel`` numbers by name.
LOG_LEVELS = {"error": 1, "warn": 2, "warning": 2, "info": 3, "debug": 4, "trace": 5}
_PYTHON_LEVELS = {
    1: logging.ERROR,
    2: logging.WARNING,
    3: logging.INFO,
    4: logging.DEBUG,
    5: logging.DEBUG - 5,
}


@dataclass(frozen=True)
class Progress:
    """One progress report of a running operation."""

    #: The current step (``"data files"``, ``"manifests"``, ``"list candidates"``, ...).
    phase: str
    #: Items of that step processed so far, and in all (0 = unknown).
    done: int
    total: int
    #: Bytes deleted (dry run: deletable) so far in the whole run.
    bytes: int


class _NativeToken:
    """A native ``PaimonCleanupCancelToken``, owned by one run."""

    def __init__(self):
        ptr = ctypes.c_void_p()
        call(lib.paimon_cleanup_cancel_token_new, ctypes.byref(ptr))
        self.ptr = ptr.value

    def cancel(self) -> None:
        lib.paimon_cleanup_cancel_token_cancel(self.ptr)

    def free(self) -> None:
        lib.paimon_cleanup_cancel_token_free(self.ptr)
        self.ptr = None


class CancelToken:
    """Cancels the operations it is passed to (``cancel=token``), from any thread.

    Once cancelled it stays cancelled: operations started with it afterwards raise
    :class:`~paimon_cleanup.Cancelled` before reading anything. A running operation stops at its
    next check (before each step and each batch of deletions; orphan removal also between
    storage reads) and raises :class:`~paimon_cleanup.Cancelled`; what was deleted until then
    stays deleted, in crash-safe order, and a later run finishes the job.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._cancelled = False
        self._runs: Set[_NativeToken] = set()

    def cancel(self) -> None:
        """Cancels every run using this token, now and later. Safe from any thread, also from a
        progress callback."""
        with self._lock:
            self._cancelled = True
            for token in self._runs:
                token.cancel()

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` has been called."""
        return self._cancelled

    def _attach(self, token: _NativeToken) -> None:
        with self._lock:
            if self._cancelled:
                token.cancel()
            self._runs.add(token)

    def _detach(self, token: _NativeToken) -> None:
        with self._lock:
            self._runs.discard(token)


ProgressArg = Union[None, bool, Callable[[Progress], None]]
LogArg = Union[None, logging.Logger, Callable[[int, str, str], None]]


def _tqdm_progress() -> Optional[Callable[[Progress], None]]:
    """A progress callback drawing a tqdm bar per phase, or None when tqdm is not importable."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    state = {"bar": None, "phase": None}

    def update(p: Progress) -> None:
        bar = state["bar"]
        if bar is None or state["phase"] != p.phase:
            if bar is not None:
                bar.close()
            bar = tqdm(desc=p.phase, total=p.total or None, unit="item", leave=False)
            state["bar"], state["phase"] = bar, p.phase
        if p.total and bar.total != p.total:
            bar.total = p.total
        bar.n = p.done
        bar.set_postfix(bytes=p.bytes, refresh=False)
        bar.refresh()

    def close() -> None:
        if state["bar"] is not None:
            state["bar"].close()
            state["bar"] = None

    update.close = close  # type: ignore[attr-defined]
    return update


class Run:
    """Native run options and the callbacks of one operation call."""

    def __init__(
        self,
        progress: ProgressArg = None,
        cancel: Optional[CancelToken] = None,
        log: LogArg = None,
        log_level: Union[str, int] = "info",
        max_memory: Optional[int] = None,
    ):
        if cancel is not None and not isinstance(cancel, CancelToken):
            raise TypeError("cancel must be a paimon_cleanup.CancelToken")
        if max_memory is not None and (
            isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory < 1
        ):
            raise ValueError(f"max_memory must be a positive number of bytes, not {max_memory!r}")
        self.error: Optional[BaseException] = None
        self._lock = threading.Lock()
        self._keep: list = []  # ctypes callback objects, alive for the whole call
        self._progress_close = None
        self._user_token = cancel
        self.token = _NativeToken()
        options = ctypes.c_void_p()
        try:
            call(lib.paimon_cleanup_run_options_new, ctypes.byref(options))
            self.options = options.value
            call(lib.paimon_cleanup_run_options_set_cancel_token, self.options, self.token.ptr)
            if progress is True:
                progress = _tqdm_progress()
                self._progress_close = getattr(progress, "close", None)
            if progress:
                self._set_progress(progress)
            if log is not None:
                self._set_log(log, log_level)
            if max_memory is not None:
                call(lib.paimon_cleanup_run_options_set_max_memory, self.options, max_memory, None)
        except BaseException:
            self.close()
            raise
        if cancel is not None:
            cancel._attach(self.token)

    def fail(self, exc: BaseException) -> None:
        """Records the first exception of a callback and cancels the run."""
        with self._lock:
            if self.error is None:
                self.error = exc
        self.token.cancel()

    def _set_progress(self, fn: Callable[[Progress], None]) -> None:
        if not callable(fn):
            raise TypeError("progress must be a callable taking a paimon_cleanup.Progress, or True")

        def trampoline(_user_data, phase, done, total, size):
            if self.error is not None:
                return
            try:
                fn(Progress(text(phase) or "", done, total, size))
            except BaseException as exc:  # must not cross the C boundary
                self.fail(exc)

        native = ProgressFn(trampoline)
        self._keep.append(native)
        call(lib.paimon_cleanup_run_options_set_progress, self.options, native, None)

    def _set_log(self, log: LogArg, level: Union[str, int]) -> None:
        if isinstance(level, str):
            if level.lower() not in LOG_LEVELS:
                raise ValueError(f"log_level must be one of {sorted(LOG_LEVELS)}, not {level!r}")
            level = LOG_LEVELS[level.lower()]
        if isinstance(log, logging.Logger):
            logger = log

            def forward(lvl: int, target: str, message: str) -> None:
                logger.log(_PYTHON_LEVELS.get(lvl, logging.INFO), "%s: %s", target, message)

            fn = forward
        elif callable(log):
            fn = log
        else:
            raise TypeError("log must be a logging.Logger or a callable(level, target, message)")

        def trampoline(_user_data, lvl, target, message):
            if self.error is not None:
                return
            try:
                fn(lvl, text(target) or "", text(message) or "")
            except BaseException as exc:
                self.fail(exc)

        native = LogFn(trampoline)
        self._keep.append(native)
        call(lib.paimon_cleanup_run_options_set_log, self.options, native, int(level), None)

    def veto(self, fn: Callable[[str], bool]):
        """A native veto callback calling ``fn(path)``; True keeps the file. Once ``fn`` has
        raised, every further file is kept and the run is cancelled."""
        if not callable(fn):
            raise TypeError("veto must be a callable(path) -> bool")

        def trampoline(_user_data, path):
            if self.error is not None:
                return True
            try:
                return bool(fn(text(path) or ""))
            except BaseException as exc:
                self.fail(exc)
                return True

        native = VetoFn(trampoline)
        self._keep.append(native)
        return native

    def close(self) -> None:
        if self._user_token is not None:
            self._user_token._detach(self.token)
            self._user_token = None
        if getattr(self, "options", None):
            lib.paimon_cleanup_run_options_free(self.options)
            self.options = None
        if self.token.ptr:
            self.token.free()
        if self._progress_close is not None:
            self._progress_close()
            self._progress_close = None

    def invoke(self, fn: Callable[[], None]) -> None:
        """Runs ``fn`` (one blocking native call). On the main thread the call runs on a helper
        thread so that Ctrl-C cancels the run (KeyboardInterrupt is raised once it stopped).
        A callback's exception is raised instead of the run's own error."""
        try:
            _interruptible(fn, self.token.cancel)
        except PaimonCleanupError:
            if self.error is not None:
                raise self.error
            raise
        if self.error is not None:
            raise self.error


def _interruptible(fn: Callable[[], None], on_interrupt: Callable[[], None]) -> None:
    if threading.current_thread() is not threading.main_thread():
        fn()
        return
    outcome: dict = {}

    def target() -> None:
        try:
            fn()
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="paimon-cleanup-call", daemon=True)
    worker.start()
    interrupted = False
    while worker.is_alive():
        try:
            worker.join(0.2)
        except KeyboardInterrupt:
            # Cancel and keep waiting: the native call still uses the handles.
            interrupted = True
            on_interrupt()
    if interrupted:
        raise KeyboardInterrupt
    if "error" in outcome:
        raise outcome["error"]
