//! The main job (`scripts/demo.sh`) compiles the crate once: CMake's single cargo invocation
//! builds the library and the `paimon-cleanup` tool together when `PAIMON_CLEANUP_BUILD_CLI` is
//! on, and the script runs no second `cargo build` of its own (each compile of the crate in
//! release mode costs a quarter of an hour on 2 cores).

use std::path::Path;
use std::process::Command;

#[test]
fn demo_runs_no_cargo_build_of_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let demo = std::fs::read_to_string(root.join("scripts/demo.sh")).expect("read demo.sh");
    let code_lines: Vec<&str> = demo
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    let cargo: Vec<&&str> = code_lines
        .iter()
        .filter(|l| l.split_whitespace().any(|w| w == "cargo"))
        .collect();
    assert!(cargo.is_empty(), "demo.sh runs cargo itself: {cargo:?}");
    assert!(
        code_lines
            .iter()
            .any(|l| l.contains("cmake -S . ") && l.contains("-DPAIMON_CLEANUP_BUILD_CLI=ON")),
        "demo.sh must configure the library build with PAIMON_CLEANUP_BUILD_CLI=ON"
    );
}

#[test]
fn cmake_builds_library_and_cli_in_one_cargo_invocation() {
    if Command::new("cmake").arg("--version").output().is_err() {
        panic!("cmake is required (scripts/install-deps.sh installs it)");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let build = tempfile::tempdir().expect("temp dir");
    let configure = Command::new("cmake")
        .arg("-S")
        .arg(root)
        .arg("-B")
        .arg(build.path())
        .args([
            "-DCMAKE_BUILD_TYPE=Release",
            "-DPAIMON_CLEANUP_BUILD_CLI=ON",
            "-DPAIMON_CLEANUP_BUILD_TESTS=OFF",
            "-G",
            "Unix Makefiles",
        ])
        .output()
        .expect("run cmake");
    assert!(
        configure.status.success(),
        "cmake configure failed: {}",
        String::from_utf8_lossy(&configure.stderr)
    );
    // `make -n` prints the commands of the cargo target without running them.
    let dry = Command::new("make")
        .current_dir(build.path())
        .args(["-n", "paimon_cleanup_cargo"])
        .output()
        .expect("run make -n");
    let text = String::from_utf8_lossy(&dry.stdout);
    let cargo_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("cargo") && l.contains(" build "))
        .collect();
    assert_eq!(
        cargo_lines.len(),
        1,
        "expected exactly one cargo build command, got: {cargo_lines:#?}"
    );
    let line = cargo_lines[0];
    assert!(
        line.contains("--lib")
            && line.contains("--bin paimon-cleanup")
            && line.contains("--release"),
        "the cargo command must build the library and the CLI together: {line}"
    );
    assert!(
        !line.contains("--no-default-features"),
        "the CLI needs the default features: {line}"
    );
}
