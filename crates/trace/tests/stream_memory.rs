//! The run summary's memory does not grow with the number of events: 10^7 events through the
//! streaming builder, the heap measured by a counting allocator (this test binary only).

mod long_trace;

use long_trace::{MAF, frame, module_start};
use partita_trace::Event;
use partita_trace::stream::SummaryBuilder;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// Live heap bytes of the process.
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: ptr was allocated by System.alloc with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn summary_memory_does_not_grow_with_the_event_count() {
    const EVENTS: usize = 10_000_000;
    let mut b = SummaryBuilder::streaming(2 * MAF, 1000);
    b.push(&module_start());
    let mut pushed = 1;
    let mut chunk: Vec<Event> = Vec::with_capacity(64);
    let (mut at_million, mut peak) = (0isize, 0isize);
    let mut k = 0;
    while pushed < EVENTS {
        chunk.clear();
        frame(k, &mut chunk);
        k += 1;
        for e in &chunk {
            b.push(e);
        }
        pushed += chunk.len();
        let live = LIVE.load(Ordering::Relaxed);
        if at_million == 0 && pushed >= 1_000_000 {
            at_million = live;
        }
        if at_million != 0 {
            peak = peak.max(live);
        }
    }
    assert_eq!(b.late_events(), 0);
    // The timeline piece holds about three margins (3 s = 150 frames of ~13 events).
    assert!(b.buffered() < 3000, "{}", b.buffered());
    // From one million events to ten million: no growth beyond the piece's fluctuation.
    assert!(peak - at_million < 512 * 1024, "heap grew from {at_million} to {peak} bytes");
    assert!(peak < 4 * 1024 * 1024, "{peak} bytes");
    let s = b.finish();
    assert_eq!(s.events, pushed);
    assert_eq!(s.totals.restarts as i64, k / 50);
    assert_eq!(s.restarts.len(), 1000);
}
