//! Python's view of the Rust scheduler (gpukit.scheduler builds the public API on it).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use std::sync::Arc;
use std::time::Duration;

use crate::args;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use gpukit_core::sched::pacer::{self, PACER_TABLE};
use gpukit_core::sched::qos::QosClass;
use gpukit_core::sched::stats::ClassStats;
use gpukit_core::sched::task::{Outcome, Task as CoreTask, TaskSpec, TaskState};
use gpukit_core::sched::{Next, SchedError, Scheduler as CoreScheduler};

use crate::Pool;
use gpukit_core::pool::PoolError;

fn sched_err(e: SchedError) -> PyErr {
    match e {
        SchedError::ShutDown => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

fn class(qos: &str) -> PyResult<QosClass> {
    qos.parse().map_err(PyValueError::new_err)
}

/// One task of a Scheduler.
#[pyclass(module = "gpukit._core", frozen)]
struct Task {
    inner: Arc<CoreTask>,
}

#[pymethods]
impl Task {
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.spec.name.clone()
    }

    #[getter]
    fn qos(&self) -> &'static str {
        self.inner.class().name()
    }

    /// "pending", "admitted", "running", "completed", "failed" or "cancelled".
    #[getter]
    fn state(&self) -> &'static str {
        self.inner.state().name()
    }

    /// The pool quota its allocations are charged to while it is admitted or running.
    #[getter]
    fn quota(&self) -> Option<u64> {
        self.inner.quota()
    }

    /// (kind, message) of how it ended: kind is "completed", "error", "rejected", "timed_out" or
    /// "cancelled"; None while it has not ended.
    #[getter]
    fn outcome(&self) -> Option<(&'static str, String)> {
        self.inner.outcome().map(|o| match o {
            Outcome::Completed => ("completed", String::new()),
            Outcome::Error(m) => ("error", m),
            Outcome::Rejected(m) => ("rejected", m),
            Outcome::TimedOut => ("timed_out", String::new()),
            Outcome::Cancelled => ("cancelled", String::new()),
        })
    }

    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("id", s.id)?;
        d.set_item("name", s.name)?;
        d.set_item("qos", s.class.name())?;
        d.set_item("state", s.state.name())?;
        d.set_item("outcome", self.outcome().map(|o| o.0))?;
        d.set_item("queue_wait_s", s.queue_wait.as_secs_f64())?;
        d.set_item("run_time_s", s.run_time.as_secs_f64())?;
        d.set_item("memory_peak_bytes", s.memory_peak)?;
        d.set_item("kernels", s.kernels)?;
        d.set_item("throttled_s", s.throttled.as_secs_f64())?;
        Ok(d)
    }
}

fn wrap(t: Arc<CoreTask>) -> Task {
    Task { inner: t }
}

fn class_dict<'py>(py: Python<'py>, c: &ClassStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("submitted", c.submitted)?;
    d.set_item("completed", c.completed)?;
    d.set_item("failed", c.failed)?;
    d.set_item("rejected", c.rejected)?;
    d.set_item("timed_out", c.timed_out)?;
    d.set_item("cancelled", c.cancelled)?;
    d.set_item("finished", c.finished())?;
    d.set_item("queue_wait_s", c.queue_wait.as_secs_f64())?;
    d.set_item("max_queue_wait_s", c.max_queue_wait.as_secs_f64())?;
    d.set_item("run_time_s", c.run_time.as_secs_f64())?;
    d.set_item("max_run_time_s", c.max_run_time.as_secs_f64())?;
    d.set_item("kernels", c.kernels)?;
    d.set_item("throttled_s", c.throttled.as_secs_f64())?;
    d.set_item("max_memory_peak_bytes", c.max_memory_peak)?;
    Ok(d)
}

/// Admission, queues by class, quotas and launch pacing over one pool.
#[pyclass(module = "gpukit._core", frozen)]
struct Scheduler {
    inner: Arc<CoreScheduler>,
}

