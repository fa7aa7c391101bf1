//! Quotas: caps on the bytes of the buffers charged to them, linked into a graph.
//!
//! - `parent` (reservation edge): a quota's bytes beyond its `reserved` ones are charged to its
//!   parent as well. A scheduler task's quota has the scheduler's shared quota as parent: its
//!   reservation is its own, what it grows beyond that comes out of the unreserved memory.
//!   A quota opened inside another (`gpukit.memory.quota` in a task) is a child with nothing
//!   reserved: every byte counts against the enclosing quota too, so it can only narrow it.
//! - `within` (narrowing edge): every byte also counts against the enclosing quota's limit,
//!   without being charged to that quota's parent: a task entered inside another task (or
//!   inside a quota) keeps its own reservation with the scheduler, and the enclosing quota
//!   still caps it, with no byte counted twice by the scheduler.
//!
//! Bytes reached through a narrowing edge are kept apart (`nested`) from those charged
//! directly (`used`), so a quota's reservation accounting only ever sees its own bytes. Links
//! only point to older quotas, so the graph has no cycles. A charge is checked along the whole
//! graph before anything changes. The table also knows which quota each buffer is charged to.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::hash::{HashMap, HashSet};
use super::{BufferId, PoolError, QuotaId, QuotaInfo, DEFAULT_SPILL_RANK};

/// Quota ids are unique across pools, so an id from another device's pool is never taken for
/// one of this pool's.
static NEXT_QUOTA: AtomicU64 = AtomicU64::new(1);

/// How to make a quota (see the module's notes).
#[derive(Debug, Clone, Default)]
pub struct QuotaSpec {
    pub limit: u64,
    /// Bytes of its usage that are not charged to `parent`.
    pub reserved: u64,
    pub parent: Option<QuotaId>,
    pub within: Option<QuotaId>,
    /// Buffers of quotas with a lower rank are spilled first under pressure.
    pub spill_rank: u8,
    /// The memory no task reserved (a scheduler's): running out of it is `SharedExhausted`, and
    /// narrowing never reaches it (its tasks' bytes are charged to it already).
    pub shared: bool,
}

struct Quota {
    spec: QuotaSpec,
    owner: Option<String>,
    used: u64,
    nested: u64,
    peak: u64,
    buffers: HashSet<BufferId>,
}

impl Quota {
    fn total(&self) -> u64 {
        self.used.saturating_add(self.nested)
    }
}

fn beyond(used: u64, reserved: u64) -> u64 {
    used.saturating_sub(reserved)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// Charged to the quota itself.
    Own,
    /// Counted against its limit only.
    Nested,
}

/// One quota's share of a change in usage.
struct Step {
    quota: QuotaId,
    via: Via,
    bytes: u64,
}

#[derive(Default)]
pub(crate) struct Quotas {
    quotas: HashMap<QuotaId, Quota>,
    owner_of: HashMap<BufferId, QuotaId>,
}

impl Quotas {
    pub fn create(&mut self, spec: QuotaSpec) -> QuotaId {
        let id = NEXT_QUOTA.fetch_add(1, Relaxed);
        self.quotas.insert(
            id,
            Quota {
                spec,
                owner: None,
                used: 0,
                nested: 0,
                peak: 0,
                buffers: HashSet::default(),
            },
        );
        id
    }

    pub fn set_owner(&mut self, quota: QuotaId, owner: String) {
        if let Some(q) = self.quotas.get_mut(&quota) {
            q.owner = Some(owner);
        }
    }

    pub fn spill_rank(&self, quota: QuotaId) -> Option<u8> {
        self.quotas.get(&quota).map(|q| q.spec.spill_rank)
    }

    pub fn info(&self, quota: QuotaId) -> Option<QuotaInfo> {
        self.quotas.get(&quota).map(|q| QuotaInfo {
            limit: q.spec.limit,
            used: q.total(),
            peak: q.peak,
        })
    }

    /// Sets the limit unless more is in use already (then false).
    pub fn try_set_limit(&mut self, quota: QuotaId, limit: u64) -> bool {
        match self.quotas.get_mut(&quota) {
            Some(q) if q.total() <= limit => {
                q.spec.limit = limit;
                true
            }
            _ => false,
        }
    }

    /// Every quota a change of `bytes` at `start` reaches, and by how much.
    fn steps(&self, start: QuotaId, via: Via, bytes: u64, grow: bool) -> Vec<Step> {
        let mut out: Vec<Step> = Vec::new();
        let mut todo = vec![(start, via, bytes)];
        while let Some((id, via, bytes)) = todo.pop() {
            if bytes == 0 || out.iter().any(|s| s.quota == id) {
                continue;
            }
            let Some(q) = self.quotas.get(&id) else {
                continue; // dropped while something still pointed at it
            };
            out.push(Step {
                quota: id,
                via,
                bytes,
            });
            if let Some(p) = q.spec.parent {
                match via {
                    Via::Own => {
                        let r = q.spec.reserved;
                        let extra = if grow {
                            beyond(q.used.saturating_add(bytes), r) - beyond(q.used, r)
                        } else {
                            beyond(q.used, r) - beyond(q.used.saturating_sub(bytes), r)
                        };
                        todo.push((p, Via::Own, extra));
                    }
                    Via::Nested => {
                        if self.quotas.get(&p).is_some_and(|pq| !pq.spec.shared) {
                            todo.push((p, Via::Nested, bytes));
                        }
                    }
                }
            }
            if let Some(w) = q.spec.within {
                todo.push((w, Via::Nested, bytes));
            }
        }
        out
    }

