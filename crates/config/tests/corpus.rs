//! The configuration corpus: every file under data/valid and examples/ is accepted; every
//! file under data/invalid yields exactly the errors its `<!-- expect-error LINE RULE -->`
//! comments declare (rule and line), no more and no fewer.

use partita_config::check_file;
use partita_config::diag::Severity;
use std::path::{Path, PathBuf};

fn xml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    files
}

fn data(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(sub)
}

fn assert_accepted(files: &[PathBuf]) {
    assert!(!files.is_empty());
    for f in files {
        let checked = check_file(f).unwrap();
        let errors: Vec<String> = checked.errors().map(|d| d.render(&f.display().to_string())).collect();
        assert!(checked.is_valid(), "{} should be valid, got:\n{}", f.display(), errors.join("\n"));
    }
}

#[test]
fn valid_corpus_is_accepted() {
    assert_accepted(&xml_files(&data("valid")));
}

#[test]
fn examples_are_accepted() {
    assert_accepted(&xml_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")));
}

/// (line or None for ANY, rule code)
fn expectations(text: &str) -> Vec<(Option<u32>, String)> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("<!-- expect-error ")?.strip_suffix("-->")?;
            let mut parts = rest.split_whitespace();
            let line = parts.next()?;
            let rule = parts.next()?.to_string();
            Some((if line == "ANY" { None } else { Some(line.parse().expect("line number")) }, rule))
        })
        .collect()
}

#[test]
fn invalid_corpus_reports_exactly_the_declared_errors() {
    let files = xml_files(&data("invalid"));
    assert!(files.len() >= 20, "the invalid corpus has {} files", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
        let mut expected = expectations(&text);
        assert!(!expected.is_empty(), "{} declares no expected error", f.display());
        let checked = check_file(f).unwrap();
        let mut unexpected = Vec::new();
        for d in checked.diagnostics.iter().filter(|d| d.severity == Severity::Error) {
            match expected.iter().position(|(line, rule)| rule == d.rule.code() && line.is_none_or(|l| l == d.line)) {
                Some(i) => {
                    expected.remove(i);
                }
                None => unexpected.push(format!("{} [{}]", d.render(""), d.rule.code())),
            }
        }
        if !expected.is_empty() || !unexpected.is_empty() {
            failures.push(format!("{}:\n  missing: {:?}\n  unexpected: {:?}", f.display(), expected, unexpected));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
