//! gpukit's core: the device-memory pool and the QoS scheduler, free of Python.

pub mod pool;
pub mod sched;
pub mod size_class;
pub mod table;

#[cfg(test)]
pub(crate) mod test_table;
