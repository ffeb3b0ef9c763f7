//! Consistency rules of a module configuration (design.md §3). Each rule reports at the
//! offending element or attribute, names the identifiers involved and says what would fix it.

use crate::diag::{Diagnostics, Rule, Span};
use crate::model::*;
use crate::time::Nanos;
use std::collections::{HashMap, HashSet};

pub fn validate(m: &Module, d: &mut Diagnostics) {
    partitions(m, d);
    memory(m, d);
    cores(m, d);
    schedules(m, d);
    health_monitor(m, d);
    channels(m, d);
    crate::lint::lint(m, d);
}

/// Reports the second and later occurrences of each key.
fn unique<K: std::hash::Hash + Eq>(d: &mut Diagnostics, items: impl IntoIterator<Item = (K, Span)>, describe: impl Fn(&K, Span) -> String) {
    let mut seen: HashMap<K, Span> = HashMap::new();
    for (key, span) in items {
        if let Some(&first) = seen.get(&key) {
            d.error(Rule::Duplicate, span, describe(&key, first));
        } else {
            seen.insert(key, span);
        }
    }
}

fn describe_partition(p: &Partition) -> String {
    format!("partition {} \"{}\"", p.id.value, p.name.value)
}

/// Resolves a partition reference; an unknown id or name, or an id and name that designate
/// different partitions, are reported with `rule` and give `None`.
fn resolve<'m>(m: &'m Module, r: &PartitionRef, rule: Rule, context: &str, d: &mut Diagnostics) -> Option<&'m Partition> {
    let by_id = r.id.as_ref().map(|id| (id, m.partition(id.value)));
    let by_name = r.name.as_ref().map(|n| (n, m.partition_by_name(&n.value)));
    match (by_id, by_name) {
        (Some((id, None)), _) => {
            d.error(
                rule,
                r.span,
                format!("{context} names PartitionIdentifier {}, but no partition has that identifier{}", id.value, known_ids(m)),
            );
            None
        }
        (None, Some((name, None))) => {
            d.error(
                rule,
                r.span,
                format!("{context} names PartitionName \"{}\", but no partition has that name{}", name.value, known_names(m)),
            );
            None
        }
        (Some((_, Some(p))), Some((name, _))) if p.name.value != name.value => {
            d.error(
                rule,
                r.span,
                format!(
                    "{context} names PartitionIdentifier {} and PartitionName \"{}\", which do not agree: partition {} is \"{}\"",
                    p.id.value, name.value, p.id.value, p.name.value
                ),
            );
            None
        }
        (Some((_, Some(p))), _) | (None, Some((_, Some(p)))) => Some(p),
        (None, None) => None,
    }
}

fn known_ids(m: &Module) -> String {
    let ids: Vec<String> = m.partitions.iter().map(|p| p.id.value.to_string()).collect();
    if ids.is_empty() { String::new() } else { format!(" (known: {})", ids.join(", ")) }
}

fn known_names(m: &Module) -> String {
    let names: Vec<String> = m.partitions.iter().map(|p| format!("\"{}\"", p.name.value)).collect();
    if names.is_empty() { String::new() } else { format!(" (known: {})", names.join(", ")) }
}

