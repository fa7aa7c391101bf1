//! The `gpukit._core` extension module: Python's view of the Rust pool.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict};

use gpukit_core::pool::{Block, Pool as CorePool, PoolError};
use gpukit_core::table::{AllocatorTable, RawAllocatorTable};

pyo3::import_exception!(gpukit.errors, OutOfMemoryError);
pyo3::import_exception!(gpukit.errors, DeviceError);
pyo3::import_exception!(gpukit.errors, CudaError);
pyo3::import_exception!(gpukit.errors, HipError);

const BACKEND_NAMES: [&str; 3] = ["cpu", "cuda", "hip"];

fn to_py_err(pool: &CorePool, err: PoolError) -> PyErr {
    let message = err.to_string();
    match err {
        PoolError::OutOfMemory {
            requested,
            allocated,
            reserved,
            ..
        } => OutOfMemoryError::new_err((message, requested, allocated, reserved, None::<u64>)),
        PoolError::Backend(e) => {
            let args = (message, e.call, e.code, e.name);
            match pool.table().backend() {
                1 => CudaError::new_err(args),
                2 => HipError::new_err(args),
                _ => DeviceError::new_err(args),
            }
        }
    }
}

/// The caching memory pool of one device, driving the backend through an allocator table.
#[pyclass(module = "gpukit._core", frozen)]
struct Pool {
    inner: Arc<CorePool>,
    // Keeps the module that exported the table (and so the table) alive.
    _capsule: Py<PyCapsule>,
}

#[pymethods]
impl Pool {
    #[new]
    fn new(capsule: Bound<'_, PyCapsule>) -> PyResult<Self> {
        let raw = capsule.pointer_checked(Some(c"gpukit.allocator_table"))?;
        // SAFETY: the capsule's exporter (gpukit._native) keeps its tables for the process' life.
        let table = unsafe { AllocatorTable::from_raw(raw.as_ptr() as *const RawAllocatorTable) }
            .map_err(PyValueError::new_err)?;
        Ok(Self {
            inner: Arc::new(CorePool::new(table)),
            _capsule: capsule.unbind(),
        })
    }

    /// Name of the backend this pool allocates on: "cpu", "cuda" or "hip".
    #[getter]
    fn backend(&self) -> &'static str {
        BACKEND_NAMES
            .get(self.inner.table().backend() as usize)
            .copied()
            .unwrap_or("unknown")
    }

    /// A buffer of at least `nbytes` bytes; it returns to the pool when the last reference goes.
    fn allocate(&self, py: Python<'_>, nbytes: u64) -> PyResult<Buffer> {
        let pool = &self.inner;
        // A cache hit is a short critical section; only a call into the driver releases the GIL.
        let result = match pool.allocate_cached(nbytes) {
            Some(block) => Ok(block),
            None => py.detach(|| pool.allocate(nbytes)),
        };
        match result {
            Ok(block) => Ok(Buffer {
                pool: pool.clone(),
                block: Some(block),
                nbytes,
            }),
            Err(e) => Err(to_py_err(pool, e)),
        }
    }

    /// Frees every cached (unused) block back to the backend.
    fn empty_cache(&self, py: Python<'_>) -> PyResult<()> {
        let pool = &self.inner;
        py.detach(|| pool.empty_cache())
            .map_err(|e| to_py_err(pool, e))
    }

    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("allocated_bytes", s.allocated)?;
        d.set_item("reserved_bytes", s.reserved)?;
        d.set_item("cached_bytes", self.inner.cached_bytes())?;
        d.set_item("peak_allocated_bytes", s.peak_allocated)?;
        d.set_item("peak_reserved_bytes", s.peak_reserved)?;
        d.set_item("allocations", s.allocations)?;
        d.set_item("cache_hits", s.cache_hits)?;
        d.set_item("backend_allocations", s.backend_allocations)?;
        Ok(d)
    }
}

/// One block of pool memory. `ptr` is the device address (a host address on the CPU backend).
#[pyclass(module = "gpukit._core", frozen)]
struct Buffer {
    pool: Arc<CorePool>,
    block: Option<Block>,
    #[pyo3(get)]
    nbytes: u64,
}

#[pymethods]
impl Buffer {
    #[getter]
    fn ptr(&self) -> u64 {
        self.block.as_ref().map_or(0, |b| b.ptr)
    }

    /// Bytes actually reserved for this buffer (its size class).
    #[getter]
    fn capacity(&self) -> u64 {
        self.block.as_ref().map_or(0, |b| b.size)
    }

    fn __repr__(&self) -> String {
        format!(
            "<gpukit._core.Buffer {} bytes at {:#x}>",
            self.nbytes,
            self.ptr()
        )
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            self.pool.release(block);
        }
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Pool>()?;
    m.add_class::<Buffer>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
