//! The one writer of the module configurations the bench's experiments run: the module element,
//! partitions (with whatever ports or tables an experiment puts inside them), schedules of
//! partition windows and channels, in the order and form `partita check` expects. Times are
//! whole nanoseconds, written as exact decimal seconds.

use crate::workload::xml_escape;

/// Decimal seconds, exact for whole nanoseconds.
pub fn seconds(ns: i64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// One window of a partition in a schedule (ns from the major frame start).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XmlWindow {
    pub start_ns: i64,
    pub duration_ns: i64,
    pub core: u32,
    /// `PartitionPeriodStart` when the experiment sets it.
    pub period_start: Option<bool>,
}

/// A partition's place in one schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduled {
    pub partition: u32,
    pub period_ns: i64,
    /// More attributes of the `Partition_Schedule` element (e.g. ` SetModuleSchedule="true"`).
    pub attributes: String,
    pub windows: Vec<XmlWindow>,
}

impl Scheduled {
    /// One window per period of `period_ns` (the common case).
    pub fn one_window(partition: u32, period_ns: i64, start_ns: i64, duration_ns: i64, core: u32) -> Scheduled {
        Scheduled {
            partition,
            period_ns,
            attributes: String::new(),
            windows: vec![XmlWindow { start_ns, duration_ns, core, period_start: None }],
        }
    }
}

/// One end of a channel: partition id and port name.
pub type End<'a> = (u32, &'a str);

/// A configuration being written; [`ModuleXml::finish`] gives the text.
pub struct ModuleXml {
    x: String,
    window_ids: u32,
}

impl ModuleXml {
    /// `<ARINC_653_Module ModuleName=NAME>` on host CPUs `cpus` (e.g. "0-1").
    pub fn new(name: &str, cpus: &str) -> ModuleXml {
        let x =
            format!("<ARINC_653_Module ModuleName=\"{}\" xmlns:pt=\"urn:partita:1\">\n  <pt:Cores Cpus=\"{cpus}\"/>\n", xml_escape(name));
        ModuleXml { x, window_ids: 0 }
    }

    /// Elements written as given (health-monitor tables).
    pub fn raw(&mut self, xml: &str) -> &mut Self {
        self.x += xml;
        self
    }

    /// A partition; `attributes` are its program's (`Programs::xml_attributes`), `body` what goes
    /// inside it (ports, tables, mounts; empty: none).
    pub fn partition(&mut self, id: u32, name: &str, attributes: &str, body: &str) -> &mut Self {
        let head = format!("  <Partition PartitionIdentifier=\"{id}\" PartitionName=\"{}\" {attributes}", xml_escape(name));
        self.x += &if body.is_empty() { format!("{head}/>\n") } else { format!("{head}>\n{body}  </Partition>\n") };
        self
    }

    /// A schedule of major frame `major_frame_ns`. Each partition's `PeriodDurationSeconds` is
    /// the time of its windows in one period.
    pub fn schedule(&mut self, id: u32, name: &str, major_frame_ns: i64, initial: bool, partitions: &[Scheduled]) -> &mut Self {
        let initial = if initial { " InitialModuleSchedule=\"true\"" } else { "" };
        self.x += &format!(
            "  <Module_Schedule ScheduleIdentifier=\"{id}\" ScheduleName=\"{}\" MajorFrameSeconds=\"{}\"{initial}>\n",
            xml_escape(name),
            seconds(major_frame_ns)
        );
        for p in partitions {
            let in_frame: i64 = p.windows.iter().map(|w| w.duration_ns).sum();
            let per_period = in_frame * p.period_ns / major_frame_ns.max(1);
            self.x += &format!(
                "    <Partition_Schedule PartitionIdentifier=\"{}\" PeriodSeconds=\"{}\" PeriodDurationSeconds=\"{}\"{}>\n",
                p.partition,
                seconds(p.period_ns),
                seconds(per_period),
                p.attributes
            );
            for w in &p.windows {
                self.window_ids += 1;
                let period_start = w.period_start.map_or(String::new(), |b| format!(" PartitionPeriodStart=\"{b}\""));
                self.x += &format!(
                    "      <Window_Schedule WindowIdentifier=\"{}\" WindowStartSeconds=\"{}\" WindowDurationSeconds=\"{}\"{period_start} pt:Core=\"{}\"/>\n",
                    self.window_ids,
                    seconds(w.start_ns),
                    seconds(w.duration_ns),
                    w.core
                );
            }
            self.x += "    </Partition_Schedule>\n";
        }
        self.x += "  </Module_Schedule>\n";
        self
    }

    /// The connection table: each channel's id, source (partition, port) and destination.
    pub fn channels(&mut self, channels: &[(u32, End, End)]) -> &mut Self {
        self.x += "  <Connection_Table>\n";
        for (id, (src, sport), (dst, dport)) in channels {
            self.x += &format!(
                "    <Channel ChannelIdentifier=\"{id}\"><Source><Standard_Partition PartitionIdentifier=\"{src}\" PortName=\"{sport}\"/></Source>\n      \
                 <Destination><Standard_Partition PartitionIdentifier=\"{dst}\" PortName=\"{dport}\"/></Destination></Channel>\n"
            );
        }
        self.x += "  </Connection_Table>\n";
        self
    }

    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.x) + "</ARINC_653_Module>\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_module_is_valid_with_windows_numbered_across_schedules() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("p");
        std::fs::write(&exe, "").unwrap();
        let attrs = format!("pt:Executable=\"{}\"", exe.display());
        let mut m = ModuleXml::new("M", "0-1");
        m.partition(1, "A", &attrs, "").partition(
            2,
            "B",
            &attrs,
            "    <Queuing_Port Name=\"q\" MaxMessageSize=\"8\" Direction=\"DESTINATION\" MaxNbMessages=\"4\"/>\n",
        );
        m.partition(3, "C", &attrs, "    <Queuing_Port Name=\"q\" MaxMessageSize=\"8\" Direction=\"SOURCE\" MaxNbMessages=\"4\"/>\n");
        for s in [1, 2] {
            m.schedule(
                s,
                &format!("s{s}"),
                20_000_000,
                s == 1,
                &[
                    Scheduled::one_window(1, 20_000_000, 0, 5_000_000, 0),
                    Scheduled::one_window(2, 20_000_000, 5_000_000, 5_000_000, 0),
                    Scheduled {
                        partition: 3,
                        period_ns: 10_000_000,
                        attributes: String::new(),
                        windows: [0, 10_000_000]
                            .map(|start_ns| XmlWindow { start_ns, duration_ns: 2_500_000, core: 1, period_start: Some(true) })
                            .to_vec(),
                    },
                ],
            );
        }
        let xml = m.channels(&[(1, (3, "q"), (2, "q"))]).finish();
        let checked = partita_config::check_text(&xml, dir.path());
        assert!(checked.is_valid(), "{xml}\n{:?}", checked.diagnostics);
        assert!(xml.contains("WindowIdentifier=\"8\""), "{xml}");
        assert!(xml.contains("PeriodSeconds=\"0.010000000\" PeriodDurationSeconds=\"0.002500000\""), "{xml}");
        assert_eq!(seconds(1_500_000), "0.001500000");
    }
}
