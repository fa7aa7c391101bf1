use std::sync::atomic::Ordering;

use crate::capture;
use crate::pool::{Pool, PoolError};
use crate::sched::pacer;
use crate::test_table::host_table;

const S1: u64 = 1;
const S2: u64 = 2;
const CAPTURE: u64 = 7;

fn ptr(pool: &Pool, id: u64, stream: u64) -> u64 {
    pool.device_ptrs(&[id], stream).unwrap()[0]
}

#[test]
fn memory_released_during_capture_stays_with_the_graph() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    let graph = pool.begin_capture(CAPTURE).unwrap();
    let temp = pool.allocate(3 << 20, CAPTURE, None, false).unwrap();
    let p = ptr(&pool, temp, CAPTURE);
    pool.release(temp).unwrap();
    // The capture's later work may reuse it (stream order), ...
    let again = pool.allocate(3 << 20, CAPTURE, None, false).unwrap();
    assert_eq!(ptr(&pool, again, CAPTURE), p);
    pool.release(again).unwrap();
    assert_eq!(pool.end_capture().unwrap(), graph);
    assert_eq!(pool.stats().graph_held, 3 << 20);
    assert_eq!(pool.graph_held_bytes(graph).unwrap(), 3 << 20);
    // ... nothing else may, on any stream, while the graph lives.
    let other = pool.allocate(3 << 20, CAPTURE, None, false).unwrap();
    assert_ne!(ptr(&pool, other, CAPTURE), p);
    pool.release(other).unwrap();
    pool.release_graph(graph, S1).unwrap();
    assert_eq!(pool.stats().graph_held, 0);
    // Back in the cache, as freed on the stream the graph last ran on.
    let after = pool.allocate(3 << 20, S1, None, false).unwrap();
    assert_eq!(ptr(&pool, after, S1), p);
}

#[test]
fn buffers_a_graph_uses_are_held_after_their_release() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    let input = pool.allocate(2 << 20, S1, None, true).unwrap();
    let p = ptr(&pool, input, S1);
    let graph = pool.begin_capture(CAPTURE).unwrap();
    ptr(&pool, input, CAPTURE); // the captured work reads it
    pool.end_capture().unwrap();
    assert!(
        !pool.spill(input).unwrap(),
        "a graph's buffer is never spilled"
    );
    pool.release(input).unwrap();
    let other = pool.allocate(2 << 20, S1, None, false).unwrap();
    assert_ne!(ptr(&pool, other, S1), p);
    pool.release_graph(graph, S1).unwrap();
    pool.release(other).unwrap();
    let mut seen = Vec::new();
    for _ in 0..2 {
        let id = pool.allocate(2 << 20, S1, None, false).unwrap();
        seen.push(ptr(&pool, id, S1));
    }
    assert!(
        seen.contains(&p),
        "the block came back after the graph went"
    );
}

#[test]
fn a_block_two_graphs_hold_waits_for_both() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    let shared = pool.allocate(2 << 20, S1, None, false).unwrap();
    let p = ptr(&pool, shared, S1);
    let mut graphs = Vec::new();
    for _ in 0..2 {
        graphs.push(pool.begin_capture(CAPTURE).unwrap());
        ptr(&pool, shared, CAPTURE);
        pool.end_capture().unwrap();
    }
    pool.release(shared).unwrap();
    pool.release_graph(graphs[0], S1).unwrap();
    let a = pool.allocate(2 << 20, S1, None, false).unwrap();
    assert_ne!(ptr(&pool, a, S1), p);
    pool.release_graph(graphs[1], S1).unwrap();
    let b = pool.allocate(2 << 20, S1, None, false).unwrap();
    assert_eq!(ptr(&pool, b, S1), p);
    assert_eq!(pool.stats().graph_held, 0);
}

#[test]
fn a_capture_queries_no_events_gives_nothing_back_and_spills_nothing() {
    let (table, dev) = host_table(8 << 20);
    let pool = Pool::new(table);
    pool.set_limit(Some(8 << 20));
    // A block freed on another stream waits for a fence; an evictable buffer could be spilled.
    let evictable = pool.allocate(4 << 20, S2, None, true).unwrap();
    let waiting = pool.allocate(4 << 20, S2, None, false).unwrap();
    pool.release(waiting).unwrap();
    dev.events_complete.store(false, Ordering::SeqCst);
    let queries = dev.queries.load(Ordering::SeqCst);
    pool.begin_capture(CAPTURE).unwrap();
    assert!(capture::active());
    let err = pool.allocate(4 << 20, CAPTURE, None, false).unwrap_err();
    assert!(
        matches!(&err, PoolError::OutOfMemory { reason, .. } if reason.contains("capture")),
        "{err}"
    );
    assert_eq!(
        dev.queries.load(Ordering::SeqCst),
        queries,
        "no event query"
    );
    assert!(pool.is_resident(evictable), "nothing spilled");
    pool.end_capture().unwrap();
    assert!(!capture::active());
    dev.events_complete.store(true, Ordering::SeqCst);
    // Outside the capture the same request makes room as usual.
    assert!(pool.allocate(4 << 20, S1, None, false).is_ok());
}

#[test]
fn a_spilled_buffer_is_not_restored_inside_a_capture() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    let a = pool.allocate(1 << 20, S1, None, true).unwrap();
    assert!(pool.spill(a).unwrap());
    pool.begin_capture(CAPTURE).unwrap();
    let err = pool.device_ptrs(&[a], CAPTURE).unwrap_err();
    assert!(matches!(err, PoolError::Capture(_)), "{err}");
    assert!(!pool.is_resident(a));
    pool.end_capture().unwrap();
    assert!(pool.device_ptrs(&[a], S1).is_ok());
}

#[test]
fn capture_misuse_is_refused() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    assert!(matches!(pool.end_capture(), Err(PoolError::Capture(_))));
    let graph = pool.begin_capture(CAPTURE).unwrap();
    assert!(matches!(
        pool.begin_capture(CAPTURE),
        Err(PoolError::Capture(_))
    ));
    assert!(matches!(
        pool.release_graph(graph, S1),
        Err(PoolError::Capture(_))
    ));
    pool.end_capture().unwrap();
    pool.release_graph(graph, S1).unwrap();
    assert!(matches!(
        pool.release_graph(graph, S1),
        Err(PoolError::UnknownGraph(_))
    ));
}

#[test]
fn pacing_is_off_while_capturing() {
    let (table, _) = host_table(1 << 30);
    let pool = Pool::new(table);
    pool.begin_capture(CAPTURE).unwrap();
    assert_eq!(pacer::before_launch(CAPTURE), 0);
    assert_eq!(pacer::after_launch(CAPTURE), 0);
    assert_eq!(pacer::slice_rows(), 0);
    pool.end_capture().unwrap();
}

#[test]
fn another_thread_is_not_capturing() {
    let (table, _) = host_table(1 << 30);
    let pool = std::sync::Arc::new(Pool::new(table));
    let graph = pool.begin_capture(CAPTURE).unwrap();
    let other = pool.clone();
    let (held, id) = std::thread::spawn(move || {
        let id = other.allocate(1 << 20, S1, None, true).unwrap();
        let ptr = other.device_ptrs(&[id], S1).unwrap()[0];
        (other.capturing() || capture::active(), (id, ptr))
    })
    .join()
    .unwrap();
    assert!(!held);
    pool.end_capture().unwrap();
    // Its buffer is not the graph's: it spills as usual.
    assert!(pool.spill(id.0).unwrap());
    pool.release_graph(graph, S1).unwrap();
}
