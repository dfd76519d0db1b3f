//! Every C code block of `README.md` and `docs/c-api.md` has a verbatim copy in a program under
//! `examples/docs/`, which ctest builds against the library (and runs where it can; see
//! `examples/docs/CMakeLists.txt`). A block edited without its copy, a new block without a
//! program, or a copy whose block is gone fails here.
//!
//! Every command of the README's `sh` blocks is run here on a copy of a pypaimon-written table
//! (the placeholders `target/release/paimon-cleanup`, `/data/wh/db.db/t` and `/tmp/plan.json`
//! substituted), or is named in [`RUN_ELSEWHERE`] with the script that runs it (builds, object
//! stores, Spark and Flink clusters).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

/// Documents whose C blocks must compile.
const DOCS: [&str; 2] = ["README.md", "docs/c-api.md"];

/// The ```c blocks of `text`, in order (the lines between the fences, each ending in '\n').
fn c_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match current.as_mut() {
            None if line.trim_end() == "```c" => current = Some(String::new()),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    blocks
}

/// The copies in `examples/docs/*.c`: (document, block number) -> (file name, copied text).
fn copies(dir: &Path) -> BTreeMap<(String, usize), (String, String)> {
    let mut out = BTreeMap::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&path).expect("read an example");
        let mut current: Option<((String, usize), String)> = None;
        for line in text.lines() {
            if let Some(rest) = line
                .strip_prefix("/* doc-block ")
                .and_then(|r| r.strip_suffix(" */"))
            {
                if rest == "end" {
                    let (key, copied) = current
                        .take()
                        .unwrap_or_else(|| panic!("{name}: `doc-block end` without a start"));
                    assert!(
                        out.insert(key.clone(), (name.clone(), copied)).is_none(),
                        "{} block {} is copied twice",
                        key.0,
                        key.1
                    );
                } else {
                    let (doc, number) = rest
                        .rsplit_once(' ')
                        .unwrap_or_else(|| panic!("{name}: bad marker `{line}`"));
                    let number = number
                        .parse()
                        .unwrap_or_else(|_| panic!("{name}: bad block number in `{line}`"));
                    current = Some(((doc.to_owned(), number), String::new()));
                }
            } else if let Some((_, copied)) = current.as_mut() {
                copied.push_str(line);
                copied.push('\n');
            }
        }
        assert!(current.is_none(), "{name}: a doc-block is not closed");
    }
    out
}

