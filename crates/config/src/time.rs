//! Exact decimal seconds. Configuration times are decimal strings; keeping them as integer
//! nanoseconds makes "is the frame a multiple of the period" and window sums exact.

use partita_abi::seconds::SecondsError;
use std::fmt;

/// A duration or instant in integer nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
#[serde(transparent)]
pub struct Nanos(pub i64);

pub const NANOS_PER_SECOND: i64 = 1_000_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeError {
    Malformed,
    TooPrecise,
    TooLarge,
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeError::Malformed => "is not a decimal number of seconds (for example 0.02)",
            TimeError::TooPrecise => "has more precision than one nanosecond",
            TimeError::TooLarge => "is too large (over 9.2e9 seconds)",
        })
    }
}

impl Nanos {
    /// Parses `[+-]digits[.digits][(e|E)[+-]digits]` exactly (the one parser lives in
    /// `partita_abi::seconds`, shared with the partition runtime).
    pub fn parse_seconds(text: &str) -> Result<Nanos, TimeError> {
        partita_abi::seconds::parse_seconds(text).map(Nanos).map_err(|e| match e {
            SecondsError::Malformed => TimeError::Malformed,
            SecondsError::TooPrecise => TimeError::TooPrecise,
            SecondsError::TooLarge => TimeError::TooLarge,
        })
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SECOND as f64
    }

    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// Shortest exact decimal form in seconds ("0.02", "1", "0.0125").
    pub fn to_seconds_string(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let v = self.0.unsigned_abs();
        let whole = v / NANOS_PER_SECOND as u64;
        let frac = v % NANOS_PER_SECOND as u64;
        if frac == 0 {
            return format!("{sign}{whole}");
        }
        let frac = format!("{frac:09}");
        format!("{sign}{whole}.{}", frac.trim_end_matches('0'))
    }
}

impl fmt::Display for Nanos {
    /// Milliseconds, the unit schedules are read in.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = Nanos(self.0).to_seconds_string_scaled_ms();
        write!(f, "{ms} ms")
    }
}

impl Nanos {
    fn to_seconds_string_scaled_ms(self) -> String {
        // Same exact formatting, in milliseconds.
        let sign = if self.0 < 0 { "-" } else { "" };
        let v = self.0.unsigned_abs();
        let whole = v / 1_000_000;
        let frac = v % 1_000_000;
        if frac == 0 {
            return format!("{sign}{whole}");
        }
        let frac = format!("{frac:06}");
        format!("{sign}{whole}.{}", frac.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exact_decimals() {
        assert_eq!(Nanos::parse_seconds("0.02"), Ok(Nanos(20_000_000)));
        assert_eq!(Nanos::parse_seconds("1"), Ok(Nanos(1_000_000_000)));
        assert_eq!(Nanos::parse_seconds(" .5 "), Ok(Nanos(500_000_000)));
        assert_eq!(Nanos::parse_seconds("2.5E-3"), Ok(Nanos(2_500_000)));
        assert_eq!(Nanos::parse_seconds("0.000000001"), Ok(Nanos(1)));
        assert_eq!(Nanos::parse_seconds("0.0000000010"), Ok(Nanos(1)));
        assert_eq!(Nanos::parse_seconds("-0.001"), Ok(Nanos(-1_000_000)));
        assert_eq!(Nanos::parse_seconds("0"), Ok(Nanos(0)));
        assert_eq!(Nanos::parse_seconds("000.000"), Ok(Nanos(0)));
        assert_eq!(Nanos::parse_seconds("1.000000000000000000000000000000000"), Ok(Nanos(1_000_000_000)));
    }

    #[test]
    fn rejects_malformed_and_unrepresentable() {
        for bad in ["", ".", "abc", "1.2.3", "1e", "0x10", "1,5", "--1", "1 2", "inf", "NaN"] {
            assert_eq!(Nanos::parse_seconds(bad), Err(TimeError::Malformed), "{bad:?}");
        }
        assert_eq!(Nanos::parse_seconds("0.0000000001"), Err(TimeError::TooPrecise));
        assert_eq!(Nanos::parse_seconds("1e30"), Err(TimeError::TooLarge));
        assert_eq!(Nanos::parse_seconds("99999999999999999999999999999999999999999"), Err(TimeError::TooLarge));
        assert_eq!(Nanos::parse_seconds("1e-2147483648"), Err(TimeError::TooPrecise));
    }

    #[test]
    fn formats_round_trip() {
        for s in ["0.02", "1", "0.0125", "0.000000001", "12.5"] {
            assert_eq!(Nanos::parse_seconds(s).unwrap().to_seconds_string(), s);
        }
        assert_eq!(Nanos(2_500_000).to_string(), "2.5 ms");
    }
}
