//! The machinery the cleanup jobs share: deletion plans ([`plan`]), reading what is still
//! referenced ([`references`]), sorted location keys ([`keys`]), the guarded deleter ([`deleter`]), file kinds ([`kinds`]) and the
//! snapshot commit protocol ([`commit`]), and the time helpers ([`clock`]).

pub mod clock;
pub mod commit;
pub mod deleter;
pub mod keys;
pub mod kinds;
pub mod names;
pub mod plan;
pub mod references;
