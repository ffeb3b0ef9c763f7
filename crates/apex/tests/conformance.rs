//! docs/apex-conformance.md stays complete and truthful: every service the header declares has
//! a row, every row is a declared service, and every program and test a row names exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(workspace().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The services `include/ARINC653.h` declares (`extern void NAME(`).
fn declared() -> BTreeSet<String> {
    read("include/ARINC653.h")
        .split("extern void ")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .map(|name| name.trim().to_string())
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .collect()
}

/// The matrix rows: (service, programs column, tests column).
fn rows() -> Vec<(String, String, String)> {
    read("docs/apex-conformance.md")
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            // "| SERVICE | standard | checked | programs | tests |" splits into 7 cells.
            let name = cells.get(1)?;
            (cells.len() == 7 && !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
                .then(|| (name.to_string(), cells[4].to_string(), cells[5].to_string()))
        })
        .collect()
}

#[test]
fn every_declared_service_has_a_row_and_every_row_is_declared() {
    let declared = declared();
    assert!(declared.len() >= 70, "the header parse found only {} services", declared.len());
    let listed: BTreeSet<String> = rows().into_iter().map(|r| r.0).collect();
    let missing: Vec<_> = declared.difference(&listed).collect();
    assert!(missing.is_empty(), "services without a row in docs/apex-conformance.md: {missing:?}");
    let stale: Vec<_> = listed.difference(&declared).collect();
    assert!(stale.is_empty(), "rows for services the header does not declare: {stale:?}");
}

#[test]
fn every_program_and_test_a_row_names_exists() {
    let dirs = ["crates/apex/tests/c", "crates/cli/tests/partitions"];
    for (service, programs, tests) in rows() {
        for program in programs.split(", ").filter(|p| p.ends_with(".c")) {
            assert!(dirs.iter().any(|d| workspace().join(d).join(program).is_file()), "{service}: no program {program}");
        }
        for test in tests.split(", ").map(|t| t.trim_matches('`')).filter(|t| t.contains("::")) {
            let (file, function) = test.split_once("::").unwrap();
            let found = ["crates/apex/tests", "crates/cli/tests"].iter().any(|d| {
                std::fs::read_to_string(workspace().join(d).join(format!("{file}.rs")))
                    .is_ok_and(|s| s.contains(&format!("fn {function}(")))
            });
            assert!(found, "{service}: no test {test}");
        }
    }
}
