use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::pool::{BufferId, Pool, PoolError, SEGMENT};
use crate::test_table::host_table;

const S1: u64 = 1;
const S2: u64 = 2;

fn write(ptr: u64, bytes: &[u8]) {
    // SAFETY: test pointers are live host blocks of at least bytes.len().
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr as *mut u8, bytes.len()) };
}

fn read(ptr: u64, len: usize) -> Vec<u8> {
    // SAFETY: as in write().
    unsafe { std::slice::from_raw_parts(ptr as *const u8, len).to_vec() }
}

fn ptr(pool: &Pool, id: BufferId, stream: u64) -> u64 {
    pool.device_ptrs(&[id], stream).unwrap()[0]
}

#[test]
fn a_released_block_is_reused_on_its_stream() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    let a = pool.allocate(3 << 20, S1, None, false).unwrap();
    let p = ptr(&pool, a, S1);
    pool.release(a).unwrap();
    let b = pool.allocate((3 << 20) - 100, S1, None, false).unwrap();
    assert_eq!(ptr(&pool, b, S1), p);
    let s = pool.stats();
    assert_eq!(
        (s.allocations, s.cache_hits, s.backend_allocations),
        (2, 1, 1)
    );
}

#[test]
fn small_blocks_share_segments() {
    let (table, dev) = host_table(1 << 30);
    let pool = Pool::new(table);
    let ids: Vec<_> = (0..1000)
        .map(|_| pool.allocate(1000, S1, None, false).unwrap())
        .collect();
    let s = pool.stats();
    assert_eq!(
        s.backend_allocations, 1,
        "2048 slots of 1 KiB fit one segment"
    );
    assert_eq!(s.reserved, SEGMENT);
    assert_eq!(s.allocated, 1000 * 1024);
    assert_eq!(dev.live_bytes(), SEGMENT);
    let ptrs = pool.device_ptrs(&ids, S1).unwrap();
    let mut sorted = ptrs.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 1000, "every slot is distinct");
    // One live slot keeps the segment; once all are free, it goes back.
    for &id in &ids[1..] {
        pool.release(id).unwrap();
    }
    pool.empty_cache().unwrap();
    assert_eq!(dev.live_bytes(), SEGMENT);
    pool.release(ids[0]).unwrap();
    pool.empty_cache().unwrap();
    assert_eq!(dev.live_bytes(), 0);
    assert_eq!(pool.stats().reserved, 0);
}

#[test]
fn another_stream_waits_for_the_free_event() {
    let (table, dev) = host_table(1 << 30);
    let pool = Pool::new(table);
    let warm = pool.allocate(4 << 20, S2, None, false).unwrap(); // a second stream is in use
    pool.release(warm).unwrap();
    pool.empty_cache().unwrap();
    let a = pool.allocate(4 << 20, S1, None, false).unwrap();
    let pa = ptr(&pool, a, S1);
    dev.events_complete.store(false, Ordering::SeqCst); // work on S1 still running
    pool.release(a).unwrap();
    let b = pool.allocate(4 << 20, S2, None, false).unwrap();
    assert_ne!(
        ptr(&pool, b, S2),
        pa,
        "not reused while S1's work may still read it"
    );
    let c = pool.allocate(4 << 20, S1, None, false).unwrap();
    assert_eq!(
        ptr(&pool, c, S1),
        pa,
        "reused at once on the stream it was freed on"
    );
    pool.release(c).unwrap();
    dev.events_complete.store(true, Ordering::SeqCst);
    let d = pool.allocate(4 << 20, S2, None, false).unwrap();
    assert_eq!(
        ptr(&pool, d, S2),
        pa,
        "reused on S2 once the event completed"
    );
}

#[test]
fn the_limit_frees_cache_then_fails_with_the_numbers() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    pool.set_limit(Some(8 << 20));
    let a = pool.allocate(5 << 20, S1, None, false).unwrap();
    pool.release(a).unwrap(); // 5 MiB cached
    let b = pool.allocate(6 << 20, S1, None, false).unwrap(); // needs the cache freed
    assert_eq!(pool.cached_bytes(), 0);
    match pool.allocate(3 << 20, S1, None, false) {
        Err(PoolError::OutOfMemory {
            requested,
            allocated,
            reserved,
            limit,
            reason,
        }) => {
            assert_eq!(
                (requested, allocated, reserved),
                (3 << 20, 6 << 20, 6 << 20)
            );
            assert_eq!(limit, Some(8 << 20));
            assert_eq!(reason, "over the pool limit");
        }
        other => panic!("expected out of memory, got {other:?}"),
    }
    pool.release(b).unwrap();
    assert!(
        pool.allocate(3 << 20, S1, None, false).is_ok(),
        "usable after"
    );
}

