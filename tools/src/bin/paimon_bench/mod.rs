//! Pieces of the `paimon-bench` binary: per-process measurements, the measured operations and
//! their floors.

pub mod copy;
pub mod floor;
pub mod growth;
pub mod measure;
pub mod ops;
pub mod s3;
pub mod s3_proxy;

/// Current wall-clock time in epoch milliseconds.
pub fn now_millis() -> i64 {
    paimon_cleanup::clean::shared::clock::now_millis()
}
