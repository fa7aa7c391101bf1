//! Where a buffer's bytes are: device addresses for launches, spilling to host memory under
//! pressure (victims from the spill order, never a scan of the live buffers), and restoring.
//!
//! A buffer being spilled or restored is `busy` (and out of the spill order); others wait for it
//! rather than see half a move. The copies run with no lock held.

use std::ffi::c_void;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::MutexGuard;

use super::cache::Block;
use super::lru::LruKey;
use super::shard::{shard_of, Found, Shard, SHARDS};
use super::stats::bump;
use super::threads::Me;
use super::{lock, BufferId, Pool, PoolError, Stream};

impl Pool {
    /// The fast path of `device_ptrs`, for when every buffer is resident and not moving (the
    /// common case): no waiting, no backend call. None when some buffer needs `device_ptrs`.
    pub fn resident_ptrs(&self, ids: &[BufferId], stream: Stream) -> Option<Vec<u64>> {
        // Pinned before the addresses are read, so no other thread spills them in between.
        let me = self.threads.me();
        me.pin(ids);
        let graph = me.capturing();
        let clock = self.clock();
        let mut out = Vec::with_capacity(ids.len());
        let mut captured = Vec::new();
        let mut held: Option<(usize, MutexGuard<'_, Shard>)> = None;
        for &id in ids {
            let index = shard_of(id);
            if held.as_ref().is_none_or(|(i, _)| *i != index) {
                drop(held.take()); // one shard lock at a time
                held = Some((index, self.shard(index)));
            }
            let (_, shard) = held.as_mut().expect("locked above");
            let (ptr, new) = shard.touch(id, stream, &clock, graph)?;
            if new {
                captured.push(id);
            }
            out.push(ptr);
        }
        drop(held);
        if !captured.is_empty() {
            me.note_used(&captured);
        }
        Some(out)
    }

    /// Device addresses of `ids` for work about to be queued on `stream` by this thread:
    /// spilled buffers are restored first (never by spilling another of `ids`), all are marked
    /// used now, and they stay pinned until this thread's next call.
    pub fn device_ptrs(&self, ids: &[BufferId], stream: Stream) -> Result<Vec<u64>, PoolError> {
        let me = self.threads.me();
        me.pin(ids);
        let graph = me.capturing();
        let clock = self.clock();
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            loop {
                let (found, new) = self
                    .shard_for(id)
                    .touch_or_claim(id, stream, &clock, graph)
                    .ok_or(PoolError::UnknownBuffer(id))?;
                if new {
                    me.note_used(&[id]);
                }
                match found {
                    Found::Resident(ptr) => out.push(ptr),
                    Found::Claimed => out.push(self.restore_claimed(id, stream, ids)?),
                    Found::SpilledInCapture => {
                        return Err(PoolError::Capture(
                            "an array used inside graph capture is spilled to host memory; \
                             bringing it back is a synchronous copy, which a capture cannot \
                             hold: use it once before the capture (or make it non-evictable)"
                                .into(),
                        ))
                    }
                    Found::Busy => {
                        std::thread::yield_now(); // another thread is moving it
                        continue;
                    }
                }
                break;
            }
        }
        Ok(out)
    }

    /// Brings a claimed (busy) spilled buffer back to the device, on `stream`.
    fn restore_claimed(
        &self,
        id: BufferId,
        stream: Stream,
        keep: &[BufferId],
    ) -> Result<u64, PoolError> {
        let (size, host) = {
            let shard = self.shard_for(id);
            let live = shard.get(id).expect("a busy buffer is not released");
            (
                live.size,
                live.host.expect("a spilled buffer has a host copy"),
            )
        };
        let moved = self
            .device_block(size, stream, size, keep)
            .and_then(|block| {
                // SAFETY: the host copy holds `size` bytes; the block holds at least that.
                unsafe {
                    self.table
                        .copy_to_device(block.ptr, host as *const c_void, size, stream)
                }
                .map(|_| block)
                .map_err(|e| e.into())
            });
        let mut shard = self.shard_for(id);
        let (ptr, class, charged) = match moved {
            Ok(block) => {
                let (ptr, class) = (block.ptr, block.size);
                let charged = shard
                    .update(id, |live| {
                        live.busy = false;
                        live.block = Some(block);
                        live.host = None;
                        live.size = class;
                        live.charged
                    })
                    .expect("a busy buffer is not released");
                (ptr, class, charged)
            }
            Err(e) => {
                shard.update(id, |live| live.busy = false);
                return Err(e);
            }
        };
        drop(shard);
        if charged && class != size {
            lock(&self.quotas).resize(id, size, class);
        }
        bump(&self.gauges.restores, 1);
        self.gauges.spilled_now.fetch_sub(size, Relaxed);
        self.gauges.add_allocated(class);
        // SAFETY: the host copy was made by host_alloc and is no longer referenced.
        unsafe { self.table.host_free(host as *mut c_void)? };
        Ok(ptr)
    }

