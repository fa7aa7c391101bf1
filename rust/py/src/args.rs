//! Checks of what Python passes into gpukit._core, so that no argument reaches a panic, an
//! overflow or a wrapped-around value in Rust: each bad one is a Python exception naming it.
//!
//! - Integers: an int or anything with `__index__` (NumPy's integers); anything else is a
//!   TypeError. Below the smallest allowed value (a negative size) is a ValueError; beyond the
//!   largest representable one (2**64 - 1 for sizes) an OverflowError.
//! - Seconds (timeouts, waits): an int or float; None or +inf wait forever (as
//!   `concurrent.futures` does), and so does a finite wait too long to represent; NaN or a
//!   negative number is a ValueError.

use std::time::Duration;

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// An integer argument in `min..=max`.
pub fn int_in(name: &str, value: &Bound<'_, PyAny>, min: i128, max: i128) -> PyResult<i128> {
    let v = match value.extract::<i128>() {
        Ok(v) => v,
        Err(e) if e.is_instance_of::<PyOverflowError>(value.py()) => {
            // Beyond even i128: report it on the side it lies.
            return Err(if value.lt(0)? {
                PyValueError::new_err(format!("{name} must be >= {min}, not {value}"))
            } else {
                PyOverflowError::new_err(format!("{name}={value} is too large (at most {max})"))
            });
        }
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "{name} must be an int, not {}",
                type_name(value)
            )))
        }
    };
    if v < min {
        let err = format!("{name} must be >= {min}, not {v}");
        // Below the type's range (a negative size) is a bad value; below a rule's minimum too.
        return Err(PyValueError::new_err(err));
    }
    if v > max {
        return Err(PyOverflowError::new_err(format!(
            "{name}={v} is too large (at most {max})"
        )));
    }
    Ok(v)
}

/// A size, address, stream or id: 0 to 2**64 - 1.
pub fn unsigned(name: &str, value: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(v) = value.extract::<u64>() {
        return Ok(v); // the common case, at the cost of one conversion
    }
    int_in(name, value, 0, u64::MAX.into()).map(|v| v as u64)
}

pub fn optional_unsigned(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    value.map(|v| unsigned(name, v)).transpose()
}

/// A count of at least 1 that fits `T`.
pub fn at_least_one<T: TryFrom<i128>>(name: &str, value: &Bound<'_, PyAny>, max: T) -> PyResult<T>
where
    i128: From<T>,
{
    let v = int_in(name, value, 1, i128::from(max))?;
    T::try_from(v).map_err(|_| PyOverflowError::new_err(format!("{name}={v} is too large")))
}

pub fn int32(name: &str, value: &Bound<'_, PyAny>) -> PyResult<i32> {
    int_in(name, value, i32::MIN.into(), i32::MAX.into()).map(|v| v as i32)
}

/// A wait in seconds (see the module's notes); None: forever.
pub fn seconds(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Duration>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let secs = match value.extract::<f64>() {
        Ok(s) => s,
        // An int too large for a float: longer than any wait, unless it is negative.
        Err(e) if e.is_instance_of::<PyOverflowError>(value.py()) && !value.lt(0)? => {
            return Ok(None)
        }
        Err(e) if e.is_instance_of::<PyOverflowError>(value.py()) => f64::NEG_INFINITY,
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "{name} must be a number of seconds (int or float) or None, not {}",
                type_name(value)
            )))
        }
    };
    if secs.is_nan() {
        return Err(PyValueError::new_err(format!(
            "{name} must be a number of seconds, not nan"
        )));
    }
    if secs < 0.0 {
        return Err(PyValueError::new_err(format!(
            "{name} must be >= 0 seconds (None waits forever), not {value}"
        )));
    }
    // +inf, and waits past what a Duration holds, have no end.
    Ok(Duration::try_from_secs_f64(secs).ok())
}
