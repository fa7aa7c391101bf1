use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::pacer;
use super::qos::QosClass;
use super::task::{Outcome, TaskSpec, TaskState};
use super::{Next, SchedError, Scheduler};
use crate::pool::{Pool, PoolError};
use crate::test_table::{host_table, HostDevice};

const MIB: u64 = 1 << 20;

fn scheduler(capacity: u64) -> (Scheduler, &'static HostDevice) {
    let (table, dev) = host_table(1 << 34);
    (
        Scheduler::new(Arc::new(Pool::new(table)), capacity, 1, 256),
        dev,
    )
}

fn spec(class: QosClass, request: u64, limit: u64) -> TaskSpec {
    TaskSpec {
        name: format!("{class}-{request}"),
        class,
        request,
        limit,
        timeout: None,
        reject: false,
        within: None,
    }
}

fn run_next(s: &Scheduler) -> Arc<super::task::Task> {
    match s.next(Duration::from_millis(100)) {
        Next::Run(t) => t,
        _ => panic!("expected a task to run"),
    }
}

#[test]
fn over_commit_waits_until_memory_is_given_back() {
    let (s, _) = scheduler(100 * MIB);
    let a = s
        .submit(spec(QosClass::Guaranteed, 60 * MIB, 60 * MIB))
        .unwrap();
    let b = s
        .submit(spec(QosClass::Guaranteed, 60 * MIB, 60 * MIB))
        .unwrap();
    assert_eq!(a.state(), TaskState::Admitted);
    assert_eq!(b.state(), TaskState::Pending);
    let ra = run_next(&s);
    assert_eq!(ra.id, a.id);
    assert!(matches!(s.next(Duration::from_millis(5)), Next::Idle));
    s.finish(&ra, None);
    assert_eq!(b.state(), TaskState::Admitted);
    let rb = run_next(&s);
    s.finish(&rb, None);
    let st = s.stats();
    assert_eq!(st.class(QosClass::Guaranteed).completed, 2);
}

#[test]
fn reject_fails_at_once_and_unblocks_the_queue() {
    let (s, _) = scheduler(100 * MIB);
    let _a = s
        .submit(spec(QosClass::Guaranteed, 80 * MIB, 80 * MIB))
        .unwrap();
    let mut r = spec(QosClass::Burstable, 40 * MIB, 40 * MIB);
    r.reject = true;
    let b = s.submit(r).unwrap();
    assert_eq!(b.state(), TaskState::Failed);
    assert!(matches!(b.outcome(), Some(Outcome::Rejected(_))));
    assert!(matches!(
        s.submit(spec(QosClass::Guaranteed, 200 * MIB, 200 * MIB)),
        Err(SchedError::TooLarge { .. })
    ));
}

#[test]
fn guaranteed_runs_before_best_effort_queued_earlier() {
    let (s, _) = scheduler(100 * MIB);
    let e = s.submit(spec(QosClass::BestEffort, 0, 10 * MIB)).unwrap();
    let g = s.submit(spec(QosClass::Guaranteed, MIB, MIB)).unwrap();
    assert_eq!(run_next(&s).id, g.id);
    assert_eq!(run_next(&s).id, e.id);
}

#[test]
fn a_task_allocation_past_its_limit_fails_only_that_task() {
    let (s, _) = scheduler(100 * MIB);
    let a = s
        .submit(spec(QosClass::Guaranteed, 8 * MIB, 8 * MIB))
        .unwrap();
    let b = s
        .submit(spec(QosClass::Burstable, 8 * MIB, 32 * MIB))
        .unwrap();
    let pool = s.pool().clone();
    let qa = a.quota();
    let err = pool.allocate(9 * MIB, 1, qa, false).unwrap_err();
    assert!(matches!(err, PoolError::QuotaExceeded { .. }), "{err}");
    assert!(
        err.to_string().contains("task \"guaranteed-8388608\""),
        "{err}"
    );
    let ok = pool.allocate(4 * MIB, 1, qa, false).unwrap();
    // The burstable task grows past its request into free memory.
    let big = pool.allocate(24 * MIB, 1, b.quota(), false).unwrap();
    pool.release(ok).unwrap();
    pool.release(big).unwrap();
}

