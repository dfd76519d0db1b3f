//! The library build (what CMake runs: no default features, the storage and manifest-format
//! features) does not compile the command-line tools' dependencies: `clap`,
//! `tracing-subscriber` and `crossbeam-channel` belong to the tools' package in `tools/`.

use std::process::Command;

/// Crates only the tools in tools/ use.
const TOOL_ONLY: [&str; 3] = ["clap", "tracing-subscriber", "crossbeam-channel"];

/// The names of the crates in the normal dependency tree of `package` for `args`.
fn dependency_names(package: &str, args: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "-p",
            package,
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn the_library_build_does_not_compile_the_tools_dependencies() {
    let library = dependency_names(
        "paimon-cleanup",
        &["--no-default-features", "--features", "library"],
    );
    assert!(library.iter().any(|n| n == "object_store"), "{library:?}");
    let present: Vec<_> = TOOL_ONLY
        .iter()
        .filter(|name| library.iter().any(|n| n == *name))
        .collect();
    assert!(
        present.is_empty(),
        "the library build (CMake: --no-default-features --features library) depends on \
         {present:?}; only the tools' package in tools/ may pull them in"
    );
    // The library's default build does not have them either; the tools' package does.
    let default = dependency_names("paimon-cleanup", &[]);
    assert!(
        TOOL_ONLY
            .iter()
            .all(|name| !default.iter().any(|n| n == name)),
        "the library's default build depends on a tool-only crate: {default:?}"
    );
    let tools = dependency_names("paimon-cleanup-tools", &[]);
    for name in TOOL_ONLY {
        assert!(
            tools.iter().any(|n| n == name),
            "the tools' package lacks {name}"
        );
    }
}
