//! `pcs`: timer lateness (TmrO), partition switch (PCS, seed 002's PtswO) and first-process
//! dispatch (CtswO) against the number of processes per partition, from the trace of a real
//! module run.

use crate::experiment::{Backend, Experiment, Params, RunContext, Unit, params};
use crate::module_run::{ModuleSpec, PartitionSpec, Window, machine_lock, run_module};
use partita_trace::Event;
use std::collections::HashMap;

pub struct Pcs;

/// Two partitions alternating on core 0: major frame and window length.
const MAF_NS: i64 = 10_000_000;

/// Figures of one trace: per window start, TmrO, PCS, dispatch after the boundary and CtswO.
#[derive(Debug, Default, PartialEq)]
pub struct SwitchFigures {
    pub tmro: Vec<f64>,
    pub pcs: Vec<f64>,
    pub dispatch: Vec<f64>,
    pub ctsw: Vec<f64>,
}

/// TmrO = window_start.t - planned (the scheduler's boundary lateness), PCS =
/// partition_running.t - planned, dispatch = process_dispatch.t - planned and CtswO =
/// process_dispatch.t - partition_running.t of the same window start; frames before
/// `skip_before_ns` (start-up) are left out.
pub fn switch_figures(events: &[Event], skip_before_ns: i64) -> SwitchFigures {
    let mut f = SwitchFigures::default();
    let mut running: HashMap<(u32, u32, i64), i64> = HashMap::new();
    for e in events {
        match e {
            Event::WindowStart { t, planned, .. } if *planned >= skip_before_ns => f.tmro.push((t - planned) as f64),
            Event::PartitionRunning { t, core, partition, planned } if *planned >= skip_before_ns => {
                f.pcs.push((t - planned) as f64);
                running.insert((*core, *partition, *planned), *t);
            }
            _ => {}
        }
    }
    for e in events {
        if let Event::ProcessDispatch { t, core, partition, planned, .. } = e
            && *planned >= skip_before_ns
        {
            f.dispatch.push((t - planned) as f64);
            if let Some(r) = running.get(&(*core, *partition, *planned)) {
                f.ctsw.push((t - r) as f64);
            }
        }
    }
    f
}

impl Experiment for Pcs {
    fn name(&self) -> &'static str {
        "pcs"
    }
    fn reproduces(&self) -> &'static str {
        "seed 001 section 4.3 (PCS 11 us); seed 002 Table V, Figs. 6-7 and 11-12 (TmrO, PtswO, CtswO)"
    }
    fn description(&self) -> &'static str {
        "Two partitions alternate in 5 ms windows on core 0 (major frame 10 ms); each has N periodic processes \
         (period = major frame, ~20 us of work per release). From the trace of `partita run`: tmro_ns = window_start - planned \
         boundary, pcs_ns = partition_running - planned (first code of the incoming partition), dispatch_ns = first process \
         dispatched - planned, ctsw_ns = dispatch - partition_running. The first 100 ms (start-up) are left out. \
         Differs from the papers: a 2-core VM instead of an Atom (seed 001) or a Pentium (seed 002); the switch is the cgroup \
         freezer (docs/scheduling.md), the scheduler wakes early and spins to the boundary, so TmrO measures the spin's end, not \
         a timer interrupt; seed 002's partitions had its OFP/VSP task set, here N identical processes. No native baseline \
         (there is no partition switch without partitions); \
         instead, before each point, the host's same-core process-switch floor on CPU 0 (switch_floor_ns: two processes at \
         SCHED_FIFO 73, the level of a pcs partition's highest process, hand a byte back and forth through pipes; half a round trip) and \
         pcs_floor_ratio = PCS median / floor median, the figure that compares across hosts."
    }
    fn backends(&self) -> &'static [Backend] {
        &[Backend::Process]
    }
    fn points(&self, quick: bool) -> Vec<Params> {
        let (ns, secs): (&[i64], i64) = if quick { (&[1, 4, 16], 4) } else { (&[1, 2, 4, 8, 16, 32, 64], 20) };
        ns.iter().map(|&n| params([("processes", n.into()), ("seconds", secs.into())])).collect()
    }
    fn run_point(&self, ctx: &mut RunContext, p: &Params) -> Result<(), String> {
        let n = p["processes"].as_i64().unwrap_or(1);
        let secs = p["seconds"].as_i64().unwrap_or(4);
        let half = MAF_NS / 2;
        let partition = |name: &str, start: i64| PartitionSpec {
            name: name.into(),
            workload: "pcs".into(),
            args: vec![n.to_string()],
            windows: vec![Window { start_ns: start, duration_ns: half, core: 0 }],
        };
        let spec = ModuleSpec {
            name: "Pcs".into(),
            cpus: "0-1".into(),
            major_frame_ns: MAF_NS,
            partitions: vec![partition("P1", 0), partition("P2", half)],
        };
        ctx.progress("the host's process-switch floor on CPU 0");
        let floor = {
            let _machine = machine_lock()?;
            super::switch_floor::measure(ctx, 0, if ctx.quick { 5000 } else { 20_000 })?
        };
        ctx.progress(&format!("{n} processes per partition, {secs} s"));
        let run = run_module(ctx, &spec, (secs * 1_000_000_000 / MAF_NS) as u64)?;
        let f = switch_figures(&run.events, 100_000_000);
        if f.pcs.is_empty() {
            return Err(format!("the trace has no partition_running event\n{}", crate::module_run::tail(&run.stderr, 5)));
        }
        ctx.samples("tmro_ns", Unit::Ns, f.tmro);
        ctx.sample("pcs_floor_ratio", Unit::Ratio, super::switch_floor::ratio_of_medians(&f.pcs, &floor));
        ctx.samples("switch_floor_ns", Unit::Ns, floor);
        ctx.samples("pcs_ns", Unit::Ns, f.pcs);
        ctx.samples("dispatch_ns", Unit::Ns, f.dispatch);
        ctx.samples("ctsw_ns", Unit::Ns, f.ctsw);
        Ok(())
    }
    fn report(&self, data: &crate::report::ExperimentData, published: &crate::published::Published) -> String {
        crate::experiments::sections::pcs(self, data, published)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_pair_dispatch_with_the_same_window_start() {
        let ev = vec![
            Event::WindowStart { t: 5, core: 0, partition: 1, window: 1, planned: 0, schedule: 1 },
            Event::WindowStart { t: 1_000_002, core: 0, partition: 1, window: 1, planned: 1_000_000, schedule: 1 },
            Event::PartitionRunning { t: 1_010_000, core: 0, partition: 1, planned: 1_000_000 },
            Event::ProcessDispatch { t: 1_013_000, core: 0, partition: 1, process: 1, planned: 1_000_000 },
            Event::ProcessDispatch { t: 2_013_000, core: 0, partition: 2, process: 1, planned: 2_000_000 },
        ];
        let f = switch_figures(&ev, 1_000_000);
        assert_eq!(f, SwitchFigures { tmro: vec![2.0], pcs: vec![10_000.0], dispatch: vec![13_000.0, 13_000.0], ctsw: vec![3_000.0] });
    }
}
