//! The committed C header must be exactly what cbindgen generates from `src/ffi`.
//!
//! Renders the header with the same code as `build.rs` (included below) into a temporary file and
//! compares it with `include/paimon_cleanup.h`.

#[allow(dead_code)]
#[path = "../build.rs"]
mod build_script;

use std::path::Path;

#[test]
fn committed_header_matches_cbindgen_output() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rendered = build_script::render_header(crate_dir)
        .unwrap_or_else(|e| panic!("cbindgen could not generate the header: {e}"));

    let dir = tempfile::tempdir().expect("temporary directory");
    let fresh = dir.path().join("paimon_cleanup.h");
    std::fs::write(&fresh, &rendered).expect("write the regenerated header");

    let committed_path = crate_dir.join(build_script::HEADER_PATH);
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_else(|e| {
        panic!(
            "cannot read the committed header {}: {e}\n\
             Generate it with `cargo build` (without CI set) and commit it.",
            committed_path.display()
        )
    });
    let regenerated = std::fs::read_to_string(&fresh).expect("read the regenerated header");

    if committed != regenerated {
        let first_difference = committed
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
            });
        panic!(
            "{} is stale: it differs from what cbindgen generates from src/ffi.\n\
             First difference at {first_difference}\n\
             Fix: run `cargo build` without CI set (build.rs rewrites the header), review \
             `git diff include/`, and commit the header together with the src/ffi change.",
            build_script::HEADER_PATH
        );
    }
}
