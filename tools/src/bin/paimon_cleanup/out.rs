//! Standard output that a closed pipe cannot crash: `paimon-cleanup … | head` ends quietly.

use std::io::Write;

/// Writes `text` and a newline to standard output. When the reader has gone (a closed pipe),
/// the program exits at once with status 0: the command's work is done, only its output was cut
/// short. Any other write error exits with status 1.
pub fn line(text: &str) {
    // The report follows the progress display, which ends first so that the two do not mix.
    crate::progress::finish();
    let mut out = std::io::stdout().lock();
    let result = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"));
    if let Err(e) = result {
        let code = if e.kind() == std::io::ErrorKind::BrokenPipe {
            0
        } else {
            1
        };
        std::process::exit(code);
    }
}
