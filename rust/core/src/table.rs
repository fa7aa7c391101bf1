//! Mirror of `native/include/gpukit/allocator_table.h` and a safe wrapper around it.

use std::ffi::{c_char, c_void, CStr};

pub const TABLE_VERSION: u32 = 1;

#[repr(C)]
pub struct RawAllocatorTable {
    pub version: u32,
    pub backend: u32,
    pub ctx: *mut c_void,
    pub device_alloc: unsafe extern "C" fn(*mut c_void, u64, *mut u64) -> i32,
    pub device_free: unsafe extern "C" fn(*mut c_void, u64) -> i32,
    pub host_alloc: unsafe extern "C" fn(*mut c_void, u64, *mut *mut c_void) -> i32,
    pub host_free: unsafe extern "C" fn(*mut c_void, *mut c_void) -> i32,
    pub copy_to_host: unsafe extern "C" fn(*mut c_void, *mut c_void, u64, u64, u64) -> i32,
    pub copy_to_device: unsafe extern "C" fn(*mut c_void, u64, *const c_void, u64, u64) -> i32,
    pub event_create: unsafe extern "C" fn(*mut c_void, *mut u64) -> i32,
    pub event_record: unsafe extern "C" fn(*mut c_void, u64, u64) -> i32,
    pub event_query: unsafe extern "C" fn(*mut c_void, u64) -> i32,
    pub event_destroy: unsafe extern "C" fn(*mut c_void, u64) -> i32,
    pub error_name: unsafe extern "C" fn(*mut c_void, i32) -> *const c_char,
    pub out_of_memory_code: i32,
}

/// A failed call through the table: which call, and the backend's code and name for the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendError {
    pub call: &'static str,
    pub code: i32,
    pub name: String,
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed: {} ({})", self.call, self.name, self.code)
    }
}

/// Safe handle on a table that the exporting module keeps alive for the life of the process.
pub struct AllocatorTable {
    raw: &'static RawAllocatorTable,
}

// SAFETY: the table's functions are required by the header to be callable from any thread.
unsafe impl Send for AllocatorTable {}
unsafe impl Sync for AllocatorTable {}

impl AllocatorTable {
    /// # Safety
    /// `raw` must point to a table that outlives every use of the returned handle and whose
    /// functions are thread-safe and behave as the header describes.
    pub unsafe fn from_raw(raw: *const RawAllocatorTable) -> Result<Self, String> {
        let raw = raw
            .as_ref()
            .ok_or_else(|| "allocator table pointer is null".to_string())?;
        if raw.version != TABLE_VERSION {
            return Err(format!(
                "allocator table version {} does not match gpukit._core's {}",
                raw.version, TABLE_VERSION
            ));
        }
        Ok(Self { raw })
    }

    pub fn backend(&self) -> u32 {
        self.raw.backend
    }

    fn check(&self, call: &'static str, code: i32) -> Result<(), BackendError> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: error_name returns a static NUL-terminated string for any code.
        let name = unsafe { CStr::from_ptr((self.raw.error_name)(self.raw.ctx, code)) };
        Err(BackendError {
            call,
            code,
            name: name.to_string_lossy().into_owned(),
        })
    }

    pub fn is_out_of_memory(&self, err: &BackendError) -> bool {
        err.code == self.raw.out_of_memory_code
    }

    pub fn device_alloc(&self, nbytes: u64) -> Result<u64, BackendError> {
        let mut ptr = 0u64;
        // SAFETY: valid out-pointer; the callee only writes it.
        let code = unsafe { (self.raw.device_alloc)(self.raw.ctx, nbytes, &mut ptr) };
        self.check("device_alloc", code).map(|_| ptr)
    }

    pub fn device_free(&self, ptr: u64) -> Result<(), BackendError> {
        // SAFETY: ptr came from device_alloc and is freed once (the pool's invariant).
        let code = unsafe { (self.raw.device_free)(self.raw.ctx, ptr) };
        self.check("device_free", code)
    }

    pub fn host_alloc(&self, nbytes: u64) -> Result<*mut c_void, BackendError> {
        let mut ptr = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let code = unsafe { (self.raw.host_alloc)(self.raw.ctx, nbytes, &mut ptr) };
        self.check("host_alloc", code).map(|_| ptr)
    }

    pub fn event_create(&self) -> Result<u64, BackendError> {
        let mut e = 0u64;
        // SAFETY: valid out-pointer.
        let code = unsafe { (self.raw.event_create)(self.raw.ctx, &mut e) };
        self.check("event_create", code).map(|_| e)
    }

    pub fn event_record(&self, event: u64, stream: u64) -> Result<(), BackendError> {
        // SAFETY: event came from event_create; stream is a stream of this device (or 0).
        let code = unsafe { (self.raw.event_record)(self.raw.ctx, event, stream) };
        self.check("event_record", code)
    }

    /// Whether all work recorded before the event has finished.
    pub fn event_done(&self, event: u64) -> Result<bool, BackendError> {
        // SAFETY: event came from event_create.
        match unsafe { (self.raw.event_query)(self.raw.ctx, event) } {
            0 => Ok(true),
            1 => Ok(false),
            code => self.check("event_query", code).map(|_| false),
        }
    }

    pub fn event_destroy(&self, event: u64) -> Result<(), BackendError> {
        // SAFETY: event came from event_create and is destroyed once.
        let code = unsafe { (self.raw.event_destroy)(self.raw.ctx, event) };
        self.check("event_destroy", code)
    }

    /// # Safety
    /// `ptr` must come from `host_alloc` and not be used afterwards.
    pub unsafe fn host_free(&self, ptr: *mut c_void) -> Result<(), BackendError> {
        let code = (self.raw.host_free)(self.raw.ctx, ptr);
        self.check("host_free", code)
    }

    /// # Safety
    /// `dst` must be valid for `nbytes` writes and `src` a live device range of `nbytes`.
    pub unsafe fn copy_to_host(
        &self,
        dst: *mut c_void,
        src: u64,
        nbytes: u64,
        stream: u64,
    ) -> Result<(), BackendError> {
        let code = (self.raw.copy_to_host)(self.raw.ctx, dst, src, nbytes, stream);
        self.check("copy_to_host", code)
    }

    /// # Safety
    /// `src` must be valid for `nbytes` reads and `dst` a live device range of `nbytes`.
    pub unsafe fn copy_to_device(
        &self,
        dst: u64,
        src: *const c_void,
        nbytes: u64,
        stream: u64,
    ) -> Result<(), BackendError> {
        let code = (self.raw.copy_to_device)(self.raw.ctx, dst, src, nbytes, stream);
        self.check("copy_to_device", code)
    }
}
