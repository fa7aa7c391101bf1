//! `gpukit._core.Plan`: a repeated op as one call. Python builds it once (kernels, geometry,
//! packed argument bytes, slots); each call allocates the outputs from the pool, asks the pool
//! for every operand's address, patches the blobs and launches, all without Python in between.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyCapsule, PyCapsuleMethods, PyComplex, PyComplexMethods, PyFloat, PyTuple,
};

use gpukit_core::launch::{Geometry, LaunchTable, RawLaunchTable, TensorMapDesc};
use gpukit_core::plan::{Launch, Plan as CorePlan, PlanError, Slot, SlotKind, Value};
use gpukit_core::pool::{BufferId, Pool as CorePool, PoolError};
use gpukit_core::sched::pacer;

use crate::{to_py_err, Buffer, CudaError, DeviceError, ExternalBuffer, HipError, Pool};

/// What the caller passes for each argument: an array (its buffer and a byte offset), or a
/// Python scalar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ArgKind {
    Array,
    Scalar,
}

/// (kind, byte offset, argument, displacement, parameter) as Python describes a slot; the
/// parameter is the alignment of an "address" slot and the descriptor fields of a "tensor_map".
type SlotSpec<'py> = (String, usize, usize, i64, Bound<'py, PyAny>);
/// (function, grid, block, shared bytes, argument bytes, slots)
type LaunchSpec<'py> = (
    u64,
    (u32, u32, u32),
    (u32, u32, u32),
    u32,
    Vec<u8>,
    Vec<SlotSpec<'py>>,
);

/// One kind of call as a list of launches. `arguments` gives the caller's arguments ("a": an
/// array, passed as buffer and byte offset; "s": a scalar); the buffers of `outputs` (bytes
/// each) are allocated by every call and returned, those of `scratch` live for the call only;
/// both follow the caller's arguments in the numbering that slots use.
#[pyclass(module = "gpukit._core", frozen)]
pub struct Plan {
    core: CorePlan,
    pool: Arc<CorePool>,
    table: Option<LaunchTable>,
    kinds: Vec<ArgKind>,
    outputs: Vec<u64>,
    scratch: Vec<u64>,
    _capsule: Option<Py<PyCapsule>>,
}

fn slot_of(spec: SlotSpec<'_>) -> PyResult<Slot> {
    let (kind, offset, arg, displacement, param) = spec;
    let kind = match kind.as_str() {
        "address" => SlotKind::Address {
            align: param.extract()?,
        },
        "f64" => SlotKind::F64,
        "i64" => SlotKind::I64,
        "f64_imag" => SlotKind::F64Imag,
        "tensor_map" => {
            type Fields = (u32, u32, [u64; 5], [u64; 4], [u32; 5], [u32; 5], [u32; 4]);
            let (data_type, rank, global_dim, global_strides, box_dim, element_strides, modes): Fields =
                param.extract()?;
            SlotKind::TensorMap {
                desc: Box::new(TensorMapDesc {
                    data_type,
                    rank,
                    global_dim,
                    global_strides,
                    box_dim,
                    element_strides,
                    interleave: modes[0],
                    swizzle: modes[1],
                    l2_promotion: modes[2],
                    oob_fill: modes[3],
                }),
                last: Mutex::new(None),
            }
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown slot kind {other:?}"
            )))
        }
    };
    Ok(Slot {
        offset,
        arg,
        displacement,
        kind,
    })
}

fn scalar_of(value: &Bound<'_, PyAny>) -> PyResult<Value> {
    if value.is_instance_of::<PyFloat>() {
        let f: f64 = value.extract()?;
        return Ok(Value::Scalar {
            f,
            i: f as i64,
            im: 0.0,
        });
    }
    if value.is_instance_of::<PyBool>() {
        let b = value.is_truthy()?;
        return Ok(Value::Scalar {
            f: f64::from(u8::from(b)),
            i: i64::from(b),
            im: 0.0,
        });
    }
    if let Ok(c) = value.cast::<PyComplex>() {
        let f = c.real();
        return Ok(Value::Scalar {
            f,
            i: f as i64,
            im: c.imag(),
        });
    }
    if let Ok(i) = value.extract::<i64>() {
        return Ok(Value::Scalar {
            f: i as f64,
            i,
            im: 0.0,
        });
    }
    if let Ok(u) = value.extract::<u64>() {
        // Above i64: the same 64 bits, as an unsigned kernel reads them.
        return Ok(Value::Scalar {
            f: u as f64,
            i: u as i64,
            im: 0.0,
        });
    }
    Err(PyTypeError::new_err(format!(
        "a plan's scalar argument must be a bool, int, float or complex, not {}",
        value.get_type().name()?
    )))
}

