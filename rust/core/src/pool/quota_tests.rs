//! Quotas opened inside other quotas: they only narrow them, and every byte stays counted.

use crate::pool::{Pool, PoolError, QuotaSpec};
use crate::test_table::host_table;

const MIB: u64 = 1 << 20;
const S: u64 = 1;

fn pool() -> Pool {
    Pool::new(host_table(1 << 34).0)
}

#[test]
fn a_nested_quota_is_charged_to_the_one_outside_it() {
    let pool = pool();
    let outer = pool.create_quota(8 * MIB);
    let inner = pool.create_nested_quota(16 * MIB, outer).unwrap();
    let a = pool.allocate(6 * MIB, S, Some(inner), false).unwrap();
    assert_eq!(pool.quota_usage(inner), Some((16 * MIB, 6 * MIB)));
    assert_eq!(pool.quota_usage(outer), Some((8 * MIB, 6 * MIB)));
    // The inner quota has room; the outer one has not.
    match pool.allocate(4 * MIB, S, Some(inner), false) {
        Err(PoolError::QuotaExceeded { used, limit, .. }) => {
            assert_eq!((used, limit), (6 * MIB, 8 * MIB))
        }
        other => panic!("expected the outer quota to refuse, got {other:?}"),
    }
    assert_eq!(
        pool.quota_usage(inner),
        Some((16 * MIB, 6 * MIB)),
        "nothing charged"
    );
    // Leaving the inner quota keeps its buffer counted outside.
    pool.drop_quota(inner);
    assert_eq!(pool.quota_usage(outer), Some((8 * MIB, 6 * MIB)));
    pool.release(a).unwrap();
    assert_eq!(pool.quota_usage(outer), Some((8 * MIB, 0)));
}

#[test]
fn a_narrower_nested_quota_fails_first() {
    let pool = pool();
    let outer = pool.create_quota(64 * MIB);
    let inner = pool.create_nested_quota(2 * MIB, outer).unwrap();
    assert!(matches!(
        pool.allocate(3 * MIB, S, Some(inner), false),
        Err(PoolError::QuotaExceeded { limit, .. }) if limit == 2 * MIB
    ));
    assert_eq!(pool.quota_usage(outer), Some((64 * MIB, 0)));
    assert_eq!(
        pool.create_nested_quota(MIB, 12345678),
        None,
        "no such outer quota"
    );
}

#[test]
fn narrowing_counts_against_the_enclosing_quota_without_charging_its_parent() {
    // Two tasks' quotas under one shared quota; the second entered inside the first.
    let pool = pool();
    let shared = pool.create_quota_with(QuotaSpec {
        limit: 100 * MIB,
        reserved: 100 * MIB,
        shared: true,
        ..QuotaSpec::default()
    });
    let task = |limit, reserved, within| {
        pool.create_quota_with(QuotaSpec {
            limit,
            reserved,
            parent: Some(shared),
            within,
            spill_rank: 1,
            shared: false,
        })
    };
    let outer = task(16 * MIB, 16 * MIB, None);
    let inner = task(64 * MIB, 0, Some(outer));
    let a = pool.allocate(10 * MIB, S, Some(inner), false).unwrap();
    assert_eq!(pool.quota_usage(inner).unwrap().1, 10 * MIB);
    assert_eq!(pool.quota_usage(outer).unwrap().1, 10 * MIB);
    assert_eq!(
        pool.quota_usage(shared).unwrap().1,
        10 * MIB,
        "counted once"
    );
    assert!(matches!(
        pool.allocate(8 * MIB, S, Some(inner), false),
        Err(PoolError::QuotaExceeded { limit, .. }) if limit == 16 * MIB
    ));
    // The outer task's own bytes still fall within its reservation.
    let b = pool.allocate(4 * MIB, S, Some(outer), false).unwrap();
    assert_eq!(pool.quota_usage(shared).unwrap().1, 10 * MIB);
    // The inner task ends: its buffer stops counting against the outer one.
    pool.retire_quota(inner);
    assert_eq!(pool.quota_usage(outer).unwrap().1, 4 * MIB);
    assert_eq!(pool.quota_usage(shared).unwrap().1, 10 * MIB);
    pool.release(a).unwrap();
    pool.release(b).unwrap();
    assert_eq!(pool.quota_usage(outer).unwrap().1, 0);
    assert_eq!(pool.quota_usage(shared).unwrap().1, 0);
}

#[test]
fn a_shared_quota_running_out_says_so() {
    let pool = pool();
    let shared = pool.create_quota_with(QuotaSpec {
        limit: 8 * MIB,
        reserved: 8 * MIB,
        shared: true,
        ..QuotaSpec::default()
    });
    let q = pool.create_child_quota(64 * MIB, 0, Some(shared), 1);
    let nested = pool.create_nested_quota(64 * MIB, q).unwrap();
    assert!(matches!(
        pool.allocate(9 * MIB, S, Some(nested), false),
        Err(PoolError::SharedExhausted { limit, .. }) if limit == 8 * MIB
    ));
    let quotas = [shared, q, nested];
    assert!(quotas
        .iter()
        .all(|&id| pool.quota_usage(id).unwrap().1 == 0));
}

#[test]
fn a_retired_quota_hands_its_buffers_and_spill_rank_to_its_parent() {
    let pool = pool();
    pool.set_limit(Some(8 * MIB));
    let parent = pool.create_child_quota(64 * MIB, 64 * MIB, None, 2);
    let low = pool.create_child_quota(64 * MIB, 0, Some(parent), 0);
    let early = pool.allocate(4 * MIB, S, Some(low), true).unwrap();
    let late = pool.allocate(4 * MIB, S, None, true).unwrap();
    pool.device_ptrs(&[late], S).unwrap();
    pool.device_ptrs(&[early], S).unwrap(); // rank 0 spills first though used last
    pool.retire_quota(low); // now rank 2: the unquota'd buffer (rank 1) spills first
    assert_eq!(pool.quota_usage(parent).unwrap().1, 4 * MIB);
    let extra = pool.allocate(4 * MIB, S, None, false).unwrap();
    assert!(!pool.is_resident(late) && pool.is_resident(early));
    for id in [early, late, extra] {
        pool.release(id).unwrap();
    }
    assert_eq!(pool.quota_usage(parent).unwrap().1, 0);
}
