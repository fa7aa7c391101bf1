//! Plans over a launch table that records what it is asked to launch.

use std::ffi::{c_char, c_void};
use std::sync::Mutex;

use crate::launch::{Geometry, LaunchTable, RawLaunchTable, TensorMapDesc, LAUNCH_TABLE_VERSION};
use crate::plan::{Launch, Plan, PlanError, Slot, SlotKind, Value};

/// (function, geometry, stream, argument bytes) of a recorded launch.
type Recorded = (u64, Geometry, u64, Vec<u8>);

#[derive(Default)]
struct Recorder {
    launches: Mutex<Vec<Recorded>>,
    encodes: Mutex<u32>,
    fail_with: Mutex<i32>,
    /// "fork S -> side" and "join S <- side", in order.
    lanes: Mutex<Vec<String>>,
}

fn recorder(ctx: *mut c_void) -> &'static Recorder {
    // SAFETY: ctx is the leaked Recorder of `table`.
    unsafe { &*(ctx as *const Recorder) }
}

unsafe extern "C" fn launch(
    ctx: *mut c_void,
    function: u64,
    grid: *const u32,
    block: *const u32,
    shared: u32,
    stream: u64,
    args: *const c_void,
    bytes: u64,
) -> i32 {
    let r = recorder(ctx);
    let code = *r.fail_with.lock().unwrap();
    if code != 0 {
        return code;
    }
    let grid = std::slice::from_raw_parts(grid, 3).try_into().unwrap();
    let block = std::slice::from_raw_parts(block, 3).try_into().unwrap();
    let blob = std::slice::from_raw_parts(args as *const u8, bytes as usize).to_vec();
    let geometry = Geometry {
        grid,
        block,
        shared,
    };
    r.launches
        .lock()
        .unwrap()
        .push((function, geometry, stream, blob));
    0
}

// A stand-in descriptor: the address, then the rank, repeated.
unsafe extern "C" fn encode(
    ctx: *mut c_void,
    out: *mut c_void,
    desc: *const TensorMapDesc,
    address: u64,
) -> i32 {
    *recorder(ctx).encodes.lock().unwrap() += 1;
    let out = std::slice::from_raw_parts_mut(out as *mut u8, 128);
    for chunk in out.chunks_mut(16) {
        chunk[..8].copy_from_slice(&address.to_le_bytes());
        chunk[8..].copy_from_slice(&((*desc).rank as u64).to_le_bytes());
    }
    0
}

// Stream S's second lane is S + 1000.
unsafe extern "C" fn fork(ctx: *mut c_void, stream: u64, side: *mut u64) -> i32 {
    *side = stream + 1000;
    let mut lanes = recorder(ctx).lanes.lock().unwrap();
    lanes.push(format!("fork {stream} -> {}", *side));
    0
}

unsafe extern "C" fn join(ctx: *mut c_void, stream: u64, side: u64) -> i32 {
    let mut lanes = recorder(ctx).lanes.lock().unwrap();
    lanes.push(format!("join {stream} <- {side}"));
    0
}

unsafe extern "C" fn error_name(_: *mut c_void, _: i32) -> *const c_char {
    c"CUDA_ERROR_INVALID_VALUE".as_ptr()
}

fn table() -> (LaunchTable, &'static Recorder) {
    let rec: &'static Recorder = Box::leak(Box::default());
    let raw = Box::leak(Box::new(RawLaunchTable {
        version: LAUNCH_TABLE_VERSION,
        ctx: rec as *const Recorder as *mut c_void,
        launch,
        encode_tensor_map: encode,
        error_name,
        fork,
        join,
    }));
    // SAFETY: the raw table and its recorder are leaked, so they outlive the handle.
    (unsafe { LaunchTable::from_raw(raw) }.unwrap(), rec)
}

// No scheduler task runs in these tests: the pacer never holds a launch back.
const NO_WAIT: fn(u64) = |_| unreachable!("the pacer held back a launch of no task");

const GEOMETRY: Geometry = Geometry {
    grid: [3, 1, 1],
    block: [256, 1, 1],
    shared: 0,
};