fn partitions(m: &Module, d: &mut Diagnostics) {
    if m.partitions.is_empty() {
        d.error(Rule::MissingAttribute, m.span, "the module has no <Partition>; declare at least one");
    }
    unique(d, m.partitions.iter().map(|p| (p.id.value, p.id.span)), |id, first| {
        format!("duplicate PartitionIdentifier {id} (first used at line {}); give each partition its own identifier", first.line)
    });
    unique(d, m.partitions.iter().map(|p| (p.name.value.clone(), p.name.span)), |name, first| {
        format!("duplicate PartitionName \"{name}\" (first used at line {}); give each partition its own name", first.line)
    });
    for p in &m.partitions {
        match &p.executable {
            None => d.error(
                Rule::MissingExecutable,
                p.span,
                format!(
                    "{} has no pt:Executable; add pt:Executable=\"path/to/program\" (relative to the configuration file)",
                    describe_partition(p)
                ),
            ),
            Some(exe) => check_executable(m, p, exe, d),
        }
        crate::mounts::check(p, &describe_partition(p), d);
        let ports = p
            .sampling_ports
            .iter()
            .map(|s| (s.name.value.clone(), s.name.span))
            .chain(p.queuing_ports.iter().map(|q| (q.name.value.clone(), q.name.span)));
        unique(d, ports, |name, first| {
            format!(
                "{} declares port \"{name}\" twice (first at line {}); port names are unique within a partition",
                describe_partition(p),
                first.line
            )
        });
        unique(d, p.processes.iter().map(|pr| (pr.name.value.clone(), pr.name.span)), |name, first| {
            format!("{} declares process \"{name}\" twice (first at line {})", describe_partition(p), first.line)
        });
        let sizes = p
            .sampling_ports
            .iter()
            .map(|s| (&s.name, &s.max_message_size))
            .chain(p.queuing_ports.iter().map(|q| (&q.name, &q.max_message_size)));
        for (name, size) in sizes {
            if size.value == 0 {
                d.error(
                    Rule::InvalidValue,
                    size.span,
                    format!("port \"{}\" of {} has MaxMessageSize 0; a message needs at least one byte", name.value, describe_partition(p)),
                );
            }
        }
        for q in &p.queuing_ports {
            if q.max_nb_messages.value == 0 {
                d.error(
                    Rule::InvalidValue,
                    q.max_nb_messages.span,
                    format!(
                        "queuing port \"{}\" of {} has MaxNbMessages 0; it could never hold a message",
                        q.name.value,
                        describe_partition(p)
                    ),
                );
            }
        }
        for s in &p.sampling_ports {
            if let Some(r) = &s.refresh_period
                && r.value.0 == 0
                && s.direction.value == Direction::Destination
            {
                d.error(
                    Rule::InvalidValue,
                    r.span,
                    format!(
                        "sampling port \"{}\" of {} has RefreshRateSeconds 0; every message would be invalid",
                        s.name.value,
                        describe_partition(p)
                    ),
                );
            }
        }
    }
}

fn check_executable(m: &Module, p: &Partition, exe: &Spanned<String>, d: &mut Diagnostics) {
    if exe.value.trim().is_empty() {
        d.error(
            Rule::MissingExecutable,
            exe.span,
            format!("pt:Executable of {} is empty; name the partition's program", describe_partition(p)),
        );
        return;
    }
    let path = m.base_dir.join(&exe.value);
    match std::fs::metadata(&path) {
        Err(_) => d.warning(
            Rule::ExecutableNotFound,
            exe.span,
            format!("pt:Executable \"{}\" of {} does not exist yet ({})", exe.value, describe_partition(p), path.display()),
        ),
        Ok(meta) if !meta.is_file() => d.warning(
            Rule::ExecutableNotFound,
            exe.span,
            format!("pt:Executable \"{}\" of {} is not a file", exe.value, describe_partition(p)),
        ),
        Ok(meta) => {
            use std::os::unix::fs::PermissionsExt;
            if p.backend.value == Backend::Process && meta.permissions().mode() & 0o111 == 0 {
                d.warning(
                    Rule::ExecutableNotFound,
                    exe.span,
                    format!("pt:Executable \"{}\" of {} is not executable (chmod +x)", exe.value, describe_partition(p)),
                );
            }
        }
    }
}

fn memory(m: &Module, d: &mut Diagnostics) {
    let mut seen: HashMap<u32, Span> = HashMap::new();
    for pm in &m.memory {
        let Some(p) = resolve(m, &pm.partition, Rule::UnknownReference, "<Partition_Memory>", d) else { continue };
        if let Some(first) = seen.insert(p.id.value, pm.span) {
            d.error(
                Rule::Duplicate,
                pm.span,
                format!(
                    "a second <Partition_Memory> for {} (first at line {}); put all its regions in one",
                    describe_partition(p),
                    first.line
                ),
            );
        }
        unique(d, pm.regions.iter().filter_map(|r| r.name.as_ref().map(|n| (n.value.clone(), n.span))), |name, first| {
            format!("{} has two memory regions named \"{name}\" (first at line {})", describe_partition(p), first.line)
        });
    }
}

