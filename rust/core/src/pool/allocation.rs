//! Allocating and releasing buffers. The common case is one lock: a block freed to the calling
//! thread's shard (on its stream) becomes the new buffer there; a release puts the block back
//! in the shard that issued the buffer. Only a miss in every shard goes to the backend.

use std::ffi::c_void;
use std::sync::atomic::Ordering::Relaxed;

use super::cache::Block;
use super::graphs::GraphId;
use super::shard::{Live, Shard};
use super::threads::Me;
use super::{lock, BufferId, Pool, PoolError, QuotaId, Stream, DEFAULT_SPILL_RANK, MAX_REQUEST};
use crate::size_class::round_up;

/// A new buffer on its way into a shard: its id, size class, bytes asked for and quota
/// standing.
struct Request {
    id: BufferId,
    shard: usize,
    size: u64,
    nbytes: u64,
    charged: bool,
    rank: u8,
}

impl Pool {
    /// Checks the size, issues an id and charges the quota: everything an allocation does before
    /// it looks for memory.
    fn request(&self, me: &Me, nbytes: u64, quota: Option<QuotaId>) -> Result<Request, PoolError> {
        if nbytes > MAX_REQUEST {
            return Err(PoolError::OutOfMemory {
                requested: nbytes,
                allocated: self.gauges.allocated(),
                reserved: self.gauges.reserved(),
                limit: self.limit(),
                reason: "larger than any device".into(),
            });
        }
        let size = round_up(nbytes);
        let id = me.new_id();
        // Charged up front, so that racing allocations of one task cannot all pass the check.
        let rank = match quota {
            Some(q) => lock(&self.quotas).charge(id, q, size, nbytes)?,
            None => None,
        };
        Ok(Request {
            id,
            shard: me.shard(),
            size,
            nbytes,
            charged: rank.is_some(),
            rank: rank.unwrap_or(DEFAULT_SPILL_RANK),
        })
    }

    /// A new buffer of at least `nbytes`, to be used on `stream`.
    pub fn allocate(
        &self,
        nbytes: u64,
        stream: Stream,
        quota: Option<QuotaId>,
        evictable: bool,
    ) -> Result<BufferId, PoolError> {
        let me = self.threads.me();
        let req = self.request(&me, nbytes, quota)?;
        if evictable {
            // The caller is about to use it: no other thread may spill it first.
            me.pin(&[req.id]);
        }
        if let Some(graph) = me.capturing() {
            return self
                .allocate_in_capture(&me, graph, &req, stream, evictable, true)
                .expect("with the backend allowed there is always an answer");
        }
        if let Some(id) = self.allocate_from_own_shard(&req, stream, evictable) {
            return Ok(id);
        }
        // Other shards' cached blocks first, then the backend.
        match self.device_block(req.size, stream, nbytes, &[]) {
            Ok(block) => Ok(self.register(&req, block, stream, evictable)),
            Err(e) => {
                self.abandon(&req);
                Err(e)
            }
        }
    }

    /// `allocate` from cached memory only: None (and nothing done) when it would need the
    /// backend, so that a caller holding another lock (Python's) can release it first.
    pub fn allocate_cached(
        &self,
        nbytes: u64,
        stream: Stream,
        quota: Option<QuotaId>,
        evictable: bool,
    ) -> Option<Result<BufferId, PoolError>> {
        let me = self.threads.me();
        let req = match self.request(&me, nbytes, quota) {
            Ok(req) => req,
            Err(e) => return Some(Err(e)),
        };
        if evictable {
            me.pin(&[req.id]);
        }
        if let Some(graph) = me.capturing() {
            return self.allocate_in_capture(&me, graph, &req, stream, evictable, false);
        }
        if let Some(id) = self.allocate_from_own_shard(&req, stream, evictable) {
            return Some(Ok(id));
        }
        match self.take_cached(req.size, stream, req.shard) {
            Some(block) => Some(Ok(self.register(&req, block, stream, evictable))),
            None => {
                self.abandon(&req);
                None
            }
        }
    }

