//! The pool's figures. Byte gauges are atomics shared by all threads (the allocated bytes and
//! their peak on cache lines of their own, since every allocation and free moves them); counts
//! of allocations and cache hits are kept per shard, under its lock, and summed when read.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes in live buffers resident on the device (their size classes).
    pub allocated: u64,
    /// Bytes held from the backend: resident buffers, cached blocks, and slack in segments.
    pub reserved: u64,
    pub peak_allocated: u64,
    pub peak_reserved: u64,
    pub allocations: u64,
    pub cache_hits: u64,
    pub backend_allocations: u64,
    pub backend_frees: u64,
    /// Buffers spilled to host memory, and bytes, since the pool was made.
    pub evictions: u64,
    pub spilled_bytes: u64,
    /// Bytes of live buffers currently held on the host.
    pub spilled_now: u64,
    pub restores: u64,
    /// Bytes of released buffers' blocks held for live graphs (their captured work uses them).
    pub graph_held: u64,
}

/// A counter alone on its cache line: threads that move it do not slow readers of its
/// neighbours.
#[derive(Default)]
#[repr(align(128))]
struct Padded(AtomicU64);

/// What "no limit" is stored as.
const NO_LIMIT: u64 = u64::MAX;

pub(crate) struct Gauges {
    allocated: Padded,
    peak_allocated: Padded,
    reserved: AtomicU64,
    peak_reserved: AtomicU64,
    limit: AtomicU64,
    pub backend_allocations: AtomicU64,
    pub backend_frees: AtomicU64,
    pub evictions: AtomicU64,
    pub spilled_bytes: AtomicU64,
    pub spilled_now: AtomicU64,
    pub restores: AtomicU64,
    pub graph_held: AtomicU64,
}

impl Default for Gauges {
    fn default() -> Self {
        Self {
            allocated: Padded::default(),
            peak_allocated: Padded::default(),
            reserved: AtomicU64::new(0),
            peak_reserved: AtomicU64::new(0),
            limit: AtomicU64::new(NO_LIMIT),
            backend_allocations: AtomicU64::new(0),
            backend_frees: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            spilled_bytes: AtomicU64::new(0),
            spilled_now: AtomicU64::new(0),
            restores: AtomicU64::new(0),
            graph_held: AtomicU64::new(0),
        }
    }
}

impl Gauges {
    pub fn allocated(&self) -> u64 {
        self.allocated.0.load(Relaxed)
    }

    pub fn reserved(&self) -> u64 {
        self.reserved.load(Relaxed)
    }

    /// Bytes became resident. The peak is exact: each addition's result is the total right
    /// after it, and the peak is the largest of those.
    pub fn add_allocated(&self, bytes: u64) {
        let now = self.allocated.0.fetch_add(bytes, Relaxed) + bytes;
        if now > self.peak_allocated.0.load(Relaxed) {
            self.peak_allocated.0.fetch_max(now, Relaxed);
        }
    }

    pub fn sub_allocated(&self, bytes: u64) {
        self.allocated.0.fetch_sub(bytes, Relaxed);
    }

    pub fn limit(&self) -> Option<u64> {
        Some(self.limit.load(Relaxed)).filter(|&l| l != NO_LIMIT)
    }

    pub fn set_limit(&self, limit: Option<u64>) {
        self.limit.store(limit.unwrap_or(NO_LIMIT), Relaxed);
    }

    /// Counts `bytes` as reserved if they fit under the limit: threads racing for the last
    /// room cannot all pass the check.
    pub fn try_reserve(&self, bytes: u64) -> bool {
        let fits = self.reserved.fetch_update(Relaxed, Relaxed, |r| {
            r.checked_add(bytes)
                .filter(|&after| after <= self.limit.load(Relaxed))
        });
        match fits {
            Ok(before) => {
                self.peak_reserved.fetch_max(before + bytes, Relaxed);
                true
            }
            Err(_) => false,
        }
    }

    pub fn unreserve(&self, bytes: u64) {
        self.reserved.fetch_sub(bytes, Relaxed);
    }

    pub fn reset_peaks(&self) {
        self.peak_allocated.0.store(self.allocated(), Relaxed);
        self.peak_reserved.store(self.reserved(), Relaxed);
    }

    pub fn snapshot(&self, allocations: u64, cache_hits: u64) -> Stats {
        Stats {
            allocated: self.allocated(),
            reserved: self.reserved(),
            peak_allocated: self.peak_allocated.0.load(Relaxed),
            peak_reserved: self.peak_reserved.load(Relaxed),
            allocations,
            cache_hits,
            backend_allocations: self.backend_allocations.load(Relaxed),
            backend_frees: self.backend_frees.load(Relaxed),
            evictions: self.evictions.load(Relaxed),
            spilled_bytes: self.spilled_bytes.load(Relaxed),
            spilled_now: self.spilled_now.load(Relaxed),
            restores: self.restores.load(Relaxed),
            graph_held: self.graph_held.load(Relaxed),
        }
    }
}

pub(crate) fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Relaxed);
}
