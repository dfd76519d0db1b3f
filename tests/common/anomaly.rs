//! Helpers of the anomaly matrix (tests/anomaly_matrix.rs): exact trees that follow no link,
//! copies that keep symlinks and named pipes, processes run under a timeout.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One entry of an exact tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// A regular file: size and a hash of its bytes.
    File(u64, u64),
    /// A directory.
    Dir,
    /// A symlink and its target text (never followed).
    Link(PathBuf),
    /// A named pipe.
    Fifo,
    /// A socket or device.
    Other,
}

fn hash_bytes(b: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

/// Every entry under `root` (relative path → node), following no symlink and opening no pipe.
/// A directory that cannot be read is recorded as such (`<path>/<unreadable>`).
pub fn exact_tree(root: &Path) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                let rel = dir.strip_prefix(root).unwrap_or(&dir).to_string_lossy();
                out.insert(format!("{rel}/<unreadable: {}>", e.kind()), Node::Other);
                continue;
            }
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let Ok(md) = std::fs::symlink_metadata(&p) else {
                out.insert(rel, Node::Other);
                continue;
            };
            let ft = md.file_type();
            let node = if ft.is_symlink() {
                Node::Link(std::fs::read_link(&p).unwrap_or_default())
            } else if ft.is_dir() {
                stack.push(p.clone());
                Node::Dir
            } else if ft.is_fifo() {
                Node::Fifo
            } else if ft.is_file() {
                let bytes = std::fs::read(&p).unwrap_or_default();
                Node::File(md.len(), hash_bytes(&bytes))
            } else {
                Node::Other
            };
            out.insert(rel, node);
        }
    }
    out
}

/// The differences between two exact trees, as short lines.
pub fn diff(before: &BTreeMap<String, Node>, after: &BTreeMap<String, Node>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            None => out.push(format!("-{k}")),
            Some(w) if w != v => out.push(format!("~{k}")),
            _ => {}
        }
    }
    for k in after.keys() {
        if !before.contains_key(k) {
            out.push(format!("+{k}"));
        }
    }
    out
}

/// Creates a named pipe at `p`.
pub fn mkfifo(p: &Path) {
    let st = Command::new("mkfifo").arg(p).status().expect("mkfifo");
    assert!(st.success(), "mkfifo {}", p.display());
}

/// Copies `src` to `dst` entry by entry: symlinks stay symlinks (same target text), named
/// pipes become pipes, or empty regular files with `pipes_as_empty` (a reader blocks on a pipe
/// without a writer: for the oracle it is unreadable, as an empty file is).
pub fn copy_exact(src: &Path, dst: &Path, pipes_as_empty: bool) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let from = e.path();
        let to = dst.join(e.file_name());
        let md = std::fs::symlink_metadata(&from).unwrap();
        let ft = md.file_type();
        if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from).unwrap(), &to).unwrap();
        } else if ft.is_dir() {
            copy_exact(&from, &to, pipes_as_empty);
        } else if ft.is_fifo() {
            if pipes_as_empty {
                std::fs::write(&to, b"").unwrap();
            } else {
                mkfifo(&to);
            }
        } else if ft.is_file() {
            std::fs::copy(&from, &to).unwrap();
        }
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this status code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It ran past the timeout and was killed.
    TimedOut,
}

/// Runs `cmd` (stdin closed, output captured) and kills it after `timeout`.
pub fn run_timeout(cmd: &mut Command, timeout: Duration) -> (Ended, String, String) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out_pipe.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let ended = loop {
        match child.try_wait().expect("wait") {
            Some(st) => {
                break match (st.code(), st.signal()) {
                    (Some(c), _) => Ended::Code(c),
                    (None, Some(s)) => Ended::Signal(s),
                    _ => Ended::Signal(0),
                }
            }
            None if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break Ended::TimedOut;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let out = String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned();
    let err = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    (ended, out, err)
}

/// A small deterministic generator (xorshift64*), for seeded sampling.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced by a constant).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    /// The next value.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