fn cores(m: &Module, d: &mut Diagnostics) {
    for core in &m.cores {
        let mut seen: HashMap<u32, Span> = HashMap::new();
        for pp in &core.priorities {
            if core.policy != CorePolicy::FixedPriority {
                d.error(
                    Rule::InvalidValue,
                    pp.span,
                    format!("core {} is CYCLIC; <pt:Partition_Priority> belongs under a core with Policy=\"FIXED_PRIORITY\"", core.index),
                );
            }
            let r = PartitionRef { span: pp.span, id: Some(pp.partition.clone()), name: None };
            if let Some(p) = resolve(m, &r, Rule::UnknownReference, "<pt:Partition_Priority>", d)
                && let Some(first) = seen.insert(p.id.value, pp.span)
            {
                d.error(
                    Rule::Duplicate,
                    pp.span,
                    format!("{} has two priorities on core {} (first at line {})", describe_partition(p), core.index, first.line),
                );
            }
        }
        if core.policy == CorePolicy::FixedPriority
            && core.priorities.is_empty()
            && let Some(span) = core.span
        {
            d.warning(
                Rule::PartitionNotScheduled,
                span,
                format!("FIXED_PRIORITY core {} serves no partition; add <pt:Partition_Priority> entries", core.index),
            );
        }
    }
    if m.cores_declared.is_none() {
        let host = std::thread::available_parallelism().map_or(1, |n| n.get());
        for s in &m.schedules {
            for w in s.partitions.iter().flat_map(|ps| &ps.windows) {
                if w.core.value as usize >= host {
                    d.warning(
                        Rule::CoreOutOfRange,
                        w.core.span,
                        format!(
                            "pt:Core {} needs host CPU {}, but this machine has {host}; declare <pt:Cores Cpus=...>",
                            w.core.value, w.core.value
                        ),
                    );
                }
            }
        }
    }
}

/// Partitions served by priority on some FIXED_PRIORITY core (they need no windows).
fn priority_served(m: &Module) -> HashSet<u32> {
    m.cores.iter().filter(|c| c.policy == CorePolicy::FixedPriority).flat_map(|c| c.priorities.iter().map(|p| p.partition.value)).collect()
}

fn schedules(m: &Module, d: &mut Diagnostics) {
    let served = priority_served(m);
    if m.schedules.is_empty() && served.is_empty() {
        d.error(Rule::NoSchedule, m.span, "the module has no <Module_Schedule>; partitions would never run");
    }
    unique(d, m.schedules.iter().map(|s| (s.id.value, s.id.span)), |id, first| {
        format!("duplicate ScheduleIdentifier {id} (first at line {})", first.line)
    });
    unique(d, m.schedules.iter().map(|s| (s.name.value.clone(), s.name.span)), |name, first| {
        format!("duplicate ScheduleName \"{name}\" (first at line {})", first.line)
    });
    let initial: Vec<&ModuleSchedule> = m.schedules.iter().filter(|s| s.initial.as_ref().is_some_and(|i| i.value)).collect();
    for extra in initial.iter().skip(1) {
        d.error(
            Rule::InitialSchedule,
            extra.span,
            format!(
                "schedule \"{}\" and schedule \"{}\" are both InitialModuleSchedule; mark only one",
                initial[0].name.value, extra.name.value
            ),
        );
    }
    for s in &m.schedules {
        schedule(m, s, &served, d);
    }
}