impl Scheduler {
    /// The task, if it is one of this scheduler's.
    fn own<'a>(&self, task: &'a Task) -> PyResult<&'a Arc<CoreTask>> {
        if self.inner.owns(&task.inner) {
            Ok(&task.inner)
        } else {
            Err(PyValueError::new_err(format!(
                "task {} ({:?}) belongs to another scheduler",
                task.inner.id, task.inner.spec.name
            )))
        }
    }
}

#[pymethods]
impl Scheduler {
    /// A scheduler handing out `memory` bytes of `pool` (0 to 2**64 - 1); `pace_bound` (>= 1)
    /// best-effort launches in flight while guaranteed work runs; `slice_rows` (>= 1) rows per
    /// launch advised for long best-effort ops meanwhile; `cap_ns` (0 to 2**64 - 1; 0: none)
    /// expected nanoseconds of best-effort work in flight meanwhile; `preempt`: best-effort
    /// tasks take preemptible kernels and guaranteed tasks raise a preemption word.
    #[new]
    #[pyo3(signature = (pool, memory, pace_bound=None, slice_rows=None, cap_ns=None, preempt=false))]
    fn new(
        pool: &Pool,
        memory: &Bound<'_, PyAny>,
        pace_bound: Option<&Bound<'_, PyAny>>,
        slice_rows: Option<&Bound<'_, PyAny>>,
        cap_ns: Option<&Bound<'_, PyAny>>,
        preempt: bool,
    ) -> PyResult<Self> {
        let cap_ns = args::optional_unsigned("cap_ns", cap_ns)?.unwrap_or(0);
        let capacity = args::unsigned("memory", memory)?;
        let pace_bound = match pace_bound {
            Some(v) => args::at_least_one("pace_bound", v, u32::MAX)? as usize,
            None => 1,
        };
        let slice_rows = match slice_rows {
            Some(v) => args::at_least_one("slice_rows", v, i64::MAX)?,
            None => 256,
        };
        let inner = Arc::new(CoreScheduler::new(
            pool.inner.clone(),
            capacity,
            pace_bound,
            slice_rows,
        ));
        inner.pacer().set_cap_ns(cap_ns);
        inner.pacer().set_preempt(preempt);
        Ok(Self { inner })
    }

    /// Queues a task for a worker (`next`). `memory` is the bytes reserved, `limit` the most it
    /// may hold (0 to 2**64 - 1 each). `timeout`: seconds it may wait in its queue (None or inf:
    /// no limit; NaN or negative: ValueError). With `reject`, one that is not admitted at once
    /// ends failed ("rejected"). `inline`: the calling thread runs it (waits for admission
    /// here). `within`: the quota current where it is entered; the task's bytes count against
    /// that quota too, so it can only narrow it.
    #[pyo3(signature = (name, qos, memory, limit, timeout=None, reject=false, inline=false, within=None))]
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &self,
        py: Python<'_>,
        name: String,
        qos: &str,
        memory: &Bound<'_, PyAny>,
        limit: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
        reject: bool,
        inline: bool,
        within: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Task> {
        let spec = TaskSpec {
            name,
            class: class(qos)?,
            request: args::unsigned("memory", memory)?,
            limit: args::unsigned("limit", limit)?,
            timeout: args::seconds("timeout", timeout)?,
            reject,
            within: args::optional_unsigned("within", within)?,
        };
        let s = &self.inner;
        if inline {
            // Queued and admitted with the GIL kept (short sections under locks never held
            // across a backend call); only a wait for admission gives it up. A guaranteed task
            // that fits at once so never hands the GIL to another thread on its way in (issue
            // 17: each handoff cost it tens of microseconds beside a best-effort thread).
            let task = s.queue_inline(spec).map_err(sched_err)?;
            let task = if task.state() == TaskState::Pending {
                py.detach(|| s.await_begin(task))
            } else {
                s.await_begin(task)
            };
            Ok(wrap(task))
        } else {
            s.submit(spec).map(wrap).map_err(sched_err)
        }
    }