#[test]
fn burst_never_takes_reserved_memory() {
    let (s, _) = scheduler(64 * MIB);
    let b = s.submit(spec(QosClass::Burstable, 0, 64 * MIB)).unwrap();
    let held = s.pool().allocate(40 * MIB, 1, b.quota(), false).unwrap();
    // 24 MiB left unreserved: a 32 MiB guaranteed task waits.
    let g = s
        .submit(spec(QosClass::Guaranteed, 32 * MIB, 32 * MIB))
        .unwrap();
    assert_eq!(g.state(), TaskState::Pending);
    s.pool().release(held).unwrap();
    let rb = run_next(&s);
    s.finish(&rb, None);
    assert_eq!(g.state(), TaskState::Admitted);
    // With 32 MiB reserved, a burst past the other 32 fails.
    let e = s.submit(spec(QosClass::BestEffort, 0, 64 * MIB)).unwrap();
    let err = s
        .pool()
        .allocate(40 * MIB, 1, e.quota(), false)
        .unwrap_err();
    assert!(matches!(err, PoolError::SharedExhausted { .. }), "{err}");
}

#[test]
fn cancel_and_timeout_end_queued_tasks() {
    let (s, _) = scheduler(10 * MIB);
    let _a = s
        .submit(spec(QosClass::Guaranteed, 10 * MIB, 10 * MIB))
        .unwrap();
    let b = s
        .submit(spec(QosClass::Guaranteed, 5 * MIB, 5 * MIB))
        .unwrap();
    let mut t = spec(QosClass::Guaranteed, 5 * MIB, 5 * MIB);
    t.timeout = Some(Duration::from_millis(20));
    let c = s.submit(t).unwrap();
    assert!(s.cancel(&b));
    assert_eq!(b.state(), TaskState::Cancelled);
    let ra = run_next(&s);
    let start = Instant::now();
    loop {
        match s.next(Duration::from_millis(200)) {
            Next::Ended(t) => {
                assert_eq!(t.id, c.id);
                break;
            }
            Next::Idle => panic!("the timeout never fired"),
            _ => {}
        }
    }
    assert!(start.elapsed() < Duration::from_millis(200));
    assert_eq!(c.outcome(), Some(Outcome::TimedOut));
    assert!(!s.cancel(&ra), "a running task cannot be cancelled");
    s.finish(&ra, None);
    let g = s.stats().classes[0];
    assert_eq!(
        (g.completed, g.cancelled, g.timed_out, g.submitted),
        (1, 1, 1, 3)
    );
}

#[test]
fn pacing_bounds_best_effort_while_guaranteed_runs() {
    let (s, dev) = scheduler(100 * MIB);
    let shared = s.pacer().clone();
    let e = s.submit(spec(QosClass::BestEffort, 0, MIB)).unwrap();
    let re = run_next(&s);
    assert_eq!(re.id, e.id);
    pacer::enter(re.clone(), shared.clone());
    dev.events_complete.store(false, Ordering::SeqCst);
    // No guaranteed work: never paced.
    for _ in 0..5 {
        assert_eq!(pacer::before_launch(1), 0);
        assert_eq!(pacer::after_launch(1), 0);
    }
    assert_eq!(pacer::slice_rows(), 0);
    let g = s.submit(spec(QosClass::Guaranteed, MIB, MIB)).unwrap();
    let rg = run_next(&s);
    assert_eq!(rg.id, g.id);
    assert!(shared.guaranteed_active());
    assert_eq!(pacer::slice_rows(), 256);
    assert_eq!(pacer::before_launch(1), 0);
    assert_eq!(pacer::after_launch(1), 0);
    // One launch in flight, bound 1: the next must wait until its event completes.
    assert_eq!(pacer::before_launch(1), 1);
    let waiter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        dev.events_complete.store(true, Ordering::SeqCst);
    });
    pacer::wait_launch(1);
    waiter.join().unwrap();
    assert!(re.throttled_ns.load(Ordering::Relaxed) >= 10_000_000);
    s.finish(&rg, None);
    dev.events_complete.store(false, Ordering::SeqCst);
    assert_eq!(pacer::before_launch(1), 0, "no guaranteed work left");
    pacer::exit();
    s.finish(&re, None);
    assert_eq!(s.stats().classes[2].kernels, 8);
}

