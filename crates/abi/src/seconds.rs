//! Exact decimal seconds, the one time notation of Partita: configuration times
//! (`Duration="0.02"`) and the partition runtime's environment (`PARTITA_STANDALONE_PERIOD`) are
//! written this way. Parsed into integer nanoseconds without floating point, so that "is the frame a
//! multiple of the period" and window sums stay exact. Here, in the `no_std` ABI crate, because both
//! the configuration and the partition runtime need it and neither may depend on the other.

/// Why a text is not a time in decimal seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecondsError {
    /// Not `[+-]digits[.digits][(e|E)[+-]digits]`.
    Malformed,
    /// A non-zero digit below one nanosecond.
    TooPrecise,
    /// Beyond `i64` nanoseconds (about 292 years).
    TooLarge,
}

/// Parses `[+-]digits[.digits][(e|E)[+-]digits]` (surrounding white space allowed) into
/// nanoseconds, exactly: "0.02" is 20 000 000, "1e-9" is 1, "0.0000000001" is `TooPrecise`.
pub fn parse_seconds(text: &str) -> Result<i64, SecondsError> {
    let s = text.trim();
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], parse_exponent(&s[i + 1..])?),
        None => (s, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(SecondsError::Malformed);
    }
    if !int_part.bytes().chain(frac_part.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(SecondsError::Malformed);
    }
    let frac_part = frac_part.trim_end_matches('0');
    // Every significant digit as one integer, then scaled by 10^(exponent - fraction digits + 9).
    const LIMIT: i128 = i64::MAX as i128 * 1_000_000_000_000;
    let mut value: i128 = 0;
    for b in int_part.bytes().chain(frac_part.bytes()) {
        value = value * 10 + i128::from(b - b'0');
        if value > LIMIT {
            return Err(SecondsError::TooLarge);
        }
    }
    let scale = i64::from(exponent) - frac_part.len() as i64 + 9;
    if value != 0 {
        if scale >= 0 {
            for _ in 0..scale {
                value *= 10;
                if value > i128::from(i64::MAX) {
                    return Err(SecondsError::TooLarge);
                }
            }
        } else {
            for _ in 0..(-scale) {
                if value % 10 != 0 {
                    return Err(SecondsError::TooPrecise);
                }
                value /= 10;
            }
        }
    }
    let value = i64::try_from(value).map_err(|_| SecondsError::TooLarge)?;
    Ok(if negative { -value } else { value })
}

fn parse_exponent(s: &str) -> Result<i32, SecondsError> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SecondsError::Malformed);
    }
    let mut e: i32 = 0;
    for b in digits.bytes() {
        // Any exponent beyond a few dozen is out of range either way; cap it instead of overflowing.
        e = (e * 10 + i32::from(b - b'0')).min(10_000);
    }
    Ok(if negative { -e } else { e })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString;

    #[test]
    fn decimal_seconds_parse_exactly() {
        assert_eq!(parse_seconds("0.1"), Ok(100_000_000));
        assert_eq!(parse_seconds("0.020"), Ok(20_000_000));
        assert_eq!(parse_seconds(" 2 "), Ok(2_000_000_000));
        assert_eq!(parse_seconds(".5"), Ok(500_000_000));
        assert_eq!(parse_seconds("5."), Ok(5_000_000_000));
        assert_eq!(parse_seconds("0.000000001"), Ok(1));
        assert_eq!(parse_seconds("1e-9"), Ok(1));
        assert_eq!(parse_seconds("2.5E-3"), Ok(2_500_000));
        assert_eq!(parse_seconds("1e3"), Ok(1_000_000_000_000));
        assert_eq!(parse_seconds("-0.5"), Ok(-500_000_000));
        assert_eq!(parse_seconds("+0"), Ok(0));
        assert_eq!(parse_seconds("0e99999999999"), Ok(0));
    }

    #[test]
    fn non_times_are_refused_with_the_reason() {
        for bad in ["", ".", "-", "1.2.3", "1e", "e5", "0x10", "1 s", "1e+-2", "--1"] {
            assert_eq!(parse_seconds(bad), Err(SecondsError::Malformed), "{bad:?}");
        }
        assert_eq!(parse_seconds("0.0000000001"), Err(SecondsError::TooPrecise));
        assert_eq!(parse_seconds("1e-10"), Err(SecondsError::TooPrecise));
        assert_eq!(parse_seconds("9300000000"), Err(SecondsError::TooLarge));
        assert_eq!(parse_seconds("1e99999999999"), Err(SecondsError::TooLarge));
        assert_eq!(parse_seconds(&"9".repeat(60).to_string()), Err(SecondsError::TooLarge));
    }

    #[test]
    fn trailing_zeros_below_a_nanosecond_are_not_precision() {
        assert_eq!(parse_seconds("0.0000000010000"), Ok(1));
        assert_eq!(parse_seconds("1.000000000000000000000"), Ok(1_000_000_000));
    }
}
