//! The caching device-memory pool. Every byte gpukit puts on a device comes from here.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::size_class::round_up;
use crate::table::{AllocatorTable, BackendError};

/// A block handed out by the pool. It goes back with [`Pool::release`].
#[derive(Debug, PartialEq, Eq)]
pub struct Block {
    pub ptr: u64,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PoolError {
    OutOfMemory {
        requested: u64,
        allocated: u64,
        reserved: u64,
        backend: BackendError,
    },
    Backend(BackendError),
}

impl std::fmt::Display for PoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PoolError::OutOfMemory {
                requested,
                allocated,
                reserved,
                backend,
            } => write!(
                f,
                "out of device memory: requested {requested} bytes with {allocated} allocated and \
                 {reserved} reserved by the pool ({backend})"
            ),
            PoolError::Backend(e) => e.fmt(f),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes in blocks handed out and not yet released.
    pub allocated: u64,
    /// Bytes held from the backend: allocated plus cached.
    pub reserved: u64,
    pub peak_allocated: u64,
    pub peak_reserved: u64,
    /// Requests served, from the cache or the backend.
    pub allocations: u64,
    pub cache_hits: u64,
    /// Calls to the backend's allocator.
    pub backend_allocations: u64,
}

#[derive(Default)]
struct State {
    /// Free blocks by size class; the last pushed is reused first, as it is likeliest warm.
    cached: BTreeMap<u64, Vec<u64>>,
    stats: Stats,
}

impl State {
    fn take_cached(&mut self, size: u64) -> Option<u64> {
        let list = self.cached.get_mut(&size)?;
        let ptr = list.pop();
        if list.is_empty() {
            self.cached.remove(&size);
        }
        ptr
    }

    fn drain_cache(&mut self) -> Vec<(u64, u64)> {
        std::mem::take(&mut self.cached)
            .into_iter()
            .flat_map(|(size, ptrs)| ptrs.into_iter().map(move |p| (p, size)))
            .collect()
    }

    fn note_allocated(&mut self, size: u64) {
        let s = &mut self.stats;
        s.allocations += 1;
        s.allocated += size;
        s.peak_allocated = s.peak_allocated.max(s.allocated);
        s.peak_reserved = s.peak_reserved.max(s.reserved);
    }
}

pub struct Pool {
    table: AllocatorTable,
    state: Mutex<State>,
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
        // A panic while holding the lock cannot leave State half-updated (no panics inside), so a
        // poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A cached block for `nbytes`, without calling the backend; None when the cache has none.
    pub fn allocate_cached(&self, nbytes: u64) -> Option<Block> {
        let size = round_up(nbytes);
        let mut st = self.lock();
        let ptr = st.take_cached(size)?;
        st.stats.cache_hits += 1;
        st.note_allocated(size);
        Some(Block { ptr, size })
    }

    pub fn allocate(&self, nbytes: u64) -> Result<Block, PoolError> {
        if let Some(block) = self.allocate_cached(nbytes) {
            return Ok(block);
        }
        let size = round_up(nbytes);
        let ptr = match self.table.device_alloc(size) {
            Ok(ptr) => ptr,
            Err(e) if self.table.is_out_of_memory(&e) => {
                // Give every cached block back to the backend, then try once more.
                self.empty_cache()?;
                self.table.device_alloc(size).map_err(|e| {
                    if self.table.is_out_of_memory(&e) {
                        let st = self.lock();
                        PoolError::OutOfMemory {
                            requested: nbytes,
                            allocated: st.stats.allocated,
                            reserved: st.stats.reserved,
                            backend: e,
                        }
                    } else {
                        PoolError::Backend(e)
                    }
                })?
            }
            Err(e) => return Err(PoolError::Backend(e)),
        };
        let mut st = self.lock();
        st.stats.backend_allocations += 1;
        st.stats.reserved += size;
        st.note_allocated(size);
        Ok(Block { ptr, size })
    }

    /// Returns a block to the cache. The caller guarantees no pending work still uses it.
    pub fn release(&self, block: Block) {
        let mut st = self.lock();
        st.stats.allocated -= block.size;
        st.cached.entry(block.size).or_default().push(block.ptr);
    }

    /// Frees every cached block back to the backend.
    pub fn empty_cache(&self) -> Result<(), PoolError> {
        let blocks = self.lock().drain_cache();
        let mut first_error = None;
        for (ptr, size) in blocks {
            match self.table.device_free(ptr) {
                Ok(()) => self.lock().stats.reserved -= size,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), |e| Err(PoolError::Backend(e)))
    }

    pub fn cached_bytes(&self) -> u64 {
        self.lock()
            .cached
            .iter()
            .map(|(size, ptrs)| size * ptrs.len() as u64)
            .sum()
    }

    pub fn stats(&self) -> Stats {
        self.lock().stats
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let _ = self.empty_cache();
    }
}
