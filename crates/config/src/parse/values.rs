//! Attribute value syntaxes beyond plain numbers and keywords: integers in decimal or hex,
//! index lists (CPUs, cache colors) and UDP addresses of pseudo partitions.

use crate::model::PseudoAddress;

/// Decimal or 0x-hexadecimal unsigned integer.
pub(super) fn parse_int(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        None => None,
    }
}

/// `0-3,6,8-9` -> [0,1,2,3,6,8,9]; at most 4096 entries, no repeats.
pub fn parse_index_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let v = part.parse::<u32>().ok()?;
                (v, v)
            }
        };
        if lo > hi || (hi - lo) as usize + out.len() >= 4096 {
            return None;
        }
        for v in lo..=hi {
            if out.contains(&v) {
                return None;
            }
            out.push(v);
        }
    }
    Some(out)
}

pub(super) fn parse_udp(s: &str) -> Option<PseudoAddress> {
    let rest = s.strip_prefix("udp:")?;
    let (host, port) = rest.rsplit_once(':')?;
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let port: u16 = port.parse().ok().filter(|&p| p != 0)?;
    if host.is_empty() || host.contains(char::is_whitespace) {
        return None;
    }
    Some(PseudoAddress { host: host.to_string(), port })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_lists() {
        assert_eq!(parse_index_list("0-3,6"), Some(vec![0, 1, 2, 3, 6]));
        assert_eq!(parse_index_list("1"), Some(vec![1]));
        assert_eq!(parse_index_list("3-1"), None);
        assert_eq!(parse_index_list("0,0"), None);
        assert_eq!(parse_index_list("0-100000"), None);
        assert_eq!(parse_index_list("a"), None);
    }

    #[test]
    fn udp_addresses() {
        assert_eq!(parse_udp("udp:10.0.0.2:47001"), Some(PseudoAddress { host: "10.0.0.2".into(), port: 47001 }));
        assert_eq!(parse_udp("udp:[::1]:5"), Some(PseudoAddress { host: "::1".into(), port: 5 }));
        assert_eq!(parse_udp("tcp:host:5"), None);
        assert_eq!(parse_udp("udp:host:0"), None);
        assert_eq!(parse_udp("udp:host"), None);
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int(" 42 "), Some(42));
        assert_eq!(parse_int("-1"), None);
        assert_eq!(parse_int("1.5"), None);
    }
}