#[test]
fn every_c_block_of_the_docs_is_a_built_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut copies = copies(&root.join("examples/docs"));
    let mut problems = Vec::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root.join(doc)).expect("read a document");
        for (i, block) in c_blocks(&text).into_iter().enumerate() {
            let number = i + 1;
            match copies.remove(&(doc.to_owned(), number)) {
                None => problems.push(format!(
                    "{doc}: C block {number} has no copy in examples/docs/ (add a program with \
                     the block between `/* doc-block {doc} {number} */` and `/* doc-block end */`)"
                )),
                Some((file, copied)) if copied != block => problems.push(format!(
                    "{doc}: C block {number} differs from its copy in examples/docs/{file}: \
                     change both together (the copy is built and run by ctest)"
                )),
                Some(_) => {}
            }
        }
    }
    for ((doc, number), (file, _)) in copies {
        problems.push(format!(
            "examples/docs/{file} copies {doc} C block {number}, which does not exist"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_readme_example_uses_the_real_status_constant() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("read README.md");
    let header = std::fs::read_to_string(root.join("include/paimon_cleanup.h")).expect("header");
    for block in c_blocks(&readme) {
        for word in block.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if word.starts_with("PAIMON_CLEANUP_") {
                assert!(
                    header.contains(word),
                    "README.md uses {word}, which the header lacks"
                );
            }
        }
    }
}

/// Every `§x.y` and `Pn` cited in the code resolves in docs/paimon-format.md (a section heading
/// `### x.y` / `## x.`, or a pitfall entry `**Pn**`).
#[test]
fn format_references_in_the_code_resolve_in_docs_paimon_format() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let format = std::fs::read_to_string(root.join("docs/paimon-format.md")).expect("read it");
    let mut sources = Vec::new();
    let mut stack = vec![root.join("src"), root.join("tests")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("list sources") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                sources.push(path);
            }
        }
    }
    let mut missing = BTreeMap::new();
    for path in sources {
        let text = std::fs::read_to_string(&path).expect("read a source");
        for (i, _) in text.match_indices('§') {
            let number: String = text[i + '§'.len_utf8()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            if number.is_empty() {
                continue;
            }
            let heading = if number.contains('.') {
                format!("\n### {number} ")
            } else {
                format!("\n## {number}. ")
            };
            if !format.contains(&heading) {
                missing.insert(format!("§{number}"), path.display().to_string());
            }
        }
        let bytes = text.as_bytes();
        for (i, _) in text.match_indices('P') {
            let before_ok =
                i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
            let digits: String = text[i + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let after = text[i + 1 + digits.len()..].chars().next().unwrap_or(' ');
            if before_ok
                && !digits.is_empty()
                && digits.len() <= 2
                && !(after.is_ascii_alphanumeric() || after == '_')
                && !format.contains(&format!("**P{digits}**"))
            {
                missing.insert(format!("P{digits}"), path.display().to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "references without an entry in docs/paimon-format.md: {missing:?}"
    );
}

/// README `sh` commands not run by this test: a prefix of the command and who runs it.
const RUN_ELSEWHERE: [(&str, &str); 12] = [
    ("bash scripts/test-all.sh", "the whole test suite, this test included (CI runs it)"),
    ("bash scripts/demo.sh", "the main job itself (15 min cold; tests/demo_build.rs checks it compiles the crate once)"),
    ("$CLI expire-snapshots s3://", "needs an S3 endpoint and credentials (tests/s3.rs runs the CLI against a loopback S3 server)"),
    ("AWS_ACCESS_KEY_ID=", "needs S3 credentials (tests/s3.rs)"),
    ("cargo build --release --lib && pip install bindings/python", "scripts/test-python.sh builds the wheel and installs it"),
    ("spark-submit", "a Spark cluster (scripts/test-spark.sh runs the job with spark-submit)"),
    ("flink run", "a Flink cluster (scripts/test-flink.sh runs the jobs in a MiniCluster)"),
    ("cmake -S . -B build", "scripts/test-c.sh configures, builds and installs with CMake"),
    ("cmake --build build", "scripts/test-c.sh"),
    ("cmake --install build", "scripts/test-c.sh"),
    ("export PKG_CONFIG_PATH=", "scripts/test-c.sh runs the pkg-config lines verbatim"),
    ("cc app.c $(pkg-config", "scripts/test-c.sh, against the CMake install"),
];

/// The commands of every `sh` block of `text` (fences may be indented), each with its line
/// continuations joined.
fn sh_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut pending = String::new();
    for line in text.lines() {
        let t = line.trim();
        if !inside {
            inside = t == "```sh";
            continue;
        }
        if t == "```" {
            inside = false;
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
            continue;
        }
        pending.push_str(t);
        if !pending.trim().is_empty() {
            out.push(std::mem::take(&mut pending));
        }
        pending.clear();
    }
    out
}

/// `cmd` without its comment (` # ...` outside quotes) and optional parts (`[...]`, which the
/// README uses for optional arguments).
fn runnable(cmd: &str) -> String {
    let mut out = String::new();
    let (mut single, mut double, mut depth) = (false, false, 0usize);
    for c in cmd.chars() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && out.ends_with(' ') => break,
            '[' if !single && !double => {
                depth += 1;
                continue;
            }
            ']' if !single && !double && depth > 0 => {
                depth -= 1;
                continue;
            }
            _ => {}
        }
        if depth == 0 {
            out.push(c);
        }
    }
    out.trim().to_string()
}

#[test]
fn every_shell_command_of_the_readme_runs_or_names_who_runs_it() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("read README.md");
    let commands = sh_commands(&readme);
    assert!(commands.len() > 20, "{commands:?}");
    let Some((guard, table, _)) = common::pypaimon_table("append_unaware") else {
        return;
    };
    let cwd = guard.path().join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let plan = guard.path().join("plan.json");
    let cli = common::cli_bin();
    let mut used_elsewhere = vec![false; RUN_ELSEWHERE.len()];
    let mut ran = 0;
    for cmd in &commands {
        if let Some(i) = RUN_ELSEWHERE.iter().position(|(p, _)| cmd.starts_with(p)) {
            used_elsewhere[i] = true;
            continue;
        }
        let line = runnable(cmd)
            .replace("target/release/paimon-cleanup", cli)
            .replace("/data/wh/db.db/t", table.to_str().unwrap())
            .replace("/tmp/plan.json", plan.to_str().unwrap());
        let script = format!("set -e\nCLI={cli}\n{line}\n");
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&cwd)
            .env_remove("PAIMON_CLEANUP_LOG")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "README command `{cmd}` failed ({:?}):\n{}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 15, "only {ran} commands ran");
    for (i, used) in used_elsewhere.iter().enumerate() {
        assert!(
            used,
            "RUN_ELSEWHERE names `{}`, which no README command starts with any more",
            RUN_ELSEWHERE[i].0
        );
    }
    // The table survived the whole list: every version pypaimon can still read.
    for (name, v) in common::all_versions(&table) {
        assert!(v.get("error").is_none(), "{name}: {v}");
    }
}

#[test]
fn readme_commands_are_split_and_cleaned_as_a_shell_reads_them() {
    let text = "x\n  ```sh\n  a \\\n    b # c\n  ```\n```sh\nd [--e] 'f # g' [h | i]\n```\n";
    let cmds = sh_commands(text);
    assert_eq!(cmds, ["a b # c", "d [--e] 'f # g' [h | i]"]);
    assert_eq!(runnable(&cmds[0]), "a b");
    assert_eq!(runnable(&cmds[1]), "d  'f # g'");
}