fn slot(offset: usize, arg: usize, displacement: i64, kind: SlotKind) -> Slot {
    Slot {
        offset,
        arg,
        displacement,
        kind,
    }
}

fn word(blob: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(blob[at..at + 8].try_into().unwrap())
}

#[test]
fn slots_are_filled_in_a_copy_of_each_blob() {
    let (table, rec) = table();
    let mut blob = vec![0u8; 40];
    blob[32..40].copy_from_slice(&1234u64.to_le_bytes()); // a fixed field stays as packed
    let plan = Plan::new(
        vec![Launch {
            lane: 0,
            wait: false,
            function: 7,
            geometry: GEOMETRY,
            blob,
            slots: vec![
                slot(0, 1, 0, SlotKind::Address { align: 1 }),
                slot(8, 0, 24, SlotKind::Address { align: 8 }),
                slot(16, 2, 0, SlotKind::F64),
                slot(24, 2, 0, SlotKind::I64),
            ],
        }],
        3,
    )
    .unwrap();
    let values = [
        Value::Address(0x1000),
        Value::Address(0x2003),
        Value::Scalar {
            f: 2.5,
            i: 2,
            im: 0.0,
        },
    ];
    plan.run(&values, 99, &table, &NO_WAIT).unwrap();
    plan.run(
        &[values[0], Value::Address(0x5000), values[2]],
        99,
        &table,
        &NO_WAIT,
    )
    .unwrap();
    let launches = rec.launches.lock().unwrap();
    assert_eq!(launches.len(), 2);
    let (function, geometry, stream, blob) = &launches[0];
    assert_eq!((*function, *geometry, *stream), (7, GEOMETRY, 99));
    assert_eq!(word(blob, 0), 0x2003);
    assert_eq!(word(blob, 8), 0x1000 + 24);
    assert_eq!(f64::from_le_bytes(blob[16..24].try_into().unwrap()), 2.5);
    assert_eq!(word(blob, 24), 2);
    assert_eq!(word(blob, 32), 1234);
    assert_eq!(word(&launches[1].3, 0), 0x5000);
}

#[test]
fn a_complex_scalar_fills_its_real_and_imaginary_slots() {
    let (table, rec) = table();
    let plan = Plan::new(
        vec![Launch {
            lane: 0,
            wait: false,
            function: 3,
            geometry: GEOMETRY,
            blob: vec![0u8; 24],
            slots: vec![
                slot(0, 0, 0, SlotKind::F64),
                slot(8, 0, 0, SlotKind::F64Imag),
                slot(16, 1, 0, SlotKind::F64Imag),
            ],
        }],
        2,
    )
    .unwrap();
    let complex = Value::Scalar {
        f: 1.5,
        i: 1,
        im: -2.25,
    };
    let real = Value::Scalar {
        f: 4.0,
        i: 4,
        im: 0.0,
    };
    plan.run(&[complex, real], 0, &table, &NO_WAIT).unwrap();
    let launches = rec.launches.lock().unwrap();
    let blob = &launches[0].3;
    let double = |at: usize| f64::from_le_bytes(blob[at..at + 8].try_into().unwrap());
    assert_eq!((double(0), double(8), double(16)), (1.5, -2.25, 0.0));
}

#[test]
fn launches_run_in_order_with_their_own_geometry() {
    let (table, rec) = table();
    let second = Geometry {
        grid: [1, 2, 3],
        block: [32, 4, 1],
        shared: 65536,
    };
    let plan = Plan::new(
        vec![
            Launch {
                lane: 0,
                wait: false,
                function: 1,
                geometry: GEOMETRY,
                blob: vec![0; 8],
                slots: vec![slot(0, 0, 0, SlotKind::Address { align: 16 })],
            },
            Launch {
                lane: 0,
                wait: false,
                function: 2,
                geometry: second,
                blob: vec![0; 8],
                slots: vec![slot(0, 0, -16, SlotKind::Address { align: 16 })],
            },
        ],
        1,
    )
    .unwrap();
    plan.run(&[Value::Address(0x100)], 5, &table, &NO_WAIT)
        .unwrap();
    let launches = rec.launches.lock().unwrap();
    assert_eq!(launches[0].0, 1);
    assert_eq!((launches[1].0, launches[1].1), (2, second));
    assert_eq!(word(&launches[1].3, 0), 0xf0);
}

