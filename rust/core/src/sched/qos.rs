//! QoS classes, in the manner of Kubernetes' pod classes.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QosClass {
    /// Memory reserved at admission (request == limit), the highest stream priority, never paced.
    Guaranteed = 0,
    /// A reserved request, and a limit it may grow to while unreserved memory is free.
    Burstable = 1,
    /// Nothing reserved, the lowest priority; paced while guaranteed work runs, spilled first.
    BestEffort = 2,
}

impl QosClass {
    /// Highest first: the order in which queues are served.
    pub const ALL: [QosClass; 3] = [
        QosClass::Guaranteed,
        QosClass::Burstable,
        QosClass::BestEffort,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            QosClass::Guaranteed => "guaranteed",
            QosClass::Burstable => "burstable",
            QosClass::BestEffort => "best_effort",
        }
    }

    /// The stream priority of this class within a device's range, given as (least, greatest)
    /// the way the driver reports it (greatest is the more urgent, numerically lower on CUDA).
    pub fn stream_priority(self, least: i32, greatest: i32) -> i32 {
        match self {
            QosClass::Guaranteed => greatest,
            // The midpoint, in i64: the range may span all of i32.
            QosClass::Burstable => {
                (i64::from(least) + (i64::from(greatest) - i64::from(least)) / 2) as i32
            }
            QosClass::BestEffort => least,
        }
    }

    /// Rank of the class's buffers in the pool's spill order: lower spills first.
    pub fn spill_rank(self) -> u8 {
        match self {
            QosClass::BestEffort => 0,
            QosClass::Burstable => 1,
            QosClass::Guaranteed => 2,
        }
    }
}

impl fmt::Display for QosClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for QosClass {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "guaranteed" => Ok(QosClass::Guaranteed),
            "burstable" => Ok(QosClass::Burstable),
            "best_effort" | "besteffort" | "best-effort" => Ok(QosClass::BestEffort),
            _ => Err(format!(
                "unknown QoS class {s:?}: choose guaranteed, burstable or best_effort"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_span_the_device_range() {
        // CUDA reports (least, greatest) = (0, -5) on recent GPUs.
        assert_eq!(QosClass::Guaranteed.stream_priority(0, -5), -5);
        assert_eq!(QosClass::Burstable.stream_priority(0, -5), -2);
        assert_eq!(QosClass::BestEffort.stream_priority(0, -5), 0);
        assert_eq!(QosClass::Burstable.stream_priority(0, 0), 0);
        assert_eq!(QosClass::Burstable.stream_priority(i32::MIN, i32::MAX), -1);
        assert_eq!(QosClass::Burstable.stream_priority(i32::MAX, i32::MIN), 0);
    }

    #[test]
    fn names_round_trip() {
        for c in QosClass::ALL {
            assert_eq!(c.name().parse::<QosClass>(), Ok(c));
        }
        assert!("platinum".parse::<QosClass>().is_err());
    }
}
