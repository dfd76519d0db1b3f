//! The machinery several cleanup jobs share: sorted location keys ([`keys`]), the guarded
//! deleter ([`deleter`]), file kinds ([`kinds`]), file names ([`names`]), the spill log of
//! records past the memory budget ([`spill`]), and the time helpers ([`clock`]).

pub mod clock;
pub mod deleter;
pub mod keys;
pub mod kinds;
pub mod names;
pub mod spill;
