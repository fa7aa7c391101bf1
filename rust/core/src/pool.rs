//! The caching device-memory pool. Every byte gpukit puts on a device comes from here.
//!
//! - Size classes (`size_class`): four per power of two, so at most a quarter of a block is waste.
//! - Small classes (up to `SMALL_LIMIT`) are carved from `SEGMENT` sized segments, a segment per
//!   class (a slab): one backend call serves many small arrays. A segment whose slots are all
//!   free can go back to the backend. Large blocks are whole backend allocations, reused for
//!   requests of their class or the class below.
//! - Streams: a freed block is reusable at once on the stream it was freed on; on another stream
//!   only after an event recorded at the free has completed (recorded once a second stream shows).
//! - Limits: a pool limit on reserved bytes, and quotas (per task) on allocated bytes.
//! - Pressure (the limit, or the device itself out of memory): cached blocks go back to the backend
//!   oldest first, then evictable live buffers are spilled to host memory, least recently used
//!   first; only then does an allocation fail. A spilled buffer is restored (bit-exact, perhaps
//!   at a new address) the next time its address is asked for.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use crate::size_class::round_up;
use crate::table::{AllocatorTable, BackendError};

pub const SMALL_LIMIT: u64 = 1 << 20;
pub const SEGMENT: u64 = 2 << 20;

pub type BufferId = u64;
pub type QuotaId = u64;
pub type Stream = u64;

/// The stream tag of slots no work has touched yet: reusable on any stream.
const ANY_STREAM: Stream = u64::MAX;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolError {
    OutOfMemory {
        requested: u64,
        allocated: u64,
        reserved: u64,
        limit: Option<u64>,
        reason: String,
    },
    QuotaExceeded {
        requested: u64,
        used: u64,
        limit: u64,
        /// Whose quota it is (a scheduler task's name), when it was given one.
        owner: Option<String>,
    },
    /// The quota had room, but its parent (the memory no task has reserved) had not.
    SharedExhausted {
        requested: u64,
        used: u64,
        limit: u64,
    },
    Backend(BackendError),
    UnknownBuffer(BufferId),
}

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PoolError::OutOfMemory {
                requested,
                allocated,
                reserved,
                limit,
                reason,
            } => {
                let limit = limit.map_or("none".to_string(), |l| format!("{l} bytes"));
                write!(
                    f,
                    "out of device memory: requested {requested} bytes with {allocated} allocated, \
                     {reserved} reserved, limit {limit} ({reason})"
                )
            }
            PoolError::QuotaExceeded {
                requested,
                used,
                limit,
                owner,
            } => {
                let whose = owner
                    .as_deref()
                    .map_or(String::new(), |o| format!(" of {o}"));
                write!(
                    f,
                    "task memory quota{whose} exceeded: requested {requested} bytes with {used} \
                     of its {limit}-byte quota in use"
                )
            }
            PoolError::SharedExhausted {
                requested,
                used,
                limit,
            } => write!(
                f,
                "out of unreserved memory: requested {requested} bytes beyond the task's \
                 reservation with {used} of {limit} unreserved bytes in use by tasks"
            ),
            PoolError::Backend(e) => e.fmt(f),
            PoolError::UnknownBuffer(id) => write!(f, "buffer {id} is not live in this pool"),
        }
    }
}

impl From<BackendError> for PoolError {
    fn from(e: BackendError) -> Self {
        PoolError::Backend(e)
    }
}

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
}

/// Keys here are addresses, ids and thread ids: a multiplicative hash spreads them well and costs
/// a fraction of the default SipHash on the per-op path.
#[derive(Default)]
struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
    }
}

type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<IntHasher>>;

#[derive(Debug, Clone, Copy)]
struct FreeBlock {
    ptr: u64,
    stream: Stream,
    /// Recorded on `stream` at the free, when more than one stream has been seen.
    event: Option<u64>,
    /// Pool clock at the free: the oldest cached blocks go back to the backend first.
    freed_at: u64,
}