enum CallError {
    Pool(PoolError),
    Plan(PlanError),
}

impl Plan {
    fn plan_error(&self, err: PlanError) -> PyErr {
        match err {
            PlanError::Backend(e) => {
                let message = e.to_string();
                let args = (message, e.call, e.code, e.name);
                match self.pool.table().backend() {
                    1 => CudaError::new_err(args),
                    2 => HipError::new_err(args),
                    _ => DeviceError::new_err(args),
                }
            }
            other => PyValueError::new_err(other.to_string()),
        }
    }

    /// Allocates outputs and scratch, resolves every address and launches. Returns the outputs.
    /// Runs with the GIL held (as CuPy's and PyTorch's launches do): releasing it per call costs
    /// more than the call when threads contend. Nothing here needs Python, so holding it cannot
    /// deadlock; only a launch the scheduler's pacer holds back waits without it.
    fn execute(
        &self,
        py: Python<'_>,
        mut values: Vec<Value>,
        mut ids: Vec<(usize, BufferId)>,
        stream: u64,
        quota: Option<u64>,
    ) -> Result<Vec<BufferId>, CallError> {
        let pool = &self.pool;
        let mut fresh: Vec<BufferId> = Vec::with_capacity(self.outputs.len() + self.scratch.len());
        let release = |fresh: &[BufferId]| {
            for &id in fresh {
                let _ = pool.release(id);
            }
        };
        for &nbytes in self.outputs.iter().chain(&self.scratch) {
            // A cache hit needs no backend call; only a miss gives up the GIL while it allocates.
            let allocated = match pool.allocate_cached(nbytes, stream, quota, false) {
                Some(found) => found,
                None => py.detach(|| pool.allocate(nbytes, stream, quota, false)),
            };
            match allocated {
                Ok(id) => {
                    ids.push((values.len(), id));
                    values.push(Value::Address(0));
                    fresh.push(id);
                }
                Err(e) => {
                    release(&fresh);
                    return Err(CallError::Pool(e));
                }
            }
        }
        if !self.core.launches().is_empty() {
            let just_ids: Vec<BufferId> = ids.iter().map(|&(_, id)| id).collect();
            let ptrs = if just_ids.is_empty() {
                Vec::new()
            } else if let Some(ptrs) = pool.resident_ptrs(&just_ids, stream) {
                ptrs
            } else {
                pool.device_ptrs(&just_ids, stream).map_err(|e| {
                    release(&fresh);
                    CallError::Pool(e)
                })?
            };
            for (&(at, _), ptr) in ids.iter().zip(ptrs) {
                if let Value::Address(offset) = values[at] {
                    values[at] = Value::Address(ptr.wrapping_add(offset));
                }
            }
            let table = self.table.as_ref().expect("checked when the plan was made");
            let wait = |s: u64| py.detach(|| pacer::wait_launch(s));
            if let Err(e) = self.core.run(&values, stream, table, &wait) {
                release(&fresh);
                return Err(CallError::Plan(e));
            }
        }
        let n_out = self.outputs.len();
        release(&fresh[n_out..]);
        fresh.truncate(n_out);
        Ok(fresh)
    }
}

