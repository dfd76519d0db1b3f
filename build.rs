//! Build script: regenerates the C header `include/paimon_cleanup.h` from `src/ffi` with
//! cbindgen (configuration in `cbindgen.toml`).
//!
//! * The header is committed. It is rewritten only when its content changed, and not at all when
//!   the environment variable `CI` is set (so CI checks the committed file instead of fixing it;
//!   `tests/header_fresh.rs` fails when it is stale). `PAIMON_CLEANUP_WRITE_HEADER=1` / `=0`
//!   forces writing on / off.
//! * A cbindgen failure (for example a half-written file under `src/ffi`) never fails the build:
//!   it is reported as a `cargo:warning`.
//! * On Linux the shared library gets the SONAME `libpaimon_cleanup.so`, so programs linked
//!   against it by full path still find it through their run-time search path.
//!
//! `tests/header_fresh.rs` includes this file as a module to render the header the same way.

use std::path::{Path, PathBuf};

/// Header location, relative to the crate root.
pub const HEADER_PATH: &str = "include/paimon_cleanup.h";

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

/// True unless header writing is switched off (`CI` set, or `PAIMON_CLEANUP_WRITE_HEADER=0`).
fn should_write_header() -> bool {
    let flag = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_ascii_lowercase())
    };
    match flag("PAIMON_CLEANUP_WRITE_HEADER").as_deref() {
        Some("1" | "true" | "yes") => return true,
        Some("0" | "false" | "no") => return false,
        _ => {}
    }
    !matches!(flag("CI").as_deref(), Some(v) if !v.is_empty() && v != "0" && v != "false")
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed={HEADER_PATH}");
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-env-changed=PAIMON_CLEANUP_WRITE_HEADER");

    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpaimon_cleanup.so");
    }

    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = match render_header(&crate_dir) {
        Ok(text) => text,
        Err(e) => {
            println!("cargo:warning=C header not regenerated: {e}");
            return;
        }
    };
    let header = crate_dir.join(HEADER_PATH);
    let current = std::fs::read_to_string(&header).unwrap_or_default();
    if current == text {
        return;
    }
    if !should_write_header() {
        println!(
            "cargo:warning={HEADER_PATH} is stale (not rewritten because CI is set); \
             run `cargo build` locally and commit it"
        );
        return;
    }
    let written = header
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&header, text));
    if let Err(e) = written {
        println!("cargo:warning=cannot write {}: {e}", header.display());
    }
}
