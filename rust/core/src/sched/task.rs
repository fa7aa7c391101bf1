//! A task's life: pending -> admitted -> running -> completed / failed, or cancelled before it
//! runs (or failed in the queue: rejected, timed out). Transitions are compare-and-swap on one
//! atomic, so a cancel racing a worker's start has exactly one winner.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::qos::QosClass;
use crate::pool::QuotaId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum TaskState {
    Pending = 0,
    Admitted = 1,
    Running = 2,
    Completed = 3,
    Failed = 4,
    Cancelled = 5,
}

impl TaskState {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => TaskState::Pending,
            1 => TaskState::Admitted,
            2 => TaskState::Running,
            3 => TaskState::Completed,
            4 => TaskState::Failed,
            _ => TaskState::Cancelled,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Admitted => "admitted",
            TaskState::Running => "running",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }

    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Cancelled
        )
    }

    /// The edges of the state machine.
    pub fn may_become(self, next: TaskState) -> bool {
        use TaskState::*;
        matches!(
            (self, next),
            (Pending, Admitted)
                | (Pending, Failed)
                | (Pending, Cancelled)
                | (Admitted, Running)
                | (Admitted, Cancelled)
                | (Running, Completed)
                | (Running, Failed)
        )
    }
}

/// Why a task ended the way it did, when it did not simply complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    /// Its own code raised (the message).
    Error(String),
    /// admission="reject" and it did not fit at submission.
    Rejected(String),
    /// Its deadline passed while it waited in the queue.
    TimedOut,
    Cancelled,
}

/// What a task asks for.
#[derive(Debug, Clone)]
pub struct TaskSpec {
    pub name: String,
    pub class: QosClass,
    /// Bytes reserved at admission (0 for best effort).
    pub request: u64,
    /// Bytes its allocations may reach (equal to `request` for guaranteed tasks).
    pub limit: u64,
    /// Longest wait in the queue before it fails with a timeout.
    pub timeout: Option<Duration>,
    /// Fail at once, rather than wait, when it does not fit at submission.
    pub reject: bool,
    /// The quota current where the task was entered (a task run inside another task or
    /// quota): the task's bytes count against it too, so it can only narrow it.
    pub within: Option<QuotaId>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Times {
    admitted: Option<Instant>,
    started: Option<Instant>,
    finished: Option<Instant>,
}

pub struct Task {
    pub id: u64,
    pub spec: TaskSpec,
    pub submitted: Instant,
    pub deadline: Option<Instant>,
    /// Run by the submitting thread (`Scheduler::begin`), not handed to a worker.
    pub inline: bool,
    /// The scheduler it was submitted to (`Scheduler::owns`).
    pub scheduler: u64,
    state: AtomicU8,
    times: Mutex<Times>,
    quota: Mutex<Option<QuotaId>>,
    outcome: Mutex<Option<Outcome>>,
    pub kernels: AtomicU64,
    pub throttled_ns: AtomicU64,
    pub memory_peak: AtomicU64,
}

/// A snapshot of one task's figures.
#[derive(Debug, Clone)]
pub struct TaskStats {
    pub id: u64,
    pub name: String,
    pub class: QosClass,
    pub state: TaskState,
    pub outcome: Option<Outcome>,
    pub queue_wait: Duration,
    pub run_time: Duration,
    pub memory_peak: u64,
    pub kernels: u64,
    pub throttled: Duration,
}

impl Task {
    pub fn new(id: u64, spec: TaskSpec, inline: bool) -> Self {
        let submitted = Instant::now();
        Self {
            id,
            // A timeout too long to represent is no deadline.
            deadline: spec.timeout.and_then(|t| submitted.checked_add(t)),
            spec,
            submitted,
            inline,
            scheduler: 0,
            state: AtomicU8::new(TaskState::Pending as u8),
            times: Mutex::new(Times::default()),
            quota: Mutex::new(None),
            outcome: Mutex::new(None),
            kernels: AtomicU64::new(0),
            throttled_ns: AtomicU64::new(0),
            memory_peak: AtomicU64::new(0),
        }
    }

