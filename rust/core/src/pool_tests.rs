use std::sync::Arc;

use crate::pool::{Pool, PoolError};
use crate::test_table::host_table;

#[test]
fn a_released_block_is_reused_for_the_same_class() {
    let (table, dev) = host_table(1 << 20);
    let pool = Pool::new(table);
    let a = pool.allocate(1000).unwrap();
    let ptr = a.ptr;
    pool.release(a);
    let b = pool.allocate(1020).unwrap();
    assert_eq!(b.ptr, ptr);
    let s = pool.stats();
    assert_eq!(
        (s.allocations, s.cache_hits, s.backend_allocations),
        (2, 1, 1)
    );
    assert_eq!(s.allocated, 1024);
    assert_eq!(dev.live_bytes(), 1024);
    pool.release(b);
    pool.empty_cache().unwrap();
    assert_eq!(dev.live_bytes(), 0);
    assert_eq!(pool.stats().reserved, 0);
}

#[test]
fn out_of_memory_frees_the_cache_and_retries() {
    let (table, _) = host_table(4096);
    let pool = Pool::new(table);
    let small = pool.allocate(2048).unwrap();
    pool.release(small); // cached: 2048 of the 4096 bytes
    let big = pool.allocate(4096).unwrap();
    assert_eq!(pool.cached_bytes(), 0);
    match pool.allocate(512) {
        Err(PoolError::OutOfMemory {
            requested,
            allocated,
            reserved,
            backend,
        }) => {
            assert_eq!((requested, allocated, reserved), (512, 4096, 4096));
            assert_eq!(backend.name, "TEST_OUT_OF_MEMORY");
        }
        other => panic!("expected out of memory, got {other:?}"),
    }
    pool.release(big);
    assert!(pool.allocate(512).is_ok(), "the pool stays usable");
}

#[test]
fn threads_never_share_a_live_block() {
    let (table, dev) = host_table(1 << 30);
    let pool = Arc::new(Pool::new(table));
    let workers: Vec<_> = (0..8u64)
        .map(|t| {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let mut held = Vec::new();
                for i in 0..2000u64 {
                    let n = (i * 7919 + t * 104729) % 20000;
                    let b = pool.allocate(n).unwrap();
                    // Stamp the block; if anyone else held it, the stamp check below would fail.
                    // SAFETY: the block is at least 512 bytes of live host memory we own.
                    unsafe { std::ptr::write_bytes(b.ptr as *mut u8, t as u8, b.size as usize) };
                    held.push(b);
                    if i % 3 == 0 {
                        let b = held.swap_remove((i as usize * 31) % held.len());
                        // SAFETY: as above.
                        let bytes = unsafe {
                            std::slice::from_raw_parts(b.ptr as *const u8, b.size as usize)
                        };
                        assert!(bytes.iter().all(|&x| x == t as u8));
                        pool.release(b);
                    }
                }
                held.into_iter().for_each(|b| pool.release(b));
            })
        })
        .collect();
    workers.into_iter().for_each(|w| w.join().unwrap());
    let s = pool.stats();
    assert_eq!(s.allocated, 0);
    assert_eq!(s.reserved, dev.live_bytes());
    assert_eq!(s.allocations, 8 * 2000);
    pool.empty_cache().unwrap();
    assert_eq!(dev.live_bytes(), 0);
}
