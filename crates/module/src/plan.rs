//! The run plan: the validated configuration turned into what the schedulers execute — per
//! module schedule and core, the window boundaries of one major frame in time order, and per
//! partition the cores it runs on and its period in each schedule.

use partita_config::model::{Backend, CorePolicy, DEFAULT_MAX_OPEN_FILES, DEFAULT_MAX_TASKS, Module};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Plan {
    pub module_name: String,
    pub cores: Vec<PlannedCore>,
    pub partitions: Vec<PlannedPartition>,
    pub schedules: Vec<PlannedSchedule>,
    /// Index into `schedules` of the schedule active at start.
    pub initial_schedule: usize,
}

#[derive(Debug, Clone)]
pub struct PlannedCore {
    pub index: u32,
    pub cpu: u32,
    pub policy: CorePolicy,
}

#[derive(Debug, Clone)]
pub struct PlannedPartition {
    pub id: u32,
    pub name: String,
    pub executable: PathBuf,
    /// What runs it (`pt:Backend`).
    pub backend: Backend,
    pub arguments: Vec<String>,
    pub memory_bytes: u64,
    /// 0 = LEVEL_A .. 4 = LEVEL_E, 255 = not given (as in the ABI).
    pub criticality: u32,
    pub system_partition: bool,
    /// Module core indices it has windows (or a priority) on, ascending.
    pub cores: Vec<u32>,
    /// Served by priority on a FIXED_PRIORITY core: (core, partition priority).
    pub served_by_priority: Option<(u32, i32)>,
    /// Linux real-time priority band of its processes (base, levels); see the ABI.
    pub rt_band: (u32, u32),
    /// Processes plus threads it may have at once (`pt:MaxTasks`, pids cgroup).
    pub max_tasks: u32,
    /// Its RLIMIT_NOFILE (`pt:MaxOpenFiles`).
    pub max_open_files: u32,
    /// Its `<pt:Mount>` elements, in order.
    pub mounts: Vec<PlannedMount>,
}

/// A `<pt:Mount>`: `source` on the host appears at `target` in the partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMount {
    pub source: PathBuf,
    pub target: PathBuf,
    pub writable: bool,
    /// Line of the element in the configuration (run-time errors name it).
    pub line: u32,
}

/// The default band: Linux levels 11..=73, onto which the runtime ranks the ARINC priorities a
/// partition uses (its highest at 73).
pub const DEFAULT_RT_BAND: (u32, u32) = (10, 63);
/// Real-time priorities available to the bands of partitions that share a FIXED_PRIORITY core
/// (below the partitions' timer threads at 80).
const BAND_RANGE: (u32, u32) = (1, 79);
/// The highest real-time priority a band reaches (asserted below the partitions' ceiling in run.rs).
pub const HIGHEST_BAND_PRIORITY: i32 = {
    let a = DEFAULT_RT_BAND.0 + DEFAULT_RT_BAND.1;
    let b = BAND_RANGE.1;
    (if a > b { a } else { b }) as i32
};

#[derive(Debug, Clone)]
pub struct PlannedSchedule {
    pub id: u32,
    pub name: String,
    pub major_frame_ns: i64,
    /// Per module core (indexed like `Plan::cores`): windows in time order.
    pub slots: Vec<Vec<Slot>>,
    /// Per partition (indexed like `Plan::partitions`): period and duration, 0 if absent.
    pub periods: Vec<(i64, i64)>,
    /// Per partition: it may call SET_MODULE_SCHEDULE while this schedule is in force
    /// (`SetModuleSchedule` of its Partition_Schedule here).
    pub may_set_schedule: Vec<bool>,
}

/// One window of one major frame on one core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub start_ns: i64,
    pub end_ns: i64,
    /// Index into `Plan::partitions`.
    pub partition: usize,
    pub window: u32,
}

