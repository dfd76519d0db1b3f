//! The library build (what CMake runs: no default features, the storage and manifest-format
//! features) does not compile the command-line tools' dependencies: `clap`,
//! `tracing-subscriber` and `crossbeam-channel` belong to the `cli` feature.

use std::process::Command;

/// Crates only the tools in src/bin use.
const TOOL_ONLY: [&str; 3] = ["clap", "tracing-subscriber", "crossbeam-channel"];

/// The names of the crates in the normal dependency tree for `features`.
fn dependency_names(args: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
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
    let library = dependency_names(&["--no-default-features", "--features", "library"]);
    assert!(library.iter().any(|n| n == "object_store"), "{library:?}");
    let present: Vec<_> = TOOL_ONLY
        .iter()
        .filter(|name| library.iter().any(|n| n == *name))
        .collect();
    assert!(
        present.is_empty(),
        "the library build (CMake: --no-default-features --features library) depends on \
         {present:?}; only the `cli` feature may pull them in"
    );
    // The default build (with `cli`) still has them, so the tools build.
    let tools = dependency_names(&[]);
    for name in TOOL_ONLY {
        assert!(
            tools.iter().any(|n| n == name),
            "default build lacks {name}"
        );
    }
}
