//! The tools' binaries start and describe themselves. Besides that check, this test target makes
//! `cargo test` build the plain binaries of this package: the library's integration tests
//! (`tests/common`, `cli_bin()`/`gen_bin()`) ask cargo to build this target together with their
//! own, so the binaries come out of the same build as the tests.

use std::process::Command;

/// `bin --help`: exits 0 and prints its usage.
fn help(bin: &str) -> String {
    let out = Command::new(bin)
        .arg("--help")
        .output()
        .expect("run --help");
    assert!(
        out.status.success(),
        "{bin} --help failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_cli_lists_its_commands() {
    let text = help(env!("CARGO_BIN_EXE_paimon-cleanup"));
    for command in [
        "expire-snapshots",
        "remove-orphan-files",
        "drop-partition",
        "inspect",
        "apply",
    ] {
        assert!(text.contains(command), "--help lacks {command}: {text}");
    }
}

#[test]
fn the_generator_and_the_bench_start() {
    assert!(help(env!("CARGO_BIN_EXE_paimon-gen")).contains("Usage"));
    assert!(help(env!("CARGO_BIN_EXE_paimon-bench")).contains("Usage"));
}