impl Plan {
    /// Builds the plan of a module that passed validation.
    pub fn new(m: &Module) -> Plan {
        let partitions: Vec<PlannedPartition> = m
            .partitions
            .iter()
            .map(|p| PlannedPartition {
                id: p.id.value,
                name: p.name.value.clone(),
                // Absolute, so that it does not depend on the working directory of the program.
                executable: p
                    .executable
                    .as_ref()
                    .map(|e| {
                        let path = m.base_dir.join(&e.value);
                        std::path::absolute(&path).unwrap_or(path)
                    })
                    .unwrap_or_default(),
                backend: p.backend.value,
                arguments: p.arguments.as_ref().map(|a| split_arguments(&a.value)).unwrap_or_default(),
                memory_bytes: m.memory_bytes(p.id.value),
                criticality: p.criticality.as_ref().map_or(255, |c| c.value as u32),
                system_partition: p.system_partition,
                cores: Vec::new(),
                served_by_priority: None,
                rt_band: DEFAULT_RT_BAND,
                max_tasks: p.max_tasks.as_ref().map_or(DEFAULT_MAX_TASKS, |v| v.value),
                max_open_files: p.max_open_files.as_ref().map_or(DEFAULT_MAX_OPEN_FILES, |v| v.value),
                mounts: p
                    .mounts
                    .iter()
                    .map(|m| PlannedMount {
                        source: PathBuf::from(&m.source.value),
                        target: PathBuf::from(&m.target.value),
                        writable: m.writable,
                        line: m.span.line,
                    })
                    .collect(),
            })
            .collect();
        let index_of = |id: u32| partitions.iter().position(|p| p.id == id);
        let mut plan = Plan {
            module_name: m.name.value.clone(),
            cores: m.cores.iter().map(|c| PlannedCore { index: c.index, cpu: c.cpu, policy: c.policy }).collect(),
            partitions: partitions.clone(),
            schedules: Vec::new(),
            initial_schedule: 0,
        };
        let initial_id = m.initial_schedule().map(|s| s.id.value);
        for s in &m.schedules {
            let mut slots = vec![Vec::new(); plan.cores.len()];
            let mut periods = vec![(0, 0); plan.partitions.len()];
            let mut may_set_schedule = vec![false; plan.partitions.len()];
            for ps in &s.partitions {
                let Some(p) = m.resolve(&ps.partition).and_then(|p| index_of(p.id.value)) else { continue };
                periods[p] = (ps.period.value.0, ps.duration.value.0);
                may_set_schedule[p] = ps.set_module_schedule;
                for w in &ps.windows {
                    let core = w.core.value as usize;
                    if core < slots.len() {
                        slots[core].push(Slot { start_ns: w.start.value.0, end_ns: w.end().0, partition: p, window: w.id.value });
                        if !plan.partitions[p].cores.contains(&w.core.value) {
                            plan.partitions[p].cores.push(w.core.value);
                        }
                    }
                }
            }
            for core_slots in &mut slots {
                core_slots.sort_by_key(|s| s.start_ns);
            }
            if Some(s.id.value) == initial_id {
                plan.initial_schedule = plan.schedules.len();
            }
            plan.schedules.push(PlannedSchedule {
                id: s.id.value,
                name: s.name.value.clone(),
                major_frame_ns: s.major_frame.value.0,
                slots,
                periods,
                may_set_schedule,
            });
        }
        for c in &m.cores {
            for pp in &c.priorities {
                if let Some(p) = index_of(pp.partition.value) {
                    if !plan.partitions[p].cores.contains(&c.index) {
                        plan.partitions[p].cores.push(c.index);
                    }
                    plan.partitions[p].served_by_priority.get_or_insert((c.index, pp.priority.value));
                }
            }
            // Disjoint bands, higher partition priority higher up, so that the kernel serves
            // the most urgent partition that has work.
            let mut served: Vec<(i32, usize)> =
                c.priorities.iter().filter_map(|pp| index_of(pp.partition.value).map(|p| (pp.priority.value, p))).collect();
            served.sort();
            let width = (BAND_RANGE.1 - BAND_RANGE.0) / served.len().max(1) as u32;
            for (k, &(_, p)) in served.iter().enumerate() {
                plan.partitions[p].rt_band = (BAND_RANGE.0 + k as u32 * width, width.saturating_sub(2).max(1));
            }
        }
        for p in &mut plan.partitions {
            p.cores.sort_unstable();
        }
        plan
    }

