//! Cross-stream reuse: a block freed on stream S may serve another stream once the work queued
//! on S before its free has finished. Frees record nothing; when an allocation finds no block
//! for its own stream, a fence (an event) is recorded on each other stream with blocks waiting,
//! covering the blocks freed there so far, and fences recorded earlier are queried. As in
//! PyTorch's and CuPy's allocators, the queries run with no pool lock held: the fences to look at
//! are listed under the lock, queried unlocked, and the blocks of completed ones moved after
//! reacquiring it.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use super::hash::HashMap;
use super::shard::SHARDS;
use super::{lock, Pool, Stream};
use crate::table::AllocatorTable;

struct Fence {
    /// Tells this fence from a later one on the same stream (events are reused).
    serial: u64,
    event: u64,
    /// Per shard, the count of blocks put back before the fence was recorded: it covers those.
    cuts: [u64; SHARDS],
}

#[derive(Default)]
pub(crate) struct Fences {
    pending: Mutex<HashMap<Stream, Fence>>,
    spare_events: Mutex<Vec<u64>>,
    serials: AtomicU64,
}

/// A fence as listed for a query: (stream, serial, event).
type Listed = (Stream, u64, u64);

impl Fences {
    pub fn destroy_events(&self, table: &AllocatorTable) {
        let pending = std::mem::take(&mut *lock(&self.pending));
        let spare = std::mem::take(&mut *lock(&self.spare_events));
        for e in pending.values().map(|f| f.event).chain(spare) {
            let _ = table.event_destroy(e);
        }
    }
}

impl Pool {
    /// Makes the blocks on other streams than `stream` whose fence has completed reusable
    /// anywhere, and fences the streams that have blocks waiting and no fence yet. Returns how
    /// many blocks became reusable.
    pub(super) fn sweep_fences(&self, stream: Stream) -> usize {
        let recorded: Vec<Listed> = lock(&self.fences.pending)
            .iter()
            .map(|(&s, f)| (s, f.serial, f.event))
            .collect();
        let mut moved = self.retire_completed(&recorded);
        let fresh = self.record_fences(stream);
        moved += self.retire_completed(&fresh);
        moved
    }

    /// Queries the fences (unlocked); moves the blocks of those that completed.
    fn retire_completed(&self, fences: &[Listed]) -> usize {
        let done: Vec<(Stream, u64)> = fences
            .iter()
            .filter(|(_, _, e)| self.table.event_done(*e).unwrap_or(false))
            .map(|&(s, serial, _)| (s, serial))
            .collect();
        let mut moved = 0;
        for (s, serial) in done {
            let fence = {
                let mut pending = lock(&self.fences.pending);
                // Still the fence that was queried: its event has not been reused meanwhile.
                if pending.get(&s).is_none_or(|f| f.serial != serial) {
                    continue; // another thread retired it
                }
                pending.remove(&s).expect("checked above")
            };
            lock(&self.fences.spare_events).push(fence.event);
            for (i, &cut) in fence.cuts.iter().enumerate() {
                moved += self.shard(i).free.release_fenced(s, cut);
            }
        }
        moved
    }

    /// Records a fence on every stream but `stream` that has blocks waiting and no fence;
    /// returns them.
    fn record_fences(&self, stream: Stream) -> Vec<Listed> {
        let mut cuts = [0u64; SHARDS];
        let mut waiting: Vec<Stream> = Vec::new();
        for (i, cut) in cuts.iter_mut().enumerate() {
            let shard = self.shard(i);
            *cut = shard.free.cut();
            waiting.extend(shard.free.waiting_streams(stream));
        }
        waiting.sort_unstable();
        waiting.dedup();
        {
            let pending = lock(&self.fences.pending);
            waiting.retain(|s| !pending.contains_key(s));
        }
        let mut fresh = Vec::new();
        for s in waiting {
            let spare = lock(&self.fences.spare_events).pop(); // unlocked before any call
            let event = match spare {
                Some(e) => e,
                None => match self.table.event_create() {
                    Ok(e) => e,
                    Err(_) => break, // no fence now: those blocks wait for a later sweep
                },
            };
            // Recorded after the cuts were read: it covers every block below them.
            if self.table.event_record(event, s).is_err() {
                lock(&self.fences.spare_events).push(event);
                continue;
            }
            let mut pending = lock(&self.fences.pending);
            if pending.contains_key(&s) {
                drop(pending);
                lock(&self.fences.spare_events).push(event); // another thread fenced it
                continue;
            }
            let serial = self.fences.serials.fetch_add(1, Relaxed);
            pending.insert(
                s,
                Fence {
                    serial,
                    event,
                    cuts,
                },
            );
            fresh.push((s, serial, event));
        }
        fresh
    }
}
