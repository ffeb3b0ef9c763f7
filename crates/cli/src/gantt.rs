//! SVG Gantt chart of one major frame per module schedule: a row per core, a colour per
//! partition, a labelled time axis in milliseconds. Self-contained (no scripts, no fonts).

use partita_config::analysis::ScheduleAnalysis;
use partita_config::model::CorePolicy;
use std::collections::BTreeMap;
use std::fmt::Write;

const WIDTH: f64 = 960.0;
const LEFT: f64 = 110.0;
const RIGHT: f64 = 30.0;
const ROW: f64 = 34.0;
const PALETTE: [&str; 12] =
    ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#2f4b7c", "#a05195"];

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A round tick step (1, 2 or 5 times a power of ten, in ms) giving about 10 ticks.
fn tick_step_ms(frame_ms: f64) -> f64 {
    let raw = (frame_ms / 10.0).max(1e-6);
    let pow = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * pow).find(|s| *s >= raw).unwrap_or(10.0 * pow)
}

pub fn render(module: &str, schedules: &[ScheduleAnalysis]) -> String {
    // Colour by partition id, stable across schedules.
    let mut names: BTreeMap<u32, String> = BTreeMap::new();
    for s in schedules {
        for p in &s.partitions {
            names.entry(p.id).or_insert_with(|| p.name.clone());
        }
        for c in &s.cores {
            for w in &c.windows {
                names.entry(w.partition).or_insert_with(|| w.partition_name.clone());
            }
        }
    }
    let colour: BTreeMap<u32, &str> = names.keys().enumerate().map(|(i, id)| (*id, PALETTE[i % PALETTE.len()])).collect();
    let plot = WIDTH - LEFT - RIGHT;
    let mut body = String::new();
    let mut y = 40.0;
    let _ = writeln!(body, r#"<text x="10" y="24" font-size="16" font-weight="bold">{}</text>"#, escape(module));
    for s in schedules {
        let frame_ms = s.major_frame_ns.as_millis_f64();
        let initial = if s.initial { ", initial" } else { "" };
        let _ = writeln!(
            body,
            r#"<text x="10" y="{:.1}" font-size="13" font-weight="bold">Schedule {} "{}" (major frame {} ms{initial})</text>"#,
            y + 14.0,
            s.id,
            escape(&s.name),
            fmt_ms(frame_ms)
        );
        y += 24.0;
        let scale = if frame_ms > 0.0 { plot / frame_ms } else { 0.0 };
        let top = y;
        for core in &s.cores {
            let _ = writeln!(
                body,
                r#"<text x="10" y="{:.1}" font-size="12">core {} (CPU {})</text>"#,
                y + ROW / 2.0 + 4.0,
                core.core,
                core.cpu
            );
            let _ = writeln!(
                body,
                r##"<rect x="{LEFT}" y="{:.1}" width="{plot:.1}" height="{:.1}" fill="#f4f4f4" stroke="#ccc"/>"##,
                y + 3.0,
                ROW - 6.0
            );
            if core.policy == CorePolicy::FixedPriority {
                let served: Vec<String> =
                    core.priorities.iter().map(|(p, prio)| format!("{} (prio {prio})", names.get(p).map_or("?", String::as_str))).collect();
                let _ = writeln!(
                    body,
                    r#"<text x="{:.1}" y="{:.1}" font-size="11">FIXED_PRIORITY: {}</text>"#,
                    LEFT + 6.0,
                    y + ROW / 2.0 + 4.0,
                    escape(&served.join(", "))
                );
            }
            for w in &core.windows {
                let x = LEFT + w.start_ns.as_millis_f64() * scale;
                let wd = ((w.end_ns.0 - w.start_ns.0) as f64 / 1e6 * scale).max(0.5);
                let fill = colour.get(&w.partition).copied().unwrap_or("#888");
                let _ = writeln!(
                    body,
                    r#"<rect x="{x:.2}" y="{:.1}" width="{wd:.2}" height="{:.1}" fill="{fill}" stroke="white" stroke-width="0.5"><title>{} (partition {}, window {}): {} - {} ms</title></rect>"#,
                    y + 3.0,
                    ROW - 6.0,
                    escape(&w.partition_name),
                    w.partition,
                    w.window,
                    fmt_ms(w.start_ns.as_millis_f64()),
                    fmt_ms(w.end_ns.as_millis_f64())
                );
                let label = escape(&w.partition_name);
                if wd > 7.0 * label.chars().count() as f64 {
                    let _ = writeln!(
                        body,
                        r#"<text x="{:.2}" y="{:.1}" font-size="11" fill="white" text-anchor="middle">{label}</text>"#,
                        x + wd / 2.0,
                        y + ROW / 2.0 + 4.0
                    );
                }
            }
            y += ROW;
        }
        // Time axis.
        let _ = writeln!(body, r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#333"/>"##, LEFT + plot);
        if frame_ms > 0.0 {
            let step = tick_step_ms(frame_ms);
            let mut t = 0.0;
            while t <= frame_ms + step * 1e-9 {
                let x = LEFT + t * scale;
                let _ = writeln!(
                    body,
                    r##"<line x1="{x:.2}" y1="{top:.1}" x2="{x:.2}" y2="{:.1}" stroke="#999" stroke-dasharray="2,3"/>"##,
                    y + 4.0
                );
                let _ = writeln!(body, r#"<text x="{x:.2}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"#, y + 16.0, fmt_ms(t));
                t += step;
            }
        }
        let _ = writeln!(body, r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">time (ms)</text>"#, LEFT + plot, y + 30.0);
        y += 44.0;
    }
    // Legend.
    let mut x = LEFT;
    for (id, name) in &names {
        let label = format!("{id} {name}");
        let _ = writeln!(body, r#"<rect x="{x:.1}" y="{y:.1}" width="12" height="12" fill="{}"/>"#, colour[id]);
        let _ = writeln!(body, r#"<text x="{:.1}" y="{:.1}" font-size="11">{}</text>"#, x + 16.0, y + 10.0, escape(&label));
        x += 28.0 + 7.0 * label.chars().count() as f64;
        if x > WIDTH - 150.0 {
            x = LEFT;
            y += 18.0;
        }
    }
    y += 30.0;
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{y:.0}\" viewBox=\"0 0 {WIDTH} {y:.0}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{body}</svg>\n"
    )
}

fn fmt_ms(ms: f64) -> String {
    let s = format!("{ms:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_steps_are_round() {
        assert_eq!(tick_step_ms(80.0), 10.0);
        assert_eq!(tick_step_ms(20.0), 2.0);
        assert_eq!(tick_step_ms(1000.0), 100.0);
        assert_eq!(tick_step_ms(0.5), 0.05);
    }

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
    }
}