    /// What this version of the scheduler cannot run yet, each as a message naming the
    /// element to change; empty when the plan can run. `per_core_gating`: a multi-core
    /// partition can be stopped on one core while it runs on another (cgroup v2 threaded
    /// cgroups and the cgroup freezer gate); without it, its cores must share its windows.
    pub fn unsupported(&self, per_core_gating: bool) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.partitions {
            if let Some((core, _)) = p.served_by_priority {
                if p.cores.len() > 1 {
                    out.push(format!(
                        "partition {} \"{}\" is served by priority on FIXED_PRIORITY core {core} and also runs on other cores: `partita run` stops and releases a partition as a whole, so serve it on one core only",
                        p.id, p.name
                    ));
                }
                let banded: Vec<&PlannedPartition> =
                    self.partitions.iter().filter(|q| q.served_by_priority.is_some_and(|(c, _)| c == core)).collect();
                if banded.len() > 26 {
                    out.push(format!(
                        "FIXED_PRIORITY core {core} serves {} partitions; at most 26 fit in the real-time priority range",
                        banded.len()
                    ));
                }
            }
        }
        if per_core_gating {
            return out;
        }
        // Stopped and started as a whole, a multi-core partition must have the same windows
        // on each of its cores.
        for s in &self.schedules {
            for (pi, p) in self.partitions.iter().enumerate() {
                if self.windows_differ(s, pi) {
                    out.push(format!(
                        "partition {} \"{}\" has different windows on its cores in schedule \"{}\": without cgroup v2 threaded cgroups and the cgroup freezer, `partita run` stops and releases a multi-core partition on all its cores at once, so give it the same windows on each core",
                        p.id, p.name, s.name
                    ));
                }
            }
        }
        out
    }

    /// Whether partition `pi` has different windows on its cores in schedule `s`.
    fn windows_differ(&self, s: &PlannedSchedule, pi: usize) -> bool {
        let per_core: Vec<Vec<(i64, i64)>> = self.partitions[pi]
            .cores
            .iter()
            .map(|&c| s.slots[c as usize].iter().filter(|sl| sl.partition == pi).map(|sl| (sl.start_ns, sl.end_ns)).collect())
            .filter(|w: &Vec<(i64, i64)>| !w.is_empty())
            .collect();
        per_core.windows(2).any(|w| w[0] != w[1])
    }

    /// Whether partition `pi` runs on several cores with the same windows on each of them in
    /// every schedule (none on a FIXED_PRIORITY core): then its processes without a core
    /// preference may run on any of its cores (docs/scheduling.md, "Multi-core partitions").
    pub fn windows_in_step(&self, pi: usize) -> bool {
        let p = &self.partitions[pi];
        p.cores.len() > 1
            && p.served_by_priority.is_none()
            && self.schedules.iter().all(|s| {
                let per_core: Vec<Vec<(i64, i64)>> = p
                    .cores
                    .iter()
                    .map(|&c| s.slots[c as usize].iter().filter(|sl| sl.partition == pi).map(|sl| (sl.start_ns, sl.end_ns)).collect())
                    .collect();
                per_core.windows(2).all(|w| w[0] == w[1])
            })
    }

    pub fn schedule_index(&self, id: u32) -> Option<usize> {
        self.schedules.iter().position(|s| s.id == id)
    }
}

