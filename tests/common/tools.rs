//! The command-line tools (`paimon-cleanup`, `paimon-gen`) for the integration tests.
//!
//! The tools are the workspace member in `tools/`, another package than the library these tests
//! belong to, so cargo gives the tests no `CARGO_BIN_EXE_*` for them. The first call builds them
//! once per test process with the cargo that runs the tests, for the same manifest and profile
//! (target directory and build flags come from the same environment and configuration), and
//! takes each binary's path from cargo's own report; later calls reuse the paths.

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

/// Builds the tools' binaries and maps each binary's name to its path.
fn build_tools() -> BTreeMap<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = Command::new(&cargo)
        .arg("build")
        .arg("--manifest-path")
        .arg(&manifest)
        .args([
            "-p",
            "paimon-cleanup-tools",
            "--bins",
            "--message-format=json-render-diagnostics",
        ])
        .args(profile_args())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cargo} build for the tools: {e}"));
    assert!(
        out.status.success(),
        "{cargo} build -p paimon-cleanup-tools failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut bins = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
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
