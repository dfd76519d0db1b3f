//! Every function of the C header has a counterpart in each binding — the C++ wrapper
//! (`include/paimon_cleanup.hpp`), Go (`bindings/go`, cgo calls `C.<function>(`), Java (the
//! JNI glue in `bindings/java/jni`) and Python (`bindings/python`, ctypes calls
//! `lib.<function>`) — or is listed as deliberately C-only for that binding, with
//! the reason, in `bindings/c-only.txt`. A new entry point added to the header alone fails here
//! (CONTRIBUTING.md has the checklist).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const BINDINGS: [&str; 4] = ["cpp", "go", "java", "python"];

/// Function names declared by the header (`paimon_cleanup_<name>(`).
fn header_functions(header: &str) -> BTreeSet<String> {
    let code = strip_comments(header);
    let mut out = BTreeSet::new();
    for line in code.lines() {
        if let Some(open) = line.find('(') {
            let name = line[..open]
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            if name.starts_with("paimon_cleanup_") {
                out.insert(name.to_owned());
            }
        }
    }
    out
}

/// `text` without `//` and `/* */` comments (C, C++, Go and the JNI glue share the syntax), so a
/// function only mentioned in a comment does not count as wrapped.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
            out.push(' ');
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Every identifier used in the code of `text` (called, or passed as a function pointer, e.g.
/// the C++ wrapper's `Owned<T, paimon_cleanup_x_free>`); Go's `C.name` counts as `name`.
fn identifiers(text: &str) -> BTreeSet<String> {
    words(&strip_comments(text))
}

/// Every word of `text`, comments included: Go's cgo preamble (C code calling the library) is
/// a comment above `import "C"`.
fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Functions the Python package calls through its ctypes library object (`lib.<function>`); the
/// prototypes it declares (`_native.PROTOTYPES`) do not count, a call does.
fn python_calls(text: &str) -> BTreeSet<String> {
    text.match_indices("lib.paimon_cleanup_")
        .filter_map(|(at, _)| {
            text[at + "lib.".len()..]
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .map(str::to_owned)
        })
        .collect()
}

/// All text of the files under `dir` (recursively) whose name ends with one of `extensions`.
fn sources(dir: &Path, extensions: &[&str]) -> String {
    let mut text = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("list {}: {e}", d.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if extensions
                .iter()
                .any(|x| path.to_string_lossy().ends_with(x))
            {
                text.push_str(&std::fs::read_to_string(&path).expect("read a binding source"));
                text.push('\n');
            }
        }
    }
    text
}

/// `bindings/c-only.txt`: function -> bindings that deliberately do not call it.
fn allow_list(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (head, reason) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("bindings/c-only.txt: no `: reason` in `{line}`"));
        assert!(
            !reason.trim().is_empty(),
            "bindings/c-only.txt: empty reason in `{line}`"
        );
        let (function, bindings) = head
            .trim()
            .split_once(' ')
            .unwrap_or_else(|| panic!("bindings/c-only.txt: no bindings in `{line}`"));
        let bindings: BTreeSet<String> = bindings.split(',').map(|b| b.trim().to_owned()).collect();
        for b in &bindings {
            assert!(
                BINDINGS.contains(&b.as_str()),
                "bindings/c-only.txt: unknown binding `{b}` in `{line}` (cpp, go, java, python)"
            );
        }
        out.insert(function.to_owned(), bindings);
    }
    out
}

/// Problems: header functions a binding neither calls nor lists, and stale allow-list lines.
fn coverage_problems(
    functions: &BTreeSet<String>,
    calls: &BTreeMap<&str, BTreeSet<String>>,
    allowed: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for function in functions {
        for binding in BINDINGS {
            let called = calls[binding].contains(function);
            let listed = allowed.get(function).is_some_and(|b| b.contains(binding));
            match (called, listed) {
                (false, false) => problems.push(format!(
                    "{function} has no {binding} counterpart: wrap it, or list it in \
                     bindings/c-only.txt with the reason"
                )),
                (true, true) => problems.push(format!(
                    "bindings/c-only.txt lists {function} for {binding}, which calls it: remove \
                     the entry"
                )),
                _ => {}
            }
        }
    }
    for function in allowed.keys() {
        if !functions.contains(function) {
            problems.push(format!(
                "bindings/c-only.txt lists {function}, which the header does not declare"
            ));
        }
    }
    problems
}

#[test]
fn every_header_function_has_a_counterpart_in_every_binding() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("include/paimon_cleanup.h")).expect("header");
    let functions = header_functions(&header);
    assert!(
        functions.len() > 50,
        "found only {} header functions",
        functions.len()
    );
    let hpp = std::fs::read_to_string(root.join("include/paimon_cleanup.hpp")).expect("hpp");
    let calls: BTreeMap<&str, BTreeSet<String>> = BTreeMap::from([
        ("cpp", identifiers(&hpp)),
        ("go", words(&sources(&root.join("bindings/go"), &[".go"]))),
        (
            "java",
            identifiers(&sources(
                &root.join("bindings/java/jni"),
                &[".c", ".h", ".cpp"],
            )),
        ),
        (
            "python",
            python_calls(&sources(
                &root.join("bindings/python/src/paimon_cleanup"),
                &[".py"],
            )),
        ),
    ]);
    let allowed = allow_list(
        &std::fs::read_to_string(root.join("bindings/c-only.txt")).expect("bindings/c-only.txt"),
    );
    let problems = coverage_problems(&functions, &calls, &allowed);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_function_missing_from_a_binding_is_reported() {
    let functions =
        header_functions("void paimon_cleanup_new_thing(void);\nint paimon_cleanup_old(int x);\n");
    let all = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let calls = BTreeMap::from([
        (
            "cpp",
            all(&["paimon_cleanup_old", "paimon_cleanup_new_thing"]),
        ),
        ("go", identifiers("x := C.paimon_cleanup_old(1)")),
        (
            "java",
            all(&["paimon_cleanup_old", "paimon_cleanup_new_thing"]),
        ),
        (
            "python",
            python_calls(
                "x = lib.paimon_cleanup_old(1)\nfn = lib.paimon_cleanup_new_thing\n\
                 DECL = 'void paimon_cleanup_unused(void);'",
            ),
        ),
    ]);
    let problems = coverage_problems(&functions, &calls, &BTreeMap::new());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("paimon_cleanup_new_thing has no go counterpart"));
    let allowed = allow_list("paimon_cleanup_new_thing go: Go does not need it\n");
    assert!(coverage_problems(&functions, &calls, &allowed).is_empty());
    let stale = allow_list("paimon_cleanup_old go: stale\n");
    assert_eq!(coverage_problems(&functions, &calls, &stale).len(), 2);
}
