//! The `gpukit._core` extension module: Python's view of the Rust pool, plans and scheduler.

mod args;
mod plan;
mod sched;

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict, PyTuple};

use gpukit_core::pool::{BufferId, Pool as CorePool, PoolError};
use gpukit_core::table::{AllocatorTable, RawAllocatorTable};

pyo3::import_exception!(gpukit.errors, OutOfMemoryError);
pyo3::import_exception!(gpukit.errors, DeviceError);
pyo3::import_exception!(gpukit.errors, CudaError);
pyo3::import_exception!(gpukit.errors, HipError);
pyo3::import_exception!(gpukit.errors, GraphCaptureError);

const BACKEND_NAMES: [&str; 3] = ["cpu", "cuda", "hip"];

pub(crate) fn to_py_err(pool: &CorePool, err: PoolError) -> PyErr {
    let message = err.to_string();
    match err {
        PoolError::OutOfMemory {
            requested,
            allocated,
            reserved,
            limit,
            ..
        } => OutOfMemoryError::new_err((message, requested, allocated, reserved, limit)),
        PoolError::QuotaExceeded {
            requested,
            used,
            limit,
            ..
        }
        | PoolError::SharedExhausted {
            requested,
            used,
            limit,
        } => OutOfMemoryError::new_err((message, requested, used, None::<u64>, limit)),
        PoolError::Backend(e) => {
            let args = (message, e.call, e.code, e.name);
            match pool.table().backend() {
                1 => CudaError::new_err(args),
                2 => HipError::new_err(args),
                _ => DeviceError::new_err(args),
            }
        }
        PoolError::UnknownBuffer(_) => PyValueError::new_err(message),
        PoolError::Capture(_) | PoolError::UnknownGraph(_) => GraphCaptureError::new_err(message),
    }
}

/// The caching memory pool of one device, driving the backend through an allocator table.
#[pyclass(module = "gpukit._core", frozen)]
pub(crate) struct Pool {
    pub(crate) inner: Arc<CorePool>,
    // Keeps the module that exported the table (and so the table) alive.
    _capsule: Py<PyCapsule>,
}

