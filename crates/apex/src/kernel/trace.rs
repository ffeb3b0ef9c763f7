//! Partition-side trace events: pushed to the control block's ring (the module drains it),
//! without system calls. Standalone with `PARTITA_STANDALONE_TRACE=1`, each event is also
//! printed on stderr as `partita-trace: t=.. core=.. ev=.. a=.. b=..`.

use crate::kernel::critical::NoStop;
use crate::kernel::runtime::Runtime;
use crate::kernel::sys::{self, Line};
use partita_abi::{TraceEvent, event};

pub fn event_name(kind: u32) -> &'static str {
    match kind {
        event::MODE_CHANGE => "mode_change",
        event::PROCESS_START => "process_start",
        event::PROCESS_STOP => "process_stop",
        event::PROCESS_RELEASE => "process_release",
        event::DEADLINE_MISSED => "deadline_missed",
        event::PROCESS_SUSPEND => "process_suspend",
        event::PROCESS_RESUME => "process_resume",
        event::PROCESS_CREATE => "process_create",
        event::PROCESS_DISPATCH => "process_dispatch",
        event::CONFIG_MISMATCH => "config_mismatch",
        event::PRIORITIES_SHARED => "priorities_shared",
        _ => "unknown",
    }
}

pub fn push(rt: &Runtime, kind: u32, a: i64, b: i64) {
    // A STOP that jumped away between claiming a ring slot and publishing it would block the
    // module's reader for good: the push is a critical section.
    let _n = NoStop::enter();
    let e = TraceEvent { t_ns: sys::now_ns() - rt.epoch_ns, kind, core: rt.current_module_core(), a, b };
    rt.cb.trace.push(e);
    if rt.trace_stderr {
        let mut l = Line::new();
        l.str("partita-trace: t=").int(e.t_ns).str(" core=").int(e.core as i64).str(" ev=").str(event_name(kind));
        l.str(" a=").int(a).str(" b=").int(b).str("\n");
        sys::write_all(2, l.as_bytes());
    }
}
