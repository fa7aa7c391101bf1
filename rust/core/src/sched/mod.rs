//! The QoS scheduler: admission against device memory, queues by class, per-task quotas and
//! streams, launch pacing, statistics. Free of Python: gpukit._core wraps it.
//!
//! A task is submitted `Pending`. Admission (at submission, and whenever memory is given back)
//! takes queue heads in class order, guaranteed first, and reserves their request; a head that
//! does not fit holds its class back (FIFO), and lower classes are admitted only if they leave
//! room for the waiting heads above them. Admitted tasks go to a worker (`next`), or, for a task
//! run by the submitting thread (`begin`), back to that thread.

pub mod admission;
pub mod pacer;
pub mod preempt;
pub mod qos;
pub mod queue;
pub mod stats;
pub mod task;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::pool::Pool;
use admission::Admission;
use pacer::PacerShared;
use qos::QosClass;
use queue::{Pending, Popped, Ready};
use stats::AllStats;
use task::{lock, Outcome, Task, TaskSpec, TaskState};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchedError {
    /// The request can never fit: it is larger than the scheduler's memory.
    TooLarge {
        request: u64,
        capacity: u64,
    },
    /// A guaranteed task's limit must equal its request; a limit below the request.
    BadSpec(String),
    ShutDown,
}

impl std::fmt::Display for SchedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchedError::TooLarge { request, capacity } => write!(
                f,
                "the task requests {request} bytes, more than the scheduler's {capacity}"
            ),
            SchedError::BadSpec(m) => f.write_str(m),
            SchedError::ShutDown => f.write_str("the scheduler is shut down"),
        }
    }
}

/// What a worker gets from `next`.
pub enum Next {
    /// An admitted task, now running: run it, then call `finish`.
    Run(Arc<Task>),
    /// A task that ended without running (timed out in the queue): resolve its future.
    Ended(Arc<Task>),
    /// Nothing within the wait.
    Idle,
    /// The scheduler is shut down and has no task left: the worker may exit.
    Exit,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Gauges {
    pub pending: [usize; 3],
    pub admitted: [usize; 3],
    pub running: [usize; 3],
    pub reserved: u64,
    pub burst_used: u64,
    pub capacity: u64,
}

struct Inner {
    admission: Admission,
    pending: Pending,
    /// Every task not yet in a final state.
    live: HashMap<u64, Arc<Task>>,
    accepting: bool,
    stats: AllStats,
    /// Ended without running, for a worker to report.
    ended: Vec<Arc<Task>>,
}

pub struct Scheduler {
    pool: Arc<Pool>,
    inner: Mutex<Inner>,
    /// Signalled when a task is admitted or ends (inline tasks and `wait_idle` wait on it).
    changed: Condvar,
    ready: Ready,
    pacer: Arc<PacerShared>,
    next_id: AtomicU64,
    /// Tells this scheduler's tasks from another's.
    uid: u64,
}

static NEXT_SCHEDULER: AtomicU64 = AtomicU64::new(1);

fn wait<'a, T>(c: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    c.wait(guard).unwrap_or_else(|e| e.into_inner())
}

fn wait_timeout<'a, T>(c: &Condvar, guard: MutexGuard<'a, T>, d: Duration) -> MutexGuard<'a, T> {
    c.wait_timeout(guard, d)
        .unwrap_or_else(|e| e.into_inner())
        .0
}

