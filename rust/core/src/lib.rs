//! gpukit's core: the device-memory pool (and, later, the QoS scheduler), free of Python.

pub mod pool;
pub mod size_class;
pub mod table;

#[cfg(test)]
mod test_table;

#[cfg(test)]
mod pool_tests;
