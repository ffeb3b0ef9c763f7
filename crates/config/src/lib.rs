//! ARINC 653 module configuration: parsing (standard elements plus the `urn:partita:1`
//! extensions), validation with positioned diagnostics, schedule analysis and synthesis.

pub mod analysis;
pub mod diag;
pub mod generate;
pub mod hm;
pub mod lint;
pub mod model;
pub mod mounts;
pub mod parse;
pub mod source;
pub mod synth;
pub mod time;
pub mod validate;

use diag::{Diagnostic, Diagnostics, Rule, Severity};
use model::{Core, CorePolicy, Module};
use std::path::Path;

/// The outcome of reading and validating one configuration.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The model, when the XML was well-formed enough to build one (even if invalid).
    pub module: Option<Module>,
    /// Errors and warnings, by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Checked {
    pub fn is_valid(&self) -> bool {
        self.module.is_some() && !self.diagnostics.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Warning)
    }
}

/// Parses and validates configuration text. `base_dir` is where relative `pt:Executable`
/// paths are looked up.
pub fn check_text(text: &str, base_dir: &Path) -> Checked {
    let mut diags = Diagnostics::default();
    let module = parse::parse(text, base_dir, &mut diags).map(|mut m| {
        imply_cores(&mut m);
        validate::validate(&m, &mut diags);
        m
    });
    Checked { module, diagnostics: diags.into_sorted() }
}

/// Like [`check_text`], from raw bytes (any supported encoding).
pub fn check_bytes(bytes: &[u8], base_dir: &Path) -> Checked {
    match source::decode(bytes) {
        Ok(text) => check_text(&text, base_dir),
        Err(e) => {
            let mut diags = Diagnostics::default();
            diags.error(Rule::Encoding, e.span, e.message);
            Checked { module: None, diagnostics: diags.into_sorted() }
        }
    }
}

/// Reads and checks a file; only I/O failures are `Err`.
pub fn check_file(path: &Path) -> std::io::Result<Checked> {
    let meta = std::fs::metadata(path)?;
    if meta.len() > source::MAX_CONFIG_BYTES as u64 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{} bytes is over the {} MiB limit for a configuration", meta.len(), source::MAX_CONFIG_BYTES >> 20),
        ));
    }
    let bytes = std::fs::read(path)?;
    let base = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Ok(check_bytes(&bytes, base))
}

/// Without `<pt:Cores>`, the module has CYCLIC cores 0..=highest core a window names,
/// on host CPUs of the same numbers.
fn imply_cores(m: &mut Module) {
    if m.cores_declared.is_some() {
        return;
    }
    let highest = m.schedules.iter().flat_map(|s| &s.partitions).flat_map(|ps| &ps.windows).map(|w| w.core.value).max().unwrap_or(0);
    // Cap what a typo such as pt:Core="4000000000" can allocate; validation warns about it.
    let count = highest.min(1023) + 1;
    m.cores = (0..count).map(|i| Core { index: i, cpu: i, policy: CorePolicy::Cyclic, span: None, priorities: Vec::new() }).collect();
}

/// Everything a configuration goes through before a module runs, for the fuzz target and the
/// robustness tests: decode, parse, validate, analyse, summarize, serialize.
pub fn fuzz_one(bytes: &[u8], base_dir: &Path) -> Checked {
    let checked = check_bytes(bytes, base_dir);
    if let Some(m) = &checked.module {
        let summary = analysis::summarize(m);
        let _ = serde_json::to_string(&summary);
    }
    for d in &checked.diagnostics {
        let _ = d.render("fuzz.xml");
    }
    checked
}
