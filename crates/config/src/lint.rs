//! Warnings about a configuration that is valid but does not do what it seems to: health
//! monitor entries that can never apply or that decide an error in one system state only, ports
//! larger than the standard header's limit, and attributes Partita accepts without applying.

use crate::diag::{Diagnostics, Rule};
use crate::hm::{self, HmTables, STATES};
use crate::model::*;

/// SYSTEM_LIMIT_MESSAGE_SIZE of include/ARINC653.h.
pub const SYSTEM_LIMIT_MESSAGE_SIZE: u32 = 8192;

pub fn lint(m: &Module, d: &mut Diagnostics) {
    hm_entries(m, d);
    hm_state_coverage(m, d);
    port_sizes(m, d);
    colors(m, d);
}

fn state_meaning(state: u32) -> Option<&'static str> {
    STATES.iter().find(|(s, _)| *s == state).map(|(_, m)| *m)
}

fn meaningless_state(state: &Spanned<u32>, table: &str, d: &mut Diagnostics) {
    if state_meaning(state.value).is_none() {
        d.warning(
            Rule::HmNeverApplies,
            state.span,
            format!(
                "SystemState {} of {table} has no meaning in Partita (1 = partition initialization, 2 = partition execution (NORMAL)): its entries never apply",
                state.value
            ),
        );
    }
}

/// Entries that decide nothing: a level without ErrorCode (no error is ever matched to it), an
/// action whose ErrorIdentifier has no level entry with an ErrorCode in its state and that names
/// no ErrorCode itself, and states Partita does not have.
fn hm_entries(m: &Module, d: &mut Diagnostics) {
    let mut coded: Vec<(u32, u32)> = Vec::new();
    if let Some(t) = &m.system_hm {
        for s in &t.states {
            meaningless_state(&s.state, "System_HM_Table", d);
            for e in &s.errors {
                match &e.code {
                    Some(_) => coded.push((s.state.value, e.error_id.value)),
                    None => d.warning(
                        Rule::HmNeverApplies,
                        e.span,
                        format!(
                            "ErrorIdentifier {} of System_HM_Table (SystemState {}) has no ErrorCode: no error is ever given this level; add ErrorCode=\"...\"",
                            e.error_id.value, s.state.value
                        ),
                    ),
                }
            }
        }
    }
    if let Some(t) = &m.module_hm {
        action_entries(&t.states, "Module_HM_Table", &coded, d);
    }
    for t in &m.partition_hm {
        let name = m
            .resolve(&t.partition)
            .map_or("Partition_HM_Table".into(), |p| format!("the Partition_HM_Table of partition {} \"{}\"", p.id.value, p.name.value));
        action_entries(&t.states, &name, &coded, d);
    }
}

/// The action entries of one table that decide nothing (see [`hm_entries`]); `coded`: the
/// (state, identifier) pairs of level entries with an ErrorCode.
fn action_entries<A>(states: &[SystemStateActions<A>], table: &str, coded: &[(u32, u32)], d: &mut Diagnostics) {
    for s in states {
        meaningless_state(&s.state, table, d);
        for a in &s.actions {
            if a.code.is_none() && !coded.contains(&(s.state.value, a.error_id.value)) {
                d.warning(
                    Rule::HmNeverApplies,
                    a.span,
                    format!(
                        "ErrorIdentifier {} of {table} (SystemState {}) decides nothing: it names no ErrorCode and System_HM_Table has no entry with an ErrorCode for that identifier in that state",
                        a.error_id.value, s.state.value
                    ),
                );
            }
        }
    }
}

/// An error a partition's table decides in the initialization state only, while NORMAL falls
/// back to a default: the integrator may have numbered the states differently (Partita's state 1
/// is partition initialization, not process execution). The warning says what will really happen
/// in NORMAL. (Deciding NORMAL only is the common case and is not reported.)
fn hm_state_coverage(m: &Module, d: &mut Diagnostics) {
    let tables = HmTables::new(m);
    for t in &m.partition_hm {
        let Some(p) = m.resolve(&t.partition) else { continue };
        for code in 0..ErrorCode::ALL.len() as u32 {
            let init = tables.explain(p.id.value, hm::PARTITION_INIT, code, false);
            let normal = tables.explain(p.id.value, hm::PARTITION_EXECUTION, code, false);
            let (hm::Source::Entry { line, .. }, hm::Source::Default) = (init.action_from, normal.action_from) else { continue };
            let at = t.states.iter().find(|s| s.state.value == hm::PARTITION_INIT).map_or(t.span, |s| s.span);
            d.warning(
                Rule::HmStateOnly,
                at,
                format!(
                    "the Partition_HM_Table of partition {} \"{}\" decides {} in SystemState 1 (partition initialization) only (line {line}); in NORMAL (SystemState 2) it is decided by default: {} level, action {}",
                    p.id.value,
                    p.name.value,
                    hm::code_name(code),
                    hm::level_name(normal.decision.level),
                    normal.decision.action.as_str()
                ),
            );
        }
    }
}

fn port_sizes(m: &Module, d: &mut Diagnostics) {
    for p in &m.partitions {
        let sizes = p
            .sampling_ports
            .iter()
            .map(|s| (&s.name, &s.max_message_size))
            .chain(p.queuing_ports.iter().map(|q| (&q.name, &q.max_message_size)));
        for (name, size) in sizes {
            if size.value > SYSTEM_LIMIT_MESSAGE_SIZE {
                d.warning(
                    Rule::PortAboveSystemLimit,
                    size.span,
                    format!(
                        "port \"{}\" of partition {} \"{}\" has MaxMessageSize {} above SYSTEM_LIMIT_MESSAGE_SIZE ({SYSTEM_LIMIT_MESSAGE_SIZE} in ARINC653.h): partitions that check sizes against the standard limit will not create it",
                        name.value, p.id.value, p.name.value, size.value
                    ),
                );
            }
        }
    }
}

fn colors(m: &Module, d: &mut Diagnostics) {
    for mem in &m.memory {
        for r in &mem.regions {
            if let Some(c) = &r.colors {
                d.warning(
                    Rule::NotApplied,
                    c.span,
                    "pt:Colors is accepted but not applied at run time yet: the region may use every cache color".to_string(),
                );
            }
        }
    }
}
