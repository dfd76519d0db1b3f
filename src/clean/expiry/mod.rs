//! Expiry: removing old snapshots, changelogs, tags and consumers, with the retention rules and
//! the protectors (tags, branches, consumers) they share.

pub mod changelogs;
pub mod consumers;
pub mod plan;
pub mod protected;
pub mod range;
pub mod removed;
pub mod retention;
pub mod snapshots;
pub mod tags;
mod unit_bytes;
pub mod units;
