//! Admission control: a task is admitted when its reservation fits beside the reservations of
//! the admitted tasks and the memory tasks hold beyond their reservations (their "burst").
//!
//! The burst is a pool quota (`shared`) that every task quota charges its bytes beyond its
//! reservation to; its limit is always `capacity - reserved`. Admitting a task shrinks that limit
//! by the request, which succeeds only while the burst in use still fits: so reserved + burst
//! never exceeds capacity, and no task's growth can take memory another task reserved.

use std::sync::Arc;

use crate::pool::{Pool, QuotaId, QuotaSpec};

pub struct Admission {
    pool: Arc<Pool>,
    shared: QuotaId,
    capacity: u64,
    reserved: u64,
}

impl Admission {
    pub fn new(pool: Arc<Pool>, capacity: u64) -> Self {
        let shared = pool.create_quota_with(QuotaSpec {
            limit: capacity,
            reserved: capacity,
            shared: true,
            ..QuotaSpec::default()
        });
        Self {
            pool,
            shared,
            capacity,
            reserved: 0,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    /// The quota that task quotas charge their burst to.
    pub fn shared_quota(&self) -> QuotaId {
        self.shared
    }

    /// Bytes tasks hold beyond their reservations (including the results of finished tasks).
    pub fn burst_used(&self) -> u64 {
        self.pool
            .quota_usage(self.shared)
            .map_or(0, |(_, used)| used)
    }

    /// Reserves `request` bytes if they fit with `ahead` bytes kept free for tasks of higher
    /// classes still waiting; false (and nothing reserved) otherwise.
    pub fn try_reserve(&mut self, request: u64, ahead: u64) -> bool {
        let free = self.capacity - self.reserved;
        if request.saturating_add(ahead) > free.saturating_sub(self.burst_used()) {
            return false;
        }
        // Decides atomically against concurrent burst allocations.
        if self.pool.try_set_quota_limit(self.shared, free - request) {
            self.reserved += request;
            true
        } else {
            false
        }
    }

    pub fn release(&mut self, request: u64) {
        debug_assert!(request <= self.reserved, "released more than was reserved");
        self.reserved = self.reserved.saturating_sub(request);
        let grown = self
            .pool
            .try_set_quota_limit(self.shared, self.capacity - self.reserved);
        debug_assert!(grown, "growing a limit always succeeds");
    }

    /// A quota for an admitted task: `limit` bytes, `reserved` of them its own, all of them
    /// also counted against `within` (the quota current where it was entered) if given.
    pub fn task_quota(
        &self,
        limit: u64,
        reserved: u64,
        spill_rank: u8,
        within: Option<QuotaId>,
    ) -> QuotaId {
        self.pool.create_quota_with(QuotaSpec {
            limit,
            reserved,
            parent: Some(self.shared),
            within,
            spill_rank,
            shared: false,
        })
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.pool.drop_quota(self.shared);
    }
}