fn schedule(m: &Module, s: &ModuleSchedule, served: &HashSet<u32>, d: &mut Diagnostics) {
    let maf = s.major_frame.value;
    let sname = &s.name.value;
    if maf.0 == 0 {
        d.error(Rule::InvalidValue, s.major_frame.span, format!("MajorFrameSeconds of schedule \"{sname}\" is 0; it must be positive"));
    }
    let mut seen: HashMap<u32, Span> = HashMap::new();
    // (core, window, partition) for the overlap check.
    let mut placed: Vec<(u32, &Window, &Partition)> = Vec::new();
    // When no period divides the major frame, the frame is what is wrong: one error on it.
    let periods: Vec<Nanos> = s.partitions.iter().map(|ps| ps.period.value).filter(|p| p.0 > 0).collect();
    let frame_is_the_culprit = maf.0 > 0 && !periods.is_empty() && periods.iter().all(|p| maf.0 % p.0 != 0);
    if frame_is_the_culprit {
        let list: Vec<String> = periods.iter().map(|p| p.to_seconds_string()).collect();
        d.error(
            Rule::FrameNotMultiple,
            s.major_frame.span,
            format!(
                "MajorFrameSeconds {} of schedule \"{sname}\" is not a multiple of any partition's PeriodSeconds ({}); make it a common multiple of them",
                maf.to_seconds_string(),
                list.join(", ")
            ),
        );
    }
    for ps in &s.partitions {
        let Some(p) = resolve(m, &ps.partition, Rule::UnknownReference, &format!("<Partition_Schedule> of schedule \"{sname}\""), d) else {
            continue;
        };
        let who = describe_partition(p);
        if let Some(first) = seen.insert(p.id.value, ps.span) {
            d.error(
                Rule::Duplicate,
                ps.span,
                format!("{who} has two <Partition_Schedule> in schedule \"{sname}\" (first at line {}); merge them", first.line),
            );
            continue;
        }
        let period = ps.period.value;
        if period.0 == 0 {
            d.error(
                Rule::InvalidValue,
                ps.period.span,
                format!("PeriodSeconds of {who} in schedule \"{sname}\" is 0; it must be positive"),
            );
        } else if maf.0 > 0 && maf.0 % period.0 != 0 && !frame_is_the_culprit {
            d.error(
                Rule::FrameNotMultiple,
                ps.span,
                format!("MajorFrameSeconds {} of schedule \"{sname}\" is not a multiple of PeriodSeconds {} of {who}; change one so that the frame holds a whole number of periods", maf.to_seconds_string(), period.to_seconds_string()),
            );
        }
        if ps.duration.value > period && period.0 > 0 {
            d.error(
                Rule::InvalidValue,
                ps.duration.span,
                format!(
                    "PeriodDurationSeconds {} of {who} is longer than its PeriodSeconds {}",
                    ps.duration.value.to_seconds_string(),
                    period.to_seconds_string()
                ),
            );
        }
        unique(d, ps.windows.iter().map(|w| (w.id.value, w.id.span)), |id, first| {
            format!("{who} has two windows with WindowIdentifier {id} (first at line {})", first.line)
        });
        for w in &ps.windows {
            if w.duration.value.0 == 0 {
                d.error(Rule::InvalidValue, w.duration.span, format!("window {} of {who} has WindowDurationSeconds 0", w.id.value));
                continue;
            }
            if w.end() > maf {
                d.error(
                    Rule::WindowOutsideFrame,
                    w.span,
                    format!(
                        "window {} of {who} runs from {} to {}, past the end of major frame {} of schedule \"{sname}\"; move or shorten it",
                        w.id.value,
                        w.start.value,
                        w.end(),
                        maf
                    ),
                );
            }
            match m.cores.get(w.core.value as usize) {
                None if m.cores_declared.is_some() => d.error(
                    Rule::CoreOutOfRange,
                    w.span,
                    format!("window {} of {who} is on pt:Core {}, but <pt:Cores> declares {} core(s) (0..{})", w.id.value, w.core.value, m.cores.len(), m.cores.len().saturating_sub(1)),
                ),
                Some(core) if core.policy == CorePolicy::FixedPriority => d.error(
                    Rule::FixedPriorityWithWindows,
                    w.span,
                    format!("window {} of {who} is on core {}, which is FIXED_PRIORITY and serves partitions by priority; move the window to a CYCLIC core or make core {} CYCLIC", w.id.value, core.index, core.index),
                ),
                _ => placed.push((w.core.value, w, p)),
            }
        }
        if period.0 > 0 && maf.0 > 0 && maf.0 % period.0 == 0 && !(ps.windows.is_empty() && served.contains(&p.id.value)) {
            coverage(s, ps, p, d);
        }
    }
    overlaps(&mut placed, sname, d);
    for p in &m.partitions {
        if !seen.contains_key(&p.id.value) && !served.contains(&p.id.value) {
            d.warning(
                Rule::PartitionNotScheduled,
                s.span,
                format!(
                    "{} has no <Partition_Schedule> in schedule \"{sname}\"; it does not run while that schedule is active",
                    describe_partition(p)
                ),
            );
        }
    }
}