#[test]
fn best_effort_work_in_flight_is_capped_by_expected_duration() {
    // The count bound out of the way: only the cap decides.
    let (table, dev) = host_table(1 << 34);
    let s = Scheduler::new(Arc::new(Pool::new(table)), 100 * MIB, 1000, 256);
    let shared = s.pacer().clone();
    shared.set_cap_ns(1_000_000); // 1 ms of expected work in flight
    s.submit(spec(QosClass::BestEffort, 0, MIB)).unwrap();
    let re = run_next(&s);
    s.submit(spec(QosClass::Guaranteed, MIB, MIB)).unwrap();
    let rg = run_next(&s);
    pacer::enter(re.clone(), shared.clone());
    dev.events_complete.store(false, Ordering::SeqCst);
    // Three 300 us launches fit in 1 ms; a fourth does not.
    pacer::set_expected_ns(300_000);
    for _ in 0..3 {
        assert_eq!(pacer::before_launch(1), 0);
        assert_eq!(pacer::after_launch(1), 0);
    }
    assert_eq!(pacer::before_launch(1), 1);
    // A shorter one still fits beside them.
    pacer::set_expected_ns(50_000);
    assert_eq!(pacer::before_launch(1), 0);
    assert_eq!(pacer::after_launch(1), 0);
    // Kernels of unknown duration (or ones that yield) count only toward the bound.
    pacer::set_expected_ns(0);
    assert_eq!(pacer::before_launch(1), 0);
    // Once the queue drains, one launch longer than the whole cap still goes.
    dev.events_complete.store(true, Ordering::SeqCst);
    pacer::set_expected_ns(5_000_000);
    assert_eq!(pacer::before_launch(1), 0);
    dev.events_complete.store(false, Ordering::SeqCst);
    assert_eq!(pacer::after_launch(1), 0);
    assert_eq!(pacer::before_launch(1), 1, "the long one fills the cap");
    // Without guaranteed work nothing is capped.
    s.finish(&rg, None);
    assert_eq!(pacer::before_launch(1), 0);
    pacer::set_expected_ns(0);
    pacer::exit();
    s.finish(&re, None);
}

#[test]
fn a_preemptible_launch_waits_on_the_host_until_guaranteed_work_ends() {
    let (s, _) = scheduler(100 * MIB);
    pacer::wait_guaranteed_idle(); // no task: at once
    s.submit(spec(QosClass::BestEffort, 0, MIB)).unwrap();
    let re = run_next(&s);
    pacer::enter(re.clone(), s.pacer().clone());
    pacer::wait_guaranteed_idle(); // no guaranteed work: at once
    s.submit(spec(QosClass::Guaranteed, MIB, MIB)).unwrap();
    let rg = run_next(&s);
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            s.finish(&rg, None);
        });
        pacer::wait_guaranteed_idle();
    });
    assert!(start.elapsed() >= Duration::from_millis(20));
    assert!(!s.pacer().guaranteed_active());
    pacer::exit();
    s.finish(&re, None);
}

#[test]
fn preemptible_only_for_best_effort_tasks_of_a_preempting_scheduler() {
    let (s, _) = scheduler(100 * MIB);
    assert!(!pacer::preemptible(), "no task");
    s.submit(spec(QosClass::BestEffort, 0, MIB)).unwrap();
    let re = run_next(&s);
    pacer::enter(re.clone(), s.pacer().clone());
    assert!(!pacer::preemptible(), "preemption off");
    s.pacer().set_preempt(true);
    assert!(pacer::preemptible());
    pacer::exit();
    s.submit(spec(QosClass::Burstable, MIB, MIB)).unwrap();
    let rb = run_next(&s);
    pacer::enter(rb.clone(), s.pacer().clone());
    assert!(!pacer::preemptible(), "burstable work does not yield");
    pacer::exit();
    s.submit(spec(QosClass::Guaranteed, MIB, MIB)).unwrap();
    let rg = run_next(&s);
    pacer::enter(rg.clone(), s.pacer().clone());
    pacer::enter(re.clone(), s.pacer().clone());
    assert!(
        !pacer::preemptible(),
        "inside the thread's own guaranteed task it would wait for that task's word"
    );
    pacer::exit();
    pacer::exit();
    s.finish(&rg, None);
    s.finish(&rb, None);
    s.finish(&re, None);
}