#[test]
fn the_device_running_out_is_an_error_with_its_name() {
    let (table, _) = host_table(4 << 20);
    let pool = Pool::new(table);
    let _a = pool.allocate(3 << 20, S1, None, false).unwrap();
    match pool.allocate(3 << 20, S1, None, false) {
        Err(PoolError::OutOfMemory { reason, .. }) => {
            assert!(reason.contains("TEST_OUT_OF_MEMORY"))
        }
        other => panic!("expected out of memory, got {other:?}"),
    }
}

#[test]
fn quotas_fail_only_their_own_allocations() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    let q = pool.create_quota(4 << 20);
    let a = pool.allocate(3 << 20, S1, Some(q), false).unwrap();
    assert_eq!(pool.quota_usage(q), Some((4 << 20, 3 << 20)));
    assert!(matches!(
        pool.allocate(2 << 20, S1, Some(q), false),
        Err(PoolError::QuotaExceeded { used, limit, .. }) if used == 3 << 20 && limit == 4 << 20
    ));
    assert!(
        pool.allocate(2 << 20, S1, None, false).is_ok(),
        "others are unaffected"
    );
    pool.release(a).unwrap();
    assert_eq!(pool.quota_usage(q), Some((4 << 20, 0)));
    assert!(pool.allocate(4 << 20, S1, Some(q), false).is_ok());
}

#[test]
fn evictable_buffers_spill_least_recently_used_first_and_come_back_exact() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    pool.set_limit(Some(12 << 20));
    let size = 4 << 20;
    let ids: Vec<_> = (0..3u8)
        .map(|i| {
            let id = pool.allocate(size, S1, None, true).unwrap();
            write(ptr(&pool, id, S1), &vec![i + 1; size as usize]);
            id
        })
        .collect();
    ptr(&pool, ids[0], S1); // ids[1] is now the least recently used
    let extra = pool.allocate(size, S1, None, false).unwrap();
    assert!(!pool.is_resident(ids[1]));
    assert!(pool.is_resident(ids[0]) && pool.is_resident(ids[2]));
    let s = pool.stats();
    assert_eq!(
        (s.evictions, s.spilled_bytes, s.spilled_now),
        (1, size, size)
    );
    // Using it restores it (spilling another), bit-exact.
    let p = ptr(&pool, ids[1], S1);
    assert_eq!(read(p, size as usize), vec![2u8; size as usize]);
    assert_eq!(pool.stats().restores, 1);
    pool.release(extra).unwrap();
    for (i, &id) in ids.iter().enumerate() {
        assert_eq!(
            read(ptr(&pool, id, S1), size as usize),
            vec![i as u8 + 1; size as usize]
        );
    }
}

#[test]
fn one_call_never_spills_its_own_buffers() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    pool.set_limit(Some(8 << 20));
    let size = 4 << 20;
    let a = pool.allocate(size, S1, None, true).unwrap();
    let b = pool.allocate(size, S1, None, true).unwrap();
    pool.spill(a).unwrap();
    pool.spill(b).unwrap();
    let c = pool.allocate(size, S1, None, true).unwrap();
    let d = pool.allocate(size, S1, None, true).unwrap();
    ptr(&pool, d, S1); // c is least recently used, a and b are spilled
    let ptrs = pool.device_ptrs(&[a, b], S1).unwrap();
    assert!(pool.is_resident(a) && pool.is_resident(b));
    assert!(!pool.is_resident(c) && !pool.is_resident(d));
    assert_ne!(ptrs[0], ptrs[1]);
    // Three at once cannot fit under the limit: a clear error, nothing lost.
    assert!(matches!(
        pool.device_ptrs(&[a, b, c], S1),
        Err(PoolError::OutOfMemory { .. })
    ));
    assert!(pool.device_ptrs(&[c], S1).is_ok());
}

