//! The result store: one SQLite file (default `partita-results.db`). A *run* is one parameter
//! point of one experiment on one backend, with the machine it ran on; every sample is kept,
//! and the statistics are stored beside them for plain SQL queries.

use crate::experiment::{Metric, Params, PointResult, Unit};
use crate::machine::MachineInfo;
use crate::stats::Summary;
use rusqlite::{Connection, params};
use std::collections::BTreeMap;
use std::path::Path;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    invocation TEXT NOT NULL,      -- one `partita bench` command: its start time and pid
    experiment TEXT NOT NULL,
    backend TEXT NOT NULL,
    quick INTEGER NOT NULL,
    params TEXT NOT NULL,          -- JSON object
    timestamp TEXT NOT NULL,       -- UTC, RFC 3339
    machine TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    kernel TEXT NOT NULL,
    cores INTEGER NOT NULL,
    git_revision TEXT NOT NULL,
    configuration TEXT NOT NULL,   -- JSON: command line, experiment description
    notes TEXT NOT NULL            -- JSON array of strings
);
CREATE TABLE IF NOT EXISTS samples (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    metric TEXT NOT NULL,
    seq INTEGER NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_run ON samples(run_id, metric);
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    metric TEXT NOT NULL,
    unit TEXT NOT NULL,
    n INTEGER NOT NULL, min REAL, median REAL, mean REAL, p99 REAL, max REAL, stddev REAL, abs_jitter REAL,
    PRIMARY KEY (run_id, metric)
);
";

/// What is stored per run besides the point's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMeta {
    pub invocation: String,
    pub experiment: String,
    pub backend: String,
    pub quick: bool,
    pub timestamp: String,
    pub machine: MachineInfo,
    pub configuration: serde_json::Value,
}

/// A run read back from the store.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub id: i64,
    pub meta: RunMeta,
    pub point: PointResult,
}

pub struct Store {
    conn: Connection,
}

fn sql(e: rusqlite::Error) -> String {
    format!("result database: {e}")
}