/// Every period [kP, (k+1)P) must hold PeriodDurationSeconds of window time (union over cores).
fn coverage(s: &ModuleSchedule, ps: &PartitionSchedule, p: &Partition, d: &mut Diagnostics) {
    let period = ps.period.value.0;
    let need = ps.duration.value.0;
    let maf = s.major_frame.value.0;
    let mut intervals: Vec<(i64, i64)> = ps
        .windows
        .iter()
        .filter(|w| w.duration.value.0 > 0)
        .map(|w| (w.start.value.0, w.end().0.min(maf)))
        .filter(|&(a, b)| b > a)
        .collect();
    intervals.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (a, b) in intervals {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    if need == 0 {
        return;
    }
    let periods = maf / period;
    // Only periods holding a window edge can be partly covered; a period inside one merged
    // interval is fully covered, one touched by none gets nothing. So the cost follows the
    // number of windows, not the length of the frame.
    let mut short: Vec<(i64, i64)> = Vec::new(); // (period index, time received), first few
    let mut short_count: i64 = 0;
    let received = |k: i64| -> i64 {
        let (lo, hi) = (k * period, (k + 1) * period);
        let from = merged.partition_point(|&(_, b)| b <= lo);
        merged[from..].iter().take_while(|&&(a, _)| a < hi).map(|&(a, b)| (b.min(hi) - a.max(lo)).max(0)).sum()
    };
    let mut touched: Vec<i64> = Vec::new();
    let mut next_untouched = 0i64;
    for &(a, b) in &merged {
        let (first, last) = (a / period, ((b - 1) / period).min(periods - 1));
        // Periods before this interval that no interval reaches get nothing.
        if first > next_untouched {
            short_count += first - next_untouched;
            if short.is_empty() {
                short.push((next_untouched, 0));
            }
        }
        for k in [first, last] {
            if k >= next_untouched && touched.last() != Some(&k) {
                touched.push(k);
            }
        }
        next_untouched = next_untouched.max(last + 1);
    }
    if periods > next_untouched {
        short_count += periods - next_untouched;
        if short.is_empty() {
            short.push((next_untouched, 0));
        }
    }
    for k in touched {
        let got = received(k);
        if got < need {
            short_count += 1;
            short.push((k, got));
        }
    }
    short.sort_unstable();
    if let Some(&(k, got)) = short.first() {
        let more = if short_count > 1 { format!(" ({short_count} of {periods} periods are short)") } else { String::new() };
        d.error(
            Rule::PeriodNotCovered,
            ps.span,
            format!(
                "{} gets {} of window time in period {} [{}, {}) of schedule \"{}\", less than its PeriodDurationSeconds {}{more}; add or lengthen windows in that interval",
                describe_partition(p),
                Nanos(got),
                k,
                Nanos(k * period),
                Nanos((k + 1) * period),
                s.name.value,
                ps.duration.value
            ),
        );
    }
}

fn overlaps(placed: &mut [(u32, &Window, &Partition)], sname: &str, d: &mut Diagnostics) {
    placed.sort_by_key(|(core, w, _)| (*core, w.start.value, w.end()));
    // The latest-ending earlier window on the same core is the one a window may overlap.
    let mut latest: Option<(u32, &Window, &Partition)> = None;
    for &(core, w, p) in placed.iter() {
        if w.duration.value.0 <= 0 {
            continue;
        }
        match latest {
            Some((c, ew, ep)) if c == core => {
                if w.start.value < ew.end() {
                    d.error(
                        Rule::WindowOverlap,
                        w.span,
                        format!(
                            "window {} of {} [{}, {}) overlaps window {} of {} [{}, {}) on core {core} in schedule \"{sname}\"; windows on one core must not overlap",
                            w.id.value,
                            describe_partition(p),
                            w.start.value,
                            w.end(),
                            ew.id.value,
                            describe_partition(ep),
                            ew.start.value,
                            ew.end()
                        ),
                    );
                }
                if w.end() > ew.end() {
                    latest = Some((core, w, p));
                }
            }
            _ => latest = Some((core, w, p)),
        }
    }
}

fn health_monitor(m: &Module, d: &mut Diagnostics) {
    if let Some(t) = &m.system_hm {
        unique(d, t.states.iter().map(|s| (s.state.value, s.span)), |st, first| {
            format!("System_HM_Table describes SystemState {st} twice (first at line {})", first.line)
        });
        for s in &t.states {
            unique(d, s.errors.iter().map(|e| (e.error_id.value, e.span)), |id, first| {
                format!("SystemState {} of System_HM_Table lists ErrorIdentifier {id} twice (first at line {})", s.state.value, first.line)
            });
        }
    }
    if let Some(t) = &m.module_hm {
        action_states(&t.states, "Module_HM_Table", d);
    }
    let mut seen: HashMap<u32, Span> = HashMap::new();
    for t in &m.partition_hm {
        let Some(p) = resolve(m, &t.partition, Rule::UnknownReference, "<Partition_HM_Table>", d) else { continue };
        if let Some(first) = seen.insert(p.id.value, t.span) {
            d.error(
                Rule::Duplicate,
                t.span,
                format!("a second <Partition_HM_Table> for {} (first at line {})", describe_partition(p), first.line),
            );
        }
        action_states(&t.states, &format!("Partition_HM_Table of {}", describe_partition(p)), d);
    }
}

fn action_states<A>(states: &[SystemStateActions<A>], table: &str, d: &mut Diagnostics) {
    unique(d, states.iter().map(|s| (s.state.value, s.span)), |st, first| {
        format!("{table} describes SystemState {st} twice (first at line {})", first.line)
    });
    for s in states {
        unique(d, s.actions.iter().map(|a| (a.error_id.value, a.span)), |id, first| {
            format!("SystemState {} of {table} lists ErrorIdentifier {id} twice (first at line {})", s.state.value, first.line)
        });
    }
}

/// What a channel end designates once resolved.
struct PortEnd {
    kind: PortKind,
    direction: Direction,
    size: u32,
    partition: u32,
    port: String,
}

fn resolve_end(m: &Module, end: &ChannelEnd, channel: &Channel, d: &mut Diagnostics) -> Option<PortEnd> {
    let ChannelEnd::Standard { span, partition, port } = end else { return None };
    let context = format!("channel {}", channel.id.value);
    let p = resolve(m, partition, Rule::ChannelUnknown, &context, d)?;
    if let Some(s) = p.sampling_ports.iter().find(|s| s.name.value == port.value) {
        return Some(PortEnd {
            kind: PortKind::Sampling,
            direction: s.direction.value,
            size: s.max_message_size.value,
            partition: p.id.value,
            port: port.value.clone(),
        });
    }
    if let Some(q) = p.queuing_ports.iter().find(|q| q.name.value == port.value) {
        return Some(PortEnd {
            kind: PortKind::Queuing,
            direction: q.direction.value,
            size: q.max_message_size.value,
            partition: p.id.value,
            port: port.value.clone(),
        });
    }
    if p.malformed_ports.contains(&port.value) {
        return None;
    }
    let ports: Vec<String> =
        p.sampling_ports.iter().map(|s| s.name.value.clone()).chain(p.queuing_ports.iter().map(|q| q.name.value.clone())).collect();
    let known = if ports.is_empty() { "it has no ports".to_string() } else { format!("its ports are {}", ports.join(", ")) };
    d.error(
        Rule::ChannelUnknown,
        *span,
        format!("{context} names port \"{}\" of {}, which has no such port; {known}", port.value, describe_partition(p)),
    );
    None
}

fn channels(m: &Module, d: &mut Diagnostics) {
    unique(d, m.channels.iter().map(|c| (c.id.value, c.id.span)), |id, first| {
        format!("duplicate ChannelIdentifier {id} (first at line {})", first.line)
    });
    unique(d, m.channels.iter().filter_map(|c| c.name.as_ref().map(|n| (n.value.clone(), n.span))), |name, first| {
        format!("duplicate ChannelName \"{name}\" (first at line {})", first.line)
    });
    let mut used: HashMap<(u32, String), (u32, Span)> = HashMap::new();
    let mut use_port = |end: &PortEnd, span: Span, channel: u32, d: &mut Diagnostics| {
        if let Some(&(first_channel, _)) = used.get(&(end.partition, end.port.clone())) {
            d.error(
                Rule::Duplicate,
                span,
                format!("port \"{}\" of partition {} is already an end of channel {first_channel}; a port belongs to one channel (a sampling channel may have several destinations)", end.port, end.partition),
            );
        } else {
            used.insert((end.partition, end.port.clone()), (channel, span));
        }
    };
    for c in &m.channels {
        let id = c.id.value;
        let source = c.source.as_ref().and_then(|s| resolve_end(m, s, c, d).map(|e| (e, s.span())));
        if let Some((src, span)) = &source {
            if src.direction != Direction::Source {
                d.error(
                    Rule::ChannelDirection,
                    *span,
                    format!(
                        "channel {id} uses port \"{}\" of partition {} as its source, but the port's Direction is DESTINATION",
                        src.port, src.partition
                    ),
                );
            }
            use_port(src, *span, id, d);
        }
        let kind = source.as_ref().map(|(s, _)| s.kind);
        let mut queuing_destinations = 0;
        for end in &c.destinations {
            let Some(dst) = resolve_end(m, end, c, d) else {
                if matches!(end, ChannelEnd::Pseudo { .. }) && kind == Some(PortKind::Queuing) {
                    queuing_destinations += 1;
                    if queuing_destinations > 1 {
                        d.error(
                            Rule::ChannelMultipleDestinations,
                            end.span(),
                            format!("queuing channel {id} has more than one destination; a queuing channel has exactly one"),
                        );
                    }
                }
                continue;
            };
            let span = end.span();
            let kind = kind.unwrap_or(dst.kind);
            if dst.kind != kind {
                d.error(
                    Rule::ChannelKindMismatch,
                    span,
                    format!(
                        "channel {id} connects a {} source to {} port \"{}\" of partition {}; both ends must be sampling or both queuing",
                        kind.as_str(),
                        dst.kind.as_str(),
                        dst.port,
                        dst.partition
                    ),
                );
            }
            if dst.direction != Direction::Destination {
                d.error(
                    Rule::ChannelDirection,
                    span,
                    format!(
                        "channel {id} uses port \"{}\" of partition {} as a destination, but the port's Direction is SOURCE",
                        dst.port, dst.partition
                    ),
                );
            }
            if let Some((src, _)) = &source
                && src.size != dst.size
            {
                d.error(
                        Rule::ChannelSizeMismatch,
                        span,
                        format!("channel {id}: MaxMessageSize of destination \"{}\" of partition {} is {}, of source \"{}\" of partition {} is {}; make them equal", dst.port, dst.partition, dst.size, src.port, src.partition, src.size),
                    );
            }
            if kind == PortKind::Queuing {
                queuing_destinations += 1;
                if queuing_destinations > 1 {
                    d.error(Rule::ChannelMultipleDestinations, span, format!("queuing channel {id} has more than one destination; a queuing channel has exactly one (use one channel per destination)"));
                }
            }
            use_port(&dst, span, id, d);
        }
    }
    for p in &m.partitions {
        let ports = p.sampling_ports.iter().map(|s| (&s.name, s.span)).chain(p.queuing_ports.iter().map(|q| (&q.name, q.span)));
        for (name, span) in ports {
            if !used.contains_key(&(p.id.value, name.value.clone())) {
                d.warning(
                    Rule::PortUnconnected,
                    span,
                    format!("port \"{}\" of {} is in no channel; it will never carry a message", name.value, describe_partition(p)),
                );
            }
        }
    }
}
