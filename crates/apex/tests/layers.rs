//! The runtime's layering (crate documentation): the process kernel (`src/kernel/`) never
//! imports an APEX service (`src/services/`) nor the C and a653rs faces on top; it may use the
//! shared vocabulary (`names`, `types`), which imports nothing of the runtime. Read from the
//! source, so that a new `use crate::services::...` in the kernel fails here, not in review.

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The source without its comments (`//` to the end of the line; the runtime has no block
/// comments), so that documentation may name what the code may not import.
fn code(source: &str) -> String {
    source.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The first path segments after each `crate::` in `code` (every top-level item of a
/// `crate::{...}` group), and `super::super` escapes out of the folder, as "super::super".
fn crate_roots(code: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut roots = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = code[i + "crate::".len()..].trim_start();
        match rest.strip_prefix('{') {
            Some(group) => {
                // Top-level items of the group: split at commas outside nested braces.
                let mut depth = 0;
                let mut item_start = true;
                for (j, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => item_start = true,
                        c if item_start && !c.is_whitespace() => {
                            roots.push(ident(&group[j..]));
                            item_start = false;
                        }
                        _ => {}
                    }
                }
            }
            None => roots.push(ident(rest)),
        }
    }
    if code.contains("super::super") {
        roots.push("super::super".to_string());
    }
    roots
}

/// What the files in `dir` name outside `allowed`: (file, root) pairs.
fn violations(dir: &Path, allowed: &[&str]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for file in rust_files(dir) {
        let source = std::fs::read_to_string(&file).unwrap();
        for root in crate_roots(&code(&source)) {
            if !allowed.contains(&root.as_str()) {
                found.push((file.strip_prefix(src()).unwrap().display().to_string(), root));
            }
        }
    }
    found
}

#[test]
fn the_kernel_never_names_a_service() {
    let kernel = src().join("kernel");
    let files = rust_files(&kernel);
    // Not vacuous: the kernel's files are where this test looks.
    for f in ["mod.rs", "runtime.rs", "process.rs", "body.rs", "hm.rs", "waitq.rs"] {
        assert!(files.contains(&kernel.join(f)), "src/kernel/{f} is missing: update this test with the layout");
    }
    // Every import path of the kernel starts in the kernel or the shared vocabulary: not
    // `crate::services`, nor the services' old homes (`crate::hm`, `crate::objects`, ...),
    // nor the faces on top (`crate::ffi`, `crate::a653rs_impl`, re-exports at the crate root).
    let found = violations(&kernel, &["kernel", "names", "types"]);
    assert!(found.is_empty(), "the kernel names modules outside itself and the shared vocabulary: {found:?}");
}

#[test]
fn the_shared_vocabulary_imports_nothing_of_the_runtime() {
    for f in ["names.rs", "types.rs"] {
        let source = std::fs::read_to_string(src().join(f)).unwrap();
        let found: Vec<_> = crate_roots(&code(&source)).into_iter().filter(|r| r != "names" && r != "types").collect();
        assert!(found.is_empty(), "src/{f} names {found:?}");
    }
}

#[test]
fn the_check_sees_the_ways_a_service_can_be_named() {
    let roots = |s: &str| crate_roots(&code(s));
    assert_eq!(roots("use crate::services::hm;"), ["services"]);
    assert_eq!(roots("use crate::hm::error_detected;"), ["hm"]);
    assert_eq!(roots("use crate::{kernel::sys, objects::mutex};"), ["kernel", "objects"]);
    assert_eq!(roots("use crate::{\n    kernel::{body, sys},\n    services,\n};"), ["kernel", "services"]);
    assert_eq!(roots("let r = crate::partition::park_forever();"), ["partition"]);
    assert_eq!(roots("use super::super::services;"), ["super::super"]);
    assert!(roots("// see crate::services::objects::mutex\nuse crate::kernel::waitq;").iter().all(|r| r == "kernel"));
}
