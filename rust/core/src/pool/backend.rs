//! Device memory from and back to the backend (through the allocator table): fresh blocks under
//! the limit, and cached memory given back under pressure, oldest first. Calls into the
//! backend run with no lock held.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use super::cache::{Block, Segment};
use super::hash::{HashMap, HashSet};
use super::shard::SHARDS;
use super::stats::bump;
use super::{BufferId, Pool, PoolError, Stream, SEGMENT, SMALL_LIMIT};

impl Pool {
    /// A cached block for class `size` usable on `stream`: from the calling thread's shard
    /// first, then from the others (memory freed to another thread's shard is not stranded).
    pub(super) fn take_cached(&self, size: u64, stream: Stream, own: usize) -> Option<Block> {
        (0..SHARDS).map(|i| (own + i) % SHARDS).find_map(|i| {
            let mut shard = self.shard(i);
            let block = shard.free.take(size, stream)?;
            shard.cache_hits += 1;
            Some(block)
        })
    }

    /// A device block of class `size` for `stream`: from the cache, else from the backend after
    /// making room under the limit. `keep` are buffers that must not be spilled to make room.
    pub(super) fn device_block(
        &self,
        size: u64,
        stream: Stream,
        requested: u64,
        keep: &[BufferId],
    ) -> Result<Block, PoolError> {
        let backend_size = if size <= SMALL_LIMIT { SEGMENT } else { size };
        let own = self.threads.me().shard();
        // A new era: blocks cached before it are older than those cached after.
        self.era.fetch_add(1, Relaxed);
        let mut swept = false;
        loop {
            if let Some(found) = self.take_cached(size, stream, own) {
                return Ok(found);
            }
            // Blocks freed on other streams whose work is done are free to take.
            if !swept {
                swept = true;
                if self.sweep_fences(stream) > 0 {
                    continue;
                }
            }
            let reason = match self.backend_block(backend_size, size, own)? {
                Ok(block) => return Ok(block),
                Err(reason) => reason,
            };
            // Make room: cached blocks first, then spill one evictable buffer, then give up.
            if self.release_cached(backend_size)? > 0 || self.spill_one(keep)? {
                continue;
            }
            return Err(self.out_of_memory(requested, reason));
        }
    }

    /// A fresh backend block of class `size` under the limit, and nothing else: no fence, no
    /// memory given back, no spill (what a capturing thread may do).
    pub(super) fn fresh_block(&self, size: u64, requested: u64) -> Result<Block, PoolError> {
        let backend_size = if size <= SMALL_LIMIT { SEGMENT } else { size };
        let own = self.threads.me().shard();
        const IN_CAPTURE: &str =
            "during graph capture no cached memory is given back and nothing is spilled";
        self.backend_block(backend_size, size, own)?
            .map_err(|reason| self.out_of_memory(requested, format!("{reason}; {IN_CAPTURE}")))
    }

    /// A fresh backend allocation of `backend_size` bytes under the limit, adopted for class
    /// `size`; Ok(Err(why)) when the limit or the device's memory stops it (room may be made),
    /// Err for any other backend failure.
    fn backend_block(
        &self,
        backend_size: u64,
        size: u64,
        own: usize,
    ) -> Result<Result<Block, String>, PoolError> {
        if !self.gauges.try_reserve(backend_size) {
            return Ok(Err("over the pool limit".to_string()));
        }
        match self.table.device_alloc(backend_size) {
            Ok(base) => Ok(Ok(self.adopt(base, backend_size, size, own))),
            Err(e) => {
                self.gauges.unreserve(backend_size);
                if self.table.is_out_of_memory(&e) {
                    Ok(Err(e.to_string()))
                } else {
                    Err(e.into())
                }
            }
        }
    }

    fn out_of_memory(&self, requested: u64, reason: String) -> PoolError {
        PoolError::OutOfMemory {
            requested,
            allocated: self.gauges.allocated(),
            reserved: self.gauges.reserved(),
            limit: self.gauges.limit(),
            reason,
        }
    }

