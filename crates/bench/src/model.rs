//! The partition overhead model of seed 001 (section 4.3, Table 1): a slot of duration SD leaves
//! the partition an effective time ET = SD - PCS, so with n slots per major frame the
//! performance loss is PL = n * PCS / sum(SD).

/// ET = SD - PCS (same unit as the arguments; never negative).
pub fn effective_time(slot: f64, pcs: f64) -> f64 {
    (slot - pcs).max(0.0)
}

/// PL = n * PCS / sum(SD), as a fraction (multiply by 100 for percent); `slots` are the n slot
/// durations of one major frame. 0 without slots.
pub fn performance_loss(pcs: f64, slots: &[f64]) -> f64 {
    let total: f64 = slots.iter().sum();
    if total <= 0.0 { 0.0 } else { slots.len() as f64 * pcs / total }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_001_theoretical_losses() {
        // 11 us PCS (seed 001, section 4.3), 3 equal slots: PL = PCS / SD.
        for (sd_ms, pct) in [(1000.0, 0.0011), (100.0, 0.011), (10.0, 0.11), (1.0, 1.1)] {
            let sd = sd_ms * 1e6;
            let pl = performance_loss(11_000.0, &[sd, sd, sd]) * 100.0;
            assert!((pl - pct).abs() < 1e-9, "{sd_ms} ms: {pl} %");
        }
        assert_eq!(performance_loss(5.0, &[]), 0.0);
        assert_eq!(performance_loss(1.0, &[1.0, 3.0]), 0.5);
    }

    #[test]
    fn effective_time_is_the_slot_minus_the_switch() {
        assert_eq!(effective_time(1_000_000.0, 11_000.0), 989_000.0);
        assert_eq!(effective_time(5.0, 10.0), 0.0);
    }
}