#[test]
fn random_work_from_threads_keeps_every_invariant() {
    let (table, dev) = host_table(1 << 40);
    let pool = Arc::new(Pool::new(table));
    pool.set_limit(Some(48 << 20));
    // What each live buffer must hold: (stamp byte, length written).
    let expected: Arc<Mutex<HashMap<BufferId, (u8, usize)>>> = Arc::default();
    let workers: Vec<_> = (0..8u64)
        .map(|t| {
            let (pool, expected) = (pool.clone(), expected.clone());
            std::thread::spawn(move || {
                let mut rng = t * 2654435761 + 1;
                let mut next = move || {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng
                };
                let stream = 1 + t % 3;
                let mut mine: Vec<BufferId> = Vec::new();
                for _ in 0..400 {
                    match next() % 5 {
                        0 | 1 => {
                            let len = (next() % (3 << 20)) as usize + 1;
                            let evictable = next() % 4 != 0;
                            let Ok(id) = pool.allocate(len as u64, stream, None, evictable) else {
                                continue; // over the limit with everything pinned: allowed
                            };
                            let stamp = (next() % 250) as u8 + 1;
                            let p = pool
                                .device_ptrs(&[id], stream)
                                .expect("a new buffer is pinned");
                            write(p[0], &vec![stamp; len]);
                            expected.lock().unwrap().insert(id, (stamp, len));
                            mine.push(id);
                        }
                        2 if !mine.is_empty() => {
                            let id = mine.swap_remove(next() as usize % mine.len());
                            expected.lock().unwrap().remove(&id);
                            pool.release(id).unwrap();
                        }
                        3 if !mine.is_empty() => {
                            let id = mine[next() as usize % mine.len()];
                            let (stamp, len) = expected.lock().unwrap()[&id];
                            if let Ok(p) = pool.device_ptrs(&[id], stream) {
                                let data = read(p[0], len);
                                assert!(data.iter().all(|&x| x == stamp), "data intact");
                            }
                        }
                        _ if !mine.is_empty() => {
                            let _ = pool.spill(mine[next() as usize % mine.len()]);
                        }
                        _ => {}
                    }
                }
                for id in mine {
                    expected.lock().unwrap().remove(&id);
                    pool.release(id).unwrap();
                }
            })
        })
        .collect();
    workers.into_iter().for_each(|w| w.join().unwrap());
    let s = pool.stats();
    assert_eq!(s.allocated, 0);
    assert_eq!(s.spilled_now, 0);
    assert_eq!(s.reserved, dev.live_bytes());
    assert!(
        s.peak_reserved <= 48 << 20,
        "the limit held: {}",
        s.peak_reserved
    );
    pool.empty_cache().unwrap();
    assert_eq!(dev.live_bytes(), 0);
}

#[test]
fn event_queries_run_with_no_pool_lock_held() {
    // A query that calls back into the pool would deadlock if any pool lock were held.
    let (table, dev) = host_table(1 << 30);
    let pool = Arc::new(Pool::new(table));
    let weak = Arc::downgrade(&pool);
    *dev.on_query.lock().unwrap() = Some(Box::new(move || {
        if let Some(pool) = weak.upgrade() {
            let _ = (pool.stats(), pool.cached_bytes(), pool.quota_usage(1));
        }
    }));
    let done = std::sync::mpsc::channel();
    let worker = {
        let pool = pool.clone();
        std::thread::spawn(move || {
            let a = pool.allocate(4 << 20, S1, None, false).unwrap();
            let pa = ptr(&pool, a, S1);
            pool.release(a).unwrap();
            // Another stream misses its own lists: the block freed on S1 is fenced and queried.
            let b = pool.allocate(4 << 20, S2, None, false).unwrap();
            let reused = ptr(&pool, b, S2) == pa;
            done.0.send(reused).unwrap();
        })
    };
    let reused = done
        .1
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("an event query waited for a pool lock");
    worker.join().unwrap();
    assert!(
        dev.queries.load(Ordering::SeqCst) > 0,
        "the fence was queried"
    );
    assert!(reused, "reused on S2 once S1's fence completed");
    *dev.on_query.lock().unwrap() = None;
}

#[test]
fn a_fence_covers_only_blocks_freed_before_it() {
    let (table, dev) = host_table(1 << 30);
    let pool = Pool::new(table);
    let a = pool.allocate(4 << 20, S1, None, false).unwrap();
    let pa = ptr(&pool, a, S1);
    pool.release(a).unwrap();
    dev.events_complete.store(false, Ordering::SeqCst);
    let b = pool.allocate(4 << 20, S2, None, false).unwrap(); // fences S1, still running
    assert_ne!(ptr(&pool, b, S2), pa);
    dev.events_complete.store(true, Ordering::SeqCst);
    let c = pool.allocate(4 << 20, S2, None, false).unwrap(); // the fence completed
    assert_eq!(ptr(&pool, c, S2), pa);
}