/// `pt:Arguments` split like a shell would for plain words and quoted strings (no expansion).
pub fn split_arguments(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    in_word = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_like_a_shell() {
        assert_eq!(split_arguments(r#"-v --name "two words" 'x y' a\ b"#), ["-v", "--name", "two words", "x y", "a b"]);
        assert_eq!(split_arguments("  "), Vec::<String>::new());
        assert_eq!(split_arguments(r#""""#), [""]);
    }

    #[test]
    fn unsupported_layouts_are_named() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let fp = partita_config::check_file(&root.join("fixed-priority.xml")).unwrap();
        let msgs = Plan::new(fp.module.as_ref().unwrap()).unsupported(true);
        assert!(msgs.is_empty(), "{msgs:?}");
        let plan = Plan::new(fp.module.as_ref().unwrap());
        // Served partitions have disjoint bands, the higher partition priority higher up.
        let mut served: Vec<(i32, (u32, u32))> =
            plan.partitions.iter().filter_map(|p| p.served_by_priority.map(|(_, prio)| (prio, p.rt_band))).collect();
        served.sort();
        assert!(served.len() >= 2, "{served:?}");
        for w in served.windows(2) {
            let ((_, (b0, l0)), (_, (b1, _))) = (w[0], w[1]);
            assert!(b0 + l0 + 1 < b1, "bands overlap: {served:?}");
        }
        let fc = partita_config::check_file(&root.join("flight-control.xml")).unwrap();
        assert!(Plan::new(fc.module.as_ref().unwrap()).unsupported(false).is_empty());
        let xml = r#"<ARINC_653_Module ModuleName="M" xmlns:pt="urn:partita:1">
  <pt:Cores Cpus="0-1"/>
  <Partition PartitionIdentifier="1" PartitionName="A" pt:Executable="a"/>
  <Module_Schedule ScheduleIdentifier="1" ScheduleName="s" MajorFrameSeconds="0.02">
    <Partition_Schedule PartitionIdentifier="1" PeriodSeconds="0.02" PeriodDurationSeconds="0.005">
      <Window_Schedule WindowIdentifier="1" WindowStartSeconds="0" WindowDurationSeconds="0.005"/>
      <Window_Schedule WindowIdentifier="2" WindowStartSeconds="0.01" WindowDurationSeconds="0.005" pt:Core="1"/>
    </Partition_Schedule>
  </Module_Schedule>
</ARINC_653_Module>"#;
        let m = partita_config::check_text(xml, std::path::Path::new("/nonexistent"));
        let plan = Plan::new(m.module.as_ref().unwrap());
        let msgs = plan.unsupported(false);
        assert!(msgs.iter().any(|m| m.contains("partition 1 \"A\" has different windows")), "{msgs:?}");
        // Gated per core, it runs on each core in that core's windows.
        assert!(plan.unsupported(true).is_empty());
        assert!(!plan.windows_in_step(0), "different windows per core are not in step");
        let in_step = xml.replace(
            r#"WindowStartSeconds="0.01" WindowDurationSeconds="0.005" pt:Core="1""#,
            r#"WindowStartSeconds="0" WindowDurationSeconds="0.005" pt:Core="1""#,
        );
        let m = partita_config::check_text(&in_step, std::path::Path::new("/nonexistent"));
        let plan = Plan::new(m.module.as_ref().unwrap());
        assert!(plan.windows_in_step(0), "the same windows on both cores are in step");
    }

    #[test]
    fn plan_of_the_flight_control_example() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/flight-control.xml");
        let checked = partita_config::check_file(&path).unwrap();
        assert!(checked.is_valid());
        let plan = Plan::new(checked.module.as_ref().unwrap());
        assert_eq!(plan.cores.len(), 2);
        let s = &plan.schedules[plan.initial_schedule];
        assert_eq!(s.major_frame_ns, 80_000_000);
        // Windows of a core are in time order and never overlap.
        for core in &s.slots {
            for pair in core.windows(2) {
                assert!(pair[0].end_ns <= pair[1].start_ns);
            }
        }
        let ofp = plan.partitions.iter().position(|p| p.name == "OFP").unwrap();
        assert_eq!(plan.partitions[ofp].cores, [0]);
        assert!(plan.partitions[ofp].executable.ends_with("bin/ofp"));
        assert_eq!(s.periods[ofp], (20_000_000, 11_250_000));
    }
}
