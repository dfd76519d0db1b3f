//! Where the `-o` options come from: the command line, options files and values read from
//! files or standard input, so that credentials need not appear in the process listing.
//!
//! * `--options-file FILE` (repeatable; `-` is standard input): `key=value` lines; blank lines
//!   and lines starting with `#` are skipped; key and value are trimmed.
//! * `-o key=value` on the command line; `-o key=@FILE` reads the value from FILE (one trailing
//!   newline removed), `-o key=@-` from standard input, `-o key=@@text` is the value `@text`.
//!
//! `-o` wins over a file; a key given twice by the files is an error. Standard input can be
//! read once. No error names a value: they may be credentials.

use std::collections::HashMap;
use std::io::Read;

use paimon_cleanup::storage::config::is_secret_key;
use paimon_cleanup::{Error, Result};

/// Where a value came from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    /// Typed on the command line (`-o key=value`): visible to every user in `ps`.
    CommandLine,
    /// Read from a file or from standard input.
    Hidden,
}

/// The options of one command, merged from `files` then `pairs`, with standard input read
/// through `stdin` when a source names `-`. Returns each key's value and where it came from.
pub fn collect(
    files: &[String],
    pairs: &[String],
    stdin: &mut dyn Read,
) -> Result<HashMap<String, (String, Source)>> {
    let mut stdin_used = false;
    let mut read_stdin = |what: &str| -> Result<String> {
        if stdin_used {
            return Err(Error::InvalidArgument(format!(
                "{what}: standard input is already read by another option source"
            )));
        }
        stdin_used = true;
        let mut s = String::new();
        stdin.read_to_string(&mut s).map_err(|e| {
            Error::InvalidArgument(format!("{what}: cannot read standard input: {e}"))
        })?;
        Ok(s)
    };
    let mut from_files: HashMap<String, (String, Source)> = HashMap::new();
    for file in files {
        let what = format!("--options-file {file}");
        let text = if file == "-" {
            read_stdin(&what)?
        } else {
            read_file(&what, file)?
        };
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = line.split_once('=').ok_or_else(|| {
                Error::InvalidArgument(format!("{what}: line {} is not key=value", n + 1))
            })?;
            let key = k.trim();
            if key.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "{what}: line {} has an empty key",
                    n + 1
                )));
            }
            let value = (v.trim().to_string(), Source::Hidden);
            if from_files.insert(key.to_string(), value).is_some() {
                return Err(Error::InvalidArgument(format!(
                    "{what}: option {key} is given more than once in the options files"
                )));
            }
        }
    }
    let mut options = from_files;
    for (i, pair) in pairs.iter().enumerate() {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            Error::InvalidArgument(format!(
                "-o argument {} is not KEY=VALUE (its text is not shown: it may be a secret)",
                i + 1
            ))
        })?;
        let key = k.trim();
        if key.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "-o argument {} has an empty key",
                i + 1
            )));
        }
        let what = format!("-o {key}");
        let value = if let Some(literal) = v.strip_prefix("@@") {
            (format!("@{literal}"), Source::CommandLine)
        } else if v == "@-" {
            (strip_newline(read_stdin(&what)?), Source::Hidden)
        } else if let Some(path) = v.strip_prefix('@') {
            (strip_newline(read_file(&what, path)?), Source::Hidden)
        } else {
            (v.to_string(), Source::CommandLine)
        };
        options.insert(key.to_string(), value);
    }
    Ok(options)
}

/// Keys holding a secret that was typed on the command line.
pub fn secrets_on_command_line(options: &HashMap<String, (String, Source)>) -> Vec<&str> {
    let mut keys: Vec<&str> = options
        .iter()
        .filter(|(k, (_, s))| *s == Source::CommandLine && is_secret_key(k))
        .map(|(k, _)| k.as_str())
        .collect();
    keys.sort_unstable();
    keys
}

fn read_file(what: &str, path: &str) -> Result<String> {
    if path.is_empty() {
        return Err(Error::InvalidArgument(format!("{what}: empty file name")));
    }
    std::fs::read_to_string(path)
        .map_err(|e| Error::InvalidArgument(format!("{what}: cannot read {path}: {e}")))
}

/// The value of a secret file: its text without one trailing newline (`\n` or `\r\n`).
fn strip_newline(mut s: String) -> String {
    if s.ends_with('\n') {
        s.pop();
        if s.ends_with('\r') {
            s.pop();
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sources_merge_and_command_line_wins() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("opts");
        std::fs::write(&file, "# creds\n s3.secret-key = S1 \n\ns3.region=eu\n").unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "S2\r\n").unwrap();
        let files = strings(&[file.to_str().unwrap()]);
        let pairs = strings(&[
            "s3.region=us",
            &format!("fs.s3a.secret.key=@{}", secret.display()),
            "x=@@at",
            "s3.session-token=@-",
        ]);
        let got = collect(&files, &pairs, &mut "T3\n".as_bytes()).unwrap();
        let v = |k: &str| got[k].0.as_str();
        assert_eq!(v("s3.secret-key"), "S1");
        assert_eq!(v("s3.region"), "us");
        assert_eq!(v("fs.s3a.secret.key"), "S2");
        assert_eq!(v("x"), "@at");
        assert_eq!(v("s3.session-token"), "T3");
        assert!(secrets_on_command_line(&got).is_empty());
        let typed = collect(&[], &strings(&["s3.secret-key=S"]), &mut "".as_bytes()).unwrap();
        assert_eq!(secrets_on_command_line(&typed), vec!["s3.secret-key"]);
    }

    #[test]
    fn bad_sources_are_refused_without_their_values() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("opts");
        std::fs::write(&file, "a=1\nHIDDEN-VALUE\n").unwrap();
        let f = strings(&[file.to_str().unwrap()]);
        let e = collect(&f, &[], &mut "".as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && !e.contains("HIDDEN"), "{e}");
        let e = collect(&[], &strings(&["HIDDEN-VALUE"]), &mut "".as_bytes())
            .unwrap_err()
            .to_string();
        assert!(!e.contains("HIDDEN"), "{e}");
        std::fs::write(&file, "a=1\na=2\n").unwrap();
        assert!(collect(&f, &[], &mut "".as_bytes()).is_err());
        let twice = strings(&["a=@-", "b=@-"]);
        assert!(collect(&[], &twice, &mut "x".as_bytes()).is_err());
        let both = strings(&["-"]);
        assert!(collect(&both, &strings(&["b=@-"]), &mut "a=1".as_bytes()).is_err());
        assert!(collect(&[], &strings(&["a=@/nonexistent/x"]), &mut "".as_bytes()).is_err());
    }
}
