//! `partita check` of a 64-partition, 4-core, 3-schedule configuration (issue 2: < 50 ms).
//! Run with `cargo bench -p partita-config --bench check`; the generated file is also written
//! to target/bench-64p-4c-3s.xml so the whole command can be timed (hyperfine).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;

fn check_64_partitions(c: &mut Criterion) {
    let xml = partita_config::generate::module_xml(64, 4, 3);
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-64p-4c-3s.xml");
    let _ = std::fs::write(&out, &xml);
    let bytes = xml.into_bytes();
    c.bench_function("check 64 partitions, 4 cores, 3 schedules", |b| {
        b.iter(|| {
            let checked = partita_config::check_bytes(black_box(&bytes), Path::new("/nonexistent"));
            let summary = partita_config::analysis::summarize(checked.module.as_ref().expect("valid"));
            black_box(summary)
        })
    });
}

criterion_group!(benches, check_64_partitions);
criterion_main!(benches);