#[test]
fn the_pacer_costs_well_under_a_microsecond_per_launch() {
    // Overhead on the launch path: a thread with no task, and a guaranteed task (`cargo test
    // --release -- --nocapture the_pacer` prints the figures).
    let (s, _) = scheduler(100 * MIB);
    let n = if cfg!(debug_assertions) {
        100_000u32
    } else {
        2_000_000
    };
    let time = |label: &str| {
        let start = Instant::now();
        for i in 0..n {
            std::hint::black_box(pacer::before_launch(u64::from(i)));
            std::hint::black_box(pacer::after_launch(u64::from(i)));
        }
        let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
        println!("pacer overhead per launch ({label}): {ns:.1} ns");
        ns
    };
    let idle = time("no task");
    let g = s.submit(spec(QosClass::Guaranteed, MIB, MIB)).unwrap();
    let rg = run_next(&s);
    pacer::enter(rg.clone(), s.pacer().clone());
    let guaranteed = time("guaranteed task");
    pacer::exit();
    s.finish(&rg, None);
    assert_eq!(g.kernels.load(Ordering::Relaxed), u64::from(n));
    // Well under a microsecond. A debug build (plain `cargo test`) only reports: it is ~50x slower.
    let bound = if cfg!(debug_assertions) {
        20_000.0
    } else {
        200.0
    };
    assert!(
        idle < bound && guaranteed < bound,
        "{idle} ns, {guaranteed} ns"
    );
}

#[test]
fn a_thousand_random_tasks_from_eight_threads_add_up() {
    thousand_random_tasks(false);
}

#[test]
fn a_thousand_random_tasks_with_preemption_active_add_up() {
    thousand_random_tasks(true);
}

/// Workers run tasks as gpukit.Scheduler's do: a guaranteed task holds a preemption word while
/// it runs (with `preempt`), and the task is the thread's current one for the pacer.
fn thousand_random_tasks(preempt: bool) {
    let (s, _) = scheduler(64 * MIB);
    s.pacer().set_preempt(preempt);
    let s = Arc::new(s);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || loop {
                match s.next(Duration::from_millis(50)) {
                    Next::Run(t) => {
                        let guaranteed = t.class() == QosClass::Guaranteed;
                        let slot = (preempt && guaranteed).then(|| s.pacer().slots().take());
                        pacer::enter(t.clone(), s.pacer().clone());
                        assert_eq!(
                            pacer::preemptible(),
                            preempt && t.class() == QosClass::BestEffort
                        );
                        let q = t.quota();
                        let fail = t.id % 7 == 0;
                        if let Ok(b) = s.pool().allocate(t.spec.limit / 2 + 1, 1, q, false) {
                            s.pool().release(b).unwrap();
                        }
                        pacer::exit();
                        if let Some(slot) = slot {
                            s.pacer().slots().give(slot);
                        }
                        s.finish(&t, fail.then(|| "boom".to_string()));
                    }
                    Next::Exit => break,
                    _ => {}
                }
            })
        })
        .collect();
    let submitters: Vec<_> = (0..8u64)
        .map(|k| {
            let s = s.clone();
            std::thread::spawn(move || {
                let mut x = k * 2654435761 + 1;
                let mut tasks = Vec::new();
                for _ in 0..125 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let class = QosClass::ALL[(x % 3) as usize];
                    let request = match class {
                        QosClass::BestEffort => 0,
                        _ => (x >> 8) % (32 * MIB),
                    };
                    let limit = match class {
                        QosClass::Guaranteed => request,
                        _ => request + (x >> 16) % (16 * MIB),
                    };
                    let mut sp = spec(class, request, limit);
                    sp.reject = x % 11 == 0;
                    sp.timeout = (x % 13 == 0).then(|| Duration::from_micros(x % 500));
                    let t = s.submit(sp).unwrap();
                    if x % 17 == 0 {
                        s.cancel(&t);
                    }
                    tasks.push(t);
                }
                tasks
            })
        })
        .collect();
    let tasks: Vec<_> = submitters
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert!(s.wait_idle(Some(Duration::from_secs(30))), "deadlock");
    s.shutdown(false);
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(tasks.len(), 1000);
    assert!(tasks.iter().all(|t| t.state().is_final()));
    let st = s.stats();
    let total: u64 = st.classes.iter().map(|c| c.submitted).sum();
    let finished: u64 = st.classes.iter().map(|c| c.finished()).sum();
    assert_eq!((total, finished), (1000, 1000));
    let failed = tasks
        .iter()
        .filter(|t| t.state() == TaskState::Failed)
        .count() as u64;
    let by_class: u64 = st
        .classes
        .iter()
        .map(|c| c.failed + c.rejected + c.timed_out)
        .sum();
    assert_eq!(failed, by_class);
    let g = s.gauges();
    assert_eq!((g.reserved, g.burst_used), (0, 0));
    assert!(s.pacer().slots().holders().iter().all(|&n| n == 0));
}

