//! The committed C header must be exactly what cbindgen generates from `src/ffi`.
//!
//! Renders the header with the same code as `build.rs` (included below) and compares it with
//! `include/paimon_cleanup.h`. The build never rewrites the committed file; with
//! `PAIMON_CLEANUP_REFRESH_HEADER=1` this test does (that is what `scripts/refresh-header.sh`
//! runs), so a stale header is always a visible diff to review and commit.

#[allow(dead_code)]
#[path = "../build.rs"]
mod build_script;

use std::path::Path;

/// Describes the first line where `committed` and `regenerated` differ.
fn first_difference(committed: &str, regenerated: &str) -> String {
    committed
        .lines()
        .zip(regenerated.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| format!("line {}:\n  committed:   {a}\n  regenerated: {b}", i + 1))
        .unwrap_or_else(|| {
            format!(
                "the files differ in length ({} vs {} lines)",
                committed.lines().count(),
                regenerated.lines().count()
            )
        })
}

#[test]
fn committed_header_matches_cbindgen_output() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let regenerated = build_script::render_header(crate_dir)
        .unwrap_or_else(|e| panic!("cbindgen could not generate the header: {e}"));
    let committed_path = crate_dir.join(build_script::HEADER_PATH);

    if std::env::var("PAIMON_CLEANUP_REFRESH_HEADER").as_deref() == Ok("1") {
        std::fs::write(&committed_path, &regenerated)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", committed_path.display()));
        println!("refreshed {}", committed_path.display());
        return;
    }

    let committed = std::fs::read_to_string(&committed_path).unwrap_or_else(|e| {
        panic!(
            "cannot read the committed header {}: {e}\nGenerate it with `{}` and commit it.",
            committed_path.display(),
            build_script::REFRESH_COMMAND
        )
    });
    assert!(
        committed == regenerated,
        "{} is stale: it differs from what cbindgen generates from src/ffi.\n\
         First difference at {}\n\
         Fix: run `{}`, review `git diff include/`, and commit the header together with the \
         src/ffi change.",
        build_script::HEADER_PATH,
        first_difference(&committed, &regenerated),
        build_script::REFRESH_COMMAND
    );
}

/// The build script generates the same header into `OUT_DIR` (never into the source tree).
#[test]
fn build_script_generates_the_header_into_out_dir() {
    let generated = Path::new(env!("OUT_DIR")).join("paimon_cleanup.h");
    let text = std::fs::read_to_string(&generated)
        .unwrap_or_else(|e| panic!("build.rs did not generate {}: {e}", generated.display()));
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rendered = build_script::render_header(crate_dir)
        .unwrap_or_else(|e| panic!("cbindgen could not generate the header: {e}"));
    assert_eq!(
        text, rendered,
        "OUT_DIR header differs from a fresh rendering"
    );
}
