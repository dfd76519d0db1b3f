//! The machinery the cleanup jobs share: deletion plans ([`plan`]) over candidate files
//! ([`candidates`], their records in a [`spill`] log), reading what is still
//! referenced ([`references`]), sorted location keys ([`keys`]), the guarded deleter ([`deleter`]), file kinds ([`kinds`]) and the
//! snapshot commit protocol ([`commit`]), and the time helpers ([`clock`]).

pub mod candidates;
pub mod clock;
pub mod commit;
pub mod deleter;
pub mod keys;
pub mod kinds;
pub mod names;
pub mod plan;
pub mod references;
pub mod spill;
