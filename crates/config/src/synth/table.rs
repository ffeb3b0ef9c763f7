//! One core's table: event-driven EDF over a major frame with criticality-inversion avoidance.

use super::OutWindow;
use std::cmp::Reverse;

/// Simulation steps the criticality-inversion tests of one core may take in total; past
/// it, the rest of that core's table is plain EDF (still meeting every deadline).
const INVERSION_CHECK_STEPS: u64 = 20_000_000;

/// The windows of task `i` from a core's slices: contiguous runs inside one of its periods.
pub(super) fn windows_of(slices: &[(i64, i64, usize)], i: usize, period: i64, core: u32) -> Vec<OutWindow> {
    let mut out: Vec<OutWindow> = Vec::new();
    let mut last_period = -1;
    for &(a, b, _) in slices.iter().filter(|s| s.2 == i) {
        let k = a / period;
        if let Some(w) = out.last_mut().filter(|w| w.start + w.duration == a && w.start / period == k) {
            w.duration += b - a;
            continue;
        }
        out.push(OutWindow { start: a, duration: b - a, period_start: k != last_period, core });
        last_period = k;
    }
    out
}

/// Times a partition starts running while a more critical partition of the same core has
/// begun its current period's budget and not finished it.
pub(super) fn count_inversions(tasks: &[SimTask], slices: &[(i64, i64, usize)]) -> usize {
    let mut job = vec![-1i64; tasks.len()];
    let mut done = vec![0i64; tasks.len()];
    let mut count = 0;
    let mut previous: Option<(i64, usize)> = None;
    for &(a, b, i) in slices {
        let continues = previous == Some((a, i));
        if !continues {
            let inverted = tasks
                .iter()
                .enumerate()
                .any(|(h, th)| th.crit > tasks[i].crit && job[h] == a / th.period && done[h] > 0 && done[h] < th.budget);
            count += usize::from(inverted);
        }
        let k = a / tasks[i].period;
        if job[i] != k {
            job[i] = k;
            done[i] = 0;
        }
        done[i] += b - a;
        previous = Some((b, i));
    }
    count
}

/// A partition as the per-core simulation sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct SimTask {
    pub(super) period: i64,
    pub(super) budget: i64,
    pub(super) crit: i8,
    pub(super) id: u32,
}

/// A job that did not get its budget by its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Miss {
    pub(super) task: usize,
    pub(super) period_index: i64,
    pub(super) got: i64,
}

#[derive(Debug, Clone)]
struct State {
    t: i64,
    /// Index of the next job of each task to release; the current job is `next_k - 1`,
    /// due at `next_k * period`.
    next_k: Vec<i64>,
    /// Remaining budget of each task's current job.
    rem: Vec<i64>,
    /// First blocked interval that ends after `t`.
    bi: usize,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Timeline {
    /// (start, end, task) in time order; consecutive slices may belong to one run.
    pub(super) slices: Vec<(i64, i64, usize)>,
    pub(super) misses: Vec<Miss>,
    /// Inversion avoidance ran out of its step budget at this time.
    pub(super) gave_up_at: Option<i64>,
}

/// Event-driven simulation of one core over one major frame.
pub(super) struct Sim<'a> {
    pub(super) tasks: &'a [SimTask],
    pub(super) blocked: &'a [(i64, i64)],
    pub(super) frame: i64,
}