struct Segment {
    size: u64,
    slot: u64,
    slots: u64,
    free_slots: u64,
}

struct Live {
    size: u64,
    /// Device address while resident; None while spilled.
    ptr: Option<u64>,
    /// Host copy while spilled.
    host: Option<usize>,
    evictable: bool,
    stream: Stream,
    quota: Option<QuotaId>,
    last_use: u64,
    /// Being spilled or restored by some thread.
    busy: bool,
}

struct Quota {
    limit: u64,
    used: u64,
    peak: u64,
    /// Bytes of `used` up to this are the quota's own; beyond it they are also charged to
    /// `parent` (a task's reservation, and the shared memory it may grow into).
    reserved: u64,
    parent: Option<QuotaId>,
    /// Buffers of quotas with a lower rank are spilled first under pressure.
    spill_rank: u8,
    owner: Option<String>,
}

/// A quota's figures: its limit, the bytes charged to it now, and the most it ever held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaInfo {
    pub limit: u64,
    pub used: u64,
    pub peak: u64,
}

/// The spill rank of buffers charged to no quota.
pub const DEFAULT_SPILL_RANK: u8 = 1;

fn beyond(used: u64, reserved: u64) -> u64 {
    used.saturating_sub(reserved)
}

#[derive(Default)]
struct State {
    cached: BTreeMap<u64, Vec<FreeBlock>>,
    /// Which segment a small block belongs to (block address -> segment base).
    slab_of: HashMap<u64, u64>,
    segments: HashMap<u64, Segment>,
    live: HashMap<BufferId, Live>,
    quotas: HashMap<QuotaId, Quota>,
    streams_seen: Vec<Stream>,
    pins: HashMap<std::thread::ThreadId, Vec<BufferId>>,
    spare_events: Vec<u64>,
    limit: Option<u64>,
    clock: u64,
    next_id: u64,
    stats: Stats,
}

impl State {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn note_stream(&mut self, stream: Stream) {
        if self.streams_seen.len() < 2 && !self.streams_seen.contains(&stream) {
            self.streams_seen.push(stream);
        }
    }

    /// Whether another thread's last `device_ptrs` handed out this buffer's address. (The calling
    /// thread's own earlier pins do not count: its launches using them are queued already.)
    fn pinned_by_others(&self, id: BufferId) -> bool {
        let me = std::thread::current().id();
        self.pins.iter().any(|(t, p)| *t != me && p.contains(&id))
    }

    fn multi_stream(&self) -> bool {
        self.streams_seen.len() > 1
    }

    fn note_resident(&mut self, size: u64) {
        let s = &mut self.stats;
        s.allocated += size;
        s.peak_allocated = s.peak_allocated.max(s.allocated);
        s.peak_reserved = s.peak_reserved.max(s.reserved);
    }

    /// Puts a block that left a live buffer into the cache (and its segment's free count).
    fn cache_block(&mut self, ptr: u64, size: u64, stream: Stream, event: Option<u64>) {
        let freed_at = self.tick();
        if let Some(seg) = self.slab_of.get(&ptr).copied() {
            self.segments
                .get_mut(&seg)
                .expect("segment of a slot")
                .free_slots += 1;
        }
        self.cached.entry(size).or_default().push(FreeBlock {
            ptr,
            stream,
            event,
            freed_at,
        });
    }

    /// Charges `size` bytes to `quota` (and what goes beyond its reservation to its parent), or
    /// says which limit it would pass.
    fn charge(
        &mut self,
        quota: Option<QuotaId>,
        size: u64,
        requested: u64,
    ) -> Result<(), PoolError> {
        let Some(q) = quota.and_then(|id| self.quotas.get(&id)) else {
            return Ok(());
        };
        if q.used + size > q.limit {
            return Err(PoolError::QuotaExceeded {
                requested,
                used: q.used,
                limit: q.limit,
                owner: q.owner.clone(),
            });
        }
        let extra = beyond(q.used + size, q.reserved) - beyond(q.used, q.reserved);
        if let Some(p) = q.parent.and_then(|id| self.quotas.get(&id)) {
            if extra > 0 && p.used + extra > p.limit {
                return Err(PoolError::SharedExhausted {
                    requested,
                    used: p.used,
                    limit: p.limit,
                });
            }
        }
        self.adjust(quota, size as i64);
        Ok(())
    }

