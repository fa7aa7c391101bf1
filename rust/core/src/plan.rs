//! A plan: the launches of one kind of call (an op on operands of given dtypes, shapes and
//! strides) with everything computed once: kernel, grid, block, shared memory and the argument
//! bytes, less what changes from call to call. That is filled in through slots: operands'
//! device addresses (or TMA descriptors over them) and scalar values. Running a plan patches a
//! copy of each argument blob, paces and launches; nothing in it depends on Python, so a graph
//! can record the same launches.

use std::cell::RefCell;
use std::sync::Mutex;

use crate::launch::{Geometry, LaunchTable, TensorMapDesc, TENSOR_MAP_BYTES};
use crate::sched::pacer;
use crate::table::BackendError;

/// What a slot writes into the argument blob, from its argument.
#[derive(Debug)]
pub enum SlotKind {
    /// The argument's address plus the displacement, as a u64; it must be a multiple of `align`
    /// (the plan's kernel choice assumed it).
    Address { align: u64 },
    /// The TMA descriptor of `desc` over the argument's address plus the displacement (which
    /// TMA needs 16-byte aligned), cached for the last address seen.
    TensorMap {
        desc: Box<TensorMapDesc>,
        last: Mutex<Option<(u64, [u8; TENSOR_MAP_BYTES])>>,
    },
    /// A scalar argument as a double.
    F64,
    /// A scalar argument as a 64-bit integer.
    I64,
    /// A scalar argument's imaginary part as a double (0 for a real scalar).
    F64Imag,
}

impl SlotKind {
    fn bytes(&self) -> usize {
        match self {
            SlotKind::TensorMap { .. } => TENSOR_MAP_BYTES,
            _ => 8,
        }
    }

    fn takes_address(&self) -> bool {
        matches!(self, SlotKind::Address { .. } | SlotKind::TensorMap { .. })
    }
}

/// The alignment TMA needs of a tensor's global address.
const TENSOR_MAP_ALIGN: u64 = 16;

#[derive(Debug)]
pub struct Slot {
    /// Byte offset in the blob.
    pub offset: usize,
    /// Which argument of the call.
    pub arg: usize,
    /// Bytes added to an address (a view's place in its array, a row slice's start).
    pub displacement: i64,
    pub kind: SlotKind,
}

#[derive(Debug)]
pub struct Launch {
    /// The kernel, a handle of the launch table's device.
    pub function: u64,
    pub geometry: Geometry,
    /// The kernel's parameter bytes with every slot still to be written.
    pub blob: Vec<u8>,
    pub slots: Vec<Slot>,
    /// 0: the call's stream; 1: the second lane beside it (the launch table's fork), which runs
    /// alongside the first between a fork and a join.
    pub lane: u8,
    /// Wait first for everything queued so far on the other lane (on lane 1: a fork; on lane 0:
    /// a join). A lane-1 launch after lane-0 work it reads must wait; the plan's end joins.
    pub wait: bool,
}

/// An argument of one call: a device address, or a scalar in both forms (and the imaginary
/// part of a complex one).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Address(u64),
    Scalar { f: f64, i: i64, im: f64 },
}

#[derive(Debug, Clone, PartialEq)]
pub enum PlanError {
    Backend(BackendError),
    Misaligned {
        arg: usize,
        address: u64,
        align: u64,
    },
    WrongValue {
        arg: usize,
        expected: &'static str,
    },
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Backend(e) => e.fmt(f),
            PlanError::Misaligned {
                arg,
                address,
                align,
            } => write!(
                f,
                "argument {arg} at address {address:#x} is not {align}-byte aligned, as the \
                 plan's kernel needs"
            ),
            PlanError::WrongValue { arg, expected } => {
                write!(f, "argument {arg} of the plan must be {expected}")
            }
        }
    }
}

impl From<BackendError> for PlanError {
    fn from(e: BackendError) -> Self {
        PlanError::Backend(e)
    }
}

pub struct Plan {
    launches: Vec<Launch>,
    n_args: usize,
}

