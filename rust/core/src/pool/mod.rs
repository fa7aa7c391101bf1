//! The caching device-memory pool. Every byte gpukit puts on a device comes from here.
//!
//! - Size classes (`size_class`): four per power of two, so at most a quarter of a block is waste.
//! - Small classes (up to `SMALL_LIMIT`) are carved from `SEGMENT` sized segments, a segment per
//!   class (a slab): one backend call serves many small arrays. A segment whose slots are all
//!   free can go back to the backend. Large blocks are whole backend allocations, reused for
//!   requests of their class or the class above.
//! - Streams: a freed block is reusable at once on the stream it was freed on; on another stream
//!   only after a fence (an event) recorded on its stream after the free has completed.
//! - Limits: a pool limit on reserved bytes, and quotas (per task) on allocated bytes.
//! - Pressure (the limit, or the device itself out of memory): cached blocks go back to the backend
//!   oldest first, then evictable live buffers are spilled to host memory, least recently used
//!   first; only then does an allocation fail. A spilled buffer is restored (bit-exact, perhaps
//!   at a new address) the next time its address is asked for.
//!
//! The parts, one job each: `allocation` (allocate and release), `cache` (free lists by stream
//! and class, segments), `shard` (live buffers, free lists and spill order of one shard), `lru`
//! (the spill order), `quotas`, `residency` (addresses, spilling, restoring), `backend` (fresh
//! memory under the limit, giving cached memory back), `fences` (cross-stream reuse), `threads`
//! (per-thread shard, ids, pins, the capture in progress), `graphs` (memory that captured graphs
//! hold), `stats`.
//!
//! Locks: the state is split into `SHARDS` shards, each behind its own lock; a thread allocates
//! in its own shard and a buffer goes back to the shard that issued its id, so threads rarely
//! meet. A thread holds at most one shard lock at a time, except `backend::release_cached`,
//! which takes them all in index order. The quota table, the fences and the pin lists have
//! locks of their own, never held while waiting for a shard; the graph table is taken under a
//! shard's lock (a release holding a block for a graph), never the other way round. No backend call (allocation, free,
//! copy, event record or query) ever runs under any of these locks.

mod allocation;
mod backend;
mod cache;
mod error;
mod fences;
mod graphs;
mod hash;
mod lru;
mod quotas;
mod residency;
mod shard;
mod stats;
mod threads;

#[cfg(test)]
mod graph_tests;
#[cfg(test)]
mod quota_tests;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use crate::table::AllocatorTable;
use fences::Fences;
use graphs::Graphs;
use lru::UseClock;
use quotas::Quotas;
use shard::{shard_of, Shard, SHARDS};
use stats::Gauges;
use threads::Threads;

pub use error::PoolError;
pub use graphs::GraphId;
pub use quotas::QuotaSpec;
pub use stats::Stats;

pub const SMALL_LIMIT: u64 = 1 << 20;
pub const SEGMENT: u64 = 2 << 20;
/// Larger requests fail as out of memory (no device has that much), before any size arithmetic.
pub const MAX_REQUEST: u64 = 1 << 62;

pub type BufferId = u64;
pub type QuotaId = u64;
pub type Stream = u64;

/// A quota's figures: its limit, the bytes charged to it now, and the most it ever held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaInfo {
    pub limit: u64,
    pub used: u64,
    pub peak: u64,
}

/// The spill rank of buffers charged to no quota.
pub const DEFAULT_SPILL_RANK: u8 = 1;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while these locks are held, so a poisoned one still guards consistent state.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Pool {
    table: AllocatorTable,
    shards: Box<[Mutex<Shard>]>,
    quotas: Mutex<Quotas>,
    gauges: Gauges,
    threads: Threads,
    fences: Fences,
    graphs: Mutex<Graphs>,
    epoch: Instant,
    /// Advanced by every allocation that looks past the cache: cached blocks carry the era of
    /// their free, and older eras go back to the backend first.
    era: AtomicU64,
}

impl Pool {
    pub fn new(table: AllocatorTable) -> Self {
        Self {
            table,
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            quotas: Mutex::default(),
            gauges: Gauges::default(),
            threads: Threads::new(),
            fences: Fences::default(),
            graphs: Mutex::default(),
            epoch: Instant::now(),
            era: AtomicU64::new(0),
        }
    }

    pub fn table(&self) -> &AllocatorTable {
        &self.table
    }