    /// Changes a quota's (and its parent's share of) usage by `delta` bytes without checking
    /// limits: frees, and restores of memory that was charged already.
    fn adjust(&mut self, quota: Option<QuotaId>, delta: i64) {
        let Some(q) = quota.and_then(|id| self.quotas.get_mut(&id)) else {
            return;
        };
        let before = beyond(q.used, q.reserved);
        q.used = q.used.saturating_add_signed(delta);
        q.peak = q.peak.max(q.used);
        let after = beyond(q.used, q.reserved);
        if let Some(p) = q.parent.and_then(|id| self.quotas.get_mut(&id)) {
            p.used = (p.used + after).saturating_sub(before);
            p.peak = p.peak.max(p.used);
        }
    }

    fn spill_rank(&self, quota: Option<QuotaId>) -> u8 {
        quota
            .and_then(|id| self.quotas.get(&id))
            .map_or(DEFAULT_SPILL_RANK, |q| q.spill_rank)
    }

    fn cached_bytes(&self) -> u64 {
        self.cached
            .iter()
            .map(|(size, blocks)| size * blocks.len() as u64)
            .sum()
    }
}

pub struct Pool {
    table: AllocatorTable,
    state: Mutex<State>,
}

/// Whether a cached block may serve a request on `stream` now.
fn reusable(table: &AllocatorTable, block: &FreeBlock, stream: Stream) -> bool {
    block.stream == stream
        || block.stream == ANY_STREAM
        || block
            .event
            .is_some_and(|e| table.event_done(e).unwrap_or(false))
}

impl Pool {
    pub fn new(table: AllocatorTable) -> Self {
        Self {
            table,
            state: Mutex::new(State::default()),
        }
    }