    /// Claims a buffer for spilling if it may be spilled now: evictable, resident, idle and
    /// not pinned by another thread (checked under its shard's lock, so that no thread can pin
    /// it and read its address in between).
    fn claim_for_spill(
        &self,
        me: &Me,
        shard: &mut Shard,
        id: BufferId,
        evictable_only: bool,
    ) -> bool {
        let Some(live) = shard.get(id) else {
            return false;
        };
        if live.busy || live.block.is_none() || (evictable_only && !live.evictable) {
            return false;
        }
        if !live.graphs.is_empty() {
            return false; // a graph's captured work holds its address
        }
        if me.pinned_by_others(id) {
            return false;
        }
        shard.update(id, |live| live.busy = true);
        true
    }

    /// Spills the first buffer in spill order (lowest rank, a best-effort task's first, then
    /// least recently used) that is neither pinned nor in `keep`; false if there is none.
    pub(super) fn spill_one(&self, keep: &[BufferId]) -> Result<bool, PoolError> {
        let me = self.threads.me();
        loop {
            let pinned = me.pinned_by_others_now();
            let skip = |id: BufferId| keep.contains(&id) || pinned.contains(&id);
            let best: Option<LruKey> = (0..SHARDS)
                .filter_map(|i| self.shard(i).lru.first(skip))
                .min();
            let Some((_, _, id)) = best else {
                return Ok(false);
            };
            // The choice was made shard by shard: claim it only if it is still spillable.
            if self.claim_for_spill(&me, &mut self.shard_for(id), id, true) {
                return self.spill_claimed(id).map(|_| true);
            }
        }
    }

    /// Spills a buffer to host memory now, unless it is spilled, busy or pinned (then false).
    pub fn spill(&self, id: BufferId) -> Result<bool, PoolError> {
        if self.threads.me().capturing().is_some() {
            return Err(PoolError::Capture(
                "nothing can be spilled inside graph capture (a spill is a synchronous copy)"
                    .into(),
            ));
        }
        {
            let mut shard = self.shard_for(id);
            if shard.get(id).is_none() {
                return Err(PoolError::UnknownBuffer(id));
            }
            if !self.claim_for_spill(&self.threads.me(), &mut shard, id, false) {
                return Ok(false);
            }
        }
        self.spill_claimed(id).map(|_| true)
    }

    /// Copies a claimed (busy) buffer to host memory and caches its device block. The copy runs
    /// on the buffer's last stream, so it waits for work already queued there that uses it.
    fn spill_claimed(&self, id: BufferId) -> Result<(), PoolError> {
        let (ptr, size, stream) = {
            let shard = self.shard_for(id);
            let live = shard.get(id).expect("a busy buffer is not released");
            let ptr = live.ptr().expect("claimed while resident");
            (ptr, live.size, live.stream)
        };
        let copied = self.table.host_alloc(size).and_then(|host| {
            // SAFETY: host holds `size` bytes; ptr is the live block of `size` bytes.
            match unsafe { self.table.copy_to_host(host, ptr, size, stream) } {
                Ok(()) => Ok(host),
                Err(e) => {
                    // SAFETY: host was just allocated and is not shared.
                    let _ = unsafe { self.table.host_free(host) };
                    Err(e)
                }
            }
        });
        let era = self.era();
        let mut shard = self.shard_for(id);
        let host = match copied {
            Ok(host) => host as usize,
            Err(e) => {
                shard.update(id, |live| live.busy = false);
                return Err(e.into());
            }
        };
        let block: Block = shard
            .update(id, |live| {
                live.busy = false;
                live.host = Some(host);
                live.block.take()
            })
            .expect("a busy buffer is not released")
            .expect("claimed while resident");
        // Cached now: the allocation that wanted room takes it, or gives it back.
        shard.free.put(block, Some(stream), era);
        drop(shard);
        self.gauges.sub_allocated(size);
        bump(&self.gauges.evictions, 1);
        bump(&self.gauges.spilled_bytes, size);
        bump(&self.gauges.spilled_now, size);
        Ok(())
    }
}
