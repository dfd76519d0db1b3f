//! Pure format code: no I/O. Decoders and encoders for every Paimon metadata file.

pub mod binary_row;
pub mod consumer;
pub mod extra;
pub mod manifest;
pub mod options;
pub mod partition;
pub mod partition_time;
pub mod schema;
pub mod snapshot;
pub mod time_text;
pub mod types;
