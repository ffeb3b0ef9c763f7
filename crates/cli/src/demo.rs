//! `partita demo`: builds the flight-control example's C partitions against the APEX library
//! and runs the module for 10 seconds with a live status line.

use crate::run::{RunArgs, run_module};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

/// The source tree: the current directory if it has the examples, else where this binary was
/// built from.
fn source_root() -> Option<PathBuf> {
    let here = PathBuf::from(".");
    if here.join("examples/flight-control.xml").is_file() {
        return Some(here);
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    built.join("examples/flight-control.xml").is_file().then_some(built)
}

/// The static APEX library cargo built with this executable: the newest of the one next to it
/// and those in deps/ (cargo does not always copy a rebuilt library next to the binary, e.g.
/// after a build of other targets with other features; an old copy lacks newer services).
fn apex_library() -> Option<PathBuf> {
    let dir = std::env::current_exe().ok()?.parent()?.to_path_buf();
    let deps = std::fs::read_dir(dir.join("deps"))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("libpartita_apex-") && n.ends_with(".a")));
    std::iter::once(dir.join("libpartita_apex.a"))
        .chain(deps)
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
}

pub fn run(build_only: bool) -> ExitCode {
    let Some(root) = source_root() else {
        eprintln!("partita: demo needs the source tree (examples/flight-control.xml); run it from the repository");
        return crate::exit::usage();
    };
    let Some(lib) = apex_library() else {
        eprintln!("partita: libpartita_apex.a is not next to this executable; build with `cargo build --release` first");
        return crate::exit::usage();
    };
    let bin = root.join("examples/bin");
    if let Err(e) = std::fs::create_dir_all(&bin) {
        eprintln!("partita: cannot create {}: {e}", bin.display());
        return crate::exit::usage();
    }
    for name in ["ofp", "vsp", "monitor"] {
        let src = root.join(format!("examples/partitions/{name}.c"));
        let out = bin.join(name);
        println!("partita: building {} -> {}", src.display(), out.display());
        let status = Command::new("cc")
            .args(["-O2", "-Wall", "-I"])
            .arg(root.join("include"))
            .arg(&src)
            .arg(&lib)
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(&out)
            .status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => {
                eprintln!("partita: building {name} failed ({s})");
                return crate::exit::invalid();
            }
            Err(e) => {
                eprintln!("partita: cannot run the C compiler `cc` ({e}); install gcc (apt-get install -y gcc)");
                return crate::exit::usage();
            }
        }
    }
    if build_only {
        return crate::exit::ok();
    }
    println!("partita: running examples/flight-control.xml for 10 s (Ctrl-C stops it)");
    run_module(RunArgs {
        file: root.join("examples/flight-control.xml"),
        duration: Some(Duration::from_secs(10)),
        frames: None,
        trace: Some(PathBuf::from("partita-demo.trace.jsonl")),
        logs: Some(PathBuf::from("partita-demo-logs")),
        inject: Vec::new(),
        live_status: true,
        idle_poll: false,
        keep_rt_throttling: false,
        keep_cpu_latency: false,
    })
}