    pub(crate) fn owned_by(mut self, scheduler: u64) -> Self {
        self.scheduler = scheduler;
        self
    }

    pub fn class(&self) -> QosClass {
        self.spec.class
    }

    pub fn state(&self) -> TaskState {
        TaskState::from_u8(self.state.load(Ordering::Acquire))
    }

    /// Moves `from` -> `to` if the task is in `from` (false otherwise: another thread moved it
    /// first). Timestamps follow the state.
    pub fn transition(&self, from: TaskState, to: TaskState) -> bool {
        assert!(from.may_become(to), "no edge {from:?} -> {to:?}");
        let moved = self
            .state
            .compare_exchange(from as u8, to as u8, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if moved {
            let now = Instant::now();
            let mut t = lock(&self.times);
            match to {
                TaskState::Admitted => t.admitted = Some(now),
                TaskState::Running => t.started = Some(now),
                _ => t.finished = Some(now),
            }
        }
        moved
    }

    pub(crate) fn set_quota(&self, quota: Option<QuotaId>) {
        *lock(&self.quota) = quota;
    }

    pub fn quota(&self) -> Option<QuotaId> {
        *lock(&self.quota)
    }

    pub(crate) fn set_outcome(&self, outcome: Outcome) {
        *lock(&self.outcome) = Some(outcome);
    }

    pub fn outcome(&self) -> Option<Outcome> {
        lock(&self.outcome).clone()
    }

    pub fn stats(&self) -> TaskStats {
        let t = *lock(&self.times);
        let now = Instant::now();
        let started_or_now = t.started.or(t.finished).unwrap_or(now);
        TaskStats {
            id: self.id,
            name: self.spec.name.clone(),
            class: self.spec.class,
            state: self.state(),
            outcome: self.outcome(),
            queue_wait: started_or_now.saturating_duration_since(self.submitted),
            run_time: t
                .started
                .map_or(Duration::ZERO, |s| t.finished.unwrap_or(now) - s),
            memory_peak: self.memory_peak.load(Ordering::Relaxed),
            kernels: self.kernels.load(Ordering::Relaxed),
            throttled: Duration::from_nanos(self.throttled_ns.load(Ordering::Relaxed)),
        }
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing panics while these locks are held; a poisoned one still guards consistent data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> TaskSpec {
        TaskSpec {
            name: "t".into(),
            class: QosClass::Burstable,
            request: 1,
            limit: 2,
            timeout: None,
            reject: false,
            within: None,
        }
    }

    #[test]
    fn the_state_machine_follows_its_edges_once() {
        let t = Task::new(1, spec(), false);
        assert_eq!(t.state(), TaskState::Pending);
        assert!(!t.transition(TaskState::Admitted, TaskState::Running));
        assert!(t.transition(TaskState::Pending, TaskState::Admitted));
        assert!(!t.transition(TaskState::Pending, TaskState::Cancelled));
        assert!(t.transition(TaskState::Admitted, TaskState::Running));
        assert!(t.transition(TaskState::Running, TaskState::Completed));
        assert!(t.state().is_final());
        let s = t.stats();
        assert!(s.run_time <= t.submitted.elapsed());
    }

    #[test]
    #[should_panic(expected = "no edge")]
    fn a_finished_task_cannot_run_again() {
        let t = Task::new(1, spec(), false);
        t.transition(TaskState::Completed, TaskState::Running);
    }

    #[test]
    fn only_one_of_two_racing_transitions_wins() {
        for _ in 0..200 {
            let t = std::sync::Arc::new(Task::new(1, spec(), false));
            t.transition(TaskState::Pending, TaskState::Admitted);
            let t2 = t.clone();
            let h =
                std::thread::spawn(move || t2.transition(TaskState::Admitted, TaskState::Running));
            let cancelled = t.transition(TaskState::Admitted, TaskState::Cancelled);
            let started = h.join().unwrap();
            assert!(cancelled ^ started);
        }
    }
}
