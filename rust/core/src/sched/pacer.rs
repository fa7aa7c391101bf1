//! Launch pacing, called by gpukit._native around every kernel launch through a C table
//! (`native/include/gpukit/pacer_table.h`), with no Python in between.
//!
//! The thread's current task lives in a thread-local here. For a task that is not paced the
//! whole cost is that lookup and one relaxed counter increment. A best-effort task is paced while
//! guaranteed work runs on its scheduler: an event is recorded after each of its launches, and a
//! launch waits (the GIL released by the caller) until fewer than `bound` of them are in flight.
//! Priority streams only order new thread blocks, so the bound (and slicing long kernels, see
//! `slice_rows`) is what keeps a best-effort kernel from holding the GPU while guaranteed work
//! waits.
//!
//! Kernels that cannot yield are also capped by expected duration: the launching thread states
//! what its next launches are expected to take (`set_expected_ns`, 0: unknown), and a paced launch
//! waits while the launches in flight and it together would exceed the scheduler's `cap_ns` (one
//! launch always goes, however long). Kernels that yield on their own (the preemptible GEMM, see
//! `preemptible`) state 0 and count only toward the bound.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::preempt::PreemptSlots;
use super::qos::QosClass;
use super::task::Task;
use crate::capture;
use crate::pool::Pool;

pub const PACER_TABLE_VERSION: u32 = 1;

/// Preemption words per device: kernels/geometry.cuh's GK_PREEMPT_SLOTS (checked against it by
/// gpukit._core's caller, tests/unit/test_preempt.py).
pub const PREEMPT_SLOTS: usize = 4;

/// Mirror of `gk_pacer_table`.
#[repr(C)]
pub struct RawPacerTable {
    pub version: u32,
    pub before_launch: extern "C" fn(u64) -> i32,
    pub wait_launch: extern "C" fn(u64),
    pub after_launch: extern "C" fn(u64) -> i32,
    pub slice_rows: extern "C" fn() -> i64,
}

pub static PACER_TABLE: RawPacerTable = RawPacerTable {
    version: PACER_TABLE_VERSION,
    before_launch,
    wait_launch,
    after_launch,
    slice_rows,
};

/// What one scheduler's tasks share: whether guaranteed work is running, and the policy.
pub struct PacerShared {
    pool: Arc<Pool>,
    guaranteed_running: AtomicUsize,
    bound: AtomicUsize,
    slice_rows: AtomicI64,
    /// Expected nanoseconds of best-effort work in flight allowed while guaranteed work runs
    /// (0: no cap beyond `bound`).
    cap_ns: AtomicU64,
    /// Whether best-effort tasks run preemptible kernels (and guaranteed ones raise a word).
    preempt: AtomicBool,
    slots: PreemptSlots,
}

impl PacerShared {
    pub fn new(pool: Arc<Pool>, bound: usize, slice_rows: i64) -> Self {
        Self {
            pool,
            guaranteed_running: AtomicUsize::new(0),
            bound: AtomicUsize::new(bound.max(1)),
            slice_rows: AtomicI64::new(slice_rows),
            cap_ns: AtomicU64::new(0),
            preempt: AtomicBool::new(false),
            slots: PreemptSlots::new(PREEMPT_SLOTS),
        }
    }

    pub fn set_cap_ns(&self, ns: u64) {
        self.cap_ns.store(ns, Ordering::Relaxed);
    }

    pub fn cap_ns(&self) -> u64 {
        self.cap_ns.load(Ordering::Relaxed)
    }

    pub fn set_preempt(&self, on: bool) {
        self.preempt.store(on, Ordering::Relaxed);
    }

    pub fn preempt(&self) -> bool {
        self.preempt.load(Ordering::Relaxed)
    }

    /// The device's preemption words as this scheduler hands them to guaranteed tasks.
    pub fn slots(&self) -> &PreemptSlots {
        &self.slots
    }

    pub fn guaranteed_started(&self) {
        self.guaranteed_running.fetch_add(1, Ordering::AcqRel);
    }

    pub fn guaranteed_finished(&self) {
        self.guaranteed_running.fetch_sub(1, Ordering::AcqRel);
    }

    pub fn guaranteed_active(&self) -> bool {
        self.guaranteed_running.load(Ordering::Acquire) > 0
    }

    pub fn bound(&self) -> usize {
        self.bound.load(Ordering::Relaxed)
    }

    pub fn configured_slice_rows(&self) -> i64 {
        self.slice_rows.load(Ordering::Relaxed)
    }
}

/// A task as the thread running it sees it.
struct TaskPace {
    task: Arc<Task>,
    shared: Arc<PacerShared>,
    /// Events recorded after this task's paced launches with their expected nanoseconds,
    /// oldest first.
    in_flight: RefCell<VecDeque<(u64, u64)>>,
    spare: RefCell<Vec<u64>>,
}

impl TaskPace {
    fn paced(&self) -> bool {
        self.task.class() == QosClass::BestEffort && self.shared.guaranteed_active()
    }

    /// Drops completed events from the front; returns how many launches are still in flight
    /// and their expected nanoseconds.
    fn retire(&self) -> (usize, u64) {
        let table = self.shared.pool.table();
        let mut q = self.in_flight.borrow_mut();
        while let Some(&(e, _)) = q.front() {
            if !table.event_done(e).unwrap_or(true) {
                break;
            }
            q.pop_front();
            self.spare.borrow_mut().push(e);
        }
        let queued = q.iter().map(|&(_, ns)| ns).fold(0u64, u64::saturating_add);
        (q.len(), queued)
    }

