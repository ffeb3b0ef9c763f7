//! Schedule analysis: per-core timelines, idle gaps and utilization of each module schedule,
//! and the module summary that `partita check` and `partita schedule` print (and emit as JSON).

use crate::model::*;
use crate::time::Nanos;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct ScheduleAnalysis {
    pub id: u32,
    pub name: String,
    pub initial: bool,
    pub major_frame_ns: Nanos,
    pub cores: Vec<CoreTimeline>,
    pub partitions: Vec<PartitionUse>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CoreTimeline {
    pub core: u32,
    pub cpu: u32,
    pub policy: CorePolicy,
    pub windows: Vec<TimelineWindow>,
    pub gaps: Vec<Gap>,
    pub busy_ns: Nanos,
    /// Share of the major frame covered by windows (0..1).
    pub utilization: f64,
    /// On FIXED_PRIORITY cores: (partition id, priority), most urgent first.
    pub priorities: Vec<(u32, i32)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TimelineWindow {
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    pub partition: u32,
    pub partition_name: String,
    pub window: u32,
    pub period_start: bool,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Gap {
    pub start_ns: Nanos,
    pub end_ns: Nanos,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionUse {
    pub id: u32,
    pub name: String,
    pub period_ns: Nanos,
    pub duration_ns: Nanos,
    /// Time in one major frame during which the partition has a window on at least one core
    /// (what PeriodDurationSeconds is measured against).
    pub window_ns: Nanos,
    /// Window time summed over cores (larger than window_ns for a multi-core partition).
    pub core_time_ns: Nanos,
    /// window_ns / major frame.
    pub utilization: f64,
    /// PeriodDurationSeconds / PeriodSeconds: what the partition asked for.
    pub required_utilization: f64,
    pub cores: Vec<u32>,
}

pub fn analyze(m: &Module) -> Vec<ScheduleAnalysis> {
    let initial_id = m.initial_schedule().map(|s| s.id.value);
    m.schedules.iter().map(|s| analyze_schedule(m, s, Some(s.id.value) == initial_id)).collect()
}

fn ratio(a: Nanos, b: Nanos) -> f64 {
    if b.0 == 0 { 0.0 } else { a.0 as f64 / b.0 as f64 }
}

pub fn analyze_schedule(m: &Module, s: &ModuleSchedule, initial: bool) -> ScheduleAnalysis {
    let maf = s.major_frame.value;
    let mut cores: Vec<CoreTimeline> = m
        .cores
        .iter()
        .map(|c| {
            let mut priorities: Vec<(u32, i32)> = c.priorities.iter().map(|p| (p.partition.value, p.priority.value)).collect();
            priorities.sort_by_key(|&(id, prio)| (std::cmp::Reverse(prio), id));
            CoreTimeline {
                core: c.index,
                cpu: c.cpu,
                policy: c.policy,
                windows: Vec::new(),
                gaps: Vec::new(),
                busy_ns: Nanos(0),
                utilization: 0.0,
                priorities,
            }
        })
        .collect();
    let mut partitions = Vec::new();
    for ps in &s.partitions {
        let Some(p) = m.resolve(&ps.partition) else { continue };
        let mut used_cores: Vec<u32> = Vec::new();
        let mut core_time_ns = 0i64;
        let mut intervals: Vec<(i64, i64)> = Vec::new();
        for w in &ps.windows {
            core_time_ns += w.duration.value.0;
            intervals.push((w.start.value.0, w.end().0));
            if !used_cores.contains(&w.core.value) {
                used_cores.push(w.core.value);
            }
            if let Some(core) = cores.iter_mut().find(|c| c.core == w.core.value) {
                core.windows.push(TimelineWindow {
                    start_ns: w.start.value,
                    end_ns: w.end(),
                    partition: p.id.value,
                    partition_name: p.name.value.clone(),
                    window: w.id.value,
                    period_start: w.period_start,
                });
            }
        }
        used_cores.sort_unstable();
        let window_ns = union_length(&mut intervals);
        partitions.push(PartitionUse {
            id: p.id.value,
            name: p.name.value.clone(),
            period_ns: ps.period.value,
            duration_ns: ps.duration.value,
            window_ns: Nanos(window_ns),
            core_time_ns: Nanos(core_time_ns),
            utilization: ratio(Nanos(window_ns), maf),
            required_utilization: ratio(ps.duration.value, ps.period.value),
            cores: used_cores,
        });
    }
    for core in &mut cores {
        core.windows.sort_by_key(|w| (w.start_ns, w.end_ns, w.partition));
        let mut cursor = Nanos(0);
        let mut busy = 0i64;
        for w in &core.windows {
            let start = w.start_ns.min(maf);
            let end = w.end_ns.min(maf);
            if start > cursor {
                core.gaps.push(Gap { start_ns: cursor, end_ns: start });
            }
            // Count covered time once even if (invalid) windows overlap.
            busy += (end.0 - start.max(cursor).0).max(0);
            cursor = cursor.max(end);
        }
        if core.policy == CorePolicy::Cyclic && cursor < maf {
            core.gaps.push(Gap { start_ns: cursor, end_ns: maf });
        }
        core.busy_ns = Nanos(busy);
        core.utilization = ratio(core.busy_ns, maf);
    }
    ScheduleAnalysis { id: s.id.value, name: s.name.value.clone(), initial, major_frame_ns: maf, cores, partitions }
}

/// Total length covered by the intervals (each counted once where they overlap).
fn union_length(intervals: &mut [(i64, i64)]) -> i64 {
    intervals.sort_unstable();
    let mut total = 0;
    let mut cursor = i64::MIN;
    for &(a, b) in intervals.iter() {
        let a = a.max(cursor);
        if b > a {
            total += b - a;
            cursor = b;
        }
    }
    total
}

/// What `partita check` shows of a module: a one-screen summary, also its `--json` form.
#[derive(Debug, Clone, Serialize)]
pub struct ModuleSummary {
    pub name: String,
    pub version: Option<String>,
    pub id: Option<u32>,
    pub cores: Vec<CoreSummary>,
    pub partitions: Vec<PartitionSummary>,
    pub channels: Vec<ChannelSummary>,
    pub schedules: Vec<ScheduleAnalysis>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CoreSummary {
    pub index: u32,
    pub cpu: u32,
    pub policy: CorePolicy,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionSummary {
    pub id: u32,
    pub name: String,
    pub criticality: Option<Criticality>,
    pub system_partition: bool,
    pub backend: Backend,
    pub executable: Option<String>,
    pub arguments: Option<String>,
    pub memory_bytes: u64,
    pub ports: Vec<PortSummary>,
    pub processes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PortSummary {
    pub name: String,
    pub kind: PortKind,
    pub direction: Direction,
    pub max_message_size: u32,
    /// Sampling: refresh period; queuing: none.
    pub refresh_ns: Option<Nanos>,
    /// Queuing: capacity in messages; sampling: none.
    pub max_nb_messages: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChannelSummary {
    pub id: u32,
    pub name: Option<String>,
    pub kind: Option<PortKind>,
    pub source: String,
    pub destinations: Vec<String>,
}

pub fn summarize(m: &Module) -> ModuleSummary {
    let partitions = m
        .partitions
        .iter()
        .map(|p| PartitionSummary {
            id: p.id.value,
            name: p.name.value.clone(),
            criticality: p.criticality.as_ref().map(|c| c.value),
            system_partition: p.system_partition,
            backend: p.backend.value,
            executable: p.executable.as_ref().map(|e| e.value.clone()),
            arguments: p.arguments.as_ref().map(|a| a.value.clone()),
            memory_bytes: m.memory_bytes(p.id.value),
            ports: p
                .sampling_ports
                .iter()
                .map(|s| PortSummary {
                    name: s.name.value.clone(),
                    kind: PortKind::Sampling,
                    direction: s.direction.value,
                    max_message_size: s.max_message_size.value,
                    refresh_ns: s.refresh_period.as_ref().map(|r| r.value),
                    max_nb_messages: None,
                })
                .chain(p.queuing_ports.iter().map(|q| PortSummary {
                    name: q.name.value.clone(),
                    kind: PortKind::Queuing,
                    direction: q.direction.value,
                    max_message_size: q.max_message_size.value,
                    refresh_ns: None,
                    max_nb_messages: Some(q.max_nb_messages.value),
                }))
                .collect(),
            processes: p.processes.iter().map(|pr| pr.name.value.clone()).collect(),
        })
        .collect();
    let channels = m
        .channels
        .iter()
        .map(|c| ChannelSummary {
            id: c.id.value,
            name: c.name.as_ref().map(|n| n.value.clone()),
            kind: c.source.as_ref().and_then(|s| end_kind(m, s)).or_else(|| c.destinations.iter().find_map(|d| end_kind(m, d))),
            source: c.source.as_ref().map_or_else(|| "?".to_string(), |s| describe_end(m, s)),
            destinations: c.destinations.iter().map(|d| describe_end(m, d)).collect(),
        })
        .collect();
    ModuleSummary {
        name: m.name.value.clone(),
        version: m.version.as_ref().map(|v| v.value.clone()),
        id: m.id.as_ref().map(|i| i.value),
        cores: m.cores.iter().map(|c| CoreSummary { index: c.index, cpu: c.cpu, policy: c.policy }).collect(),
        partitions,
        channels,
        schedules: analyze(m),
    }
}

fn end_kind(m: &Module, end: &ChannelEnd) -> Option<PortKind> {
    let ChannelEnd::Standard { partition, port, .. } = end else { return None };
    let p = m.resolve(partition)?;
    if p.sampling_ports.iter().any(|s| s.name.value == port.value) {
        Some(PortKind::Sampling)
    } else if p.queuing_ports.iter().any(|q| q.name.value == port.value) {
        Some(PortKind::Queuing)
    } else {
        None
    }
}

/// `PARTITION.PORT` for a standard end, `udp:HOST:PORT` for a pseudo partition.
fn describe_end(m: &Module, end: &ChannelEnd) -> String {
    match end {
        ChannelEnd::Standard { partition, port, .. } => {
            let who = m.resolve(partition).map_or_else(
                || {
                    partition
                        .name
                        .as_ref()
                        .map_or_else(|| format!("#{}", partition.id.as_ref().map_or(0, |i| i.value)), |n| n.value.clone())
                },
                |p| p.name.value.clone(),
            );
            format!("{who}.{}", port.value)
        }
        ChannelEnd::Pseudo { name, address, .. } => {
            let label = name.as_ref().map_or(String::new(), |n| format!("{} ", n.value));
            format!("{label}udp:{}:{}", address.value.host, address.value.port)
        }
    }
}