    fn clock(&self) -> UseClock<'_> {
        UseClock::new(&self.epoch)
    }

    fn era(&self) -> u64 {
        self.era.load(Relaxed)
    }

    fn shard(&self, index: usize) -> MutexGuard<'_, Shard> {
        lock(&self.shards[index])
    }

    fn shard_for(&self, id: BufferId) -> MutexGuard<'_, Shard> {
        self.shard(shard_of(id))
    }

    // --- limits and quotas ----------------------------------------------------------------------

    pub fn set_limit(&self, limit: Option<u64>) {
        self.gauges.set_limit(limit);
    }

    pub fn limit(&self) -> Option<u64> {
        self.gauges.limit()
    }

    pub fn create_quota(&self, limit: u64) -> QuotaId {
        self.create_child_quota(limit, limit, None, DEFAULT_SPILL_RANK)
    }

    /// A quota of `limit` bytes whose usage beyond `reserved` is also charged to `parent` (and
    /// must fit under the parent's limit). Its buffers spill before those of higher `spill_rank`.
    pub fn create_child_quota(
        &self,
        limit: u64,
        reserved: u64,
        parent: Option<QuotaId>,
        spill_rank: u8,
    ) -> QuotaId {
        self.create_quota_with(QuotaSpec {
            limit,
            reserved,
            parent,
            spill_rank,
            ..QuotaSpec::default()
        })
    }

    /// A quota of `limit` bytes opened inside `outer`: every byte charged to it is charged to
    /// `outer` too, so it can only narrow it. None if `outer` does not exist.
    pub fn create_nested_quota(&self, limit: u64, outer: QuotaId) -> Option<QuotaId> {
        let mut quotas = lock(&self.quotas);
        let spill_rank = quotas.spill_rank(outer)?;
        Some(quotas.create(QuotaSpec {
            limit,
            reserved: 0,
            parent: Some(outer),
            spill_rank,
            ..QuotaSpec::default()
        }))
    }

    pub fn create_quota_with(&self, spec: QuotaSpec) -> QuotaId {
        lock(&self.quotas).create(spec)
    }

    /// Names the quota's owner in its errors (e.g. "task 'chat'").
    pub fn set_quota_owner(&self, quota: QuotaId, owner: String) {
        lock(&self.quotas).set_owner(quota, owner);
    }

    /// (limit, bytes in use) of a quota.
    pub fn quota_usage(&self, quota: QuotaId) -> Option<(u64, u64)> {
        self.quota_info(quota).map(|q| (q.limit, q.used))
    }

    pub fn quota_info(&self, quota: QuotaId) -> Option<QuotaInfo> {
        lock(&self.quotas).info(quota)
    }

    /// Sets a quota's limit unless more than `limit` bytes are charged to it already (then false
    /// and nothing changes): the check and the change are one step for concurrent allocations.
    pub fn try_set_quota_limit(&self, quota: QuotaId, limit: u64) -> bool {
        lock(&self.quotas).try_set_limit(quota, limit)
    }

    /// Forgets a quota; buffers charged to it stay valid. A quota with a parent hands them to
    /// it (a quota opened inside another keeps counting there); one without stops counting
    /// them.
    pub fn drop_quota(&self, quota: QuotaId) {
        self.retire_quota(quota);
    }

    /// Forgets a quota whose buffers may outlive it (a finished task's results): they are
    /// charged to its parent from now on, and spill in the parent's rank.
    pub fn retire_quota(&self, quota: QuotaId) {
        let Some((buffers, rank)) = lock(&self.quotas).retire(quota) else {
            return;
        };
        for id in buffers {
            self.shard_for(id).update(id, |live| live.rank = rank);
        }
    }

    // --- reporting ------------------------------------------------------------------------------

    pub fn set_evictable(&self, id: BufferId, evictable: bool) -> Result<(), PoolError> {
        let clock = self.clock();
        self.shard_for(id)
            .update(id, |live| {
                if evictable && !live.evictable {
                    live.last_use = clock.get(); // in the spill order from now, as just used
                }
                live.evictable = evictable;
            })
            .ok_or(PoolError::UnknownBuffer(id))
    }

    pub fn is_evictable(&self, id: BufferId) -> bool {
        self.shard_for(id).get(id).is_some_and(|l| l.evictable)
    }

    pub fn is_resident(&self, id: BufferId) -> bool {
        self.shard_for(id)
            .get(id)
            .is_some_and(|l| l.block.is_some())
    }

    /// The size class (bytes reserved) of a live buffer.
    pub fn size_of(&self, id: BufferId) -> Option<u64> {
        self.shard_for(id).get(id).map(|l| l.size)
    }

    pub fn cached_bytes(&self) -> u64 {
        (0..SHARDS).map(|i| self.shard(i).free.bytes()).sum()
    }

    pub fn stats(&self) -> Stats {
        let (mut allocations, mut cache_hits) = (0, 0);
        for i in 0..SHARDS {
            let shard = self.shard(i);
            allocations += shard.allocations;
            cache_hits += shard.cache_hits;
        }
        self.gauges.snapshot(allocations, cache_hits)
    }

    /// Starts the peaks afresh from the current values.
    pub fn reset_peaks(&self) {
        self.gauges.reset_peaks();
    }

    /// Share of reserved bytes not in live buffers (cached blocks, free slots): 0 is none.
    pub fn fragmentation(&self) -> f64 {
        let s = self.stats();
        if s.reserved == 0 {
            0.0
        } else {
            1.0 - s.allocated as f64 / s.reserved as f64
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.fences.destroy_events(&self.table);
        let _ = self.empty_cache();
    }
}