impl Scheduler {
    /// A scheduler handing out `capacity` bytes of `pool`'s device; best-effort launches are
    /// bounded to `pace_bound` in flight while guaranteed work runs, and long ops are advised to
    /// launch in blocks of `slice_rows` rows.
    pub fn new(pool: Arc<Pool>, capacity: u64, pace_bound: usize, slice_rows: i64) -> Self {
        Self {
            inner: Mutex::new(Inner {
                admission: Admission::new(pool.clone(), capacity),
                pending: Pending::default(),
                live: HashMap::new(),
                accepting: true,
                stats: AllStats::default(),
                ended: Vec::new(),
            }),
            pacer: Arc::new(PacerShared::new(pool.clone(), pace_bound, slice_rows)),
            pool,
            changed: Condvar::new(),
            ready: Ready::default(),
            next_id: AtomicU64::new(0),
            uid: NEXT_SCHEDULER.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Whether `task` was submitted to this scheduler.
    pub fn owns(&self, task: &Task) -> bool {
        task.scheduler == self.uid
    }

    pub fn pacer(&self) -> &Arc<PacerShared> {
        &self.pacer
    }

    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    fn new_task(&self, spec: TaskSpec, inline: bool) -> Result<Arc<Task>, SchedError> {
        if spec.class == QosClass::Guaranteed && spec.limit != spec.request {
            return Err(SchedError::BadSpec(format!(
                "a guaranteed task's limit ({}) must equal its request ({})",
                spec.limit, spec.request
            )));
        }
        if spec.limit < spec.request {
            return Err(SchedError::BadSpec(format!(
                "limit ({}) below the request ({})",
                spec.limit, spec.request
            )));
        }
        let inner = lock(&self.inner);
        let capacity = inner.admission.capacity();
        if spec.request > capacity {
            return Err(SchedError::TooLarge {
                request: spec.request,
                capacity,
            });
        }
        if !inner.accepting {
            return Err(SchedError::ShutDown);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        Ok(Arc::new(Task::new(id, spec, inline).owned_by(self.uid)))
    }

    /// Queues a task for a worker. With `spec.reject`, a task that is not admitted at once comes
    /// back failed (`Outcome::Rejected`) instead of waiting.
    pub fn submit(&self, spec: TaskSpec) -> Result<Arc<Task>, SchedError> {
        let task = self.new_task(spec, false)?;
        self.enqueue(&task);
        Ok(task)
    }

    fn enqueue(&self, task: &Arc<Task>) {
        let mut inner = lock(&self.inner);
        inner.stats.class_mut(task.class()).submitted += 1;
        inner.live.insert(task.id, task.clone());
        inner.pending.push(task.clone());
        self.admit_locked(&mut inner);
        if task.spec.reject && task.state() == TaskState::Pending {
            inner.pending.remove(task);
            let why = format!(
                "not admitted: {} bytes requested, {} of {} reserved, {} held beyond reservations",
                task.spec.request,
                inner.admission.reserved(),
                inner.admission.capacity(),
                inner.admission.burst_used()
            );
            self.end_unrun_locked(&mut inner, task, TaskState::Failed, Outcome::Rejected(why));
            // Its place at a queue head may have held others back.
            self.admit_locked(&mut inner);
        }
    }

    /// Runs a task on the calling thread: waits until it is admitted (or its deadline passes,
    /// or it is rejected), then it is running; call `finish` when done.
    pub fn begin(&self, spec: TaskSpec) -> Result<Arc<Task>, SchedError> {
        let task = self.queue_inline(spec)?;
        Ok(self.await_begin(task))
    }

    /// `begin`'s first step, which never waits: queues a task for the calling thread and admits
    /// what fits (it comes back admitted when it fits at once, pending otherwise, or ended when
    /// rejected). Only short sections under the scheduler's and the pool's locks, none of which
    /// is ever held across a backend call: a caller may keep Python's GIL through it.
    pub fn queue_inline(&self, spec: TaskSpec) -> Result<Arc<Task>, SchedError> {
        let task = self.new_task(spec, true)?;
        self.enqueue(&task);
        Ok(task)
    }

    /// `begin`'s second step: waits while `task` (from `queue_inline`) is pending, then it is
    /// running (returned as it ended if it never got to run). Returns at once for a task that is
    /// no longer pending.
    pub fn await_begin(&self, task: Arc<Task>) -> Arc<Task> {
        let mut inner = lock(&self.inner);
        loop {
            match task.state() {
                TaskState::Pending => {}
                TaskState::Admitted => break,
                _ => return task, // rejected, cancelled or timed out: the caller looks
            }
            let now = Instant::now();
            match task.deadline {
                Some(d) if d <= now => {
                    self.expire_locked(&mut inner, now);
                    continue;
                }
                Some(d) => inner = wait_timeout(&self.changed, inner, d - now),
                None => inner = wait(&self.changed, inner),
            }
        }
        drop(inner);
        if task.transition(TaskState::Admitted, TaskState::Running) {
            self.started(&task);
        }
        task
    }

    /// Admits queue heads while they fit, guaranteed first (see the module's notes).
    fn admit_locked(&self, inner: &mut Inner) {
        let mut ahead = 0u64;
        for class in QosClass::ALL {
            while let Some(head) = inner.pending.head(class) {
                if head.state() != TaskState::Pending {
                    inner.pending.pop(class); // cancelled while queued
                    continue;
                }
                let request = head.spec.request;
                if !inner.admission.try_reserve(request, ahead) {
                    ahead = ahead.saturating_add(request);
                    break;
                }
                let task = inner.pending.pop(class).expect("head exists");
                let quota = inner.admission.task_quota(
                    task.spec.limit,
                    request,
                    task.class().spill_rank(),
                    task.spec.within,
                );
                self.pool.set_quota_owner(
                    quota,
                    format!(
                        "task {:?} ({}, id {})",
                        task.spec.name,
                        task.class(),
                        task.id
                    ),
                );
                task.set_quota(Some(quota));
                task.transition(TaskState::Pending, TaskState::Admitted);
                if task.inline {
                    self.changed.notify_all();
                } else {
                    self.ready.push(task);
                }
            }
        }
    }

    fn started(&self, task: &Task) {
        if task.class() == QosClass::Guaranteed {
            self.pacer.guaranteed_started();
        }
    }

    /// Gives back what an admitted task held (its reservation; its quota, whose live buffers are
    /// charged to the shared burst from now on), then admits what now fits.
    fn release_locked(&self, inner: &mut Inner, task: &Task) {
        if let Some(q) = task.quota() {
            if let Some(info) = self.pool.quota_info(q) {
                task.memory_peak.store(info.peak, Ordering::Relaxed);
            }
            self.pool.retire_quota(q);
            inner.admission.release(task.spec.request);
            task.set_quota(None);
        }
    }

    fn record_end_locked(&self, inner: &mut Inner, task: &Task) {
        inner.live.remove(&task.id);
        let s = task.stats();
        inner.stats.class_mut(task.class()).record(&s);
        self.changed.notify_all();
    }

    /// Ends a task that never ran (from Pending or Admitted).
    fn end_unrun_locked(&self, inner: &mut Inner, task: &Arc<Task>, to: TaskState, why: Outcome) {
        let from = task.state();
        if !matches!(from, TaskState::Pending | TaskState::Admitted) || !task.transition(from, to) {
            return;
        }
        task.set_outcome(why);
        self.release_locked(inner, task);
        self.record_end_locked(inner, task);
    }

    /// Fails the queued tasks whose deadline has passed; they wait in `ended` for a worker.
    fn expire_locked(&self, inner: &mut Inner, now: Instant) {
        let expired = inner.pending.take_expired(now);
        for t in &expired {
            self.end_unrun_locked(inner, t, TaskState::Failed, Outcome::TimedOut);
            if !t.inline {
                inner.ended.push(t.clone());
            }
        }
        if !expired.is_empty() {
            self.admit_locked(inner);
        }
    }

    /// For a worker: the next task to run, or news of one that ended in the queue. Waits up to
    /// `wait`.
    pub fn next(&self, wait: Duration) -> Next {
        // A wait too long to represent has no end.
        let until = Instant::now().checked_add(wait);
        loop {
            let now = Instant::now();
            let (next_deadline, exit) = {
                let mut inner = lock(&self.inner);
                self.expire_locked(&mut inner, now);
                if let Some(t) = inner.ended.pop() {
                    return Next::Ended(t);
                }
                (
                    inner.pending.next_deadline(),
                    !inner.accepting && inner.live.values().all(|t| t.inline),
                )
            };
            if exit {
                self.ready.wake(); // pass the news to the next worker
                return Next::Exit;
            }
            let stop = match (next_deadline, until) {
                (Some(d), Some(u)) => Some(d.min(u)),
                (d, u) => d.or(u),
            };
            let wait = stop.map_or(Duration::MAX, |s| s.saturating_duration_since(now));
            match self.ready.pop(wait) {
                Popped::Task(t) => {
                    if t.transition(TaskState::Admitted, TaskState::Running) {
                        self.started(&t);
                        return Next::Run(t);
                    } // cancelled while it waited: take the next one
                }
                Popped::Woken => continue,
                Popped::TimedOut if until.is_some_and(|u| Instant::now() >= u) => {
                    return Next::Idle
                }
                Popped::TimedOut => continue, // a deadline: expire it above
            }
        }
    }

    /// Ends a running task: `error` is None when it completed.
    pub fn finish(&self, task: &Task, error: Option<String>) {
        if !self.owns(task) {
            return;
        }
        let (to, outcome) = match error {
            None => (TaskState::Completed, Outcome::Completed),
            Some(e) => (TaskState::Failed, Outcome::Error(e)),
        };
        if !task.transition(TaskState::Running, to) {
            return;
        }
        if task.class() == QosClass::Guaranteed {
            self.pacer.guaranteed_finished();
        }
        task.set_outcome(outcome);
        let mut inner = lock(&self.inner);
        self.release_locked(&mut inner, task);
        self.record_end_locked(&mut inner, task);
        self.admit_locked(&mut inner);
        drop(inner);
        self.ready.wake(); // a worker waiting for shutdown's end rechecks
    }

    /// Cancels a task that has not started; false if it is running or ended already.
    pub fn cancel(&self, task: &Arc<Task>) -> bool {
        if !self.owns(task) {
            return false;
        }
        let mut inner = lock(&self.inner);
        let state = task.state();
        if !matches!(state, TaskState::Pending | TaskState::Admitted) {
            return false;
        }
        inner.pending.remove(task);
        self.end_unrun_locked(&mut inner, task, TaskState::Cancelled, Outcome::Cancelled);
        let cancelled = task.state() == TaskState::Cancelled;
        self.admit_locked(&mut inner);
        cancelled
    }

    /// Stops accepting tasks; with `cancel_pending`, cancels every task not yet running and
    /// returns them. Workers exit (`Next::Exit`) once no task is left.
    pub fn shutdown(&self, cancel_pending: bool) -> Vec<Arc<Task>> {
        let mut inner = lock(&self.inner);
        inner.accepting = false;
        let mut cancelled = Vec::new();
        if cancel_pending {
            let waiting: Vec<Arc<Task>> = inner
                .live
                .values()
                .filter(|t| matches!(t.state(), TaskState::Pending | TaskState::Admitted))
                .cloned()
                .collect();
            inner.pending.drain();
            for t in waiting {
                self.end_unrun_locked(&mut inner, &t, TaskState::Cancelled, Outcome::Cancelled);
                cancelled.push(t);
            }
        }
        self.changed.notify_all();
        drop(inner);
        self.ready.wake();
        cancelled
    }

    /// Waits until every task has ended, or `timeout` passes; true if all ended.
    pub fn wait_idle(&self, timeout: Option<Duration>) -> bool {
        let until = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut inner = lock(&self.inner);
        while !inner.live.is_empty() {
            match until {
                Some(u) => {
                    let now = Instant::now();
                    if now >= u {
                        return false;
                    }
                    inner = wait_timeout(&self.changed, inner, u - now);
                }
                None => inner = wait(&self.changed, inner),
            }
        }
        true
    }

    pub fn stats(&self) -> AllStats {
        lock(&self.inner).stats
    }

    pub fn gauges(&self) -> Gauges {
        let inner = lock(&self.inner);
        let mut g = Gauges {
            reserved: inner.admission.reserved(),
            burst_used: inner.admission.burst_used(),
            capacity: inner.admission.capacity(),
            ..Gauges::default()
        };
        for t in inner.live.values() {
            let c = t.class().index();
            match t.state() {
                TaskState::Pending => g.pending[c] += 1,
                TaskState::Admitted => g.admitted[c] += 1,
                TaskState::Running => g.running[c] += 1,
                _ => {}
            }
        }
        g
    }

    /// Whether the scheduler still takes tasks.
    pub fn accepting(&self) -> bool {
        lock(&self.inner).accepting
    }
}
