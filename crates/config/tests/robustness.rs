//! No input makes the configuration pipeline panic: the checked-in fuzz corpus, truncations,
//! byte flips, non-UTF-8, deep nesting and oversized input all end in diagnostics.

use partita_config::{check_bytes, check_file, fuzz_one};
use std::path::{Path, PathBuf};

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    v.sort();
    v
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn seeds() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = files_in(&root().join("examples"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    out.extend(files_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/valid")).into_iter().map(|p| std::fs::read(p).unwrap()));
    out
}

#[test]
fn fuzz_corpus_runs_without_panic() {
    let corpus = files_in(&root().join("fuzz/corpus/parse"));
    assert!(corpus.len() >= 10, "fuzz corpus has {} files", corpus.len());
    for f in corpus {
        let bytes = std::fs::read(&f).unwrap();
        let checked = fuzz_one(&bytes, Path::new("/nonexistent"));
        // Every diagnostic points into the file.
        for d in &checked.diagnostics {
            assert!(d.line >= 1 && d.column >= 1, "{}: {d:?}", f.display());
        }
    }
}

#[test]
fn every_truncation_is_rejected_with_a_position() {
    for seed in seeds() {
        let end = seed.windows(2).rposition(|w| w == b"</").expect("a closing tag");
        for cut in (0..end).step_by(13) {
            let checked = fuzz_one(&seed[..cut], Path::new("/nonexistent"));
            assert!(!checked.is_valid(), "a file cut at byte {cut} was accepted");
            assert!(checked.errors().next().is_some());
        }
    }
}

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn byte_flips_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for seed in seeds() {
        for _ in 0..300 {
            let mut bytes = seed.clone();
            for _ in 0..(1 + rng.next() % 4) {
                let i = (rng.next() as usize) % bytes.len();
                bytes[i] = rng.next() as u8;
            }
            fuzz_one(&bytes, Path::new("/nonexistent"));
        }
    }
}

#[test]
fn non_utf8_is_an_encoding_error_at_its_line() {
    let mut bytes = seeds().remove(0);
    let second_line = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes.insert(second_line, 0xC3);
    bytes.insert(second_line + 1, 0x28);
    let checked = check_bytes(&bytes, Path::new("."));
    let e: Vec<_> = checked.errors().collect();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].rule.code(), "encoding");
    assert_eq!(e[0].line, 2);
}

#[test]
fn deep_nesting_is_rejected_not_overflowed() {
    let depth = 200_000;
    let mut xml = String::from("<ARINC_653_Module ModuleName=\"x\">");
    xml.push_str(&"<Partition>".repeat(depth));
    xml.push_str(&"</Partition>".repeat(depth));
    xml.push_str("</ARINC_653_Module>");
    let checked = check_bytes(xml.as_bytes(), Path::new("."));
    assert!(!checked.is_valid());
}

#[test]
fn oversized_file_is_refused_before_reading() {
    let dir = tempfile_dir();
    let path = dir.join("huge.xml");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(partita_config::source::MAX_CONFIG_BYTES as u64 + 1).unwrap();
    let err = check_file(&path).unwrap_err();
    assert!(err.to_string().contains("limit"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn many_entity_references_and_dtd_are_refused() {
    let xml = r#"<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY a "aaaaaaaaaa">]><ARINC_653_Module ModuleName="&a;"/>"#;
    let checked = check_bytes(xml.as_bytes(), Path::new("."));
    assert!(checked.errors().any(|e| e.message.contains("DTD")));
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("partita-robustness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_huge_major_frame_is_checked_in_bounded_time_and_memory() {
    let xml = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <Partition PartitionIdentifier="1" PartitionName="A" pt:Executable="a"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="1e9">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.005" PeriodDurationSeconds="0.001">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.001"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>"#;
    let checked = fuzz_one(xml.as_bytes(), Path::new("/nonexistent"));
    let e: Vec<_> = checked.errors().collect();
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].message.contains("199999999999 of 200000000000 periods are short"), "{}", e[0].message);
}