#[pymethods]
impl Plan {
    /// `lanes`: per launch, (lane, wait) as gpukit_core's Launch takes them (none: every
    /// launch on lane 0).
    #[new]
    #[pyo3(signature = (pool, launch_table, arguments, launches, outputs=vec![], scratch=vec![],
                        lanes=vec![]))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        pool: &Pool,
        launch_table: Option<Bound<'_, PyCapsule>>,
        arguments: &str,
        launches: Vec<LaunchSpec<'_>>,
        outputs: Vec<u64>,
        scratch: Vec<u64>,
        lanes: Vec<(u8, bool)>,
    ) -> PyResult<Self> {
        let kinds = arguments
            .chars()
            .map(|c| match c {
                'a' => Ok(ArgKind::Array),
                's' => Ok(ArgKind::Scalar),
                other => Err(PyValueError::new_err(format!(
                    "argument kinds are 'a' (array) or 's' (scalar), not {other:?}"
                ))),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let table = match &launch_table {
            Some(capsule) => {
                let raw = capsule.pointer_checked(Some(c"gpukit.launch_table"))?;
                // SAFETY: gpukit._native keeps its device's tables for the process' life.
                Some(
                    unsafe { LaunchTable::from_raw(raw.as_ptr() as *const RawLaunchTable) }
                        .map_err(PyValueError::new_err)?,
                )
            }
            None => None,
        };
        if table.is_none() && !launches.is_empty() {
            return Err(PyValueError::new_err(
                "a plan with launches needs a launch table",
            ));
        }
        if !lanes.is_empty() && lanes.len() != launches.len() {
            return Err(PyValueError::new_err(format!(
                "{} lanes for {} launches",
                lanes.len(),
                launches.len()
            )));
        }
        let mut core_launches = Vec::with_capacity(launches.len());
        for (i, (function, grid, block, shared, blob, slots)) in launches.into_iter().enumerate() {
            let (lane, wait) = lanes.get(i).copied().unwrap_or((0, false));
            core_launches.push(Launch {
                function,
                geometry: Geometry {
                    grid: [grid.0, grid.1, grid.2],
                    block: [block.0, block.1, block.2],
                    shared,
                },
                blob,
                slots: slots.into_iter().map(slot_of).collect::<PyResult<_>>()?,
                lane,
                wait,
            });
        }
        let n_args = kinds.len() + outputs.len() + scratch.len();
        let core = CorePlan::new(core_launches, n_args).map_err(PyValueError::new_err)?;
        Ok(Self {
            core,
            pool: pool.inner.clone(),
            table,
            kinds,
            outputs,
            scratch,
            _capsule: launch_table.map(Bound::unbind),
        })
    }

    /// Runs the plan on `stream`: `args` are, per argument, a buffer and a byte offset (arrays)
    /// or a value (scalars). Outputs are charged to `quota`. Returns the output buffer (None
    /// without outputs, a tuple for several).
    #[pyo3(signature = (stream, quota, *args))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        stream: u64,
        quota: Option<u64>,
        args: &Bound<'py, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let mut values = Vec::with_capacity(self.core.n_args());
        let mut ids = Vec::with_capacity(self.core.n_args());
        let mut items = args.iter();
        for (i, kind) in self.kinds.iter().enumerate() {
            let missing = || {
                PyTypeError::new_err(format!(
                    "the plan takes {} arguments, got fewer",
                    self.kinds.len()
                ))
            };
            let item = items.next().ok_or_else(missing)?;
            if *kind == ArgKind::Scalar {
                values.push(scalar_of(&item)?);
                continue;
            }
            let offset: u64 = items.next().ok_or_else(missing)?.extract()?;
            if let Ok(buffer) = item.cast::<Buffer>() {
                let buffer = buffer.get();
                if !Arc::ptr_eq(&buffer.pool, &self.pool) {
                    return Err(PyValueError::new_err(format!(
                        "argument {i} of the plan belongs to another pool (another device or \
                         backend)"
                    )));
                }
                ids.push((i, buffer.id));
                values.push(Value::Address(offset));
            } else if let Ok(external) = item.cast::<ExternalBuffer>() {
                values.push(Value::Address(external.get().ptr.wrapping_add(offset)));
            } else {
                return Err(PyTypeError::new_err(format!(
                    "argument {i} of the plan must be a gpukit buffer, not {}",
                    item.get_type().name()?
                )));
            }
        }
        if items.next().is_some() {
            return Err(PyTypeError::new_err("too many arguments for the plan"));
        }
        let outputs = self
            .execute(py, values, ids, stream, quota)
            .map_err(|e| match e {
                CallError::Pool(e) => to_py_err(&self.pool, e),
                CallError::Plan(e) => self.plan_error(e),
            })?;
        let buffers = outputs
            .into_iter()
            .zip(&self.outputs)
            .map(|(id, &nbytes)| Buffer {
                pool: self.pool.clone(),
                id,
                nbytes,
            });
        match self.outputs.len() {
            0 => Ok(py.None()),
            1 => Ok(Py::new(py, buffers.into_iter().next().expect("one output"))?.into_any()),
            _ => {
                let objects = buffers
                    .map(|b| Py::new(py, b))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(PyTuple::new(py, objects)?.into_any().unbind())
            }
        }
    }

    /// How many kernels one call launches.
    #[getter]
    fn launches(&self) -> usize {
        self.core.launches().len()
    }
}
