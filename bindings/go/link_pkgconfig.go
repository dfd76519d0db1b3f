//go:build paimon_cleanup_pkgconfig

package paimoncleanup

// Linking against an installed library (`cmake --install build --prefix <dir>`): with
// PKG_CONFIG_PATH=<dir>/lib/pkgconfig, `go build -tags paimon_cleanup_pkgconfig` takes the
// flags from paimon_cleanup.pc. At run time the loader must find libpaimon_cleanup.so
// (LD_LIBRARY_PATH, or CGO_LDFLAGS="-Wl,-rpath,<dir>/lib" at build time).

// #cgo pkg-config: paimon_cleanup
import "C"
