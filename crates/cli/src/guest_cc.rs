//! `partita guest-cc SRC... -o OUT.elf [CFLAGS...]`: builds the guest image of a kvm partition
//! (docs/kvm.md) with the host's C compiler (`$CC`, else `gcc`): the sources linked with the
//! guest start-up code, console helper and linker script of `guest/`, freestanding, static, at
//! the address the VMM loads images. The runtime files are compiled into this binary, so the
//! command works outside the source tree. The result is checked with the loader `partita run`
//! uses, so an image it would refuse is refused here.

use crate::exit;
use partita_module::backend::kvm::{STACK_MIN, elf, vm};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The guest runtime: (file name, text).
const RUNTIME: &[(&str, &str)] = &[
    ("start.S", include_str!("../../../guest/start.S")),
    ("console.c", include_str!("../../../guest/console.c")),
    ("traps.S", include_str!("../../../guest/traps.S")),
    ("traps.c", include_str!("../../../guest/traps.c")),
    ("link.ld", include_str!("../../../guest/link.ld")),
    ("include/partita_guest.h", include_str!("../../../guest/include/partita_guest.h")),
    ("include/ARINC653.h", include_str!("../../../include/ARINC653.h")),
];

/// Freestanding 64-bit code without the red zone or SSE (no FPU state is set up), linked
/// statically at the address of `link.ld`.
const FLAGS: &[&str] = &[
    "-ffreestanding",
    "-fno-pic",
    "-fno-stack-protector",
    "-mno-red-zone",
    "-mgeneral-regs-only",
    "-O2",
    "-nostdlib",
    "-static",
    "-no-pie",
    "-Wl,--build-id=none",
    "-Wl,-z,noexecstack",
];

const USAGE: &str = "usage: partita guest-cc SRC.c... -o OUT.elf [CFLAGS...]";

/// Sources (by extension), the output after `-o`, and every other argument as a compiler flag.
#[derive(Debug)]
struct Args {
    sources: Vec<String>,
    output: PathBuf,
    flags: Vec<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let (mut sources, mut flags, mut output) = (Vec::new(), Vec::new(), None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-o" {
            let out = it.next().ok_or("-o needs a file name")?;
            if output.replace(PathBuf::from(out)).is_some() {
                return Err("-o given twice".into());
            }
        } else if !a.starts_with('-') && [".c", ".S", ".s"].iter().any(|ext| a.ends_with(ext)) {
            sources.push(a.clone());
        } else {
            flags.push(a.clone());
        }
    }
    let output = output.ok_or("no output: -o OUT.elf")?;
    if sources.is_empty() {
        return Err("no source (.c, .S or .s)".into());
    }
    Ok(Args { sources, output, flags })
}

/// A directory of this process's own, removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write_runtime() -> std::io::Result<Scratch> {
    let dir = Scratch(std::env::temp_dir().join(format!("partita-guest-cc-{}", std::process::id())));
    std::fs::create_dir_all(dir.0.join("include"))?;
    for (name, text) in RUNTIME {
        std::fs::write(dir.0.join(name), text)?;
    }
    Ok(dir)
}

pub fn run(args: &[String]) -> ExitCode {
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("partita guest-cc: {e}\n{USAGE}");
            return exit::usage();
        }
    };
    let runtime = match write_runtime() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("partita guest-cc: cannot write the guest runtime to {}: {e}", std::env::temp_dir().display());
            return exit::usage();
        }
    };
    let rt = &runtime.0;
    let cc = std::env::var("CC").ok().filter(|c| !c.is_empty()).unwrap_or_else(|| "gcc".into());
    let status = Command::new(&cc)
        .args(FLAGS)
        .arg("-T")
        .arg(rt.join("link.ld"))
        .arg("-I")
        .arg(rt.join("include"))
        .arg("-o")
        .arg(&args.output)
        .arg(rt.join("start.S"))
        .arg(rt.join("console.c"))
        .arg(rt.join("traps.S"))
        .arg(rt.join("traps.c"))
        .args(&args.sources)
        .args(&args.flags)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            eprintln!("partita guest-cc: {cc} failed ({s}); its messages are above");
            return exit::invalid();
        }
        Err(e) => {
            eprintln!("partita guest-cc: cannot run the C compiler {cc:?}: {e} (set CC to another one)");
            return exit::usage();
        }
    }
    check(&args.output)
}

/// The image as `partita run` would load it, into the largest RAM a guest may have.
fn check(image: &Path) -> ExitCode {
    match elf::load(image, vm::IMAGE_BASE, vm::MAX_RAM as u64 - STACK_MIN) {
        Ok(i) => {
            let bytes: usize = i.segments.iter().map(|s| s.data.len()).sum();
            println!("{}: entry 0x{:x}, {} segments, {bytes} bytes", image.display(), i.entry, i.segments.len());
            exit::ok()
        }
        Err(e) => {
            eprintln!("partita guest-cc: {e}");
            exit::invalid()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn sources_output_and_flags_in_any_order() {
        let a = parse(&args(&["-DX=1", "a.c", "-o", "out.elf", "b.S", "-I", "inc"])).unwrap();
        assert_eq!(a.sources, ["a.c", "b.S"]);
        assert_eq!(a.output.to_str(), Some("out.elf"));
        assert_eq!(a.flags, ["-DX=1", "-I", "inc"]);
    }

    #[test]
    fn missing_output_or_source_and_a_second_output_are_usage_errors() {
        assert!(parse(&args(&["a.c"])).unwrap_err().contains("-o OUT.elf"));
        assert!(parse(&args(&["-o", "x.elf"])).unwrap_err().contains("no source"));
        assert!(parse(&args(&["a.c", "-o"])).unwrap_err().contains("needs a file name"));
        assert!(parse(&args(&["a.c", "-o", "x", "-o", "y"])).unwrap_err().contains("twice"));
    }
}
