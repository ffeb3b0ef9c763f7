//! `partita report`: a store with runs of every experiment becomes one self-contained HTML
//! page, which a real headless browser (Debian's chromium) renders to a non-blank screenshot.
//! The runs are written through the store's API with generated samples, so this test needs no
//! privileges; the smoke runs in tests/bench.rs cover real measurements.

mod machine;
mod partitions;

use assert_cmd::Command;
use partita_bench::experiment::{Metric, PointResult, Unit, params, registry};
use partita_bench::machine::{MachineInfo, utc_now};
use partita_bench::store::{RunMeta, Store};
use std::path::Path;

fn run(store: &mut Store, experiment: &str, backend: &str, p: partita_bench::Params, metrics: &[(&str, Unit, Vec<f64>)]) {
    let meta = RunMeta {
        invocation: "test".into(),
        experiment: experiment.into(),
        backend: backend.into(),
        quick: true,
        timestamp: utc_now(),
        machine: MachineInfo::current(),
        configuration: serde_json::json!({"command": "test"}),
    };
    let mut point = PointResult { params: p, ..Default::default() };
    for (name, unit, samples) in metrics {
        point.metrics.insert(name.to_string(), Metric { unit: *unit, samples: samples.clone() });
    }
    point.notes.push(format!("note of {experiment}"));
    store.insert(&meta, &point).unwrap();
}

/// Spread samples around `center` (deterministic).
fn spread(center: f64, n: usize) -> Vec<f64> {
    (0..n).map(|i| center * (0.8 + 0.4 * ((i * 37 % 101) as f64 / 100.0))).collect()
}

fn fill(db: &Path) {
    let mut s = Store::open(db).unwrap();
    for n in [1, 4, 16] {
        run(
            &mut s,
            "pcs",
            "process",
            params([("processes", n.into())]),
            &[
                ("pcs_ns", Unit::Ns, spread(12_340.0, 200)),
                ("tmro_ns", Unit::Ns, spread(2000.0, 200)),
                ("dispatch_ns", Unit::Ns, spread(25_000.0, 200)),
                ("ctsw_ns", Unit::Ns, spread(9000.0 + n as f64 * 100.0, 200)),
            ],
        );
    }
    run(
        &mut s,
        "latency",
        "process",
        params([("interval_us", 1000.into())]),
        &[("partition_wakeup_ns", Unit::Ns, spread(13_000.0, 500)), ("cyclictest_ns", Unit::Ns, spread(12_000.0, 500))],
    );
    for slot in [100, 10, 1] {
        run(
            &mut s,
            "slot-loss",
            "process",
            params([("slot_ms", slot.into())]),
            &[
                ("loss_pct", Unit::Percent, spread(1.0 / slot as f64, 3)),
                ("model_loss_pct", Unit::Percent, vec![1.2 / slot as f64]),
                ("model_lost_loss_pct", Unit::Percent, vec![2.0 / slot as f64]),
                ("pcs_ns", Unit::Ns, spread(12_000.0, 30)),
                ("count", Unit::Count, vec![1e9, 1e9, 1e9]),
            ],
        );
    }
    for backend in ["process", "native"] {
        let m: Vec<(String, Unit, Vec<f64>)> = partita_bench::experiments::api::SERVICES
            .iter()
            .map(|sv| (partita_bench::experiments::api::metric(sv), Unit::Ns, spread(40.0, 50)))
            .collect();
        let m: Vec<(&str, Unit, Vec<f64>)> = m.iter().map(|(a, b, c)| (a.as_str(), *b, c.clone())).collect();
        run(&mut s, "api", backend, params([("calls", 50.into())]), &m);
    }
    for n in [1, 4, 16] {
        run(&mut s, "startup", "process", params([("partitions", n.into())]), &[("startup_ns", Unit::Ns, spread(2e8 + n as f64 * 1e7, 3))]);
    }
    run(
        &mut s,
        "footprint",
        "process",
        params([("partitions", 2.into()), ("cores", 2.into())]),
        &[
            ("module_rss_bytes", Unit::Bytes, vec![2e7]),
            ("partition_rss_bytes", Unit::Bytes, vec![5e6, 6e6]),
            ("total_rss_bytes", Unit::Bytes, vec![3.1e7]),
        ],
    );
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| std::process::Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
}

#[test]
fn the_report_has_a_section_per_experiment_and_renders_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    fill(&db);
    let html_path = dir.path().join("report.html");
    let out = Command::new(assert_cmd::cargo::cargo_bin!("partita"))
        .args(["report", "--db"])
        .arg(&db)
        .arg("-o")
        .arg(&html_path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&html_path).unwrap();
    for e in registry().iter().filter(|e| ["pcs", "latency", "slot-loss", "api", "startup", "footprint"].contains(&e.name())) {
        assert!(html.contains(&format!("<h2 id=\"{}\">", e.name())), "no section {}", e.name());
        assert!(html.contains(&format!("note of {}", e.name())));
    }
    // Self-contained: no script, stylesheet or image fetched from elsewhere.
    assert!(!html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"));
    assert!(html.matches("<svg").count() >= 10, "charts");
    // Partita's figures beside the published ones: seed 001's 11 us PCS and Table 1.
    assert!(html.contains("XtratuM (seed 001"));
    assert!(html.contains("1.074"), "seed 001 Table 1 measured loss at 1 ms");
    // Every SVG chart is well-formed XML.
    let mut rest = html.as_str();
    while let Some(i) = rest.find("<svg") {
        let end = rest[i..].find("</svg>").unwrap() + i + 6;
        roxmltree::Document::parse(&rest[i..end]).unwrap();
        rest = &rest[end..];
    }

    let browser = chromium();
    if !partita_testkit::require("chromium for the browser part (apt-get install chromium)", browser.is_some()) {
        return;
    }
    let browser = browser.unwrap();
    let shot = dir.path().join("shot.png");
    let status = std::process::Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,2400"])
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html_path.display()))
        .output()
        .unwrap();
    assert!(shot.is_file(), "no screenshot: {}", String::from_utf8_lossy(&status.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bpp = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(bpp).collect();
    let mut colors: Vec<&[u8]> = pixels.clone();
    colors.sort_unstable();
    colors.dedup();
    let non_white = pixels.iter().filter(|p| p.iter().take(3).any(|&c| c < 240)).count();
    assert!(colors.len() >= 20, "only {} colors in the screenshot", colors.len());
    assert!(non_white * 100 >= pixels.len(), "{non_white} of {} pixels are not white", pixels.len());
}