    fn must_wait(&self) -> bool {
        if !self.paced() {
            return false;
        }
        let (count, queued_ns) = self.retire();
        if count >= self.shared.bound() {
            return true;
        }
        let cap = self.shared.cap_ns();
        count > 0 && cap > 0 && queued_ns.saturating_add(EXPECTED_NS.get()) > cap
    }
}

impl Drop for TaskPace {
    fn drop(&mut self) {
        let table = self.shared.pool.table();
        for e in self
            .in_flight
            .get_mut()
            .drain(..)
            .map(|(e, _)| e)
            .chain(self.spare.get_mut().drain(..))
        {
            let _ = table.event_destroy(e);
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Vec<Rc<TaskPace>>> = const { RefCell::new(Vec::new()) };
    /// What the calling thread's next launches are expected to take (0: unknown).
    static EXPECTED_NS: Cell<u64> = const { Cell::new(0) };
}

/// States what the calling thread's next launches are each expected to take, in nanoseconds
/// (0: unknown; such launches count only toward the scheduler's bound).
pub fn set_expected_ns(ns: u64) {
    EXPECTED_NS.set(ns);
}

pub fn expected_ns() -> u64 {
    EXPECTED_NS.get()
}

/// Whether the calling thread's long ops should take their preemptible form: it runs a
/// best-effort task of a scheduler with preemption on, and no guaranteed task of its own encloses
/// it (that task's raised word would hold the product back until the task ends, which waits for
/// the product: a deadlock).
pub fn preemptible() -> bool {
    CURRENT.with(|c| {
        let stack = c.borrow();
        match stack.last() {
            Some(p) => {
                p.task.class() == QosClass::BestEffort
                    && p.shared.preempt()
                    && stack.iter().all(|q| q.task.class() != QosClass::Guaranteed)
            }
            None => false,
        }
    })
}

/// Waits until no guaranteed task runs on the scheduler of the calling thread's task (at once
/// without a task; the caller releases the GIL). A preemptible product waits here, on the host,
/// before each launch: a stream waiting on the GPU for a word to be lowered may hold back the
/// very work that lowers it, since the driver may queue both streams on one hardware queue.
pub fn wait_guaranteed_idle() {
    let Some(shared) = CURRENT.with(|c| c.borrow().last().map(|p| p.shared.clone())) else {
        return;
    };
    let mut pause = std::time::Duration::from_micros(10);
    while shared.guaranteed_active() {
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(1));
    }
}

/// Makes `task` the calling thread's current task (until the matching `exit`).
pub fn enter(task: Arc<Task>, shared: Arc<PacerShared>) {
    let pace = Rc::new(TaskPace {
        task,
        shared,
        in_flight: RefCell::new(VecDeque::new()),
        spare: RefCell::new(Vec::new()),
    });
    CURRENT.with(|c| c.borrow_mut().push(pace));
}

/// Ends the calling thread's innermost current task.
pub fn exit() {
    CURRENT.with(|c| c.borrow_mut().pop());
}

pub fn current_task() -> Option<Arc<Task>> {
    CURRENT.with(|c| c.borrow().last().map(|p| p.task.clone()))
}

fn with_current<R>(default: R, f: impl FnOnce(&TaskPace) -> R) -> R {
    CURRENT.with(|c| match c.borrow().last() {
        Some(p) => f(p),
        None => default,
    })
}

/// 0: launch now. 1: call `wait_launch` first (with the GIL released).
pub extern "C" fn before_launch(_stream: u64) -> i32 {
    if capture::active() {
        return 0; // a captured launch runs on replay: nothing to pace now
    }
    with_current(0, |p| {
        p.task.kernels.fetch_add(1, Ordering::Relaxed);
        i32::from(p.must_wait())
    })
}

/// Waits until the current task may launch again; the time counts as throttled.
pub extern "C" fn wait_launch(_stream: u64) {
    with_current((), |p| {
        let start = Instant::now();
        let mut spins = 0u32;
        while p.must_wait() {
            // Slices are tens of microseconds: spin briefly, then give the core away.
            spins = spins.saturating_add(1);
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        let waited = start.elapsed().as_nanos() as u64;
        p.task.throttled_ns.fetch_add(waited, Ordering::Relaxed);
    })
}

/// Records an event after a paced launch. Returns the backend's error code (0: fine).
pub extern "C" fn after_launch(stream: u64) -> i32 {
    if capture::active() {
        return 0;
    }
    with_current(0, |p| {
        if !p.paced() {
            return 0;
        }
        let table = p.shared.pool.table();
        let event = match p.spare.borrow_mut().pop() {
            Some(e) => e,
            None => match table.event_create() {
                Ok(e) => e,
                Err(e) => return e.code,
            },
        };
        if let Err(e) = table.event_record(event, stream) {
            p.spare.borrow_mut().push(event);
            return e.code;
        }
        p.in_flight
            .borrow_mut()
            .push_back((event, EXPECTED_NS.get()));
        0
    })
}

/// Rows per launch for a long op of the calling thread's task (a matmul's row blocks): the
/// scheduler's slice size while the task is paced, else 0 (launch it whole).
pub extern "C" fn slice_rows() -> i64 {
    if capture::active() {
        return 0; // a graph replays whole: slices would not yield to anything
    }
    with_current(0, |p| {
        if p.paced() {
            p.shared.configured_slice_rows()
        } else {
            0
        }
    })
}
