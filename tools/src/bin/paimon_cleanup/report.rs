//! Reports that scale: the text report gives the totals and lists paths only on request
//! (`--list` all, `--list N` the first N); `--report FILE` writes the full JSON report (the
//! document `--json` prints) to FILE for audits.

use std::path::Path;

use paimon_cleanup::clean::DeletionReport;
use paimon_cleanup::{Error, Result};

/// Which paths the text report lists.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Listing {
    /// None: the totals only, and a line saying how to see the paths.
    Totals,
    /// The first N.
    First(usize),
    /// Every path.
    All,
}

impl Listing {
    /// The listing `--list [N]` asks for.
    pub fn of(arg: Option<Option<usize>>) -> Listing {
        match arg {
            None => Listing::Totals,
            Some(None) => Listing::All,
            Some(Some(n)) => Listing::First(n),
        }
    }
}

/// Lists the paths of `d` as `listing` asks, each as `  would delete PATH` (dry run) or
/// `  deleted PATH`; without `--list` one line tells how many there are and how to see them.
pub fn print_paths(d: &DeletionReport, listing: Listing) {
    let total = d.paths.len();
    if total == 0 {
        return;
    }
    let verb = if d.dry_run { "would delete" } else { "deleted" };
    let shown = match listing {
        Listing::Totals => {
            outln!(
                "  {total} paths not listed (--list prints them, --list N the first N, \
                 --report FILE writes the JSON report)"
            );
            return;
        }
        Listing::First(n) => n.min(total),
        Listing::All => total,
    };
    for p in d.paths.iter().take(shown) {
        outln!("  {verb} {}", p.path);
    }
    if shown < total {
        outln!("  ... {} more paths (--list prints all)", total - shown);
    }
}

/// Creates (or truncates) the `--report` file before the run, so that a file that cannot be
/// written stops the command before it changes anything.
pub fn prepare(file: &Path) -> Result<()> {
    std::fs::File::create(file).map(drop).map_err(|e| {
        Error::InvalidArgument(format!(
            "--report {}: cannot create the file: {e}",
            file.display()
        ))
    })
}

/// Writes the JSON report (as `--json` prints it) to `file`.
pub fn write<T: serde::Serialize>(file: &Path, report: &T) -> Result<()> {
    let mut text =
        serde_json::to_string_pretty(report).map_err(|e| Error::Internal(e.to_string()))?;
    text.push('\n');
    std::fs::write(file, text).map_err(|e| Error::Storage {
        path: file.display().to_string(),
        message: format!("the run is done but its report could not be written: {e}"),
    })
}
