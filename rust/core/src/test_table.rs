//! A host-memory allocator table for Rust tests, with an optional capacity so that tests can run
//! the pool out of memory.

use std::alloc::{alloc, dealloc, Layout};
use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::table::{AllocatorTable, RawAllocatorTable, TABLE_VERSION};

pub const OOM: i32 = 2;
const ALIGN: usize = 256;

pub struct HostDevice {
    pub capacity: u64,
    live: Mutex<HashMap<u64, u64>>,
    /// What event queries answer: tests hold work "in flight" by setting it false.
    pub events_complete: AtomicBool,
    /// Called by every event query (tests check what a query may do, e.g. call the pool).
    pub on_query: Mutex<Option<Box<dyn Fn() + Send>>>,
    pub queries: AtomicU64,
}

impl HostDevice {
    pub fn live_bytes(&self) -> u64 {
        self.live.lock().unwrap().values().sum()
    }
}

fn device(ctx: *mut c_void) -> &'static HostDevice {
    // SAFETY: ctx is the leaked HostDevice that `host_table` put in the table.
    unsafe { &*(ctx as *const HostDevice) }
}

unsafe extern "C" fn device_alloc(ctx: *mut c_void, n: u64, out: *mut u64) -> i32 {
    let dev = device(ctx);
    let mut live = dev.live.lock().unwrap();
    if live.values().sum::<u64>() + n > dev.capacity {
        return OOM;
    }
    let ptr = alloc(Layout::from_size_align(n as usize, ALIGN).unwrap()) as u64;
    live.insert(ptr, n);
    *out = ptr;
    0
}

unsafe extern "C" fn device_free(ctx: *mut c_void, ptr: u64) -> i32 {
    match device(ctx).live.lock().unwrap().remove(&ptr) {
        Some(n) => {
            dealloc(
                ptr as *mut u8,
                Layout::from_size_align(n as usize, ALIGN).unwrap(),
            );
            0
        }
        None => 1,
    }
}

unsafe extern "C" fn host_alloc(ctx: *mut c_void, n: u64, out: *mut *mut c_void) -> i32 {
    let mut p = 0;
    let code = device_alloc(ctx, n, &mut p);
    *out = p as *mut c_void;
    code
}

unsafe extern "C" fn host_free(ctx: *mut c_void, p: *mut c_void) -> i32 {
    device_free(ctx, p as u64)
}

unsafe extern "C" fn copy_to_host(_: *mut c_void, d: *mut c_void, s: u64, n: u64, _: u64) -> i32 {
    std::ptr::copy_nonoverlapping(s as *const u8, d as *mut u8, n as usize);
    0
}

unsafe extern "C" fn copy_to_device(
    _: *mut c_void,
    d: u64,
    s: *const c_void,
    n: u64,
    _: u64,
) -> i32 {
    std::ptr::copy_nonoverlapping(s as *const u8, d as *mut u8, n as usize);
    0
}

unsafe extern "C" fn event_create(_: *mut c_void, out: *mut u64) -> i32 {
    *out = 1;
    0
}

unsafe extern "C" fn event_noop(_: *mut c_void, _: u64, _: u64) -> i32 {
    0
}

unsafe extern "C" fn event_query(ctx: *mut c_void, _: u64) -> i32 {
    let dev = device(ctx);
    dev.queries.fetch_add(1, Ordering::SeqCst);
    if let Some(hook) = dev.on_query.lock().unwrap().as_ref() {
        hook();
    }
    if dev.events_complete.load(Ordering::SeqCst) {
        0
    } else {
        1
    }
}

unsafe extern "C" fn event_destroy(_: *mut c_void, _: u64) -> i32 {
    0
}

unsafe extern "C" fn error_name(_: *mut c_void, code: i32) -> *const c_char {
    match code {
        OOM => c"TEST_OUT_OF_MEMORY".as_ptr(),
        _ => c"TEST_ERROR".as_ptr(),
    }
}

/// A table over host memory with `capacity` bytes. Leaks the table and device: tests only.
pub fn host_table(capacity: u64) -> (AllocatorTable, &'static HostDevice) {
    let dev: &'static HostDevice = Box::leak(Box::new(HostDevice {
        capacity,
        live: Mutex::new(HashMap::new()),
        events_complete: AtomicBool::new(true),
        on_query: Mutex::new(None),
        queries: AtomicU64::new(0),
    }));
    let raw = Box::leak(Box::new(RawAllocatorTable {
        version: TABLE_VERSION,
        backend: 0,
        ctx: dev as *const HostDevice as *mut c_void,
        device_alloc,
        device_free,
        host_alloc,
        host_free,
        copy_to_host,
        copy_to_device,
        event_create,
        event_record: event_noop,
        event_query,
        event_destroy,
        error_name,
        out_of_memory_code: OOM,
    }));
    // SAFETY: the table is leaked, so it lives for the whole test process.
    (unsafe { AllocatorTable::from_raw(raw) }.unwrap(), dev)
}
