//! The command-line tools (`paimon-cleanup`, `paimon-gen`) for the integration tests.
//!
//! The tools are the workspace member in `tools/`, another package than the library these tests
//! belong to, so cargo gives the tests no `CARGO_BIN_EXE_*` for them. The first call asks the
//! cargo that runs the tests to build them, once per test process: `cargo test --no-run` of the
//! tools' test target `tools_bins` (which makes cargo build the plain binaries) together with
//! the running test's own target, for both packages and in the running test's profile. That is
//! the build `cargo test` at the root just did, so the library is not compiled again under
//! another feature set or profile; cargo reports each binary's path.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The `paimon-cleanup` CLI, built from `tools/` for this test run.
pub fn cli_bin() -> &'static str {
    tool("paimon-cleanup")
}

/// The `paimon-gen` table generator, built from `tools/` for this test run.
pub fn gen_bin() -> &'static str {
    tool("paimon-gen")
}

/// The path of the tools' binary `name`, building the tools on the first call.
fn tool(name: &str) -> &'static str {
    static BUILT: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    let bins = BUILT.get_or_init(build_tools);
    match bins.get(name) {
        Some(path) => path,
        None => panic!("cargo built no binary `{name}` in paimon-cleanup-tools: {bins:?}"),
    }
}

/// The cargo profile the running test binary was built with, from its directory
/// (`<target>/<profile dir>/deps/<test>`): `debug` is the dev profile, other names are the
/// profile's own.
fn profile_args() -> Vec<String> {
    let exe = std::env::current_exe().expect("path of the running test binary");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|d| d.to_str())
        .unwrap_or("debug");
    match dir {
        "debug" => Vec::new(),
        "release" => vec!["--release".to_owned()],
        other => vec!["--profile".to_owned(), other.to_owned()],
    }
}

/// The running test target's name (`<target>/<profile>/deps/<name>-<hash>`), when it has one.
fn own_test_target() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let stem = exe.file_stem()?.to_str()?;
    let (name, hash) = stem.rsplit_once('-')?;
    hash.chars()
        .all(|c| c.is_ascii_hexdigit())
        .then(|| name.to_owned())
}

/// Builds the tools' binaries and maps each binary's name to its path.
fn build_tools() -> BTreeMap<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let mut cmd = Command::new(&cargo);
    // The variables cargo sets for a test process describe this test, not the build: build
    // scripts that watch them (`rerun-if-env-changed`) would otherwise run again and rebuild the
    // library under the outer `cargo test`'s feet.
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let per_test = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_BIN_",
            "CARGO_CRATE_NAME",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
            "OUT_DIR",
        ];
        if per_test.iter().any(|p| key.starts_with(p)) {
            cmd.env_remove(key);
        }
    }
    cmd.args(["test", "--no-run", "--manifest-path"])
        .arg(&manifest)
        .args([
            "-p",
            "paimon-cleanup",
            "-p",
            "paimon-cleanup-tools",
            "--test",
            "tools_bins",
            "--message-format=json-render-diagnostics",
        ])
        .args(profile_args());
    if let Some(name) = own_test_target() {
        cmd.args(["--test", &name]);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cargo} build for the tools: {e}"));
    assert!(
        out.status.success(),
        "{cargo} test --no-run (the tools' binaries) failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut bins = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || msg["profile"]["test"] == true {
            continue;
        }
        if let (Some(name), Some(exe)) =
            (msg["target"]["name"].as_str(), msg["executable"].as_str())
        {
            bins.insert(name.to_owned(), exe.to_owned());
        }
    }
    bins
}