    /// For a worker: ("run", task) to run, ("ended", task) that ended in the queue, ("idle",
    /// None) after `wait` seconds (None or inf: no limit), or ("exit", None) once shut down with
    /// nothing left.
    fn next(
        &self,
        py: Python<'_>,
        wait: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(&'static str, Option<Task>)> {
        let wait = args::seconds("wait", wait)?.unwrap_or(Duration::MAX);
        let s = &self.inner;
        Ok(match py.detach(|| s.next(wait)) {
            Next::Run(t) => ("run", Some(wrap(t))),
            Next::Ended(t) => ("ended", Some(wrap(t))),
            Next::Idle => ("idle", None),
            Next::Exit => ("exit", None),
        })
    }

    /// Ends a running task; `error` is its exception's text, None when it completed.
    ///
    /// With the GIL kept: bookkeeping under the scheduler's and the pool's locks, none of which
    /// is held across a backend call or a wait. Giving the GIL up here would let a best-effort
    /// thread that the end of a guaranteed task wakes take it before the guaranteed thread
    /// returns (issue 17).
    #[pyo3(signature = (task, error=None))]
    fn finish(&self, task: &Task, error: Option<String>) -> PyResult<()> {
        let (s, t) = (&self.inner, self.own(task)?);
        s.finish(t, error);
        Ok(())
    }

    /// Cancels a task that has not started; False if it runs or ended already.
    fn cancel(&self, task: &Task) -> PyResult<bool> {
        Ok(self.inner.cancel(self.own(task)?))
    }

    /// Stops taking tasks; with `cancel_pending`, cancels those not yet running (returned).
    fn shutdown(&self, cancel_pending: bool) -> Vec<Task> {
        self.inner
            .shutdown(cancel_pending)
            .into_iter()
            .map(wrap)
            .collect()
    }

    /// Waits until every task has ended (or `timeout` seconds pass; None or inf: no limit);
    /// True if all ended.
    #[pyo3(signature = (timeout=None))]
    fn wait_idle(&self, py: Python<'_>, timeout: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
        let timeout = args::seconds("timeout", timeout)?;
        let s = &self.inner;
        Ok(py.detach(|| s.wait_idle(timeout)))
    }

    /// Makes `task` the calling thread's current task for launch pacing (until `exit_task`).
    fn enter_task(&self, task: &Task) -> PyResult<()> {
        pacer::enter(self.own(task)?.clone(), self.inner.pacer().clone());
        Ok(())
    }

    fn exit_task(&self) {
        pacer::exit();
    }

    /// Whether best-effort tasks take preemptible kernels.
    #[getter]
    fn preempt(&self) -> bool {
        self.inner.pacer().preempt()
    }

    /// The preemption word (an index below PREEMPT_SLOTS) for a guaranteed task to raise.
    fn take_slot(&self) -> usize {
        self.inner.pacer().slots().take()
    }

    /// Gives a word back; True when no task holds it any more (lower it then).
    fn give_slot(&self, slot: usize) -> bool {
        self.inner.pacer().slots().give(slot)
    }

    /// Guaranteed tasks holding each preemption word now.
    fn slot_holders(&self) -> Vec<u32> {
        self.inner.pacer().slots().holders()
    }

    /// Whether a guaranteed task is running now.
    #[getter]
    fn guaranteed_active(&self) -> bool {
        self.inner.pacer().guaranteed_active()
    }

    #[getter]
    fn capacity(&self) -> u64 {
        self.inner.gauges().capacity
    }

    /// Per class: totals of the tasks that ended, and gauges of those that did not.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let all = self.inner.stats();
        let g = self.inner.gauges();
        let out = PyDict::new(py);
        for c in QosClass::ALL {
            let d = class_dict(py, all.class(c))?;
            d.set_item("pending", g.pending[c.index()])?;
            d.set_item("admitted", g.admitted[c.index()])?;
            d.set_item("running", g.running[c.index()])?;
            out.set_item(c.name(), d)?;
        }
        out.set_item("reserved_bytes", g.reserved)?;
        out.set_item("burst_bytes", g.burst_used)?;
        out.set_item("capacity_bytes", g.capacity)?;
        Ok(out)
    }
}

/// The stream priority of a QoS class within a device's (least, greatest) range (32-bit ints).
#[pyfunction]
fn stream_priority(
    qos: &str,
    least: &Bound<'_, PyAny>,
    greatest: &Bound<'_, PyAny>,
) -> PyResult<i32> {
    let (least, greatest) = (
        args::int32("least", least)?,
        args::int32("greatest", greatest)?,
    );
    Ok(class(qos)?.stream_priority(least, greatest))
}