#[test]
fn the_spill_victim_is_the_least_recently_used_of_all_threads() {
    let (table, _) = host_table(1 << 30);
    let pool = Arc::new(Pool::new(table));
    let size = 4 << 20;
    pool.set_limit(Some(4 * size));
    // Four evictable buffers, each made by its own thread (so each lives in another shard).
    let ids: Vec<BufferId> = (0..4)
        .map(|_| {
            let pool = pool.clone();
            std::thread::spawn(move || pool.allocate(size, S1, None, true).unwrap())
                .join()
                .unwrap()
        })
        .collect();
    for &i in &[2, 0, 3, 1] {
        ptr(&pool, ids[i], S1); // use order: 2, 0, 3, 1
    }
    let mut extras = Vec::new();
    for expected in [2, 0, 3] {
        let resident_before: Vec<bool> = ids.iter().map(|&id| pool.is_resident(id)).collect();
        extras.push(pool.allocate(size, S1, None, false).unwrap());
        let spilled: Vec<usize> = (0..4)
            .filter(|&i| resident_before[i] && !pool.is_resident(ids[i]))
            .collect();
        assert_eq!(spilled, vec![expected]);
    }
    assert!(pool.is_resident(ids[1]));
}

#[test]
fn impossible_sizes_are_out_of_memory_not_a_panic() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    for n in [u64::MAX, u64::MAX - 511, 1 << 63, (1 << 62) + 1] {
        match pool.allocate(n, S1, None, false) {
            Err(PoolError::OutOfMemory { requested, .. }) => assert_eq!(requested, n),
            other => panic!("{n}: expected out of memory, got {other:?}"),
        }
    }
    // The largest request that passes the size check only fails at the backend.
    assert!(matches!(
        pool.allocate(1 << 62, S1, None, false),
        Err(PoolError::OutOfMemory { .. })
    ));
    assert_eq!(pool.stats().allocated, 0);
}

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer; the clock id is a constant the kernel knows.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Alloc + free of 1 MiB from 1 and from 8 threads at once, on the host table (`cargo test
/// --release -p gpukit-core -- --nocapture eight_threads` prints the figures). Per call (an
/// allocation or a free), best of five rounds: the wall time of the slowest thread, and the CPU
/// time the threads spent (where fewer cores than threads are free, the wall time includes
/// waiting for a core; the CPU time does not, and grows only with contention). Checks that
/// everything comes back; timings are only reported.
#[test]
fn eight_threads_allocate_and_free_at_once() {
    let (table, dev) = host_table(1 << 40);
    let pool = Arc::new(Pool::new(table));
    let iters: u32 = if cfg!(debug_assertions) { 500 } else { 200_000 };
    let mut calls = 0u64;
    for threads in [1u64, 8] {
        let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..5 {
            let start = Arc::new(std::sync::Barrier::new(threads as usize));
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let (pool, start) = (pool.clone(), start.clone());
                    std::thread::spawn(move || {
                        let warm = pool.allocate(1 << 20, S1, None, false).unwrap();
                        pool.release(warm).unwrap();
                        start.wait();
                        let (t, c) = (std::time::Instant::now(), thread_cpu_ns());
                        for _ in 0..iters {
                            let id = pool.allocate(1 << 20, S1, None, false).unwrap();
                            pool.release(id).unwrap();
                        }
                        let calls = 2.0 * f64::from(iters);
                        let wall = t.elapsed().as_nanos() as f64 / calls;
                        (wall, (thread_cpu_ns() - c) as f64 / calls)
                    })
                })
                .collect();
            let times: Vec<(f64, f64)> = workers.into_iter().map(|w| w.join().unwrap()).collect();
            wall = wall.min(times.iter().map(|t| t.0).fold(0.0, f64::max));
            cpu = cpu.min(times.iter().map(|t| t.1).sum::<f64>() / threads as f64);
            calls += threads * (u64::from(iters) + 1);
        }
        println!(
            "alloc+free 1 MiB, {threads} thread(s) at once: {wall:.0} ns wall, {cpu:.0} ns CPU \
             per call ({} cores here)",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
    }
    let s = pool.stats();
    assert_eq!(s.allocated, 0);
    assert_eq!(s.allocations, calls);
    pool.empty_cache().unwrap();
    assert_eq!(dev.live_bytes(), 0);
}