    pub fn table(&self) -> &AllocatorTable {
        &self.table
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Nothing panics while the lock is held, so a poisoned lock still guards consistent state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    // --- limits and quotas ----------------------------------------------------------------------

    pub fn set_limit(&self, limit: Option<u64>) {
        self.lock().limit = limit;
    }

    pub fn limit(&self) -> Option<u64> {
        self.lock().limit
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
        let mut st = self.lock();
        st.next_id += 1;
        let id = st.next_id;
        st.quotas.insert(
            id,
            Quota {
                limit,
                used: 0,
                peak: 0,
                reserved,
                parent,
                spill_rank,
                owner: None,
            },
        );
        id
    }

    /// Names the quota's owner in its errors (e.g. "task 'chat'").
    pub fn set_quota_owner(&self, quota: QuotaId, owner: String) {
        if let Some(q) = self.lock().quotas.get_mut(&quota) {
            q.owner = Some(owner);
        }
    }

    /// (limit, bytes in use) of a quota.
    pub fn quota_usage(&self, quota: QuotaId) -> Option<(u64, u64)> {
        self.lock().quotas.get(&quota).map(|q| (q.limit, q.used))
    }

    pub fn quota_info(&self, quota: QuotaId) -> Option<QuotaInfo> {
        self.lock().quotas.get(&quota).map(|q| QuotaInfo {
            limit: q.limit,
            used: q.used,
            peak: q.peak,
        })
    }

    /// Sets a quota's limit unless more than `limit` bytes are charged to it already (then false
    /// and nothing changes): the check and the change are one step for concurrent allocations.
    pub fn try_set_quota_limit(&self, quota: QuotaId, limit: u64) -> bool {
        let mut st = self.lock();
        match st.quotas.get_mut(&quota) {
            Some(q) if q.used <= limit => {
                q.limit = limit;
                true
            }
            _ => false,
        }
    }

    /// Forgets a quota; buffers charged to it stay valid and stop being counted.
    pub fn drop_quota(&self, quota: QuotaId) {
        let mut st = self.lock();
        let usage = st.quotas.get(&quota).map_or(0, |q| q.used);
        st.adjust(Some(quota), -(usage as i64));
        st.quotas.remove(&quota);
        for live in st.live.values_mut() {
            if live.quota == Some(quota) {
                live.quota = None;
            }
        }
    }

    /// Forgets a quota whose buffers may outlive it (a finished task's results): they are
    /// charged to its parent from now on, wholly, until they are freed.
    pub fn retire_quota(&self, quota: QuotaId) {
        let mut st = self.lock();
        let Some(q) = st.quotas.remove(&quota) else {
            return;
        };
        let parent = q.parent.filter(|p| st.quotas.contains_key(p));
        if let Some(p) = parent.and_then(|p| st.quotas.get_mut(&p)) {
            // The part beyond the reservation is in the parent already.
            p.used += q.used.min(q.reserved);
            p.peak = p.peak.max(p.used);
        }
        for live in st.live.values_mut() {
            if live.quota == Some(quota) {
                live.quota = parent;
            }
        }
    }

    // --- allocation -----------------------------------------------------------------------------

    /// A new buffer of at least `nbytes`, to be used on `stream`.
    pub fn allocate(
        &self,
        nbytes: u64,
        stream: Stream,
        quota: Option<QuotaId>,
        evictable: bool,
    ) -> Result<BufferId, PoolError> {
        let size = round_up(nbytes);
        {
            // The common case, a cache hit, under one lock.
            let mut st = self.lock();
            // Charged up front, so that racing allocations of one task cannot all pass the check.
            st.charge(quota, size, nbytes)?;
            st.note_stream(stream);
            if let Some((ptr, class)) = self.take_cached_locked(&mut st, size, stream) {
                st.adjust(quota, class as i64 - size as i64);
                return Ok(Self::register(
                    &mut st, ptr, class, stream, quota, evictable,
                ));
            }
        }
        let (ptr, class) = match self.device_block(size, stream, nbytes, &[]) {
            Ok(found) => found,
            Err(e) => {
                self.lock().adjust(quota, -(size as i64));
                return Err(e);
            }
        };
        let mut st = self.lock();
        // The block may be of the class above; charge the difference.
        st.adjust(quota, class as i64 - size as i64);
        Ok(Self::register(
            &mut st, ptr, class, stream, quota, evictable,
        ))
    }

    /// Records a new live buffer (pinned for the calling thread, which is about to use it; its
    /// quota is charged already).
    fn register(
        st: &mut State,
        ptr: u64,
        size: u64,
        stream: Stream,
        quota: Option<QuotaId>,
        evictable: bool,
    ) -> BufferId {
        st.stats.allocations += 1;
        st.note_resident(size);
        st.next_id += 1;
        let id = st.next_id;
        let pins = st.pins.entry(std::thread::current().id()).or_default();
        pins.clear();
        pins.push(id);
        let last_use = st.tick();
        st.live.insert(
            id,
            Live {
                size,
                ptr: Some(ptr),
                host: None,
                evictable,
                stream,
                quota,
                last_use,
                busy: false,
            },
        );
        id
    }

    /// A device block of class `size` for `stream`: from the cache, else from the backend after
    /// making room under the limit. `keep` are buffers that must not be spilled to make room.
    fn device_block(
        &self,
        size: u64,
        stream: Stream,
        requested: u64,
        keep: &[BufferId],
    ) -> Result<(u64, u64), PoolError> {
        let backend_size = if size <= SMALL_LIMIT { SEGMENT } else { size };
        loop {
            if let Some(found) = self.take_cached(size, stream) {
                return Ok(found);
            }
            // Count the bytes as reserved before asking the backend, so that threads racing for
            // the last room under the limit cannot all pass the check.
            let fits = {
                let mut st = self.lock();
                let fits = st
                    .limit
                    .is_none_or(|l| st.stats.reserved + backend_size <= l);
                if fits {
                    st.stats.reserved += backend_size;
                    st.stats.peak_reserved = st.stats.peak_reserved.max(st.stats.reserved);
                }
                fits
            };
            let reason = if fits {
                match self.table.device_alloc(backend_size) {
                    Ok(base) => return Ok((self.adopt(base, backend_size, size), size)),
                    Err(e) => {
                        self.lock().stats.reserved -= backend_size;
                        if !self.table.is_out_of_memory(&e) {
                            return Err(e.into());
                        }
                        e.to_string()
                    }
                }
            } else {
                "over the pool limit".to_string()
            };
            // Make room: cached blocks first, then spill one evictable buffer, then give up.
            if self.release_cached(backend_size)? > 0 || self.spill_one(keep)? {
                continue;
            }
            let st = self.lock();
            return Err(PoolError::OutOfMemory {
                requested,
                allocated: st.stats.allocated,
                reserved: st.stats.reserved,
                limit: st.limit,
                reason,
            });
        }
    }

    /// Registers a fresh backend allocation; for a small class, carves it into slots and returns
    /// the first, caching the others.
    fn adopt(&self, base: u64, backend_size: u64, size: u64) -> u64 {
        let mut st = self.lock();
        st.stats.backend_allocations += 1; // its bytes were counted as reserved before the call
        if size <= SMALL_LIMIT {
            let slots = backend_size / size;
            st.segments.insert(
                base,
                Segment {
                    size: backend_size,
                    slot: size,
                    slots,
                    free_slots: slots - 1,
                },
            );
            let freed_at = st.tick();
            for i in 0..slots {
                let ptr = base + i * size;
                st.slab_of.insert(ptr, base);
                if i > 0 {
                    st.cached.entry(size).or_default().push(FreeBlock {
                        ptr,
                        stream: ANY_STREAM,
                        event: None,
                        freed_at,
                    });
                }
            }
        }
        base
    }

    /// A cached block for class `size` (or, for a large one, the class above) usable on
    /// `stream`: (address, its class).
    fn take_cached(&self, size: u64, stream: Stream) -> Option<(u64, u64)> {
        self.take_cached_locked(&mut self.lock(), size, stream)
    }

    fn take_cached_locked(&self, st: &mut State, size: u64, stream: Stream) -> Option<(u64, u64)> {
        // This class, or for large blocks the next class up (at most a quarter more).
        let upper = if size <= SMALL_LIMIT {
            size
        } else {
            round_up(size + 1)
        };
        let mut found = None;
        for (&class, blocks) in st.cached.range(size..=upper) {
            if let Some(i) = blocks
                .iter()
                .rposition(|b| reusable(&self.table, b, stream))
            {
                found = Some((class, i));
                break;
            }
        }
        let (class, i) = found?;
        let blocks = st.cached.get_mut(&class).expect("class found above");
        let block = blocks.swap_remove(i);
        if blocks.is_empty() {
            st.cached.remove(&class);
        }
        if let Some(e) = block.event {
            st.spare_events.push(e);
        }
        if let Some(seg) = st.slab_of.get(&block.ptr).copied() {
            st.segments
                .get_mut(&seg)
                .expect("segment of a slot")
                .free_slots -= 1;
        }
        st.stats.cache_hits += 1;
        Some((block.ptr, class))
    }

    /// Returns a live buffer's memory to the cache (or drops its host copy if spilled). The
    /// block counts as freed on the stream the buffer was last used on.
    pub fn release(&self, id: BufferId) -> Result<(), PoolError> {
        let mut st = self.lock();
        while st.live.get(&id).ok_or(PoolError::UnknownBuffer(id))?.busy {
            drop(st);
            std::thread::yield_now(); // another thread is moving it
            st = self.lock();
        }
        let live = st.live.remove(&id).expect("checked above");
        for pins in st.pins.values_mut() {
            pins.retain(|&p| p != id);
        }
        st.adjust(live.quota, -(live.size as i64));
        if let Some(host) = live.host {
            st.stats.spilled_now -= live.size;
            drop(st);
            // SAFETY: host came from host_alloc and is dropped exactly once, here.
            unsafe { self.table.host_free(host as *mut c_void)? };
            return Ok(());
        }
        let ptr = live.ptr.expect("a live buffer is resident or spilled");
        let stream = live.stream;
        st.stats.allocated -= live.size;
        let event = if st.multi_stream() {
            let e = match st.spare_events.pop() {
                Some(e) => e,
                None => self.table.event_create()?,
            };
            self.table.event_record(e, stream)?;
            Some(e)
        } else {
            None
        };
        st.cache_block(ptr, live.size, stream, event);
        Ok(())
    }

    /// Gives cached memory back to the backend, oldest first, until at least `wanted` bytes went
    /// back or nothing more can (a segment goes back only when all its slots are free). Returns
    /// the bytes given back.
    fn release_cached(&self, wanted: u64) -> Result<u64, PoolError> {
        let mut given_back = 0;
        let mut st = self.lock();
        // Candidates: large cached blocks and fully free segments, by age.
        let mut candidates: Vec<(u64, u64, u64)> = Vec::new(); // (freed_at, ptr, backend size)
        for (&size, blocks) in &st.cached {
            for b in blocks {
                match st.slab_of.get(&b.ptr) {
                    None => candidates.push((b.freed_at, b.ptr, size)),
                    Some(seg) if st.segments[seg].free_slots == st.segments[seg].slots => {
                        if *seg == b.ptr {
                            candidates.push((b.freed_at, *seg, st.segments[seg].size));
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        candidates.sort_unstable();
        for (_, ptr, backend_size) in candidates {
            if given_back >= wanted {
                break;
            }
            // The lock was dropped for earlier frees: take the block out only if it is still
            // cached (and, for a segment, still wholly free).
            if !Self::take_for_release(&mut st, ptr, backend_size) {
                continue;
            }
            drop(st);
            // Work queued before the free may still read the block; the backend's free waits.
            self.table.device_free(ptr)?;
            st = self.lock();
            st.stats.reserved -= backend_size;
            st.stats.backend_frees += 1;
            given_back += backend_size;
        }
        Ok(given_back)
    }

    /// Takes a backend allocation out of the cache for freeing: a large block, or a segment
    /// with every slot free. False if that is no longer so (the lock was dropped since the
    /// candidates were listed, and another thread may have taken the block).
    fn take_for_release(st: &mut State, ptr: u64, backend_size: u64) -> bool {
        let (slot, end, count) = match st.segments.get(&ptr) {
            Some(seg) if seg.free_slots == seg.slots => (seg.slot, ptr + seg.size, seg.slots),
            Some(_) => return false,
            None if st.slab_of.contains_key(&ptr) => return false,
            None => (backend_size, ptr + 1, 1),
        };
        let Some(blocks) = st.cached.get_mut(&slot) else {
            return false;
        };
        let inside = |b: &FreeBlock| b.ptr >= ptr && b.ptr < end;
        if blocks.iter().filter(|b| inside(b)).count() as u64 != count {
            return false;
        }
        let mut events = Vec::new();
        blocks.retain(|b| {
            if inside(b) {
                events.extend(b.event);
            }
            !inside(b)
        });
        if blocks.is_empty() {
            st.cached.remove(&slot);
        }
        st.spare_events.extend(events);
        if let Some(seg) = st.segments.remove(&ptr) {
            for i in 0..seg.slots {
                st.slab_of.remove(&(ptr + i * seg.slot));
            }
        }
        true
    }

    /// Frees every cached block (and fully free segment) back to the backend.
    pub fn empty_cache(&self) -> Result<(), PoolError> {
        self.release_cached(u64::MAX).map(|_| ())
    }

    // --- eviction -------------------------------------------------------------------------------
    //
    // A thread's last `device_ptrs` call pins those buffers until its next one: their addresses
    // are about to be used by a launch, so no other thread may spill them in between. A buffer
    // being spilled or restored is `busy`; others wait for it rather than see half a move.
    // A thread's pins (a list of a few ids) stay until its next call: a linear scan is cheaper
    // than any index for the handful of threads and operands involved.

    /// Spills the least recently used evictable resident buffer of the lowest spill rank (a
    /// best-effort task's first) that is neither pinned nor in `keep`; false if there is none.
    fn spill_one(&self, keep: &[BufferId]) -> Result<bool, PoolError> {
        let victim = {
            let mut st = self.lock();
            let victim = st
                .live
                .iter()
                .filter(|(id, l)| {
                    l.evictable
                        && l.ptr.is_some()
                        && !l.busy
                        && !keep.contains(id)
                        && !st.pinned_by_others(**id)
                })
                .min_by_key(|(_, l)| (st.spill_rank(l.quota), l.last_use))
                .map(|(id, _)| *id);
            if let Some(id) = victim {
                st.live.get_mut(&id).expect("victim is live").busy = true;
            }
            victim
        };
        match victim {
            Some(id) => self.spill_claimed(id).map(|_| true),
            None => Ok(false),
        }
    }

    /// Spills a buffer to host memory now, unless it is spilled, busy or pinned (then false).
    pub fn spill(&self, id: BufferId) -> Result<bool, PoolError> {
        {
            let mut st = self.lock();
            let pinned = st.pinned_by_others(id);
            let live = st.live.get_mut(&id).ok_or(PoolError::UnknownBuffer(id))?;
            if live.ptr.is_none() || live.busy || pinned {
                return Ok(false);
            }
            live.busy = true;
        }
        self.spill_claimed(id).map(|_| true)
    }

    /// Copies a claimed (busy) buffer to host memory and caches its device block. The copy runs
    /// on the buffer's last stream, so it waits for work already queued there that uses it.
    fn spill_claimed(&self, id: BufferId) -> Result<(), PoolError> {
        let (ptr, size, stream) = {
            let st = self.lock();
            let live = &st.live[&id];
            (
                live.ptr.expect("claimed while resident"),
                live.size,
                live.stream,
            )
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
        let mut st = self.lock();
        let live = st.live.get_mut(&id).expect("a busy buffer is not released");
        live.busy = false;
        let host = copied?;
        live.ptr = None;
        live.host = Some(host as usize);
        st.stats.allocated -= size;
        st.stats.evictions += 1;
        st.stats.spilled_bytes += size;
        st.stats.spilled_now += size;
        // Cached now: the allocation that wanted room takes it, or gives it back.
        st.cache_block(ptr, size, stream, None);
        Ok(())
    }

    /// The fast path of `device_ptrs`, for when every buffer is resident and not moving (the
    /// common case): one lock, no waiting. None when some buffer needs `device_ptrs` itself.
    pub fn resident_ptrs(&self, ids: &[BufferId], stream: Stream) -> Option<Vec<u64>> {
        let mut st = self.lock();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let live = st.live.get(id)?;
            if live.busy {
                return None;
            }
            out.push(live.ptr?);
        }
        let tick = st.tick();
        for id in ids {
            let live = st.live.get_mut(id).expect("checked above");
            live.last_use = tick;
            live.stream = stream;
        }
        let pins = st.pins.entry(std::thread::current().id()).or_default();
        pins.clear();
        pins.extend_from_slice(ids);
        Some(out)
    }

    /// Device addresses of `ids` for work about to be queued on `stream` by this thread:
    /// spilled buffers are restored first (never by spilling another of `ids`), all are marked
    /// used now, and they stay pinned until this thread's next call.
    pub fn device_ptrs(&self, ids: &[BufferId], stream: Stream) -> Result<Vec<u64>, PoolError> {
        let me = std::thread::current().id();
        {
            let mut st = self.lock();
            let pins = st.pins.entry(me).or_default();
            pins.clear();
            pins.extend_from_slice(ids);
        }
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            loop {
                let resident = {
                    let mut st = self.lock();
                    let tick = st.tick();
                    let live = st.live.get_mut(&id).ok_or(PoolError::UnknownBuffer(id))?;
                    if live.busy {
                        None
                    } else {
                        live.last_use = tick;
                        live.stream = stream;
                        if live.ptr.is_none() {
                            live.busy = true; // this thread restores it
                        }
                        Some(live.ptr)
                    }
                };
                match resident {
                    None => std::thread::yield_now(), // another thread is moving it
                    Some(Some(ptr)) => {
                        out.push(ptr);
                        break;
                    }
                    Some(None) => {
                        out.push(self.restore_claimed(id, stream, ids)?);
                        break;
                    }
                }
            }
        }
        Ok(out)
    }

    fn restore_claimed(
        &self,
        id: BufferId,
        stream: Stream,
        keep: &[BufferId],
    ) -> Result<u64, PoolError> {
        let (size, host) = {
            let st = self.lock();
            let live = &st.live[&id];
            (
                live.size,
                live.host.expect("a spilled buffer has a host copy"),
            )
        };
        let moved = self
            .device_block(size, stream, size, keep)
            .and_then(|(ptr, class)| {
                // SAFETY: the host copy holds `size` bytes; ptr is a fresh block of at least that.
                unsafe {
                    self.table
                        .copy_to_device(ptr, host as *const c_void, size, stream)
                }
                .map(|_| (ptr, class))
                .map_err(PoolError::from)
            });
        let mut st = self.lock();
        let live = st.live.get_mut(&id).expect("a busy buffer is not released");
        live.busy = false;
        let (ptr, class) = moved?;
        live.ptr = Some(ptr);
        live.host = None;
        let charged = live.quota;
        live.size = class;
        st.adjust(charged, class as i64 - size as i64);
        st.stats.restores += 1;
        st.stats.spilled_now -= size;
        st.note_resident(class);
        drop(st);
        // SAFETY: the host copy was made by host_alloc and is no longer referenced.
        unsafe { self.table.host_free(host as *mut c_void)? };
        Ok(ptr)
    }

    pub fn set_evictable(&self, id: BufferId, evictable: bool) -> Result<(), PoolError> {
        let mut st = self.lock();
        let live = st.live.get_mut(&id).ok_or(PoolError::UnknownBuffer(id))?;
        live.evictable = evictable;
        Ok(())
    }

    pub fn is_evictable(&self, id: BufferId) -> bool {
        self.lock().live.get(&id).is_some_and(|l| l.evictable)
    }

    pub fn is_resident(&self, id: BufferId) -> bool {
        self.lock().live.get(&id).is_some_and(|l| l.ptr.is_some())
    }

    /// The size class (bytes reserved) of a live buffer.
    pub fn size_of(&self, id: BufferId) -> Option<u64> {
        self.lock().live.get(&id).map(|l| l.size)
    }

    // --- reporting ------------------------------------------------------------------------------

    pub fn cached_bytes(&self) -> u64 {
        self.lock().cached_bytes()
    }

    pub fn stats(&self) -> Stats {
        self.lock().stats
    }

    /// Starts the peaks afresh from the current values.
    pub fn reset_peaks(&self) {
        let s = &mut self.lock().stats;
        s.peak_allocated = s.allocated;
        s.peak_reserved = s.reserved;
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
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let events: Vec<u64> = st
            .cached
            .values()
            .flatten()
            .filter_map(|b| b.event)
            .chain(st.spare_events.drain(..))
            .collect();
        for e in events {
            let _ = self.table.event_destroy(e);
        }
        let _ = self.empty_cache();
    }
}
