//! Health-monitor tables and the connection table (channels and their ends).

use super::{Allowed, AttrName, Cx};
use crate::diag::Rule;
use crate::model::*;
use roxmltree::Node;

use super::values::parse_udp;

impl Cx<'_, '_> {
    pub(super) fn system_hm(&mut self, node: Node) -> SystemHmTable {
        self.check_attributes(node, Allowed { std: &[], ext: &[] });
        let mut states = Vec::new();
        for s in self.children(node, &["System_State_Entry"], &[]) {
            self.check_attributes(s, Allowed { std: &["SystemState", "Description"], ext: &[] });
            let state = self.u32(s, "SystemState", true).unwrap_or(Spanned::new(0, self.span(s)));
            let mut errors = Vec::new();
            for e in self.children(s, &["Error_ID_Level"], &[]) {
                self.check_attributes(e, Allowed { std: &["ErrorIdentifier", "Description", "ErrorLevel", "ErrorCode"], ext: &[] });
                let error_id = self.u32(e, "ErrorIdentifier", true);
                let level = self.keyword(
                    e,
                    None,
                    "ErrorLevel",
                    true,
                    Rule::InvalidValue,
                    &[("MODULE", ErrorLevel::Module), ("PARTITION", ErrorLevel::Partition), ("PROCESS", ErrorLevel::Process)],
                );
                let code = self.keyword(e, None, "ErrorCode", false, Rule::HmUnknownErrorCode, &ErrorCode::ALL);
                if let (Some(error_id), Some(level)) = (error_id, level) {
                    errors.push(ErrorIdLevel {
                        span: self.span(e),
                        error_id,
                        description: self.string(e, "Description", false).map(|d| d.value),
                        level,
                        code,
                    });
                }
            }
            states.push(SystemStateLevels {
                span: self.span(s),
                state,
                description: self.string(s, "Description", false).map(|d| d.value),
                errors,
            });
        }
        SystemHmTable { span: self.span(node), states }
    }

    pub(super) fn action_states<A: Copy>(&mut self, node: Node, actions: &[(&str, A)]) -> Vec<SystemStateActions<A>> {
        let mut states = Vec::new();
        for s in self.children(node, &["System_State_Entry"], &[]) {
            self.check_attributes(s, Allowed { std: &["SystemState", "Description"], ext: &[] });
            let state = self.u32(s, "SystemState", true).unwrap_or(Spanned::new(0, self.span(s)));
            let mut list = Vec::new();
            for e in self.children(s, &["Error_ID_Action"], &[]) {
                self.check_attributes(e, Allowed { std: &["ErrorIdentifier", "Description", "Action", "ErrorCode"], ext: &[] });
                let error_id = self.u32(e, "ErrorIdentifier", true);
                let action = self.keyword(e, None, "Action", true, Rule::HmUnknownAction, actions);
                let code = self.keyword(e, None, "ErrorCode", false, Rule::HmUnknownErrorCode, &ErrorCode::ALL);
                if let (Some(error_id), Some(action)) = (error_id, action) {
                    list.push(ErrorIdAction {
                        span: self.span(e),
                        error_id,
                        description: self.string(e, "Description", false).map(|d| d.value),
                        action,
                        code,
                    });
                }
            }
            states.push(SystemStateActions {
                span: self.span(s),
                state,
                description: self.string(s, "Description", false).map(|d| d.value),
                actions: list,
            });
        }
        states
    }

    pub(super) fn module_hm(&mut self, node: Node) -> ModuleHmTable {
        self.check_attributes(node, Allowed { std: &["ModuleCallback"], ext: &[] });
        let states = self
            .action_states(node, &[("IGNORE", ModuleAction::Ignore), ("SHUTDOWN", ModuleAction::Shutdown), ("RESET", ModuleAction::Reset)]);
        ModuleHmTable { span: self.span(node), callback: self.string(node, "ModuleCallback", false).map(|c| c.value), states }
    }

    pub(super) fn partition_hm(&mut self, node: Node) -> PartitionHmTable {
        self.check_attributes(node, Allowed { std: &["PartitionIdentifier", "PartitionName", "PartitionCallback"], ext: &[] });
        let partition = self.partition_ref(node);
        let states = self.action_states(
            node,
            &[
                ("IGNORE", PartitionAction::Ignore),
                ("IDLE", PartitionAction::Idle),
                ("WARM_START", PartitionAction::WarmStart),
                ("COLD_START", PartitionAction::ColdStart),
            ],
        );
        PartitionHmTable {
            span: self.span(node),
            partition,
            callback: self.string(node, "PartitionCallback", false).map(|c| c.value),
            states,
        }
    }

    pub(super) fn channel(&mut self, node: Node) -> Option<Channel> {
        self.check_attributes(node, Allowed { std: &["ChannelIdentifier", "ChannelName"], ext: &[] });
        let id = self.u32(node, "ChannelIdentifier", true);
        let name = self.string(node, "ChannelName", false);
        let mut source = None;
        let mut destinations = Vec::new();
        let mut destination_elements = 0;
        let mut source_elements = 0;
        for side in self.children(node, &["Source", "Destination"], &[]) {
            self.check_attributes(side, Allowed { std: &[], ext: &[] });
            let elements = self.children(side, &["Standard_Partition", "Pseudo_Partition"], &[]);
            if side.tag_name().name() == "Source" {
                source_elements += elements.len();
            } else {
                destination_elements += elements.len();
            }
            let ends: Vec<ChannelEnd> = elements.into_iter().filter_map(|e| self.channel_end(e)).collect();
            if side.tag_name().name() == "Source" {
                if source.is_some() || ends.len() > 1 {
                    let span = ends.get(1).map_or(self.span(side), ChannelEnd::span);
                    self.diags.error(Rule::Duplicate, span, "a channel has exactly one source; split it into several channels");
                }
                if source.is_none() {
                    source = ends.into_iter().next();
                }
            } else {
                destinations.extend(ends);
            }
        }
        // An end that is present but malformed was reported already.
        if source_elements == 0 {
            let span = self.span(node);
            self.diags.error(Rule::MissingAttribute, span, format!("channel {} has no <Source>", id.as_ref().map_or(0, |i| i.value)));
        }
        if destination_elements == 0 {
            let span = self.span(node);
            self.diags.error(Rule::MissingAttribute, span, format!("channel {} has no <Destination>", id.as_ref().map_or(0, |i| i.value)));
        }
        Some(Channel { span: self.span(node), id: id?, name, source, destinations })
    }

    pub(super) fn channel_end(&mut self, node: Node) -> Option<ChannelEnd> {
        let span = self.span(node);
        if node.tag_name().name() == "Standard_Partition" {
            self.check_attributes(node, Allowed { std: &["PartitionIdentifier", "PartitionName", "PortName"], ext: &[] });
            let partition = self.partition_ref(node);
            let port = self.string(node, "PortName", true)?;
            Some(ChannelEnd::Standard { span, partition, port })
        } else {
            self.check_attributes(node, Allowed { std: &["Name", "PhysicalAddress", "Procedure"], ext: &[] });
            let name = self.string(node, "Name", false);
            let address = self.value(
                node,
                AttrName { ns: None, name: "PhysicalAddress", required: true },
                Rule::InvalidValue,
                "a UDP address of the form udp:HOST:PORT",
                parse_udp,
            )?;
            let procedure = self.string(node, "Procedure", false).map(|p| p.value);
            Some(ChannelEnd::Pseudo { span, name, address, procedure })
        }
    }
}
