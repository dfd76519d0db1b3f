//! A caller-set memory bound for one run (`RunControl::max_memory`, the CLI's
//! `--max-memory`).
//!
//! The large structures of a run (candidate files, protection's reduced manifests, the deletion
//! plan, the report's paths) are *charged* to a [`MemoryBudget`] before they are built or while
//! they grow, with an estimate of their heap size. A charge that would pass the bound fails the
//! run with [`Error::MemoryLimit`] naming the bound and what needed it. Every charge
//! happens while the run plans, before its first deletion, so a run stopped by its bound has
//! deleted nothing; it is never left to grow until the system kills the process.
//!
//! The estimates count what the structures hold (strings, vectors, hash tables at their load
//! factor), not the allocator's own overhead or the runtime's; the process's resident size is
//! therefore somewhat above what was charged. An unbounded budget counts too (for logs and
//! tests) but never fails.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};

/// Bytes a hash table holds per entry of `entry` bytes: the entry and its control byte at
/// hashbrown's 7/8 load factor.
pub fn hashed(entry: usize) -> u64 {
    ((entry as u64 + 1) * 8).div_ceil(7)
}

#[derive(Debug)]
struct Inner {
    limit: Option<u64>,
    used: AtomicU64,
    peak: AtomicU64,
}

/// What a run has charged against its bound. Cheap to clone; clones share the count. Safe to
/// use from any thread.
#[derive(Debug, Clone)]
pub struct MemoryBudget(Arc<Inner>);

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::new(None)
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes (`None`: unbounded).
    pub fn new(limit: Option<u64>) -> Self {
        MemoryBudget(Arc::new(Inner {
            limit,
            used: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        }))
    }

    /// The bound, if any.
    pub fn limit(&self) -> Option<u64> {
        self.0.limit
    }

    /// Bytes charged and not released.
    pub fn used(&self) -> u64 {
        self.0.used.load(Ordering::Relaxed)
    }

    /// The most ever charged at once.
    pub fn peak(&self) -> u64 {
        self.0.peak.load(Ordering::Relaxed)
    }

    /// Charge `bytes` for `what`. Past the bound nothing is charged and the error names the
    /// bound, what was being built and how much the run had charged.
    pub fn charge(&self, what: &str, bytes: u64) -> Result<()> {
        let before = self.0.used.fetch_add(bytes, Ordering::Relaxed);
        let now = before.saturating_add(bytes);
        if let Some(limit) = self.0.limit {
            if now > limit {
                self.0.used.fetch_sub(bytes, Ordering::Relaxed);
                return Err(Error::MemoryLimit {
                    limit,
                    message: format!(
                        "max_memory: the run needs more than its bound of {limit} bytes ({what}: \
                         {bytes} more bytes on top of {before}); stopped while planning, nothing \
                         deleted. Raise the bound, or remove less per run (a lower expiry limit, \
                         fewer partitions)"
                    ),
                });
            }
        }
        self.0.peak.fetch_max(now, Ordering::Relaxed);
        Ok(())
    }

    /// Give back `bytes` charged earlier.
    pub fn release(&self, bytes: u64) {
        // Never below zero, even if a caller releases more than it charged.
        let _ = self
            .0
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
                Some(u.saturating_sub(bytes))
            });
    }
}

/// One structure's charge to a [`MemoryBudget`], kept at the structure's current size: it
/// grows and shrinks with it ([`Charge::set`]) and is given back when dropped, also when the
/// run stops on an error.
#[derive(Debug)]
pub struct Charge {
    memory: MemoryBudget,
    what: &'static str,
    bytes: u64,
}

impl Charge {
    /// Nothing charged yet to `memory` for `what`.
    pub fn new(memory: &MemoryBudget, what: &'static str) -> Self {
        Charge {
            memory: memory.clone(),
            what,
            bytes: 0,
        }
    }

    /// Charges or releases the difference to `now` bytes. Past the bound the charge stays at
    /// what it was and the error is the budget's.
    pub fn set(&mut self, now: u64) -> Result<()> {
        if now > self.bytes {
            self.memory.charge(self.what, now - self.bytes)?;
        } else {
            self.memory.release(self.bytes - now);
        }
        self.bytes = now;
        Ok(())
    }

    /// Bytes charged now.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.memory.release(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_past_the_bound_fails_and_is_not_counted() {
        let b = MemoryBudget::new(Some(1000));
        b.charge("a", 600).unwrap();
        let e = b.charge("candidate files", 500).unwrap_err();
        assert!(matches!(e, Error::MemoryLimit { limit: 1000, .. }), "{e}");
        let e = e.to_string();
        assert!(e.contains("max_memory") && e.contains("1000") && e.contains("candidate files"));
        assert_eq!(b.used(), 600);
        b.release(600);
        b.charge("b", 1000).unwrap();
        assert_eq!(b.peak(), 1000);
    }

    #[test]
    fn an_unbounded_budget_counts_but_never_fails() {
        let b = MemoryBudget::default();
        b.charge("x", u64::MAX / 2).unwrap();
        b.charge("y", u64::MAX / 2).unwrap();
        assert_eq!(b.limit(), None);
        b.release(u64::MAX);
        assert_eq!(b.used(), 0);
        assert_eq!(hashed(7), 10);
    }

    #[test]
    fn a_charge_follows_its_structure_and_is_given_back_when_dropped() {
        let b = MemoryBudget::new(Some(100));
        let mut c = Charge::new(&b, "in flight");
        c.set(60).unwrap();
        c.set(90).unwrap();
        assert_eq!(b.used(), 90);
        let e = c.set(101).unwrap_err().to_string();
        assert!(e.contains("in flight"), "{e}");
        assert_eq!((c.bytes(), b.used()), (90, 90));
        c.set(10).unwrap();
        assert_eq!(b.used(), 10);
        drop(c);
        assert_eq!((b.used(), b.peak()), (0, 90));
    }
}
