//! gpukit's core: the device-memory pool, launch plans and the QoS scheduler, free of Python.

pub mod capture;
pub mod launch;
pub mod plan;
pub mod pool;
pub mod sched;
pub mod size_class;
pub mod table;

#[cfg(test)]
pub(crate) mod test_table;

#[cfg(test)]
mod plan_tests;
