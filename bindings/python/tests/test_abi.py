"""The ctypes declarations match the C header, and the wheel holds the library it claims."""

from __future__ import annotations

import ctypes
import re
import sys
from pathlib import Path

import paimon_cleanup as pc
from paimon_cleanup import _native
from conftest import REPO

HEADER = REPO / "include" / "paimon_cleanup.h"


def header_text() -> str:
    text = HEADER.read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def header_prototypes():
    text = header_text()
    body = text[text.index('extern "C" {') :]
    body = body[: body.rindex("#ifdef __cplusplus")]
    body = "\n".join(line for line in body.splitlines() if not line.startswith("#"))
    body = body.replace('extern "C" {', "")
    return _native.parse_prototypes(body)


def test_every_declaration_matches_the_header():
    ours = _native.parse_prototypes(_native.PROTOTYPES)
    theirs = header_prototypes()
    assert len(theirs) >= len(ours) > 100
    for name, signature in ours.items():
        assert name in theirs, f"{name} is not in the header"
        assert signature == theirs[name], f"{name}: ours {signature}, header {theirs[name]}"
    # every function the package calls is declared (an undeclared ctypes function would be
    # called with int arguments and an int result); that every header function is called, or
    # listed in bindings/c-only.txt, is checked by tests/binding_coverage.rs
    package = Path(pc.__file__).parent
    used = set()
    for source in package.glob("*.py"):
        used |= set(re.findall(r"lib\.(paimon_cleanup_\w+)", source.read_text(encoding="utf-8")))
    assert used and used <= set(ours), sorted(used - set(ours))


def test_constants_match_the_header():
    text = header_text()
    abi = int(re.search(r"#define PAIMON_CLEANUP_ABI_VERSION (\d+)", text).group(1))
    assert pc.ABI_VERSION == abi == _native.lib.paimon_cleanup_abi_version()
    count = int(re.search(r"#define PAIMON_CLEANUP_FILE_CLASS_COUNT (\d+)", text).group(1))
    assert len(pc.FILE_CLASSES) == count
    statuses = dict(
        (int(v), n) for n, v in re.findall(r"PAIMON_CLEANUP_STATUS_(\w+) = (\d+)", text)
    )
    assert sorted(statuses) == [0] + sorted(pc.errors.ERROR_CLASSES)
    for code, cls in pc.errors.ERROR_CLASSES.items():
        assert cls.status_name.upper() == statuses[code]
    strategies = dict(re.findall(r"PAIMON_CLEANUP_PARTITION_EXPIRE_STRATEGY_(\w+) = (\d+)", text))
    assert strategies == {"VALUES_TIME": "0", "UPDATE_TIME": "1"}


def test_struct_layout():
    assert ctypes.sizeof(_native.TableSummary) == 64


def test_versions_and_bundled_library():
    assert pc.library_version() == pc.__version__
    cargo = (REPO / "Cargo.toml").read_text()
    assert f'version = "{pc.__version__}"' in cargo
    pyproject = (REPO / "bindings" / "python" / "pyproject.toml").read_text()
    assert f'version = "{pc.__version__}"' in pyproject
    # loaded from the installed package (the wheel bundles it), not from the source tree
    lib = Path(pc.library_path)
    assert lib.parent == Path(pc.__file__).parent
    assert "site-packages" in str(lib) or "PAIMON_CLEANUP_LIBRARY" in __import__("os").environ
    assert sys.modules["paimon_cleanup"].__file__ == pc.__file__


def test_ints_out_of_their_c_range_are_refused_not_wrapped():
    # ctypes keeps the low bits of an int too large for its C type: 2**32 + 1 worker threads
    # would start 1, and 2**64 + 1 retained snapshots would keep 1.
    import pytest

    with pytest.raises(pc.InvalidArgument, match="out of range"):
        pc.Executor(threads=2**32 + 1)
    with pytest.raises(pc.InvalidArgument):
        pc.Executor(threads=-1)
    with pc.Executor(threads=1) as ex:
        with pytest.raises(pc.InvalidArgument, match="out of range"):
            ex.io_concurrency = 2**32
    config = ctypes.c_void_p()
    _native.call(_native.lib.paimon_cleanup_expire_config_new, ctypes.byref(config))
    try:
        for setter, bad in (
            (_native.lib.paimon_cleanup_expire_config_set_retain_min, 2**64 + 1),
            (_native.lib.paimon_cleanup_expire_config_set_time_retained_ms, 2**64),
            (_native.lib.paimon_cleanup_expire_config_set_older_than_ms, -(2**63) - 1),
        ):
            with pytest.raises(pc.InvalidArgument):
                _native.call(setter, config, bad)
        # In the C type's range but past the library's bound: the library's INVALID_ARGUMENT.
        with pytest.raises(pc.InvalidArgument, match="retain_min"):
            _native.call(
                _native.lib.paimon_cleanup_expire_config_set_retain_min, config, 2**31
            )
    finally:
        _native.lib.paimon_cleanup_expire_config_free(config)
