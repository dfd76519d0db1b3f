"""Exceptions: one class per status code of the C ABI (``PaimonCleanupStatus``).

Every class derives from :class:`PaimonCleanupError`, which carries the numeric ``status``,
its ``status_name`` (``"not_found"``, ...) and the library's ``message``. A few also derive from
the built-in exception a Python caller would naturally catch (``ValueError``,
``FileNotFoundError``, ``OSError``).
"""

from __future__ import annotations

from typing import Dict, Type

from ._native import lib, text


class PaimonCleanupError(Exception):
    """A failed call of the library. ``status`` is the C status code (stable numbers)."""

    status: int = -1
    status_name: str = "unknown"

    def __init__(self, message: str, status: int = -1):
        super().__init__(message)
        self.message = message
        if status != -1 or type(self) is PaimonCleanupError:
            self.status = status

    def __str__(self) -> str:
        return f"{self.status_name}: {self.message}"


def _status(code: int, name: str):
    def decorate(cls):
        cls.status = code
        cls.status_name = name
        return cls

    return decorate


@_status(1, "invalid_argument")
class InvalidArgument(PaimonCleanupError, ValueError):
    """An unusable argument or option value, an out-of-range number, a duplicate option key."""


@_status(2, "not_found")
class NotFound(PaimonCleanupError, FileNotFoundError):
    """The table (or a file it needs) does not exist."""


@_status(3, "malformed")
class Malformed(PaimonCleanupError):
    """A metadata file cannot be decoded. Nothing was deleted."""


@_status(4, "unsupported")
class Unsupported(PaimonCleanupError):
    """A table feature the library cannot handle safely. Nothing was deleted."""


@_status(5, "storage")
class StorageError(PaimonCleanupError, OSError):
    """A file system or object store I/O failure."""


@_status(6, "path_refused")
class PathRefused(PaimonCleanupError):
    """A path outside the table's roots was refused."""


@_status(7, "cancelled")
class Cancelled(PaimonCleanupError):
    """The run was cancelled (a :class:`~paimon_cleanup.CancelToken`, or Ctrl-C)."""


@_status(8, "conflict")
class Conflict(PaimonCleanupError):
    """A commit lost its race, or a table invariant does not hold."""


@_status(9, "internal")
class InternalError(PaimonCleanupError):
    """A bug in the library."""


@_status(10, "null_pointer")
class NullPointer(PaimonCleanupError):
    """A required pointer was NULL (a bug in this package if it ever happens)."""


@_status(11, "invalid_utf8")
class InvalidUtf8(PaimonCleanupError, ValueError):
    """A string argument was not valid UTF-8."""


@_status(12, "panic")
class Panic(PaimonCleanupError):
    """A panic inside the library, caught at the boundary."""


@_status(13, "memory_limit")
class MemoryLimit(PaimonCleanupError, MemoryError):
    """The run needed more memory than its ``max_memory=`` bound. It stopped while planning:
    nothing was deleted or committed. Raise the bound or remove less per run."""


ERROR_CLASSES: Dict[int, Type[PaimonCleanupError]] = {
    cls.status: cls
    for cls in (
        InvalidArgument,
        NotFound,
        Malformed,
        Unsupported,
        StorageError,
        PathRefused,
        Cancelled,
        Conflict,
        InternalError,
        NullPointer,
        InvalidUtf8,
        Panic,
        MemoryLimit,
    )
}


def error_from_status(status: int, message: str) -> PaimonCleanupError:
    """The exception for a status code; an unknown code gives a plain
    :class:`PaimonCleanupError` (codes are only ever appended)."""
    cls = ERROR_CLASSES.get(status)
    if cls is None:
        error = PaimonCleanupError(message, status)
        error.status_name = text(lib.paimon_cleanup_status_name(status)) or "unknown"
        return error
    return cls(message)