impl Store {
    pub fn open(path: &Path) -> Result<Store, String> {
        let conn = Connection::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        conn.execute_batch(SCHEMA).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Store { conn })
    }

    /// Stores a run and returns its id.
    pub fn insert(&mut self, meta: &RunMeta, point: &PointResult) -> Result<i64, String> {
        let tx = self.conn.transaction().map_err(sql)?;
        let m = &meta.machine;
        tx.execute(
            "INSERT INTO runs (invocation, experiment, backend, quick, params, timestamp, machine, cpu_model, kernel, cores, git_revision, configuration, notes)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                meta.invocation,
                meta.experiment,
                meta.backend,
                meta.quick,
                serde_json::Value::Object(point.params.clone()).to_string(),
                meta.timestamp,
                m.machine,
                m.cpu_model,
                m.kernel,
                m.cores,
                m.git_revision,
                meta.configuration.to_string(),
                serde_json::to_string(&point.notes).expect("strings serialize"),
            ],
        )
        .map_err(sql)?;
        let id = tx.last_insert_rowid();
        {
            let mut ins = tx.prepare("INSERT INTO samples (run_id, metric, seq, value) VALUES (?1, ?2, ?3, ?4)").map_err(sql)?;
            let mut stat = tx
                .prepare("INSERT INTO metrics (run_id, metric, unit, n, min, median, mean, p99, max, stddev, abs_jitter) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")
                .map_err(sql)?;
            for (name, metric) in &point.metrics {
                for (i, v) in metric.samples.iter().enumerate() {
                    ins.execute(params![id, name, i as i64, v]).map_err(sql)?;
                }
                if let Some(s) = Summary::of(&metric.samples) {
                    stat.execute(params![
                        id,
                        name,
                        metric.unit.name(),
                        s.n as i64,
                        s.min,
                        s.median,
                        s.mean,
                        s.p99,
                        s.max,
                        s.stddev,
                        s.abs_jitter()
                    ])
                    .map_err(sql)?;
                }
            }
        }
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// Every run, oldest first.
    pub fn runs(&self) -> Result<Vec<StoredRun>, String> {
        let mut q = self
            .conn
            .prepare("SELECT id, invocation, experiment, backend, quick, params, timestamp, machine, cpu_model, kernel, cores, git_revision, configuration, notes FROM runs ORDER BY id")
            .map_err(sql)?;
        let rows = q
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    RunMeta {
                        invocation: r.get(1)?,
                        experiment: r.get(2)?,
                        backend: r.get(3)?,
                        quick: r.get(4)?,
                        timestamp: r.get(6)?,
                        machine: MachineInfo {
                            machine: r.get(7)?,
                            cpu_model: r.get(8)?,
                            kernel: r.get(9)?,
                            cores: r.get(10)?,
                            git_revision: r.get(11)?,
                        },
                        configuration: serde_json::from_str(&r.get::<_, String>(12)?).unwrap_or_default(),
                    },
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(13)?,
                ))
            })
            .map_err(sql)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, meta, params, notes) = row.map_err(sql)?;
            let params: Params = serde_json::from_str(&params).unwrap_or_default();
            let notes: Vec<String> = serde_json::from_str(&notes).unwrap_or_default();
            let metrics = self.metrics_of(id)?;
            out.push(StoredRun { id, meta, point: PointResult { params, metrics, notes } });
        }
        Ok(out)
    }

    fn metrics_of(&self, id: i64) -> Result<BTreeMap<String, Metric>, String> {
        let mut units: BTreeMap<String, Unit> = BTreeMap::new();
        let mut q = self.conn.prepare("SELECT metric, unit FROM metrics WHERE run_id = ?1").map_err(sql)?;
        for row in q.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))).map_err(sql)? {
            let (m, u) = row.map_err(sql)?;
            units.insert(m, Unit::parse(&u).unwrap_or(Unit::Count));
        }
        let mut out: BTreeMap<String, Metric> = BTreeMap::new();
        let mut q = self.conn.prepare("SELECT metric, value FROM samples WHERE run_id = ?1 ORDER BY metric, seq").map_err(sql)?;
        for row in q.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))).map_err(sql)? {
            let (m, v) = row.map_err(sql)?;
            let unit = units.get(&m).copied().unwrap_or(Unit::Count);
            out.entry(m).or_insert_with(|| Metric { unit, samples: Vec::new() }).samples.push(v);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::params as p;

    #[test]
    fn a_run_comes_back_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let meta = RunMeta {
            invocation: "2026-01-01T00:00:00Z-1".into(),
            experiment: "pcs".into(),
            backend: "process".into(),
            quick: true,
            timestamp: "2026-01-01T00:00:00Z".into(),
            machine: MachineInfo {
                machine: "m".into(),
                cpu_model: "cpu".into(),
                kernel: "6.1".into(),
                cores: 2,
                git_revision: "abc".into(),
            },
            configuration: serde_json::json!({"command": "partita bench pcs"}),
        };
        let mut point = PointResult { params: p([("processes", 4.into())]), ..Default::default() };
        point.metrics.insert("pcs_ns".into(), Metric { unit: Unit::Ns, samples: vec![3.0, 1.0, 2.5] });
        point.metrics.insert("loss".into(), Metric { unit: Unit::Percent, samples: vec![0.25] });
        point.notes.push("a note".into());
        let id = Store::open(&path).unwrap().insert(&meta, &point).unwrap();
        // Reopened: the schema is created only once, the run reads back whole.
        let runs = Store::open(&path).unwrap().runs().unwrap();
        assert_eq!(runs, vec![StoredRun { id, meta: meta.clone(), point: point.clone() }]);
        let conn = Connection::open(&path).unwrap();
        let (n, median, jitter): (i64, f64, f64) = conn
            .query_row("SELECT n, median, abs_jitter FROM metrics WHERE metric = 'pcs_ns'", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap();
        assert_eq!((n, median, jitter), (3, 2.5, 2.0));
    }
}
