//! The C ABI promise: `abi/abi-<N>.txt` records ABI `N` (`PAIMON_CLEANUP_ABI_VERSION`, also the
//! SONAME `libpaimon_cleanup.so.<N>`) as it was released — every exported function with its
//! prototype, every callback type, every enum value, and the size, alignment and field offsets
//! of every struct a caller allocates (measured by the C compiler). The committed header must
//! still contain every line of the baseline: additions (new functions, new enum values) are
//! allowed, anything else (a removed or changed function, a renumbered enum value, a struct that
//! grew) fails unless the ABI version is bumped, which starts a new baseline file.
//!
//! The `exported_symbols` ctest checks that the shared library exports exactly the header's
//! functions, so the baseline's functions are the library's exported symbols.
//!
//! Record additions, or start the baseline of a bumped ABI version, with
//! `PAIMON_CLEANUP_ABI_BASELINE=write cargo test --test abi_baseline` (it refuses to drop lines
//! of an existing baseline).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Command that (re)writes the baseline of the current ABI version.
const WRITE_COMMAND: &str = "PAIMON_CLEANUP_ABI_BASELINE=write cargo test --test abi_baseline";

/// The header without comments, one space for every run of white space.
fn strip_comments(header: &str) -> String {
    let mut out = String::with_capacity(header.len());
    let mut rest = header;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
            out.push(' ');
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn normalize(text: &str) -> String {
    let spaced = text.replace("struct ", "");
    let mut out = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    for (from, to) in [
        ("( ", "("),
        (" )", ")"),
        (" ,", ","),
        (" ;", ";"),
        ("* ", "*"),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// A struct with a body: its name and its fields (name, declared type).
struct StructDef {
    name: String,
    fields: Vec<(String, String)>,
}

/// Everything of the header that the ABI consists of, except struct layouts.
struct HeaderAbi {
    abi_version: u32,
    lines: BTreeSet<String>,
    structs: Vec<StructDef>,
}

fn parse_header(header: &str) -> HeaderAbi {
    let abi_version = header
        .lines()
        .find_map(|l| l.strip_prefix("#define PAIMON_CLEANUP_ABI_VERSION "))
        .and_then(|v| v.trim().parse().ok())
        .expect("#define PAIMON_CLEANUP_ABI_VERSION in the header");
    // Preprocessor lines out (the C23 enum base is conditional; typedefs of enums are ints), and
    // the C++ `extern "C" {` ... `}` around the functions (a bare `}` closes nothing else).
    let code: String = strip_comments(header)
        .lines()
        .filter(|l| {
            let l = l.trim();
            !l.starts_with('#') && l != "extern \"C\" {" && l != "}"
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut lines = BTreeSet::new();
    let mut structs = Vec::new();
    // Top-level statements end with ';' outside braces.
    let mut depth = 0usize;
    let mut statement = String::new();
    for c in code.chars() {
        statement.push(c);
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ';' if depth == 0 => {
                let text = normalize(&statement);
                statement.clear();
                classify(&text, &mut lines, &mut structs);
            }
            _ => {}
        }
    }
    HeaderAbi {
        abi_version,
        lines,
        structs,
    }
}

fn classify(text: &str, lines: &mut BTreeSet<String>, structs: &mut Vec<StructDef>) {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("enum ") {
        let (name, body) = rest.split_once('{').unwrap_or((rest, ""));
        let name = name.split(':').next().unwrap_or(name).trim();
        for entry in body.trim_end_matches("};").split(',') {
            if let Some((variant, value)) = entry.split_once('=') {
                lines.insert(format!("enum {name} {} = {}", variant.trim(), value.trim()));
            }
        }
    } else if let Some(rest) = text.strip_prefix("typedef ") {
        if let Some(body_start) = rest.find('{') {
            let name = rest[..body_start].trim().to_owned();
            let body = &rest[body_start + 1..rest.rfind('}').unwrap_or(rest.len())];
            let fields = body
                .split(';')
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(|f| {
                    let split = f.rfind([' ', '*']).map_or(0, |i| i + 1);
                    (f[split..].to_owned(), f[..split].trim().to_owned())
                })
                .collect();
            structs.push(StructDef { name, fields });
        } else if rest.contains("(*") {
            lines.insert(format!("callback {rest}"));
        }
    } else if text.contains("paimon_cleanup_") && text.contains('(') {
        lines.insert(format!("function {text}"));
    }
}

/// Size, alignment and field offsets of the header's structs, measured by the C compiler.
fn struct_layouts(root: &Path, structs: &[StructDef]) -> Option<BTreeSet<String>> {
    let mut program = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"paimon_cleanup.h\"\nint main(void) {\n",
    );
    for s in structs {
        program.push_str(&format!(
            "    printf(\"struct {0} size %zu align %zu\\n\", sizeof({0}), (size_t)_Alignof({0}));\n",
            s.name
        ));
        for (field, ty) in &s.fields {
            program.push_str(&format!(
                "    printf(\"field {0}.{1} {2} offset %zu size %zu\\n\", offsetof({0}, {1}), \
                 sizeof((({0} *)0)->{1}));\n",
                s.name, field, ty
            ));
        }
    }
    program.push_str("    return 0;\n}\n");
    let dir = tempfile::tempdir().expect("temporary directory");
    let source = dir.path().join("layout.c");
    let exe = dir.path().join("layout");
    std::fs::write(&source, program).expect("write the layout program");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let compiled = match Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Werror", "-I"])
        .arg(root.join("include"))
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            common::skip("no C compiler", &format!("{cc}: {e}"));
            return None;
        }
    };
    assert!(
        compiled.status.success(),
        "the layout program does not compile:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let out = Command::new(&exe).output().expect("run the layout program");
    assert!(out.status.success(), "the layout program failed");
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

/// Lines of the baseline missing from the current ABI: each one is an incompatible change.
fn incompatible_changes(baseline: &BTreeSet<String>, current: &BTreeSet<String>) -> Vec<String> {
    baseline.difference(current).cloned().collect()
}

fn read_baseline(path: &Path) -> Option<BTreeSet<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect(),
    )
}

fn write_baseline(path: &Path, abi_version: u32, lines: &BTreeSet<String>) {
    let mut text = format!(
        "# C ABI {abi_version} of paimon-cleanup (SONAME libpaimon_cleanup.so.{abi_version}).\n\
         # Checked by tests/abi_baseline.rs: every line must stay true while the ABI version is \
         {abi_version}.\n# Written by `{WRITE_COMMAND}`.\n"
    );
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::create_dir_all(path.parent().expect("abi/")).expect("create abi/");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

#[test]
fn header_keeps_every_promise_of_its_abi_version() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(root.join("include/paimon_cleanup.h")).expect("header");
    let abi = parse_header(&header);
    let Some(layouts) = struct_layouts(root, &abi.structs) else {
        return;
    };
    let mut current = abi.lines;
    current.extend(layouts);
    assert!(
        current.iter().any(|l| l.starts_with("function "))
            && current.iter().any(|l| l.starts_with("enum "))
            && current.iter().any(|l| l.starts_with("struct ")),
        "the header parser found no functions, enums or structs:\n{}",
        current
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );

    let path = root.join(format!("abi/abi-{}.txt", abi.abi_version));
    let writing = std::env::var("PAIMON_CLEANUP_ABI_BASELINE").as_deref() == Ok("write");
    let Some(baseline) = read_baseline(&path) else {
        if writing {
            write_baseline(&path, abi.abi_version, &current);
            println!("wrote {}", path.display());
            return;
        }
        panic!(
            "no ABI baseline {} for PAIMON_CLEANUP_ABI_VERSION {}: after a deliberate ABI version \
             bump, record the new ABI with `{WRITE_COMMAND}` and commit it",
            path.display(),
            abi.abi_version
        );
    };
    let broken = incompatible_changes(&baseline, &current);
    assert!(
        broken.is_empty(),
        "the header breaks ABI {} ({}) without an ABI version bump; these promises no longer \
         hold:\n  {}\nRestore them, or bump PAIMON_CLEANUP_ABI_VERSION in src/ffi/mod.rs (new \
         SONAME) and record the new ABI with `{WRITE_COMMAND}`.",
        abi.abi_version,
        path.display(),
        broken.join("\n  ")
    );
    let added: Vec<_> = current.difference(&baseline).collect();
    if writing && !added.is_empty() {
        write_baseline(&path, abi.abi_version, &current);
        println!("recorded {} additions in {}", added.len(), path.display());
    } else if !added.is_empty() {
        eprintln!(
            "{} compatible additions to ABI {} are not in {} yet (record them with `{WRITE_COMMAND}`)",
            added.len(),
            abi.abi_version,
            path.display()
        );
    }
}

#[test]
fn incompatible_changes_are_detected_and_additions_allowed() {
    let header = "#define PAIMON_CLEANUP_ABI_VERSION 1\n\
        enum PaimonCleanupStatus {\n PAIMON_CLEANUP_STATUS_OK = 0,\n PAIMON_CLEANUP_STATUS_IO = 1,\n};\n\
        /** doc */\nPaimonCleanupStatus paimon_cleanup_a(const struct PaimonCleanupContext *c,\n  uint32_t n);\n\
        typedef void (*PaimonCleanupProgressFn)(void *user_data, uint64_t done);\n\
        typedef struct PaimonCleanupSummary {\n bool has;\n int64_t id;\n} PaimonCleanupSummary;\n";
    let base = parse_header(header);
    assert_eq!(base.abi_version, 1);
    assert!(base.lines.contains(
        "function PaimonCleanupStatus paimon_cleanup_a(const PaimonCleanupContext *c, uint32_t n);"
    ));
    assert!(base
        .lines
        .contains("enum PaimonCleanupStatus PAIMON_CLEANUP_STATUS_IO = 1"));
    assert_eq!(base.structs.len(), 1);
    assert_eq!(
        base.structs[0].fields,
        vec![
            ("has".to_owned(), "bool".to_owned()),
            ("id".to_owned(), "int64_t".to_owned())
        ]
    );
    let changed = |from: &str, to: &str| {
        let abi = parse_header(&header.replace(from, to));
        incompatible_changes(&base.lines, &abi.lines)
    };
    // Additions are fine.
    assert!(changed(
        "PAIMON_CLEANUP_STATUS_IO = 1,\n",
        "PAIMON_CLEANUP_STATUS_IO = 1,\n PAIMON_CLEANUP_STATUS_NEW = 2,\n"
    )
    .is_empty());
    assert!(changed("typedef void", "void paimon_cleanup_b(void);\ntypedef void").is_empty());
    // Renumbered values, changed parameters, removed functions and callbacks are not.
    assert_eq!(changed("IO = 1", "IO = 2").len(), 1);
    assert_eq!(changed("uint32_t n", "uint64_t n").len(), 1);
    assert_eq!(
        changed("paimon_cleanup_a", "paimon_cleanup_renamed").len(),
        1
    );
    assert_eq!(changed("uint64_t done", "uint32_t done").len(), 1);
}
