//go:build !paimon_cleanup_pkgconfig

package paimoncleanup

// Default linking: the library built in this repository by CMake (`cmake --build build`:
// target/release/libpaimon_cleanup.so, and the link libpaimon_cleanup.so.1 -> it that the loader
// looks for, the SONAME; found at run time through the rpath) and the header in
// include/. Build with `-tags paimon_cleanup_pkgconfig` to use an installed copy instead
// (link_pkgconfig.go), or add flags through CGO_CFLAGS / CGO_LDFLAGS.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -lpaimon_cleanup -Wl,-rpath,${SRCDIR}/../../target/release
import "C"
