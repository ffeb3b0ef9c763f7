//! `partita trace`: statistics of a run's trace, or its conversion for the Perfetto UI.

use crate::exit;
use partita_trace::{perfetto, read_trace, summary};
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

pub fn run(trace: &Path, perfetto_out: Option<&Path>, print_summary: bool, json: bool) -> ExitCode {
    let file = match std::fs::File::open(trace) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("partita: cannot read {}: {e}", trace.display());
            return exit::usage();
        }
    };
    let events = match read_trace(BufReader::new(file)) {
        Ok(ev) => ev,
        Err(e) => {
            eprintln!("partita: {} is not a Partita trace: {e}", trace.display());
            return exit::invalid();
        }
    };
    if let Some(out) = perfetto_out {
        let written = std::fs::File::create(out).and_then(|f| {
            let mut w = BufWriter::new(f);
            perfetto::write_chrome_json(&events, &mut w)?;
            w.flush()
        });
        if let Err(e) = written {
            eprintln!("partita: cannot write {}: {e}", out.display());
            return exit::usage();
        }
        if !json {
            println!("wrote {} ({} events); open it in https://ui.perfetto.dev", out.display(), events.len());
        }
    }
    if print_summary || perfetto_out.is_none() {
        let s = summary::summarize(&events);
        if json {
            println!("{}", serde_json::to_string_pretty(&s).expect("serializable"));
        } else {
            print!("{s}");
        }
    }
    exit::ok()
}
