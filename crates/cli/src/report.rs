//! `partita report`: the HTML page of the result store.

use crate::exit;
use partita_bench::store::Store;
use std::path::Path;
use std::process::ExitCode;

pub fn run(db: &Path, output: &Path) -> ExitCode {
    if !db.is_file() {
        eprintln!("partita: no result store {} (partita bench ... --db {} makes one)", db.display(), db.display());
        return exit::usage();
    }
    let html = match Store::open(db).and_then(|s| partita_bench::report::render(&s)) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("partita: {e}");
            return exit::usage();
        }
    };
    if let Err(e) = std::fs::write(output, html) {
        eprintln!("partita: cannot write {}: {e}", output.display());
        return exit::usage();
    }
    println!("report: {}", output.display());
    exit::ok()
}