#[test]
fn a_misaligned_operand_is_refused_before_anything_launches() {
    let (table, rec) = table();
    let plan = Plan::new(
        vec![Launch {
            lane: 0,
            wait: false,
            function: 1,
            geometry: GEOMETRY,
            blob: vec![0; 8],
            slots: vec![slot(0, 0, 4, SlotKind::Address { align: 16 })],
        }],
        1,
    )
    .unwrap();
    let err = plan
        .run(&[Value::Address(0x100)], 0, &table, &NO_WAIT)
        .unwrap_err();
    assert_eq!(
        err,
        PlanError::Misaligned {
            arg: 0,
            address: 0x104,
            align: 16
        }
    );
    assert!(rec.launches.lock().unwrap().is_empty());
}

#[test]
fn tensor_maps_are_encoded_once_per_address() {
    let (table, rec) = table();
    let desc = TensorMapDesc {
        rank: 2,
        ..Default::default()
    };
    let plan = Plan::new(
        vec![Launch {
            lane: 0,
            wait: false,
            function: 1,
            geometry: GEOMETRY,
            blob: vec![0; 136],
            slots: vec![
                slot(
                    0,
                    0,
                    64,
                    SlotKind::TensorMap {
                        desc: Box::new(desc),
                        last: Mutex::new(None),
                    },
                ),
                slot(128, 0, 0, SlotKind::Address { align: 1 }),
            ],
        }],
        1,
    )
    .unwrap();
    for base in [0x1000, 0x1000, 0x2000] {
        plan.run(&[Value::Address(base)], 0, &table, &NO_WAIT)
            .unwrap();
    }
    assert_eq!(*rec.encodes.lock().unwrap(), 2);
    let launches = rec.launches.lock().unwrap();
    assert_eq!(word(&launches[1].3, 0), 0x1040);
    assert_eq!(word(&launches[1].3, 8), 2);
    assert_eq!(word(&launches[2].3, 112), 0x2040);
    assert_eq!(word(&launches[2].3, 128), 0x2000);
}

#[test]
fn a_tensor_map_over_a_misaligned_address_is_refused() {
    let (table, rec) = table();
    let plan = Plan::new(
        vec![Launch {
            lane: 0,
            wait: false,
            function: 1,
            geometry: GEOMETRY,
            blob: vec![0; 128],
            slots: vec![slot(
                0,
                0,
                8,
                SlotKind::TensorMap {
                    desc: Box::new(TensorMapDesc::default()),
                    last: Mutex::new(None),
                },
            )],
        }],
        1,
    )
    .unwrap();
    let err = plan
        .run(&[Value::Address(0x1000)], 0, &table, &NO_WAIT)
        .unwrap_err();
    assert_eq!(
        err,
        PlanError::Misaligned {
            arg: 0,
            address: 0x1008,
            align: 16
        }
    );
    assert_eq!(*rec.encodes.lock().unwrap(), 0);
    assert!(rec.launches.lock().unwrap().is_empty());
}

#[test]
fn launch_errors_carry_the_backend_name() {
    let (table, rec) = table();
    *rec.fail_with.lock().unwrap() = 1;
    let plan = Plan::new(
        vec![Launch {
            lane: 0,
            wait: false,
            function: 1,
            geometry: GEOMETRY,
            blob: vec![],
            slots: vec![],
        }],
        0,
    )
    .unwrap();
    let PlanError::Backend(e) = plan.run(&[], 0, &table, &NO_WAIT).unwrap_err() else {
        panic!("expected a backend error");
    };
    assert_eq!(
        (e.call, e.code, e.name.as_str()),
        ("cuLaunchKernel", 1, "CUDA_ERROR_INVALID_VALUE")
    );
}

