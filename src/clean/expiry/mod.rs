//! Expiry: removing old snapshots ([`snapshots::expire_snapshots`]), changelogs
//! ([`changelogs::expire_changelogs`]), tags ([`tags::delete_tags`], [`tags::expire_tags`]) and
//! consumers ([`consumers::expire_consumers`]); which versions go is [`retention`]'s and
//! [`range`]'s decision.
//!
//! **What it deletes:** the removed versions' files, the data and changelog files their delta
//! and changelog lists free ([`removed::deleted_by_deltas`], [`removed::added_by_lists`]), and
//! their manifest lists, manifests, index files and statistics ([`plan::RemovedMetadata`]).
//! **What keeps a file:** any location a kept version reads, whatever kind the removed entry
//! claims: retained snapshots, every tag and branch, long-lived changelogs
//! ([`protected::protectors`], read by [`protected::ReferenceReader::protect_among`] and
//! [`protected::ReferenceReader::referenced_metadata`]). [`plan::DeletionPlan::from_parts`]
//! decides; [`plan::DeletionPlan::execute`] deletes in crash-safe order.

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