    /// Takes in a fresh backend allocation (its bytes are counted as reserved already); for a
    /// small class, carves it into slots, caches all but the first and returns that.
    fn adopt(&self, base: u64, backend_size: u64, size: u64, own: usize) -> Block {
        bump(&self.gauges.backend_allocations, 1);
        if size > SMALL_LIMIT {
            return Block {
                ptr: base,
                size,
                segment: None,
            };
        }
        let segment = Arc::new(Segment::new(base, backend_size, size));
        let era = self.era();
        let mut shard = self.shard(own);
        for i in 1..segment.slots {
            let slot = Block {
                ptr: base + i * size,
                size,
                segment: Some(segment.clone()),
            };
            shard.free.put(slot, None, era);
        }
        Block {
            ptr: base,
            size,
            segment: Some(segment),
        }
    }

    /// Gives cached memory back to the backend, oldest first, until at least `wanted` bytes went
    /// back or nothing more can (a segment goes back only when all its slots are free). Returns
    /// the bytes given back.
    pub(super) fn release_cached(&self, wanted: u64) -> Result<u64, PoolError> {
        // Every shard, in index order (the only place that holds more than one): a segment's
        // slots may be cached in several.
        let mut shards: Vec<_> = (0..SHARDS).map(|i| self.shard(i)).collect();
        // (freed at, address, backend bytes, segment) of large blocks and wholly free segments
        // (those with every slot in some shard's lists).
        let mut candidates: Vec<(u64, u64, u64, Option<Arc<Segment>>)> = Vec::new();
        let mut segments: HashMap<u64, (u64, u64, Arc<Segment>)> = HashMap::default();
        for shard in &shards {
            for free in shard.free.iter() {
                match &free.block.segment {
                    None => candidates.push((free.freed_at, free.block.ptr, free.block.size, None)),
                    Some(seg) => {
                        let e = segments.entry(seg.base).or_insert((0, 0, seg.clone()));
                        e.0 = e.0.max(free.freed_at);
                        e.1 += 1;
                    }
                }
            }
        }
        for (base, (freed_at, found, seg)) in segments {
            if found == seg.slots {
                candidates.push((freed_at, base, seg.size, Some(seg)));
            }
        }
        candidates.sort_unstable_by_key(|c| (c.0, c.1));
        let mut chosen = Vec::new();
        let mut total = 0;
        for (_, ptr, bytes, seg) in candidates {
            if total >= wanted {
                break;
            }
            total += bytes;
            chosen.push((ptr, bytes, seg.is_some()));
        }
        if chosen.is_empty() {
            return Ok(0);
        }
        let large: HashSet<u64> = chosen.iter().filter(|c| !c.2).map(|c| c.0).collect();
        let segs: HashSet<u64> = chosen.iter().filter(|c| c.2).map(|c| c.0).collect();
        for shard in &mut shards {
            shard.free.remove_where(|b| match &b.segment {
                None => large.contains(&b.ptr),
                Some(s) => segs.contains(&s.base),
            });
        }
        drop(shards);
        let mut given_back = 0;
        let mut first_error = None;
        for (ptr, bytes, _) in chosen {
            // Work queued before the free may still read the block; the backend's free waits.
            match self.table.device_free(ptr) {
                Ok(()) => {
                    self.gauges.unreserve(bytes);
                    bump(&self.gauges.backend_frees, 1);
                    given_back += bytes;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e.into()),
            None => Ok(given_back),
        }
    }

    /// Frees every cached block (and fully free segment) back to the backend.
    pub fn empty_cache(&self) -> Result<(), PoolError> {
        if self.threads.me().capturing().is_some() {
            return Err(PoolError::Capture(
                "the cache cannot be emptied inside graph capture (freeing device memory \
                 synchronizes the device)"
                    .into(),
            ));
        }
        self.release_cached(u64::MAX).map(|_| ())
    }
}