    /// An allocation while the calling thread captures `graph`: the capture's private memory
    /// first, then cached blocks that need no fence, then (when `backend`) a fresh one; never
    /// an event, a spill or memory given back (see `graphs`). None: it would need the backend.
    fn allocate_in_capture(
        &self,
        me: &Me,
        graph: GraphId,
        req: &Request,
        stream: Stream,
        evictable: bool,
        backend: bool,
    ) -> Option<Result<BufferId, PoolError>> {
        let found = self
            .take_private(graph, req.size)
            .or_else(|| self.take_cached(req.size, stream, req.shard));
        let block = match found {
            Some(block) => block,
            None if !backend => {
                self.abandon(req);
                return None;
            }
            None => match self.fresh_block(req.size, req.nbytes) {
                Ok(block) => block,
                Err(e) => {
                    self.abandon(req);
                    return Some(Err(e));
                }
            },
        };
        let mut shard = self.shard(req.shard);
        let size = block.size;
        self.insert_live(&mut shard, req, block, stream, evictable, vec![graph]);
        drop(shard);
        self.settle(req, size);
        me.note_used(&[req.id]);
        Some(Ok(req.id))
    }

    /// The common case, under one lock: a block freed to this thread's shard.
    fn allocate_from_own_shard(
        &self,
        req: &Request,
        stream: Stream,
        evictable: bool,
    ) -> Option<BufferId> {
        let mut shard = self.shard(req.shard);
        let block = shard.free.take(req.size, stream)?;
        shard.cache_hits += 1;
        let size = block.size;
        self.insert_live(&mut shard, req, block, stream, evictable, Vec::new());
        drop(shard);
        self.settle(req, size);
        Some(req.id)
    }

    /// Records a new live buffer.
    fn register(&self, req: &Request, block: Block, stream: Stream, evictable: bool) -> BufferId {
        let size = block.size;
        self.insert_live(
            &mut self.shard(req.shard),
            req,
            block,
            stream,
            evictable,
            Vec::new(),
        );
        self.settle(req, size);
        req.id
    }

    fn insert_live(
        &self,
        shard: &mut Shard,
        req: &Request,
        block: Block,
        stream: Stream,
        evictable: bool,
        graphs: Vec<GraphId>,
    ) {
        shard.allocations += 1;
        let last_use = if evictable { self.clock().get() } else { 0 };
        shard.insert(
            req.id,
            Live {
                size: block.size,
                block: Some(block),
                host: None,
                evictable,
                stream,
                charged: req.charged,
                rank: req.rank,
                last_use,
                busy: false,
                graphs,
            },
        );
    }

    /// The figures after a new buffer got a block of class `size` (for a large request perhaps
    /// the class above the one charged).
    fn settle(&self, req: &Request, size: u64) {
        self.gauges.add_allocated(size);
        if req.charged && size != req.size {
            lock(&self.quotas).resize(req.id, req.size, size);
        }
    }

    /// Undoes `request` for an allocation that found no memory.
    fn abandon(&self, req: &Request) {
        if req.charged {
            lock(&self.quotas).uncharge(req.id, req.size);
        }
    }

    /// Returns a live buffer's memory to the cache (or drops its host copy if spilled). The
    /// block counts as freed on the stream the buffer was last used on.
    pub fn release(&self, id: BufferId) -> Result<(), PoolError> {
        let mut shard = self.shard_for(id);
        loop {
            match shard.get(id) {
                None => return Err(PoolError::UnknownBuffer(id)),
                Some(live) if live.busy => {
                    drop(shard);
                    std::thread::yield_now(); // another thread is moving it
                    shard = self.shard_for(id);
                }
                Some(_) => break,
            }
        }
        let mut live = shard.remove(id).expect("checked above");
        let block = live.block.take();
        let resident = block.is_some();
        if let Some(block) = block {
            if live.graphs.is_empty() {
                let era = self.era();
                shard.free.put(block, Some(live.stream), era);
            } else {
                // Captured work holds its address: it stays reserved (under this lock, so that
                // releasing the graph finds it either live or held).
                self.hold(id, block, std::mem::take(&mut live.graphs));
            }
        }
        drop(shard);
        if resident {
            self.gauges.sub_allocated(live.size);
        } else {
            self.gauges.spilled_now.fetch_sub(live.size, Relaxed);
        }
        if live.charged {
            lock(&self.quotas).uncharge(id, live.size);
        }
        if let Some(host) = live.host {
            // SAFETY: host came from host_alloc and is dropped exactly once, here.
            unsafe { self.table.host_free(host as *mut c_void)? };
        }
        Ok(())
    }
}
