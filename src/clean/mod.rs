//! Cleanup capabilities, one module each, over the table layer.

pub mod control;
pub mod deleter;
pub mod expire_snapshots;
pub mod plan;
pub mod protectors;
pub mod references;
pub mod report;
pub mod retention;

pub use control::{CancelToken, RunControl};
pub use expire_snapshots::{expire_snapshots, ExpireConfig, ExpireReport};
pub use report::{DeletionReport, FileClass};
pub use retention::RetentionOverrides;
