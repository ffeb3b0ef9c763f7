//! `release`: release overhead (RelO = start - release), execution time and response time of the
//! OFP and VSP task sets of seed 002 Table III on one core.

use super::c_workloads::{Part, build_wl, cpus, module_xml, parse_lines, run_module};
use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use std::time::Duration;

pub struct Release;

const FRAME_NS: i64 = 80_000_000;

impl Experiment for Release {
    fn name(&self) -> &'static str {
        "release"
    }
    fn reproduces(&self) -> &'static str {
        "seed 002 Tables III, VIII"
    }
    fn description(&self) -> &'static str {
        "OFP (GnC 20/2 ms, NavReader 20/6, SwmReader 80/3, AdtReader 80/10; rate-monotonic priorities) and VSP \
         (VdoStrming 80/35) on core 0, with the windows of examples/flight-control.xml (OFP 11.25 ms of every 20 ms, \
         VSP the rest of each 20 ms). Each job reads its release point r (its deadline minus its time capacity, \
         GET_PROCESS_STATUS), its start s and finish f (GET_TIME): relo_ns = s - r, e_ns = f - s, r_ns = f - r, with r moved to the start of the partition's first window at or after it (Partita's partition periods start with the major frame, so VSP's period starts 11.25 ms before its first window). \
         Jobs busy themselves for 0.5 % of the table's execution time (seed 002 measured actual execution times of \
         tens of us). relo_first_ns is RelO of the first process of each partition (GnC, VdoStrming), which includes \
         the partition switch: seed 002's RelO_I; the split into TmrO/PtswO/CtswO is the pcs experiment's."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    fn report(&self, data: &crate::report::ExperimentData, published: &crate::published::Published) -> String {
        super::workload_sections::release(self, data, published)
    }
    fn points(&self, _quick: bool) -> Vec<Params> {
        vec![params([("task_set", "OFP+VSP".into())])]
    }
    fn run_point(&self, ctx: &mut RunContext, _p: &Params) -> Result<(), String> {
        // Measurements take turns with modules and tests (the machine lock).
        let _machine = crate::module_run::machine_lock()?;
        let jobs = if ctx.quick { 25 } else { 100 };
        let exe = build_wl(&ctx.programs.exe, &ctx.scratch, 2)?;
        let args = |k: &str| -> Vec<String> {
            [k, "--apex", "--reps", &jobs.to_string(), "--scale", "0.005"].iter().map(|s| s.to_string()).collect()
        };
        let mut ofp = Vec::new();
        let mut vsp = Vec::new();
        for i in 0..4 {
            let t = i as f64 * 0.02;
            ofp.push((t, 0.01125));
            vsp.push((t + 0.01125, 0.00875));
        }
        let window_starts = |w: &[(f64, f64)]| w.iter().map(|x| (x.0 * 1e9).round() as i64).collect::<Vec<i64>>();
        let (ofp_starts, vsp_starts) = (window_starts(&ofp), window_starts(&vsp));
        let parts = [
            Part { name: "OFP".into(), core: 0, windows: ofp, exe: exe.clone(), args: args("ofp"), period_s: Some(0.02) },
            Part { name: "VSP".into(), core: 0, windows: vsp, exe: exe.clone(), args: args("vsp"), period_s: None },
        ];
        ctx.progress("OFP and VSP task sets");
        let xml = module_xml("Release", 0.08, cpus(), &parts);
        let out = run_module(&ctx.programs.exe, &ctx.scratch, &xml, 5, Duration::from_secs(30 + jobs as u64 / 5))?;
        let lines: Vec<_> = parse_lines(&out).into_iter().filter(|l| l.kernel == "release").collect();
        if lines.is_empty() {
            return Err("no job reported".into());
        }
        for l in &lines {
            let (Some(r), Some(s), Some(f)) = (l.num("r"), l.num("s"), l.num("f")) else { continue };
            let starts = if l.partition == "VSP" { &vsp_starts } else { &ofp_starts };
            let r = effective_release(r as i64, starts) as f64;
            let task = l.fields.get("task").cloned().unwrap_or_default();
            ctx.sample(&format!("relo_ns.{task}"), Unit::Ns, s - r);
            ctx.sample(&format!("e_ns.{task}"), Unit::Ns, f - s);
            ctx.sample(&format!("r_ns.{task}"), Unit::Ns, f - r);
            if task == "GnC" || task == "VdoStrming" {
                ctx.sample("relo_first_ns", Unit::Ns, s - r);
                ctx.sample("r_first_ns", Unit::Ns, f - r);
            }
        }
        Ok(())
    }
}

/// A release point moved to the start of the partition's first window at or after it: the
/// process cannot run before its partition does (VSP's period starts with the major frame, its
/// first window 11.25 ms later), and seed 002's RelO starts at the partition's switch-in.
fn effective_release(r: i64, window_starts: &[i64]) -> i64 {
    let offset = r.rem_euclid(FRAME_NS);
    let next = window_starts.iter().copied().filter(|w| *w + 1_000 >= offset).min().unwrap_or(FRAME_NS + window_starts[0]);
    r - offset + next.max(offset)
}

#[cfg(test)]
mod tests {
    #[test]
    fn releases_move_to_the_next_window_start() {
        let starts = [11_250_000, 31_250_000];
        assert_eq!(super::effective_release(160_000_000, &starts), 171_250_000);
        assert_eq!(super::effective_release(171_250_000, &starts), 171_250_000);
        assert_eq!(super::effective_release(180_000_000, &starts), 191_250_000);
        assert_eq!(super::effective_release(100_000_000, &[0, 20_000_000]), 100_000_000);
    }
}