impl Pool {
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&CorePool) -> Result<T, PoolError> + Send,
    ) -> PyResult<T> {
        let pool = &self.inner;
        py.detach(|| f(pool)).map_err(|e| to_py_err(pool, e))
    }
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

    /// A buffer of at least `nbytes` bytes for work on `stream`; it returns to the pool when the
    /// last reference goes. `quota` (from create_quota) is charged; `evictable` buffers may be
    /// spilled to host memory under pressure. `nbytes`, `stream` and `quota` are ints from 0 to
    /// 2**64 - 1 (else ValueError or OverflowError); a request no device can hold raises
    /// OutOfMemoryError.
    #[pyo3(signature = (nbytes, stream=None, quota=None, evictable=false))]
    fn allocate(
        &self,
        py: Python<'_>,
        nbytes: &Bound<'_, PyAny>,
        stream: Option<&Bound<'_, PyAny>>,
        quota: Option<&Bound<'_, PyAny>>,
        evictable: bool,
    ) -> PyResult<Buffer> {
        let nbytes = args::unsigned("nbytes", nbytes)?;
        let stream = args::optional_unsigned("stream", stream)?.unwrap_or(0);
        let quota = args::optional_unsigned("quota", quota)?;
        let pool = &self.inner;
        // A cache hit needs no backend call: it runs without giving up the GIL.
        let id = match pool.allocate_cached(nbytes, stream, quota, evictable) {
            Some(found) => found.map_err(|e| to_py_err(pool, e))?,
            None => self.run(py, |p| p.allocate(nbytes, stream, quota, evictable))?,
        };
        Ok(Buffer {
            pool: pool.clone(),
            id,
            nbytes,
        })
    }

    /// Device addresses of `buffers` (a tuple of this pool's Buffers and ExternalBuffers) for
    /// work about to be queued on `stream`; spilled ones are restored first. They stay pinned
    /// until this thread's next call.
    fn device_ptrs<'py>(
        &self,
        py: Python<'py>,
        buffers: &Bound<'py, PyTuple>,
        stream: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let stream = args::unsigned("stream", stream)?;
        let mut ids = Vec::with_capacity(buffers.len());
        // (position, address) of external buffers: memory the pool neither moves nor frees.
        let mut external = Vec::new();
        for (i, b) in buffers.iter().enumerate() {
            if let Ok(buffer) = b.cast::<Buffer>() {
                let buffer = buffer.get();
                if !Arc::ptr_eq(&buffer.pool, &self.inner) {
                    return Err(PyValueError::new_err(format!(
                        "buffers[{i}] belongs to another pool (another device or backend)"
                    )));
                }
                ids.push(buffer.id);
            } else if let Ok(ext) = b.cast::<ExternalBuffer>() {
                external.push((i, ext.get().ptr));
            } else {
                return Err(PyTypeError::new_err(format!(
                    "buffers[{i}] must be a gpukit._core.Buffer or ExternalBuffer, not {}",
                    b.get_type().name()?
                )));
            }
        }
        let pool = &self.inner;
        // Addresses of resident buffers need no wait; only restores release the GIL.
        let mut ptrs = match pool.resident_ptrs(&ids, stream) {
            Some(ptrs) => ptrs,
            None => self.run(py, |p| p.device_ptrs(&ids, stream))?,
        };
        for (i, ptr) in external {
            ptrs.insert(i, ptr);
        }
        PyTuple::new(py, ptrs)
    }

    /// Starts a graph capture by the calling thread, whose work on `stream` is being recorded:
    /// every buffer handed to it from now on is kept for the graph (see release_graph), its
    /// allocations use no events and spill nothing. Returns the graph's id. GraphCaptureError
    /// if the thread captures already.
    fn begin_capture(&self, stream: &Bound<'_, PyAny>) -> PyResult<u64> {
        let stream = args::unsigned("stream", stream)?;
        self.inner
            .begin_capture(stream)
            .map_err(|e| to_py_err(&self.inner, e))
    }

    /// Ends the calling thread's capture; returns its graph's id.
    fn end_capture(&self) -> PyResult<u64> {
        self.inner
            .end_capture()
            .map_err(|e| to_py_err(&self.inner, e))
    }

    /// Whether the calling thread is capturing a graph in this pool.
    #[getter]
    fn capturing(&self) -> bool {
        self.inner.capturing()
    }

    /// Forgets a graph: the memory it alone held goes back to the cache, as freed on `stream`
    /// (where its work last ran).
    fn release_graph(&self, graph: &Bound<'_, PyAny>, stream: &Bound<'_, PyAny>) -> PyResult<()> {
        let graph = args::unsigned("graph", graph)?;
        let stream = args::unsigned("stream", stream)?;
        self.inner
            .release_graph(graph, stream)
            .map_err(|e| to_py_err(&self.inner, e))
    }

    /// Bytes of released buffers' memory that a graph holds.
    fn graph_held_bytes(&self, graph: &Bound<'_, PyAny>) -> PyResult<u64> {
        let graph = args::unsigned("graph", graph)?;
        self.inner
            .graph_held_bytes(graph)
            .map_err(|e| to_py_err(&self.inner, e))
    }

    /// Frees every cached (unused) block back to the backend.
    fn empty_cache(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |p| p.empty_cache())
    }

    /// Limit on reserved bytes (None: only the device's memory).
    #[getter]
    fn limit(&self) -> Option<u64> {
        self.inner.limit()
    }

    #[setter]
    fn set_limit(&self, limit: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.inner
            .set_limit(args::optional_unsigned("limit", limit)?);
        Ok(())
    }

    /// A quota of `limit` bytes; allocations charged to it fail past it (and only those). With
    /// `parent` (a quota id), it is opened inside that quota: every byte charged to it is
    /// charged to the parent too, so it can only narrow it. A parent this pool does not know
    /// (another device's quota: quota ids are unique across pools) does not constrain it.
    #[pyo3(signature = (limit, parent=None))]
    fn create_quota(
        &self,
        limit: &Bound<'_, PyAny>,
        parent: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let limit = args::unsigned("limit", limit)?;
        let parent = args::optional_unsigned("parent", parent)?;
        let pool = &self.inner;
        Ok(parent
            .and_then(|p| pool.create_nested_quota(limit, p))
            .unwrap_or_else(|| pool.create_quota(limit)))
    }

    /// (limit, bytes in use) of a quota.
    fn quota_usage(&self, quota: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
        let quota = args::unsigned("quota", quota)?;
        self.inner
            .quota_usage(quota)
            .ok_or_else(|| PyValueError::new_err(format!("no quota {quota}")))
    }

    /// Forgets a quota. Its buffers stay valid; for a quota opened inside another, they count
    /// against that one from now on.
    fn drop_quota(&self, quota: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.drop_quota(args::unsigned("quota", quota)?);
        Ok(())
    }

    /// Starts peak_allocated_bytes and peak_reserved_bytes afresh from the current values.
    fn reset_peak_stats(&self) {
        self.inner.reset_peaks();
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
        d.set_item("backend_frees", s.backend_frees)?;
        d.set_item("evictions", s.evictions)?;
        d.set_item("spilled_bytes", s.spilled_bytes)?;
        d.set_item("spilled_now_bytes", s.spilled_now)?;
        d.set_item("restores", s.restores)?;
        d.set_item("graph_held_bytes", s.graph_held)?;
        d.set_item("fragmentation", self.inner.fragmentation())?;
        d.set_item("limit_bytes", self.inner.limit())?;
        Ok(d)
    }
}

