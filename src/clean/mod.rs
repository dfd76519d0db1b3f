//! Cleanup capabilities, one module each, over the table layer.

pub mod commit;
pub mod consumers;
pub mod control;
pub mod deleter;
pub mod expire_changelogs;
pub mod expire_snapshots;
pub mod kinds;
pub mod maintain;
pub mod orphan_files;
pub mod partition_filter;
pub mod partitions;
pub mod plan;
pub mod protectors;
pub mod references;
pub mod report;
pub mod retention;
pub mod tags;

pub use consumers::{expire_consumers, ConsumerReport};
pub use control::{CancelToken, RunControl};
pub use expire_changelogs::{expire_changelogs, ChangelogExpireConfig, ChangelogExpireReport};
pub use expire_snapshots::{expire_snapshots, ExpireConfig, ExpireReport};
pub use maintain::{maintain, MaintainConfig, MaintainReport};
pub use orphan_files::{remove_orphan_files, OrphanConfig, OrphanReport};
pub use partitions::{
    drop_partitions, expire_partitions, preview_drop_partitions, PartitionExpireConfig,
    PartitionExpireStrategy, PartitionReport,
};
pub use report::{DeletionReport, FileClass};
pub use retention::{AssumeRemoved, RetentionOverrides};
pub use tags::{check_tag_name, delete_tag, delete_tags, expire_tags, TagReport};
