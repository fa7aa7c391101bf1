//! The spill order of one shard's buffers: those that may be spilled now (evictable, resident,
//! not moving), by spill rank and then least recent use. Finding a victim is a look at the
//! front, O(log n), never a scan of the live buffers.

use std::cell::Cell;
use std::collections::BTreeSet;
use std::time::Instant;

use super::BufferId;

/// (spill rank, last use, id): lower ranks spill first, then older uses.
pub(crate) type LruKey = (u8, u64, BufferId);

#[derive(Default)]
pub(crate) struct Lru {
    order: BTreeSet<LruKey>,
}

impl Lru {
    pub fn insert(&mut self, key: LruKey) {
        self.order.insert(key);
    }

    pub fn remove(&mut self, key: &LruKey) {
        self.order.remove(key);
    }

    /// The first buffer in spill order that `skip` does not rule out.
    pub fn first(&self, skip: impl Fn(BufferId) -> bool) -> Option<LruKey> {
        self.order.iter().find(|k| !skip(k.2)).copied()
    }
}

/// Times of use (nanoseconds since the pool was made), read from the system clock at most once
/// per pool call, and only when an evictable buffer needs one.
pub(crate) struct UseClock<'a> {
    epoch: &'a Instant,
    now: Cell<Option<u64>>,
}

impl<'a> UseClock<'a> {
    pub fn new(epoch: &'a Instant) -> Self {
        Self {
            epoch,
            now: Cell::new(None),
        }
    }

    pub fn get(&self) -> u64 {
        *self
            .now
            .get()
            .get_or_insert_with(|| self.epoch.elapsed().as_nanos() as u64)
    }
}
