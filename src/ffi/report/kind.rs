//! Report kinds, and the kind and dry-run flag of a report.

use std::os::raw::c_char;

/// Which operation produced a report. The numbers are stable; new kinds are only appended.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaimonCleanupReportKind {
    /// Not a report (returned for a NULL report).
    None = 0,
    /// `paimon_cleanup_expire_snapshots`.
    ExpireSnapshots = 1,
    /// `paimon_cleanup_expire_changelogs`.
    ExpireChangelogs = 2,
    /// `paimon_cleanup_delete_tag`.
    DeleteTag = 3,
    /// `paimon_cleanup_expire_tags`.
    ExpireTags = 4,
    /// `paimon_cleanup_expire_consumers`.
    ExpireConsumers = 5,
    /// `paimon_cleanup_remove_orphan_files`.
    RemoveOrphanFiles = 6,
    /// `paimon_cleanup_drop_partitions`.
    DropPartitions = 7,
    /// `paimon_cleanup_expire_partitions`.
    ExpirePartitions = 8,
    /// `paimon_cleanup_maintain`: the steps that ran are sub-reports
    /// (`paimon_cleanup_report_step`).
    Maintain = 9,
}

impl PaimonCleanupReportKind {
    /// Every kind in numeric order.
    const ALL: [PaimonCleanupReportKind; 10] = [
        PaimonCleanupReportKind::None,
        PaimonCleanupReportKind::ExpireSnapshots,
        PaimonCleanupReportKind::ExpireChangelogs,
        PaimonCleanupReportKind::DeleteTag,
        PaimonCleanupReportKind::ExpireTags,
        PaimonCleanupReportKind::ExpireConsumers,
        PaimonCleanupReportKind::RemoveOrphanFiles,
        PaimonCleanupReportKind::DropPartitions,
        PaimonCleanupReportKind::ExpirePartitions,
        PaimonCleanupReportKind::Maintain,
    ];

    fn name_nul(self) -> &'static str {
        match self {
            PaimonCleanupReportKind::None => "none\0",
            PaimonCleanupReportKind::ExpireSnapshots => "expire_snapshots\0",
            PaimonCleanupReportKind::ExpireChangelogs => "expire_changelogs\0",
            PaimonCleanupReportKind::DeleteTag => "delete_tag\0",
            PaimonCleanupReportKind::ExpireTags => "expire_tags\0",
            PaimonCleanupReportKind::ExpireConsumers => "expire_consumers\0",
            PaimonCleanupReportKind::RemoveOrphanFiles => "remove_orphan_files\0",
            PaimonCleanupReportKind::DropPartitions => "drop_partitions\0",
            PaimonCleanupReportKind::ExpirePartitions => "expire_partitions\0",
            PaimonCleanupReportKind::Maintain => "maintain\0",
        }
    }
}

/// Returns the static, lower-case name of a report kind (`"none"`, `"expire_snapshots"`, ...),
/// or `"unknown"` for a value that is not a report kind.
///
/// Ownership: static; never free it. Thread-safety: any thread. Errors: none; never NULL.
#[no_mangle]
pub extern "C" fn paimon_cleanup_report_kind_name(kind: i32) -> *const c_char {
    let name = PaimonCleanupReportKind::ALL
        .iter()
        .find(|k| **k as i32 == kind)
        .map_or("unknown\0", |k| k.name_nul());
    name.as_ptr().cast()
}