#[test]
fn best_effort_memory_spills_before_older_guaranteed_memory() {
    let (s, _) = scheduler(100 * MIB);
    let pool = s.pool().clone();
    pool.set_limit(Some(8 * MIB));
    let g = s
        .submit(spec(QosClass::Guaranteed, 8 * MIB, 8 * MIB))
        .unwrap();
    let e = s.submit(spec(QosClass::BestEffort, 0, 8 * MIB)).unwrap();
    let size = 4 * MIB;
    let older = pool.allocate(size, 1, g.quota(), true).unwrap();
    let newer = pool.allocate(size, 1, e.quota(), true).unwrap();
    pool.device_ptrs(&[newer], 1).unwrap(); // the best-effort buffer is the most recently used
    let extra = pool.allocate(size, 1, None, false).unwrap();
    assert!(
        !pool.is_resident(newer),
        "the best-effort buffer spills first"
    );
    assert!(pool.is_resident(older));
    for id in [older, newer, extra] {
        pool.release(id).unwrap();
    }
}

#[test]
fn a_task_entered_inside_a_quota_is_capped_by_it_and_counted_by_the_scheduler() {
    let (s, _) = scheduler(100 * MIB);
    let pool = s.pool().clone();
    let outer = pool.create_quota(10 * MIB);
    let mut sp = spec(QosClass::Burstable, 4 * MIB, 64 * MIB);
    sp.within = Some(outer);
    let t = s.begin(sp).unwrap();
    assert_eq!(t.state(), TaskState::Running);
    let q = t.quota();
    let err = pool.allocate(12 * MIB, 1, q, false).unwrap_err();
    assert!(
        matches!(err, PoolError::QuotaExceeded { limit, .. } if limit == 10 * MIB),
        "{err}"
    );
    let a = pool.allocate(6 * MIB, 1, q, false).unwrap();
    assert_eq!(pool.quota_usage(outer).unwrap().1, 6 * MIB);
    assert_eq!(
        s.gauges().burst_used,
        2 * MIB,
        "beyond its 4 MiB reservation"
    );
    s.finish(&t, None);
    // Its result outlives it: charged to the unreserved memory, no longer to the quota.
    assert_eq!(pool.quota_usage(outer).unwrap().1, 0);
    assert_eq!(s.gauges().burst_used, 6 * MIB);
    pool.release(a).unwrap();
    assert_eq!(s.gauges().burst_used, 0);
}

