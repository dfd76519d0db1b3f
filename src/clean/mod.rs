//! Cleanup capabilities over the table layer, grouped by job: [`expiry`] (snapshots, changelogs,
//! tags, consumers and the retention rules they share), [`orphans`] (orphan-file removal),
//! [`partitions`] (partition drop and expiry), [`maintain`] (the combined run), with the run
//! control ([`control`]), the reports ([`report`]) and the machinery they share ([`shared`]).

pub mod control;
pub mod expiry;
pub mod maintain;
pub mod orphans;
pub mod partitions;
pub mod report;
pub mod shared;

pub use control::{CancelToken, CommitHook, CommitStep, RunControl};
pub use expiry::changelogs::{expire_changelogs, ChangelogExpireConfig, ChangelogExpireReport};
pub use expiry::consumers::{expire_consumers, ConsumerReport};
pub use expiry::retention::{AssumeRemoved, RetentionOverrides};
pub use expiry::snapshots::{expire_snapshots, ExpireConfig, ExpireReport};
pub use expiry::tags::{check_tag_name, delete_tag, delete_tags, expire_tags, TagReport};
pub use maintain::{maintain, MaintainConfig, MaintainReport};
pub use orphans::{remove_orphan_files, OrphanConfig, OrphanReport};
pub use partitions::{
    drop_partitions, expire_partitions, preview_drop_partitions, PartitionExpireConfig,
    PartitionExpireStrategy, PartitionReport,
};
pub use report::{DeletionReport, FileClass};