/// One buffer of pool memory. Its device address is asked for at each use
/// (`Pool.device_ptrs`): a spilled buffer comes back, perhaps at a new address.
#[pyclass(module = "gpukit._core", frozen)]
pub(crate) struct Buffer {
    pub(crate) pool: Arc<CorePool>,
    pub(crate) id: BufferId,
    #[pyo3(get)]
    pub(crate) nbytes: u64,
}

#[pymethods]
impl Buffer {
    /// The device address for work on `stream` (restoring the buffer if it was spilled).
    fn device_ptr(&self, py: Python<'_>, stream: &Bound<'_, PyAny>) -> PyResult<u64> {
        let stream = args::unsigned("stream", stream)?;
        let (pool, ids) = (&self.pool, [self.id]);
        if let Some(ptrs) = pool.resident_ptrs(&ids, stream) {
            return Ok(ptrs[0]);
        }
        py.detach(|| pool.device_ptrs(&ids, stream))
            .map(|p| p[0])
            .map_err(|e| to_py_err(pool, e))
    }

    /// Bytes actually reserved for this buffer (its size class).
    #[getter]
    fn capacity(&self) -> u64 {
        self.pool.size_of(self.id).unwrap_or(0)
    }

    #[getter]
    fn evictable(&self) -> bool {
        self.pool.is_evictable(self.id)
    }

    #[setter]
    fn set_evictable(&self, value: bool) -> PyResult<()> {
        self.pool
            .set_evictable(self.id, value)
            .map_err(|e| to_py_err(&self.pool, e))
    }

    /// Whether the data is on the device now (False while spilled to host memory).
    #[getter]
    fn resident(&self) -> bool {
        self.pool.is_resident(self.id)
    }

    /// Moves the data to host memory now; False if it is not resident or in use right now.
    fn spill(&self, py: Python<'_>) -> PyResult<bool> {
        let pool = &self.pool;
        py.detach(|| pool.spill(self.id))
            .map_err(|e| to_py_err(pool, e))
    }

    fn __repr__(&self) -> String {
        format!("<gpukit._core.Buffer {} bytes>", self.nbytes)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // Only fails for an unknown id, which a Buffer never holds.
        let _ = self.pool.release(self.id);
    }
}

/// Memory gpukit did not allocate (an array from another library, through DLPack): the pool
/// never frees, spills or moves it; `owner` (whatever keeps the memory alive) is released when
/// the last reference to this buffer goes.
#[pyclass(module = "gpukit._core", frozen)]
pub(crate) struct ExternalBuffer {
    pub(crate) ptr: u64,
    #[pyo3(get)]
    nbytes: u64,
    #[pyo3(get)]
    owner: Py<PyAny>,
}

#[pymethods]
impl ExternalBuffer {
    #[new]
    fn new(ptr: &Bound<'_, PyAny>, nbytes: &Bound<'_, PyAny>, owner: Py<PyAny>) -> PyResult<Self> {
        Ok(Self {
            ptr: args::unsigned("ptr", ptr)?,
            nbytes: args::unsigned("nbytes", nbytes)?,
            owner,
        })
    }

    /// The address, the same for every stream (the owner orders its own work).
    fn device_ptr(&self, stream: &Bound<'_, PyAny>) -> PyResult<u64> {
        args::unsigned("stream", stream)?;
        Ok(self.ptr)
    }

    #[getter]
    fn capacity(&self) -> u64 {
        self.nbytes
    }

    /// Always False: memory the pool does not own is never spilled.
    #[getter]
    fn evictable(&self) -> bool {
        false
    }

    #[setter]
    fn set_evictable(&self, value: bool) -> PyResult<()> {
        if value {
            return Err(PyValueError::new_err(
                "memory from another library (DLPack) cannot be made evictable",
            ));
        }
        Ok(())
    }

    #[getter]
    fn resident(&self) -> bool {
        true
    }

    fn spill(&self) -> bool {
        false
    }

    fn __repr__(&self) -> String {
        format!("<gpukit._core.ExternalBuffer {} bytes>", self.nbytes)
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Pool>()?;
    m.add_class::<Buffer>()?;
    m.add_class::<ExternalBuffer>()?;
    m.add_class::<plan::Plan>()?;
    sched::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
