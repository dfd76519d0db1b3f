//! Build script: generates the C header from `src/ffi` with cbindgen (configuration in
//! `cbindgen.toml`) into `$OUT_DIR/paimon_cleanup.h`, and sets the shared library's SONAME.
//!
//! * The build never writes into the source tree. The committed `include/paimon_cleanup.h` is
//!   what gets installed and compiled against; when it differs from the generated one the build
//!   prints a `cargo:warning` and `tests/header_fresh.rs` fails. `scripts/refresh-header.sh`
//!   rewrites the committed header.
//! * A cbindgen failure (for example a half-written file under `src/ffi`) never fails the build:
//!   it is reported as a `cargo:warning`.
//! * On Linux the shared library gets the versioned SONAME `libpaimon_cleanup.so.<ABI>`
//!   (`PAIMON_CLEANUP_ABI_VERSION` of `src/ffi/mod.rs`): programs linked against it load
//!   `libpaimon_cleanup.so.1` at run time, so an ABI-incompatible release cannot be picked up by
//!   mistake. The CMake build and install add the usual symlinks.
//!
//! `tests/header_fresh.rs` includes this file as a module to render the header the same way.

use std::path::{Path, PathBuf};

/// Header location, relative to the crate root.
pub const HEADER_PATH: &str = "include/paimon_cleanup.h";

/// The one command that rewrites the committed header from `src/ffi`.
pub const REFRESH_COMMAND: &str = "scripts/refresh-header.sh";

/// Renders the header text for the crate at `crate_dir`, exactly as it is committed.
pub fn render_header(crate_dir: &Path) -> Result<String, String> {
    let config_path = crate_dir.join("cbindgen.toml");
    let mut config = cbindgen::Config::from_file(&config_path)
        .map_err(|e| format!("cannot read {}: {e}", config_path.display()))?;
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split(['.', '-', '+']);
    let mut next = || parts.next().unwrap_or("0").to_owned();
    let (major, minor, patch) = (next(), next(), next());
    let macros = format!(
        "\n/** Library version this header belongs to (same as paimon_cleanup_version()). */\n\
         #define PAIMON_CLEANUP_VERSION \"{version}\"\n\
         /** Major part of PAIMON_CLEANUP_VERSION. */\n\
         #define PAIMON_CLEANUP_VERSION_MAJOR {major}\n\
         /** Minor part of PAIMON_CLEANUP_VERSION. */\n\
         #define PAIMON_CLEANUP_VERSION_MINOR {minor}\n\
         /** Patch part of PAIMON_CLEANUP_VERSION. */\n\
         #define PAIMON_CLEANUP_VERSION_PATCH {patch}\n"
    );
    config.after_includes = Some(match config.after_includes.take() {
        Some(text) => format!("{text}{macros}"),
        None => macros,
    });
    let source = crate_dir.join("src").join("ffi").join("mod.rs");
    let generated = std::panic::catch_unwind(move || {
        cbindgen::Builder::new()
            .with_config(config)
            .with_src(source)
            .generate()
    })
    .map_err(|_| "cbindgen panicked".to_owned())?
    .map_err(|e| format!("cbindgen failed: {e}"))?;
    let mut bytes = Vec::new();
    generated.write(&mut bytes);
    String::from_utf8(bytes).map_err(|e| format!("cbindgen produced invalid UTF-8: {e}"))
}

/// The C ABI version declared in `src/ffi/mod.rs` (`PAIMON_CLEANUP_ABI_VERSION`), which is also
/// the SONAME's version: `libpaimon_cleanup.so.<ABI>`.
pub fn abi_version(crate_dir: &Path) -> Result<u32, String> {
    let path = crate_dir.join("src").join("ffi").join("mod.rs");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .find_map(|line| {
            line.trim()
                .strip_prefix("pub const PAIMON_CLEANUP_ABI_VERSION: u32 =")?
                .trim()
                .strip_suffix(';')?
                .trim()
                .parse()
                .ok()
        })
        .ok_or_else(|| {
            format!(
                "no `pub const PAIMON_CLEANUP_ABI_VERSION: u32 = N;` in {}",
                path.display()
            )
        })
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed={HEADER_PATH}");

    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        match abi_version(&crate_dir) {
            Ok(abi) => {
                println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpaimon_cleanup.so.{abi}")
            }
            Err(e) => println!("cargo:warning=SONAME not set: {e}"),
        }
    }

    let text = match render_header(&crate_dir) {
        Ok(text) => text,
        Err(e) => {
            println!("cargo:warning=C header not generated: {e}");
            return;
        }
    };
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo:warning=OUT_DIR not set: C header not generated");
        return;
    };
    let generated = out_dir.join("paimon_cleanup.h");
    if let Err(e) = std::fs::write(&generated, &text) {
        println!("cargo:warning=cannot write {}: {e}", generated.display());
        return;
    }
    let committed = std::fs::read_to_string(crate_dir.join(HEADER_PATH)).unwrap_or_default();
    if committed != text {
        println!(
            "cargo:warning={HEADER_PATH} differs from the header generated from src/ffi ({}); \
             refresh it with `{REFRESH_COMMAND}` and commit it",
            generated.display()
        );
    }
}
