//! `overlap`: an 830 us payload in P1 (core 0) while P2 copies memory on core 1, with its window
//! overlapping P1's payload by 0/25/50/75/100 %.

use super::c_workloads::{Part, build_wl, cpus, module_xml, parse_lines, run_module, run_native};
use super::native_vs_partition::median;
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use std::time::Duration;

pub struct Overlap;

const BUFFER: u64 = 16 << 20;
const PAYLOAD_NS: f64 = 830_000.0;

/// P2's window start in us for each overlap, as in seed 001 section 4.5 (S0: after P1's window).
fn p2_start_us(overlap: u64) -> u64 {
    match overlap {
        0 => 20_000,
        25 => 600,
        50 => 400,
        75 => 200,
        _ => 0,
    }
}

impl Experiment for Overlap {
    fn name(&self) -> &'static str {
        "overlap"
    }
    fn reproduces(&self) -> &'static str {
        "seed 001 Table 3"
    }
    fn description(&self) -> &'static str {
        "MAF 50 ms; P1 (core 0) has [0, 20 ms) and a periodic process that times a payload calibrated natively to \
         830 us (one byte written per cache line over a 16 MiB buffer); P2 (core 1) copies 16 MiB buffers without \
         end in a 20 ms window starting at 20 ms, 600, 400, 200 or 0 us (S0..S100). The paper disabled the caches; \
         Linux cannot, so the buffers exceed the private caches instead (the VM's shared L3 is the host's). \
         interference_pct compares the median with the payload run natively, alone, in the same point."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    fn points(&self, _quick: bool) -> Vec<Params> {
        [0u64, 25, 50, 75, 100].iter().map(|o| params([("overlap_pct", (*o).into())])).collect()
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        // Measurements take turns with modules and tests (the machine lock).
        let _machine = crate::module_run::machine_lock()?;
        if cpus() < 2 {
            ctx.note("needs 2 CPUs: skipped");
            return Ok(());
        }
        let overlap = p["overlap_pct"].as_u64().unwrap_or(0);
        let reps = if ctx.quick { 30 } else { 100 };
        let exe = build_wl(&ctx.programs.exe, &ctx.scratch, 2)?;
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
        ctx.progress("calibrating the payload");
        let probe = 200_000u64;
        let out = run_native(&exe, &s(&["payload", "--size", &BUFFER.to_string(), "--n", &probe.to_string(), "--reps", "7"]), Some(0))?;
        let per_line = median(&parse_lines(&out).iter().skip(1).filter_map(|l| l.num("ns")).collect::<Vec<_>>()) / probe as f64;
        let lines = (PAYLOAD_NS / per_line) as u64;
        let args = ["payload", "--size", &BUFFER.to_string(), "--n", &lines.to_string()];
        let out = run_native(&exe, &s(&[&args[..], &["--reps", &reps.to_string()]].concat()), Some(0))?;
        let alone: Vec<f64> = parse_lines(&out).iter().skip(1).filter_map(|l| l.num("ns")).collect();
        ctx.samples("alone_ns", Unit::Ns, alone.clone());
        ctx.progress(&format!("S{overlap}"));
        let start = p2_start_us(overlap) as f64 / 1e6;
        let parts = [
            Part {
                name: "P1".into(),
                core: 0,
                windows: vec![(0.0, 0.02)],
                exe: exe.clone(),
                args: s(&[&args[..], &["--reps", &(reps + 1).to_string(), "--period-us", "50000", "--apex"]].concat()),
            },
            Part {
                name: "P2".into(),
                core: 1,
                windows: vec![(start, 0.02)],
                exe: exe.clone(),
                args: s(&["memcopy", "--size", &BUFFER.to_string(), "--n", "0", "--apex"]),
            },
        ];
        let out = run_module(&ctx.programs.exe, &ctx.scratch, &module_xml("Overlap", 0.05, 2, &parts), 1, Duration::from_secs(60))?;
        // The first job also faults its stack and code in: left out, like the native warm-up.
        let exec: Vec<f64> =
            parse_lines(&out).iter().filter(|l| l.partition == "P1" && l.kernel == "payload").skip(1).filter_map(|l| l.num("ns")).collect();
        if exec.is_empty() {
            return Err("P1 reported no payload time".into());
        }
        ctx.samples("exec_ns", Unit::Ns, exec.clone());
        ctx.sample("interference_pct", Unit::Percent, (median(&exec) / median(&alone) - 1.0) * 100.0);
        Ok(())
    }
}
