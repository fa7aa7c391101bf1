//! Per-class totals, folded in as tasks end, so that they agree with the per-task figures.

use std::time::Duration;

use super::qos::QosClass;
use super::task::{Outcome, TaskStats};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassStats {
    pub submitted: u64,
    pub completed: u64,
    /// Ended by an error of its own code.
    pub failed: u64,
    pub rejected: u64,
    pub timed_out: u64,
    pub cancelled: u64,
    pub queue_wait: Duration,
    pub max_queue_wait: Duration,
    pub run_time: Duration,
    pub max_run_time: Duration,
    pub kernels: u64,
    pub throttled: Duration,
    pub max_memory_peak: u64,
}

impl ClassStats {
    /// Tasks that have reached a final state.
    pub fn finished(&self) -> u64 {
        self.completed + self.failed + self.rejected + self.timed_out + self.cancelled
    }

    pub fn record(&mut self, t: &TaskStats) {
        match t.outcome {
            Some(Outcome::Completed) => self.completed += 1,
            Some(Outcome::Error(_)) => self.failed += 1,
            Some(Outcome::Rejected(_)) => self.rejected += 1,
            Some(Outcome::TimedOut) => self.timed_out += 1,
            Some(Outcome::Cancelled) | None => self.cancelled += 1,
        }
        self.queue_wait += t.queue_wait;
        self.max_queue_wait = self.max_queue_wait.max(t.queue_wait);
        self.run_time += t.run_time;
        self.max_run_time = self.max_run_time.max(t.run_time);
        self.kernels += t.kernels;
        self.throttled += t.throttled;
        self.max_memory_peak = self.max_memory_peak.max(t.memory_peak);
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct AllStats {
    pub classes: [ClassStats; 3],
}

impl AllStats {
    pub fn class(&self, c: QosClass) -> &ClassStats {
        &self.classes[c.index()]
    }

    pub fn class_mut(&mut self, c: QosClass) -> &mut ClassStats {
        &mut self.classes[c.index()]
    }
}