    fn check(&self, steps: &[Step], start: QuotaId, requested: u64) -> Result<(), PoolError> {
        for s in steps {
            let q = &self.quotas[&s.quota];
            if q.total()
                .checked_add(s.bytes)
                .is_some_and(|t| t <= q.spec.limit)
            {
                continue;
            }
            return Err(if s.quota != start && s.via == Via::Own && q.spec.shared {
                PoolError::SharedExhausted {
                    requested,
                    used: q.used,
                    limit: q.spec.limit,
                }
            } else {
                PoolError::QuotaExceeded {
                    requested,
                    used: q.total(),
                    limit: q.spec.limit,
                    owner: q.owner.clone(),
                }
            });
        }
        Ok(())
    }

    fn apply(&mut self, steps: &[Step], grow: bool) {
        for s in steps {
            let q = self
                .quotas
                .get_mut(&s.quota)
                .expect("steps name live quotas");
            let field = match s.via {
                Via::Own => &mut q.used,
                Via::Nested => &mut q.nested,
            };
            *field = if grow {
                field.saturating_add(s.bytes)
            } else {
                field.saturating_sub(s.bytes)
            };
            q.peak = q.peak.max(q.total());
        }
    }

    /// Charges `bytes` of a new `buffer` to `quota` and all it reaches, or says which limit it
    /// would pass. Returns the quota's spill rank; None (nothing charged) for a quota that does
    /// not exist (any more): its buffers are not counted.
    pub fn charge(
        &mut self,
        buffer: BufferId,
        quota: QuotaId,
        bytes: u64,
        requested: u64,
    ) -> Result<Option<u8>, PoolError> {
        let Some(q) = self.quotas.get(&quota) else {
            return Ok(None);
        };
        let rank = q.spec.spill_rank;
        let steps = self.steps(quota, Via::Own, bytes, true);
        self.check(&steps, quota, requested)?;
        self.apply(&steps, true);
        self.quotas
            .get_mut(&quota)
            .expect("checked above")
            .buffers
            .insert(buffer);
        self.owner_of.insert(buffer, quota);
        Ok(Some(rank))
    }

    /// A buffer of `bytes` went: whatever it is charged to now is relieved.
    pub fn uncharge(&mut self, buffer: BufferId, bytes: u64) {
        let Some(quota) = self.owner_of.remove(&buffer) else {
            return;
        };
        if let Some(q) = self.quotas.get_mut(&quota) {
            q.buffers.remove(&buffer);
        }
        let steps = self.steps(quota, Via::Own, bytes, false);
        self.apply(&steps, false);
    }

    /// A buffer's size class changed from `from` to `to` bytes (restored into another class);
    /// not checked against limits: the memory was charged already.
    pub fn resize(&mut self, buffer: BufferId, from: u64, to: u64) {
        let Some(&quota) = self.owner_of.get(&buffer) else {
            return;
        };
        let grow = to > from;
        let steps = self.steps(quota, Via::Own, from.abs_diff(to), grow);
        self.apply(&steps, grow);
    }

    /// Forgets a quota. Its buffers stay valid: charged to its parent from now on (the part of
    /// them within its reservation newly so), or to nothing if it has none; they stop counting
    /// against the quotas it was nested within. Returns those buffers and their new spill rank.
    pub fn retire(&mut self, quota: QuotaId) -> Option<(Vec<BufferId>, u8)> {
        let q = self.quotas.remove(&quota)?;
        if let Some(w) = q.spec.within {
            let steps = self.steps(w, Via::Nested, q.total(), false);
            self.apply(&steps, false);
        }
        let buffers: Vec<BufferId> = q.buffers.into_iter().collect();
        let parent = q.spec.parent.filter(|p| self.quotas.contains_key(p));
        let Some(p) = parent else {
            for b in &buffers {
                self.owner_of.remove(b);
            }
            return Some((buffers, DEFAULT_SPILL_RANK));
        };
        let steps = self.steps(p, Via::Own, q.used.min(q.spec.reserved), true);
        self.apply(&steps, true);
        for &b in &buffers {
            self.owner_of.insert(b, p);
        }
        let pq = self.quotas.get_mut(&p).expect("checked above");
        pq.buffers.extend(buffers.iter().copied());
        Some((buffers, pq.spec.spill_rank))
    }
}
