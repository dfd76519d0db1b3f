//! The crate's module graph has no cycle: `scripts/module-cycles.py` lists the `use` edges between
//! the files of `src/` (following re-exports to the module that defines an item) and exits 1 when
//! modules depend on each other in a circle. A parent `mod.rs` that both uses its children and
//! holds items they need is the usual cause; move those items to a file of their own and
//! re-export them (docs/architecture.md, "Layout").
//!
//! Needs `python3` (installed by `scripts/install-deps.sh`, which the test command runs).

use std::path::Path;
use std::process::Command;

#[test]
fn no_module_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("scripts/module-cycles.py"))
        .current_dir(root)
        .output()
        .expect("run python3 scripts/module-cycles.py (python3 must be installed)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "scripts/module-cycles.py found a module cycle (exit {:?}):\n{stdout}{stderr}",
        out.status.code()
    );
    // The script ran over the whole crate, not over an empty or mistyped tree.
    assert!(
        stdout.starts_with("no cycle among ") && !stdout.starts_with("no cycle among 0 "),
        "unexpected output of scripts/module-cycles.py:\n{stdout}{stderr}"
    );
}

/// Runs the script over the source tree `files` (path, text) written to a temporary directory.
fn cycles_in(files: &[(&str, &str)]) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().expect("a file has a parent")).expect("mkdir");
        std::fs::write(&file, text).expect("write source file");
    }
    let out = Command::new("python3")
        .arg(root.join("scripts/module-cycles.py"))
        .arg(format!("--root={}", dir.path().display()))
        .output()
        .expect("run python3 scripts/module-cycles.py");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A parent that calls into a child by the child's name (`child::item(..)`, no `use`) while
/// the child imports an item of the parent is a cycle, as much as one made of `use` lines.
#[test]
fn a_parent_calling_its_child_by_name_closes_a_cycle() {
    let child = "use super::cutoff;\npub(crate) fn plan() -> i64 { cutoff() }\n";
    let (ok, out) = cycles_in(&[
        ("lib.rs", "mod run;\n"),
        (
            "run/mod.rs",
            "mod planner;\npub(crate) fn cutoff() -> i64 { 1 }\npub fn go() -> i64 { planner::plan() }\n",
        ),
        ("run/planner.rs", child),
    ]);
    assert!(!ok, "the cycle run <-> run::planner went unseen:\n{out}");
    assert!(
        out.contains("cycle: crate::run <-> crate::run::planner"),
        "{out}"
    );

    // The same parent with `cutoff` in a module of its own has no cycle.
    let (ok, out) = cycles_in(&[
        ("lib.rs", "mod run;\n"),
        (
            "run/mod.rs",
            "mod cutoff;\nmod planner;\npub(crate) use cutoff::cutoff;\npub fn go() -> i64 { planner::plan() }\n",
        ),
        ("run/cutoff.rs", "pub(crate) fn cutoff() -> i64 { 1 }\n"),
        ("run/planner.rs", child),
    ]);
    assert!(ok && out.starts_with("no cycle among 4 "), "{out}");
}