impl Sim<'_> {
    fn start(&self) -> State {
        State { t: 0, next_k: vec![0; self.tasks.len()], rem: vec![0; self.tasks.len()], bi: 0 }
    }

    fn deadline(&self, s: &State, i: usize) -> i64 {
        s.next_k[i] * self.tasks[i].period
    }

    /// Releases every job due by `s.t`; a job still unfinished at its deadline is a miss.
    fn release(&self, s: &mut State, misses: &mut Vec<Miss>) {
        for (i, task) in self.tasks.iter().enumerate() {
            loop {
                let at = s.next_k[i] * task.period;
                if at > s.t || at >= self.frame {
                    break;
                }
                if s.next_k[i] > 0 && s.rem[i] > 0 {
                    misses.push(Miss { task: i, period_index: s.next_k[i] - 1, got: task.budget - s.rem[i] });
                }
                s.rem[i] = task.budget;
                s.next_k[i] += 1;
            }
        }
    }

    /// Releases due jobs and says until when the situation holds and whether the core is
    /// free (not inside a kept window); `None` at the end of the frame.
    fn prepare(&self, s: &mut State, misses: &mut Vec<Miss>) -> Option<(i64, bool)> {
        self.release(s, misses);
        if s.t >= self.frame {
            for (i, task) in self.tasks.iter().enumerate() {
                if s.rem[i] > 0 {
                    misses.push(Miss { task: i, period_index: s.next_k[i] - 1, got: task.budget - s.rem[i] });
                }
            }
            return None;
        }
        let next = (0..self.tasks.len()).map(|i| self.deadline(s, i)).filter(|&r| r < self.frame).min().unwrap_or(self.frame);
        while s.bi < self.blocked.len() && self.blocked[s.bi].1 <= s.t {
            s.bi += 1;
        }
        Some(match self.blocked.get(s.bi) {
            Some(&(a, b)) if a <= s.t => (b.min(next), false),
            Some(&(a, _)) => (a.min(next), true),
            None => (next, true),
        })
    }

    /// Runs `pick` (or idles) from `s.t` until `horizon` or the end of its budget.
    fn run_for(&self, s: &mut State, pick: Option<usize>, horizon: i64) -> Option<(i64, i64, usize)> {
        let Some(i) = pick else {
            s.t = horizon;
            return None;
        };
        let end = s.t.saturating_add(s.rem[i]).min(horizon);
        let slice = (s.t, end, i);
        s.rem[i] -= end - s.t;
        s.t = end;
        Some(slice)
    }

    /// Earliest deadline first; ties: higher criticality, then lower partition identifier.
    fn edf(&self, s: &State) -> Option<usize> {
        (0..self.tasks.len())
            .filter(|&i| s.rem[i] > 0)
            .min_by_key(|&i| (self.deadline(s, i), Reverse(self.tasks[i].crit), self.tasks[i].id))
    }

    /// The core's table over one frame: plain EDF, or with criticality-inversion avoidance.
    pub(super) fn schedule(&self, avoid: bool) -> Timeline {
        self.schedule_within(avoid, INVERSION_CHECK_STEPS)
    }

    /// As [`Sim::schedule`], the inversion tests taking at most `budget` steps in total.
    pub(super) fn schedule_within(&self, mut avoid: bool, mut budget: u64) -> Timeline {
        let mut s = self.start();
        let mut tl = Timeline::default();
        while let Some((horizon, free)) = self.prepare(&mut s, &mut tl.misses) {
            if !free {
                s.t = horizon;
                continue;
            }
            let mut pick = self.edf(&s);
            if let (true, Some(e)) = (avoid, pick) {
                match self.avoid_inversion(&s, e, &mut budget) {
                    Some(p) => pick = Some(p),
                    None => {
                        avoid = false;
                        tl.gave_up_at = Some(s.t);
                    }
                }
            }
            if let Some(slice) = self.run_for(&mut s, pick, horizon) {
                tl.slices.push(slice);
            }
        }
        tl
    }

    /// EDF picked `e`. If a more critical task has begun its current job and not finished
    /// it, keep it running when finishing that job first still lets EDF meet every deadline.
    /// `None` when the step budget ran out.
    fn avoid_inversion(&self, s: &State, e: usize, budget: &mut u64) -> Option<usize> {
        let mut candidates: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| s.rem[i] > 0 && s.rem[i] < self.tasks[i].budget && self.tasks[i].crit > self.tasks[e].crit)
            .collect();
        candidates.sort_by_key(|&i| (Reverse(self.tasks[i].crit), self.deadline(s, i), self.tasks[i].id));
        for r in candidates {
            if self.finishes_feasibly(s.clone(), r, budget)? {
                return Some(r);
            }
        }
        Some(e)
    }

    /// Whether running `pin` to the end of its current budget and then plain EDF meets every
    /// deadline. Called only from states from which some schedule meets every deadline, so
    /// reaching an instant where every released job is done settles it: nothing released
    /// later can then fare worse than in that schedule. `None` when the step budget ran out.
    fn finishes_feasibly(&self, mut s: State, pin: usize, budget: &mut u64) -> Option<bool> {
        let mut misses = Vec::new();
        let mut first = true;
        loop {
            if !first && s.rem.iter().all(|&r| r == 0) {
                return Some(true);
            }
            first = false;
            let Some((horizon, free)) = self.prepare(&mut s, &mut misses) else { return Some(misses.is_empty()) };
            if !misses.is_empty() {
                return Some(false);
            }
            *budget = budget.checked_sub(1)?;
            if !free {
                s.t = horizon;
                continue;
            }
            let pick = if s.rem[pin] > 0 { Some(pin) } else { self.edf(&s) };
            self.run_for(&mut s, pick, horizon);
        }
    }
}
