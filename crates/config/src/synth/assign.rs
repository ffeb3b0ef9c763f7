//! Partition-to-core assignment: which CYCLIC core each partition to place goes on, and why not.

use super::table::{Miss, Sim, SimTask};
use super::{CoreSlot, Task, miss_text, pct, secs, share};
use std::cmp::Reverse;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Fit {
    /// The core with the most remaining capacity (spreads the load).
    Worst,
    /// The core with the least remaining capacity that still fits (packs tightly).
    Best,
}

/// Why a core did not take a partition.
pub(super) enum Refusal {
    Full { core: u32, load_with: i128 },
    Miss { core: u32, load_with: i128, task: usize, miss: Miss },
}

pub(super) struct Placement {
    /// Position in the slots of each task's core.
    pub(super) core_of: Vec<Option<usize>>,
    pub(super) unplaced: Vec<(usize, Vec<Refusal>)>,
}

pub(super) fn assign(tasks: &[Task], order: &[usize], slots: &[CoreSlot], fit: Fit, frame: i64) -> Placement {
    let mut load: Vec<i128> = slots.iter().map(|c| c.reserved).collect();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); slots.len()];
    let mut core_of = vec![None; tasks.len()];
    let mut unplaced = Vec::new();
    for &t in order {
        let mut candidates: Vec<usize> = (0..slots.len()).collect();
        match fit {
            Fit::Worst => candidates.sort_by_key(|&c| (load[c], slots[c].index)),
            Fit::Best => candidates.sort_by_key(|&c| (Reverse(load[c]), slots[c].index)),
        }
        let mut refusals = Vec::new();
        for c in candidates {
            let load_with = load[c] + tasks[t].demand;
            if load_with > i128::from(frame) {
                refusals.push(Refusal::Full { core: slots[c].index, load_with });
                continue;
            }
            // Without blocked time, utilization <= 1 is exact for EDF; with it, simulate.
            if !slots[c].blocked.is_empty() {
                let set: Vec<usize> = members[c].iter().copied().chain([t]).collect();
                let sim_tasks: Vec<SimTask> = set.iter().map(|&i| tasks[i].sim()).collect();
                let sim = Sim { tasks: &sim_tasks, blocked: &slots[c].blocked, frame };
                if let Some(&miss) = sim.schedule(false).misses.first() {
                    refusals.push(Refusal::Miss { core: slots[c].index, load_with, task: set[miss.task], miss });
                    continue;
                }
            }
            load[c] = load_with;
            members[c].push(t);
            core_of[t] = Some(c);
            break;
        }
        if core_of[t].is_none() {
            refusals.sort_by_key(|r| match r {
                Refusal::Full { core, .. } | Refusal::Miss { core, .. } => *core,
            });
            unplaced.push((t, refusals));
        }
    }
    Placement { core_of, unplaced }
}

pub(super) fn refusal_reason(sname: &str, tasks: &[Task], t: usize, refusals: &[Refusal], frame: i64) -> String {
    let task = &tasks[t];
    let parts: Vec<String> = refusals
        .iter()
        .map(|r| match r {
            Refusal::Full { core, load_with } => format!("core {core} would be at {}", pct(share(*load_with, frame))),
            Refusal::Miss { core, load_with, task: victim, miss } => {
                format!(
                    "core {core} ({} with it) has room by utilization, but around its kept windows {}",
                    pct(share(*load_with, frame)),
                    miss_text(&tasks[*victim], miss, "would get")
                )
            }
        })
        .collect();
    format!(
        "{sname}: {} ({}, utilization {}: {} every {}) fits on no CYCLIC core: {}",
        task.label(),
        task.crit_label(),
        pct(share(task.demand, frame)),
        secs(task.budget),
        secs(task.period),
        parts.join("; ")
    )
}
