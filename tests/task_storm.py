"""1000 random tasks from 8 threads through a gpukit.Scheduler (random classes, memory, limits,
timeouts, admission modes, failures and cancellations): what the scheduler tests run with and
without preemption, and the bookkeeping every such run must end with."""

import concurrent.futures
import random
import threading

import gpukit as gk

MiB = 2**20
THREADS, PER_THREAD = 8, 125


def run_storm(s, work, work_args):
    """Submits THREADS * PER_THREAD tasks of `work(*work_args(r, qos), fail)` (r: the thread's
    random.Random) from THREADS threads, waits for all, shuts `s` down and checks the counts;
    returns (futures, stats, kinds of the exceptions raised)."""
    outcomes = []

    def submitter(seed):
        r = random.Random(seed)
        futures = []
        for i in range(PER_THREAD):
            qos = r.choice(("guaranteed", "burstable", "best_effort"))
            memory = r.randrange(1, 16) * MiB
            fut = s.submit(
                work,
                *work_args(r, qos),
                r.random() < 0.1,
                qos=qos,
                memory=memory,
                limit=None if qos == "guaranteed" else memory + r.randrange(0, 16) * MiB,
                name=f"t{seed}-{i}",
                timeout=r.choice((None, None, None, 0.001, 0.5)),
                admission=r.choice(("wait",) * 5 + ("reject",)),
            )
            if r.random() < 0.05:
                fut.cancel()
            futures.append(fut)
        outcomes.extend(futures)

    threads = [threading.Thread(target=submitter, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    total = THREADS * PER_THREAD
    _, not_done = concurrent.futures.wait(outcomes, timeout=120)
    assert len(outcomes) == total and not not_done, "deadlock: tasks never finished"
    s.shutdown(wait=True)
    stats = s.stats()
    classes = [stats[q] for q in gk.scheduler.QOS_CLASSES]
    assert sum(c["submitted"] for c in classes) == total
    assert sum(c["finished"] for c in classes) == total
    results = [f for f in outcomes if not f.cancelled() and f.exception() is None]
    assert sum(c["completed"] for c in classes) == len(results)
    kinds = [type(f.exception()) for f in outcomes if not f.cancelled() and f.exception()]
    assert sum(c["pending"] + c["admitted"] + c["running"] for c in classes) == 0
    return outcomes, stats, kinds
