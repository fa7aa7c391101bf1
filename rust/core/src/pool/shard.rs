//! One shard of the pool: the live buffers whose ids it issued, the blocks freed back to it,
//! and its part of the spill order, under one lock. A thread allocates in its own shard, and a
//! buffer's memory goes back to the shard that issued it, so threads rarely meet on a lock.

use super::cache::{Block, FreeLists};
use super::graphs::GraphId;
use super::hash::HashMap;
use super::lru::{Lru, LruKey, UseClock};
use super::{BufferId, Stream};

pub(crate) const SHARD_BITS: u32 = 4;
pub(crate) const SHARDS: usize = 1 << SHARD_BITS;

/// The shard that issued `id` (ids carry it in their low bits).
pub(crate) fn shard_of(id: BufferId) -> usize {
    (id & (SHARDS as u64 - 1)) as usize
}

pub(crate) struct Live {
    /// Size class: bytes reserved for it on the device, or copied to the host while spilled.
    pub size: u64,
    /// Device memory while resident; None while spilled.
    pub block: Option<Block>,
    /// Host copy while spilled.
    pub host: Option<usize>,
    pub evictable: bool,
    /// The stream it was last used on: its memory counts as freed there.
    pub stream: Stream,
    /// Charged to a quota (the quota table knows which).
    pub charged: bool,
    pub rank: u8,
    pub last_use: u64,
    /// Being spilled or restored by some thread.
    pub busy: bool,
    /// The live graphs whose captured work uses this buffer's address: while any does, it is
    /// never spilled, and its memory stays reserved after it is released.
    pub graphs: Vec<GraphId>,
}

impl Live {
    pub fn ptr(&self) -> Option<u64> {
        self.block.as_ref().map(|b| b.ptr)
    }

    /// Only evictable buffers are in the spill order, so only they need the time of use (a
    /// buffer made evictable later counts as used then).
    fn used(&mut self, stream: Stream, clock: &UseClock) {
        self.stream = stream;
        if self.evictable {
            self.last_use = clock.get();
        }
    }

    /// Records that `graph` (the caller's capture, if any) uses this buffer; true the first
    /// time.
    fn captured_by(&mut self, graph: Option<GraphId>) -> bool {
        match graph {
            Some(g) if !self.graphs.contains(&g) => {
                self.graphs.push(g);
                true
            }
            _ => false,
        }
    }

    fn spillable(&self) -> bool {
        self.evictable && self.block.is_some() && !self.busy && self.graphs.is_empty()
    }

    fn key(&self, id: BufferId) -> LruKey {
        (self.rank, self.last_use, id)
    }
}

/// What `device_ptrs` found a buffer to be.
pub(crate) enum Found {
    Resident(u64),
    /// Another thread is moving it.
    Busy,
    /// Spilled, and now claimed by the caller to restore.
    Claimed,
    /// Spilled, while the caller captures (a restore is a synchronous copy, which a capture
    /// cannot hold): left as it is.
    SpilledInCapture,
}

#[derive(Default)]
pub(crate) struct Shard {
    live: HashMap<BufferId, Live>,
    pub free: FreeLists,
    pub lru: Lru,
    pub allocations: u64,
    pub cache_hits: u64,
}

impl Shard {
    pub fn get(&self, id: BufferId) -> Option<&Live> {
        self.live.get(&id)
    }

    pub fn insert(&mut self, id: BufferId, live: Live) {
        if live.spillable() {
            self.lru.insert(live.key(id));
        }
        self.live.insert(id, live);
    }

    pub fn remove(&mut self, id: BufferId) -> Option<Live> {
        let live = self.live.remove(&id)?;
        if live.spillable() {
            self.lru.remove(&live.key(id));
        }
        Some(live)
    }

    /// Changes a live buffer, keeping its place in the spill order right.
    pub fn update<R>(&mut self, id: BufferId, f: impl FnOnce(&mut Live) -> R) -> Option<R> {
        let live = self.live.get_mut(&id)?;
        let before = live.spillable().then(|| live.key(id));
        let out = f(live);
        let after = live.spillable().then(|| live.key(id));
        if before != after {
            if let Some(k) = before {
                self.lru.remove(&k);
            }
            if let Some(k) = after {
                self.lru.insert(k);
            }
        }
        Some(out)
    }

    /// Marks a resident, idle buffer used now on `stream` (and by `graph`, the caller's
    /// capture); None if it is unknown, moving or spilled. The flag: `graph` is new to it.
    pub fn touch(
        &mut self,
        id: BufferId,
        stream: Stream,
        clock: &UseClock,
        graph: Option<GraphId>,
    ) -> Option<(u64, bool)> {
        self.update(id, |live| {
            if live.busy {
                return None;
            }
            let ptr = live.ptr()?;
            live.used(stream, clock);
            Some((ptr, live.captured_by(graph)))
        })?
    }

    /// `touch`, or for a spilled buffer, claims it for the caller to restore (outside a
    /// capture). The flag: `graph` is new to it.
    pub fn touch_or_claim(
        &mut self,
        id: BufferId,
        stream: Stream,
        clock: &UseClock,
        graph: Option<GraphId>,
    ) -> Option<(Found, bool)> {
        self.update(id, |live| {
            if live.busy {
                return (Found::Busy, false);
            }
            if live.ptr().is_none() && graph.is_some() {
                return (Found::SpilledInCapture, false);
            }
            live.used(stream, clock);
            let new = live.captured_by(graph);
            match live.ptr() {
                Some(ptr) => (Found::Resident(ptr), new),
                None => {
                    live.busy = true;
                    (Found::Claimed, new)
                }
            }
        })
    }
}
