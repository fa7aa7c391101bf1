//! Mirror of `native/include/gpukit/launch_table.h` and a safe wrapper around it: how plans
//! launch kernels and encode TMA descriptors without Python.

use std::ffi::{c_char, c_void, CStr};

use crate::table::BackendError;

pub const LAUNCH_TABLE_VERSION: u32 = 2;
pub const TENSOR_MAP_BYTES: usize = 128;

/// `gk_tensor_map_desc`: cuTensorMapEncodeTiled's arguments but the global address.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TensorMapDesc {
    pub data_type: u32,
    pub rank: u32,
    pub global_dim: [u64; 5],
    pub global_strides: [u64; 4],
    pub box_dim: [u32; 5],
    pub element_strides: [u32; 5],
    pub interleave: u32,
    pub swizzle: u32,
    pub l2_promotion: u32,
    pub oob_fill: u32,
}

#[repr(C)]
pub struct RawLaunchTable {
    pub version: u32,
    pub ctx: *mut c_void,
    pub launch: unsafe extern "C" fn(
        *mut c_void,
        u64,
        *const u32,
        *const u32,
        u32,
        u64,
        *const c_void,
        u64,
    ) -> i32,
    pub encode_tensor_map:
        unsafe extern "C" fn(*mut c_void, *mut c_void, *const TensorMapDesc, u64) -> i32,
    pub error_name: unsafe extern "C" fn(*mut c_void, i32) -> *const c_char,
    pub fork: unsafe extern "C" fn(*mut c_void, u64, *mut u64) -> i32,
    pub join: unsafe extern "C" fn(*mut c_void, u64, u64) -> i32,
}

/// One kernel launch's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
}

/// Safe handle on a table that the exporting module keeps alive for the life of the process.
pub struct LaunchTable {
    raw: &'static RawLaunchTable,
}

// SAFETY: the header requires the table's functions to be callable from any thread.
unsafe impl Send for LaunchTable {}
unsafe impl Sync for LaunchTable {}

impl LaunchTable {
    /// # Safety
    /// `raw` must point to a table that outlives every use of the returned handle and whose
    /// functions are thread-safe and behave as the header describes.
    pub unsafe fn from_raw(raw: *const RawLaunchTable) -> Result<Self, String> {
        let raw = raw
            .as_ref()
            .ok_or_else(|| "launch table pointer is null".to_string())?;
        if raw.version != LAUNCH_TABLE_VERSION {
            return Err(format!(
                "launch table version {} does not match gpukit._core's {}",
                raw.version, LAUNCH_TABLE_VERSION
            ));
        }
        Ok(Self { raw })
    }

    /// Ok for code 0, else the error of `call` named by the backend.
    pub fn check(&self, call: &'static str, code: i32) -> Result<(), BackendError> {
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

    /// Launches `function` (a handle of this table's device) with the parameter buffer `args`.
    pub fn launch(
        &self,
        function: u64,
        geometry: &Geometry,
        stream: u64,
        args: &[u8],
    ) -> Result<(), BackendError> {
        // SAFETY: grid/block point to three u32 each; args is valid for its length.
        let code = unsafe {
            (self.raw.launch)(
                self.raw.ctx,
                function,
                geometry.grid.as_ptr(),
                geometry.block.as_ptr(),
                geometry.shared,
                stream,
                args.as_ptr() as *const c_void,
                args.len() as u64,
            )
        };
        self.check("cuLaunchKernel", code)
    }

    /// The second lane beside `stream`, on which what is queued next waits for everything
    /// queued on `stream` so far (`stream` itself where it has none).
    pub fn fork(&self, stream: u64) -> Result<u64, BackendError> {
        let mut side = 0u64;
        // SAFETY: side is a valid u64 to write.
        let code = unsafe { (self.raw.fork)(self.raw.ctx, stream, &mut side) };
        self.check("fork (cuEventRecord, cuStreamWaitEvent)", code)
            .map(|_| side)
    }

    /// `stream` waits for everything queued on `side` so far.
    pub fn join(&self, stream: u64, side: u64) -> Result<(), BackendError> {
        // SAFETY: plain values.
        let code = unsafe { (self.raw.join)(self.raw.ctx, stream, side) };
        self.check("join (cuEventRecord, cuStreamWaitEvent)", code)
    }

    /// The bytes of a tensor map over memory at `address`.
    pub fn encode_tensor_map(
        &self,
        desc: &TensorMapDesc,
        address: u64,
    ) -> Result<[u8; TENSOR_MAP_BYTES], BackendError> {
        let mut out = [0u8; TENSOR_MAP_BYTES];
        // SAFETY: out holds TENSOR_MAP_BYTES bytes; desc is a valid descriptor.
        let code = unsafe {
            (self.raw.encode_tensor_map)(
                self.raw.ctx,
                out.as_mut_ptr() as *mut c_void,
                desc,
                address,
            )
        };
        self.check("cuTensorMapEncodeTiled", code).map(|_| out)
    }
}
