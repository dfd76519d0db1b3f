//! Shell scripts that run with `set -o pipefail` must not pipe into `grep -q`: grep exits at its
//! first match, the writer gets SIGPIPE if it is still writing, and pipefail turns that into a
//! failure at random (the cause of the flaky "pc_shared does not load the installed
//! libpaimon_cleanup.so" step of scripts/test-c.sh, where `ldd | grep -q` failed in about 2 % of
//! runs). Capture the output first (`out="$(cmd)"; grep -q ... <<<"$out"`).

use std::path::Path;

#[test]
fn no_pipe_into_grep_q_under_pipefail() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for dir in ["scripts", "scripts/lib", "c_tests", ".ci"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("directory entry").path();
            let is_script = path.extension().is_some_and(|x| x == "sh")
                || path.file_name().is_some_and(|n| n == "run");
            if !is_script {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read a script");
            if !text.contains("pipefail") {
                continue;
            }
            for (i, line) in text.lines().enumerate() {
                let code = line.split(" #").next().unwrap_or(line);
                if code.trim_start().starts_with('#') {
                    continue;
                }
                let compact: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
                if compact.contains("| grep -q") || compact.contains("|grep -q") {
                    problems.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "`| grep -q` under pipefail fails at random when the writer is still writing; capture \
         the output first:\n{}",
        problems.join("\n")
    );
}