#[test]
fn a_task_entered_inside_a_task_only_narrows_it() {
    let (s, _) = scheduler(100 * MIB);
    let pool = s.pool().clone();
    let outer = s
        .begin(spec(QosClass::Guaranteed, 16 * MIB, 16 * MIB))
        .unwrap();
    let mut sp = spec(QosClass::BestEffort, 0, 64 * MIB);
    sp.within = outer.quota();
    let inner = s.begin(sp).unwrap();
    let err = pool
        .allocate(20 * MIB, 1, inner.quota(), false)
        .unwrap_err();
    assert!(err.to_string().contains("guaranteed-16777216"), "{err}");
    let a = pool.allocate(10 * MIB, 1, inner.quota(), false).unwrap();
    // The outer task sees the bytes against its limit; the scheduler counts them once.
    assert_eq!(
        pool.quota_usage(outer.quota().unwrap()).unwrap().1,
        10 * MIB
    );
    assert_eq!(s.gauges().burst_used, 10 * MIB);
    let b = pool.allocate(6 * MIB, 1, outer.quota(), false).unwrap();
    assert!(
        pool.allocate(MIB, 1, inner.quota(), false).is_err(),
        "16 MiB held"
    );
    s.finish(&inner, None);
    s.finish(&outer, None);
    for id in [a, b] {
        pool.release(id).unwrap();
    }
    let g = s.gauges();
    assert_eq!((g.reserved, g.burst_used), (0, 0));
}

#[test]
fn a_task_of_another_scheduler_is_left_alone() {
    let (s, _) = scheduler(100 * MIB);
    let (other, _) = scheduler(100 * MIB);
    let t = s.submit(spec(QosClass::Guaranteed, MIB, MIB)).unwrap();
    assert!(!other.cancel(&t));
    let running = run_next(&s);
    other.finish(&running, None);
    assert_eq!(running.state(), TaskState::Running);
    s.finish(&running, None);
    assert_eq!(running.state(), TaskState::Completed);
    assert_eq!(other.gauges().reserved, 0);
}

#[test]
fn waits_too_long_to_represent_mean_no_deadline() {
    let (s, _) = scheduler(10 * MIB);
    let _held = s
        .submit(spec(QosClass::Guaranteed, 10 * MIB, 10 * MIB))
        .unwrap();
    let mut sp = spec(QosClass::Guaranteed, MIB, MIB);
    sp.timeout = Some(Duration::MAX);
    let t = s.submit(sp).unwrap();
    assert_eq!(t.deadline, None);
    assert!(!s.wait_idle(Some(Duration::from_millis(1))));
    assert!(!s.wait_idle(Some(Duration::ZERO)));
    // A worker with a huge wait returns as soon as there is work.
    assert!(matches!(s.next(Duration::MAX), Next::Run(_)));
}

#[test]
fn begin_in_two_steps_waits_only_while_pending() {
    let (s, _) = scheduler(64 * MIB);
    // Fits at once: admitted by the first step, running after the second (which does not wait).
    let a = s
        .queue_inline(spec(QosClass::Guaranteed, 48 * MIB, 48 * MIB))
        .unwrap();
    assert_eq!(a.state(), TaskState::Admitted);
    let a = s.await_begin(a);
    assert_eq!(a.state(), TaskState::Running);
    assert!(s.pacer().guaranteed_active());
    // Does not fit: pending after the first step; the second waits until `a` ends.
    let b = s
        .queue_inline(spec(QosClass::Guaranteed, 32 * MIB, 32 * MIB))
        .unwrap();
    assert_eq!(b.state(), TaskState::Pending);
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| s.await_begin(b.clone()));
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(b.state(), TaskState::Pending);
        s.finish(&a, None);
        assert_eq!(waiter.join().unwrap().state(), TaskState::Running);
    });
    s.finish(&b, None);
    assert!(!s.pacer().guaranteed_active());
    // Rejected by the first step: ended, and the second returns it as it is.
    let mut sp = spec(QosClass::Guaranteed, 128 * MIB, 128 * MIB);
    sp.reject = true;
    assert!(s.queue_inline(sp).is_err()); // larger than the capacity
    let held = s
        .begin(spec(QosClass::Guaranteed, 48 * MIB, 48 * MIB))
        .unwrap();
    let mut sp = spec(QosClass::Guaranteed, 32 * MIB, 32 * MIB);
    sp.reject = true;
    let r = s.queue_inline(sp).unwrap();
    assert_eq!(r.state(), TaskState::Failed);
    assert_eq!(s.await_begin(r).state(), TaskState::Failed);
    s.finish(&held, None);
}
