"""Bundles the prebuilt native library into the wheel and tags the wheel for this platform.

Nothing is compiled here: the library is the one `cargo build --release --lib` (or the CMake
build, which runs the same command) already produced. Where it is looked for, in order:

1. ``PAIMON_CLEANUP_LIB``: the library file itself;
2. ``$CARGO_TARGET_DIR/release/`` when ``CARGO_TARGET_DIR`` is set;
3. ``target/release/`` of the repository this directory belongs to (``../../target``).

The wheel is tagged ``py3-none-<platform>`` (e.g. ``py3-none-linux_x86_64``): the package is
pure Python over ctypes, so it works with any Python 3 of that platform, but not on another.
Before bundling, the library is loaded and its C ABI version compared with the one the package
was written for, so a stale or foreign library fails the build, not the user.
"""

import ctypes
import os
import re
import sys
import sysconfig
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

if sys.platform == "darwin":
    LIB_NAME = "libpaimon_cleanup.dylib"
elif sys.platform == "win32":
    LIB_NAME = "paimon_cleanup.dll"
else:
    LIB_NAME = "libpaimon_cleanup.so"


def _candidates(root: Path):
    explicit = os.environ.get("PAIMON_CLEANUP_LIB")
    if explicit:
        yield Path(explicit)
        return
    target = os.environ.get("CARGO_TARGET_DIR")
    if target:
        yield Path(target) / "release" / LIB_NAME
    yield root.parent.parent / "target" / "release" / LIB_NAME


def _abi_version_of_package(root: Path) -> int:
    source = (root / "src" / "paimon_cleanup" / "_native.py").read_text(encoding="utf-8")
    m = re.search(r"^ABI_VERSION = (\d+)$", source, re.M)
    if not m:
        raise RuntimeError("ABI_VERSION not found in src/paimon_cleanup/_native.py")
    return int(m.group(1))


def _platform_tag() -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", sysconfig.get_platform())


class CustomBuildHook(BuildHookInterface):
    """Adds the native library to the wheel as ``paimon_cleanup/<lib>``."""

    def initialize(self, version, build_data):
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        tried = list(_candidates(root))
        library = next((p for p in tried if p.is_file()), None)
        if library is None:
            raise RuntimeError(
                "paimon-cleanup: the native library is not built; run `cargo build --release "
                "--lib` in the repository root first, or set PAIMON_CLEANUP_LIB. Looked at: "
                + ", ".join(str(p) for p in tried)
            )
        lib = ctypes.CDLL(str(library.resolve()))
        lib.paimon_cleanup_abi_version.restype = ctypes.c_uint32
        lib.paimon_cleanup_version.restype = ctypes.c_char_p
        abi, expected = lib.paimon_cleanup_abi_version(), _abi_version_of_package(root)
        if abi != expected:
            raise RuntimeError(f"{library} has C ABI {abi}; the package is written for {expected}")
        lib_version = lib.paimon_cleanup_version().decode()
        if lib_version != self.metadata.version:
            raise RuntimeError(
                f"{library} is version {lib_version}; the package is {self.metadata.version} "
                "(keep bindings/python/pyproject.toml in step with Cargo.toml)"
            )
        build_data["force_include"][str(library.resolve())] = f"paimon_cleanup/{LIB_NAME}"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{_platform_tag()}"
        self.app.display_info(f"paimon-cleanup: bundling {library} (C ABI {abi})")