/// The capsule gpukit._native.install_pacer takes.
#[pyfunction]
fn pacer_table(py: Python<'_>) -> PyResult<Bound<'_, PyCapsule>> {
    let ptr = std::ptr::NonNull::from(&PACER_TABLE).cast::<std::ffi::c_void>();
    // SAFETY: the table is a static, only ever read: it outlives every capsule.
    unsafe { PyCapsule::new_with_pointer(py, ptr, c"gpukit.pacer_table") }
}

/// Rows per launch the calling thread's long ops should use (0: launch whole): nonzero while it
/// runs a best-effort task beside a running guaranteed one.
#[pyfunction]
fn slice_rows() -> i64 {
    pacer::slice_rows()
}

/// Whether the calling thread's long ops should take their preemptible form (it runs a
/// best-effort task of a scheduler with preemption on).
#[pyfunction]
fn preemptible() -> bool {
    pacer::preemptible()
}

/// Waits, without the GIL, until no guaranteed task runs on the scheduler of the calling
/// thread's task (at once without one): where a preemptible product waits before each launch.
#[pyfunction]
fn wait_guaranteed_idle(py: Python<'_>) {
    py.detach(pacer::wait_guaranteed_idle)
}

/// A preemptible product's wait after each launch, in one call without the GIL: reads the
/// launch's first two control words (tiles taken, saved tiles waiting: two u32 at `address`)
/// once `stream`'s work is done, and returns True when the product is done (`tiles` taken, none
/// saved). Otherwise it also waits until no guaranteed task runs before it returns False (the
/// next launch may go). The thread does not take the GIL between its launch's end and the
/// guaranteed work's end, so a guaranteed task running meanwhile on another thread never hands
/// the GIL over to it (issue 17: each such handoff cost that task tens of microseconds).
#[pyfunction]
fn preempt_read_back(
    py: Python<'_>,
    pool: &Pool,
    address: &Bound<'_, PyAny>,
    stream: &Bound<'_, PyAny>,
    tiles: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let address = args::unsigned("address", address)?;
    let stream = args::unsigned("stream", stream)?;
    let tiles = args::unsigned("tiles", tiles)?;
    let table = pool.inner.table();
    let read = py.detach(|| {
        let mut state = [0u32; 2];
        // SAFETY: `state` is 8 writable bytes; the caller passes the control words' address,
        // a live device range of at least 2 words on `stream`.
        unsafe { table.copy_to_host(state.as_mut_ptr().cast(), address, 8, stream) }?;
        let done = u64::from(state[0]) >= tiles && state[1] == 0;
        if !done {
            pacer::wait_guaranteed_idle();
        }
        Ok::<bool, gpukit_core::table::BackendError>(done)
    });
    read.map_err(|e| crate::to_py_err(&pool.inner, PoolError::Backend(e)))
}

/// States the expected nanoseconds of each of the calling thread's next launches (0: unknown),
/// for the scheduler's cap on best-effort work in flight.
#[pyfunction]
fn set_expected_ns(ns: &Bound<'_, PyAny>) -> PyResult<()> {
    pacer::set_expected_ns(args::unsigned("ns", ns)?);
    Ok(())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PREEMPT_SLOTS", pacer::PREEMPT_SLOTS)?;
    m.add_function(wrap_pyfunction!(preemptible, m)?)?;
    m.add_function(wrap_pyfunction!(wait_guaranteed_idle, m)?)?;
    m.add_function(wrap_pyfunction!(preempt_read_back, m)?)?;
    m.add_function(wrap_pyfunction!(set_expected_ns, m)?)?;
    m.add_class::<Scheduler>()?;
    m.add_class::<Task>()?;
    m.add_function(wrap_pyfunction!(stream_priority, m)?)?;
    m.add_function(wrap_pyfunction!(pacer_table, m)?)?;
    m.add_function(wrap_pyfunction!(slice_rows, m)?)?;
    Ok(())
}