thread_local! {
    // The blob being patched: reused, so that a launch allocates nothing.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Plan {
    /// Checks that every slot lies inside its blob and names one of `n_args` arguments.
    pub fn new(launches: Vec<Launch>, n_args: usize) -> Result<Self, String> {
        let mut forked = false;
        for (i, launch) in launches.iter().enumerate() {
            match (launch.lane, launch.wait) {
                (0, _) => {}
                (1, wait) if wait || forked => forked = true,
                (1, _) => {
                    return Err(format!(
                        "launch {i}: the second lane's first launch must wait for the first lane"
                    ))
                }
                (lane, _) => return Err(format!("launch {i}: lane {lane} is not 0 or 1")),
            }
            for s in &launch.slots {
                if s.offset + s.kind.bytes() > launch.blob.len() {
                    return Err(format!(
                        "launch {i}: a slot at byte {} does not fit its {}-byte blob",
                        s.offset,
                        launch.blob.len()
                    ));
                }
                if s.arg >= n_args {
                    return Err(format!(
                        "launch {i}: a slot names argument {} of {n_args}",
                        s.arg
                    ));
                }
                if let SlotKind::Address { align } = s.kind {
                    if !align.is_power_of_two() {
                        return Err(format!("launch {i}: alignment {align} is not a power of 2"));
                    }
                }
            }
        }
        Ok(Self { launches, n_args })
    }

    pub fn n_args(&self) -> usize {
        self.n_args
    }

    pub fn launches(&self) -> &[Launch] {
        &self.launches
    }

    /// Fills the slots from `values` and launches everything on `stream`, in order, each launch
    /// paced by the scheduler: when the pacer holds a launch back, `wait(stream)` is called
    /// (the caller releases whatever lock it holds, the GIL, around `pacer::wait_launch`).
    pub fn run(
        &self,
        values: &[Value],
        stream: u64,
        table: &LaunchTable,
        wait: &dyn Fn(u64),
    ) -> Result<(), PlanError> {
        // Every argument is checked before anything launches: a plan runs whole or not at all
        // (short of a backend failure).
        for slot in self.launches.iter().flat_map(|l| &l.slots) {
            check_slot(slot, values)?;
        }
        // The second lane: its stream once forked, and whether it was forked since the last
        // join (a capture must not end with a fork not joined, even one with no work).
        let mut side = None;
        let mut unjoined = false;
        let launched = SCRATCH.with(|scratch| {
            let mut blob = scratch.borrow_mut();
            for launch in &self.launches {
                blob.clear();
                blob.extend_from_slice(&launch.blob);
                for slot in &launch.slots {
                    write_slot(&mut blob, slot, values, table)?;
                }
                if launch.lane == 1 {
                    if launch.wait {
                        side = Some(table.fork(stream)?);
                        unjoined = true;
                    }
                    let on = side.expect("Plan::new checked that lane 1 forks first");
                    // Unpaced: the pacer counts the call's stream, which the join brings this
                    // work back into before the plan's next paced launch that waits for it.
                    table.launch(launch.function, &launch.geometry, on, &blob)?;
                    continue;
                }
                if launch.wait && unjoined {
                    table.join(stream, side.expect("work on lane 1 forked it"))?;
                    unjoined = false;
                }
                if pacer::before_launch(stream) != 0 {
                    wait(stream);
                }
                table.launch(launch.function, &launch.geometry, stream, &blob)?;
                table.check("cuEventRecord (launch pacing)", pacer::after_launch(stream))?;
            }
            Ok(())
        });
        // Joined even after a failure: a capture in progress must not end with a lane apart.
        let joined = match (unjoined, side) {
            (true, Some(side)) => table.join(stream, side).map_err(PlanError::from),
            _ => Ok(()),
        };
        launched.and(joined)
    }
}

fn check_slot(slot: &Slot, values: &[Value]) -> Result<(), PlanError> {
    match (values.get(slot.arg), &slot.kind) {
        (Some(Value::Address(base)), SlotKind::Address { align }) => {
            let address = base.wrapping_add_signed(slot.displacement);
            if address % align != 0 {
                return Err(PlanError::Misaligned {
                    arg: slot.arg,
                    address,
                    align: *align,
                });
            }
            Ok(())
        }
        (Some(Value::Address(base)), SlotKind::TensorMap { .. }) => {
            let address = base.wrapping_add_signed(slot.displacement);
            if address % TENSOR_MAP_ALIGN != 0 {
                return Err(PlanError::Misaligned {
                    arg: slot.arg,
                    address,
                    align: TENSOR_MAP_ALIGN,
                });
            }
            Ok(())
        }
        (Some(Value::Scalar { .. }), SlotKind::F64 | SlotKind::I64 | SlotKind::F64Imag) => Ok(()),
        _ => Err(PlanError::WrongValue {
            arg: slot.arg,
            expected: if slot.kind.takes_address() {
                "an array"
            } else {
                "a scalar"
            },
        }),
    }
}

fn write_slot(
    blob: &mut [u8],
    slot: &Slot,
    values: &[Value],
    table: &LaunchTable,
) -> Result<(), PlanError> {
    let at = slot.offset;
    match (values[slot.arg], &slot.kind) {
        (Value::Address(base), SlotKind::Address { .. }) => {
            let address = base.wrapping_add_signed(slot.displacement);
            blob[at..at + 8].copy_from_slice(&address.to_le_bytes());
        }
        (Value::Address(base), SlotKind::TensorMap { desc, last }) => {
            let address = base.wrapping_add_signed(slot.displacement);
            let mut cached = last.lock().unwrap_or_else(|e| e.into_inner());
            let bytes = match *cached {
                Some((seen, bytes)) if seen == address => bytes,
                _ => {
                    let bytes = table.encode_tensor_map(desc, address)?;
                    *cached = Some((address, bytes));
                    bytes
                }
            };
            blob[at..at + TENSOR_MAP_BYTES].copy_from_slice(&bytes);
        }
        (Value::Scalar { f, .. }, SlotKind::F64) => {
            blob[at..at + 8].copy_from_slice(&f.to_le_bytes())
        }
        (Value::Scalar { im, .. }, SlotKind::F64Imag) => {
            blob[at..at + 8].copy_from_slice(&im.to_le_bytes())
        }
        (Value::Scalar { i, .. }, _) => blob[at..at + 8].copy_from_slice(&i.to_le_bytes()),
        _ => unreachable!("check_slot matched values to slots"),
    }
    Ok(())
}