#[test]
fn bad_slots_are_refused_when_the_plan_is_made() {
    let make = |offset, arg, kind| {
        Plan::new(
            vec![Launch {
                lane: 0,
                wait: false,
                function: 1,
                geometry: GEOMETRY,
                blob: vec![0; 16],
                slots: vec![slot(offset, arg, 0, kind)],
            }],
            2,
        )
    };
    assert!(make(12, 0, SlotKind::F64).is_err());
    assert!(make(8, 2, SlotKind::I64).is_err());
    assert!(make(0, 0, SlotKind::Address { align: 3 }).is_err());
    assert!(make(8, 1, SlotKind::I64).is_ok());
}

#[test]
fn a_scalar_where_an_array_belongs_is_an_error() {
    let (table, _) = table();
    let plan = Plan::new(
        vec![Launch {
            lane: 0,
            wait: false,
            function: 1,
            geometry: GEOMETRY,
            blob: vec![0; 8],
            slots: vec![slot(0, 0, 0, SlotKind::Address { align: 1 })],
        }],
        1,
    )
    .unwrap();
    let err = plan
        .run(
            &[Value::Scalar {
                f: 1.0,
                i: 1,
                im: 0.0,
            }],
            0,
            &table,
            &NO_WAIT,
        )
        .unwrap_err();
    assert!(matches!(err, PlanError::WrongValue { arg: 0, .. }));
}

fn on_lane(function: u64, lane: u8, wait: bool) -> Launch {
    Launch {
        function,
        geometry: GEOMETRY,
        blob: vec![0u8; 8],
        slots: vec![],
        lane,
        wait,
    }
}

#[test]
fn the_second_lane_forks_before_its_work_and_joins_where_lane_0_waits_and_at_the_end() {
    let (table, rec) = table();
    let plan = Plan::new(
        vec![
            on_lane(1, 0, false),
            on_lane(2, 1, true),  // fork
            on_lane(3, 0, false), // alongside 2
            on_lane(4, 1, false), // after 2, alongside 3
            on_lane(5, 0, true),  // join
            on_lane(6, 1, true),  // fork again
        ],
        0,
    )
    .unwrap();
    plan.run(&[], 7, &table, &NO_WAIT).unwrap();
    let streams: Vec<(u64, u64)> = rec
        .launches
        .lock()
        .unwrap()
        .iter()
        .map(|(f, _, s, _)| (*f, *s))
        .collect();
    assert_eq!(
        streams,
        [(1, 7), (2, 1007), (3, 7), (4, 1007), (5, 7), (6, 1007)]
    );
    assert_eq!(
        *rec.lanes.lock().unwrap(),
        [
            "fork 7 -> 1007",
            "join 7 <- 1007",
            "fork 7 -> 1007",
            "join 7 <- 1007"
        ]
    );
}

#[test]
fn a_join_with_nothing_on_the_second_lane_is_skipped() {
    let (table, rec) = table();
    let plan = Plan::new(vec![on_lane(1, 0, false), on_lane(2, 0, true)], 0).unwrap();
    plan.run(&[], 7, &table, &NO_WAIT).unwrap();
    assert!(rec.lanes.lock().unwrap().is_empty());
    assert_eq!(rec.launches.lock().unwrap().len(), 2);
}

#[test]
fn a_failed_launch_still_joins_the_second_lane() {
    let (table, rec) = table();
    let plan = Plan::new(vec![on_lane(1, 1, true), on_lane(2, 0, false)], 0).unwrap();
    *rec.fail_with.lock().unwrap() = 1;
    assert!(plan.run(&[], 7, &table, &NO_WAIT).is_err());
    assert_eq!(
        *rec.lanes.lock().unwrap(),
        ["fork 7 -> 1007", "join 7 <- 1007"]
    );
}

#[test]
fn lanes_are_checked() {
    let err = Plan::new(vec![on_lane(1, 1, false)], 0).err().unwrap();
    assert!(err.contains("must wait for the first lane"), "{err}");
    let err = Plan::new(vec![on_lane(1, 2, true)], 0).err().unwrap();
    assert!(err.contains("lane 2 is not 0 or 1"), "{err}");
}
