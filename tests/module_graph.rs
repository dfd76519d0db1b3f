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
