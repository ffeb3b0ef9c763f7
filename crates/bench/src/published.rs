//! The figures published in the papers (data/published.toml, compiled in), shown beside
//! Partita's in the report.

/// The published data: one TOML table per paper table (`seed001_pcs`, `seed002_api`, ...).
pub struct Published {
    pub tables: toml::Table,
}

pub const SOURCE: &str = include_str!("../../../data/published.toml");

impl Published {
    pub fn load() -> Published {
        Published { tables: SOURCE.parse().expect("data/published.toml is valid TOML (tested)") }
    }

    pub fn table(&self, key: &str) -> Option<&toml::Table> {
        self.tables.get(key)?.as_table()
    }

    /// A number of table `key` (integer or float).
    pub fn number(&self, key: &str, field: &str) -> Option<f64> {
        as_f64(self.table(key)?.get(field)?)
    }

    /// An array of numbers of table `key`.
    pub fn numbers(&self, key: &str, field: &str) -> Option<Vec<f64>> {
        self.table(key)?.get(field)?.as_array()?.iter().map(as_f64).collect()
    }

    /// Where a table's figures come from: "seed FILE, WHERE (PLATFORM)".
    pub fn source(&self, key: &str) -> String {
        let Some(t) = self.table(key) else { return String::new() };
        let s = |f: &str| t.get(f).and_then(|v| v.as_str()).unwrap_or("");
        let platform = s("platform");
        format!("seed {}, {}{}", s("seed"), s("where"), if platform.is_empty() { String::new() } else { format!(" ({platform})") })
    }
}

pub fn as_f64(v: &toml::Value) -> Option<f64> {
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_figures_load() {
        let p = Published::load();
        assert_eq!(p.number("seed001_pcs", "partition_context_switch_us"), Some(11.0));
        let slots = p.numbers("seed001_slot_loss", "slot_ms").unwrap();
        assert_eq!(slots.len(), p.numbers("seed001_slot_loss", "measured_loss_pct").unwrap().len());
        assert!(p.source("seed002_api").contains("Table VI"));
    }
}
