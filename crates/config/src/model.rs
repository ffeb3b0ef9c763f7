//! The typed Module model of an ARINC 653 configuration plus Partita's `urn:partita:1`
//! extensions. Every element keeps its position and every attribute value its own, so that
//! validation and later stages can point at the exact place of a problem.

use crate::diag::Span;
use crate::time::Nanos;
use serde::Serialize;
use std::path::PathBuf;

/// A value together with where it was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Spanned<T> {
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Module {
    pub span: Span,
    pub name: Spanned<String>,
    pub version: Option<Spanned<String>>,
    pub id: Option<Spanned<u32>>,
    /// Module cores in index order; core `i` runs on host CPU `cores[i].cpu`.
    pub cores: Vec<Core>,
    /// Whether `<pt:Cores>` was written (if not, cores are implied by the windows).
    pub cores_declared: Option<Span>,
    pub partitions: Vec<Partition>,
    pub memory: Vec<PartitionMemory>,
    pub schedules: Vec<ModuleSchedule>,
    pub system_hm: Option<SystemHmTable>,
    pub module_hm: Option<ModuleHmTable>,
    pub partition_hm: Vec<PartitionHmTable>,
    pub channels: Vec<Channel>,
    /// Directory of the configuration file: `pt:Executable` paths are relative to it.
    #[serde(skip)]
    pub base_dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CorePolicy {
    Cyclic,
    FixedPriority,
}

impl CorePolicy {
    /// The configuration's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CorePolicy::Cyclic => "CYCLIC",
            CorePolicy::FixedPriority => "FIXED_PRIORITY",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Core {
    pub index: u32,
    pub cpu: u32,
    pub policy: CorePolicy,
    /// The `<pt:Core>` element, when the core was described explicitly.
    pub span: Option<Span>,
    /// Partitions served by priority on a FIXED_PRIORITY core (higher number = more urgent).
    pub priorities: Vec<PartitionPriority>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionPriority {
    pub span: Span,
    pub partition: Spanned<u32>,
    pub priority: Spanned<i32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Criticality {
    #[serde(rename = "LEVEL_A")]
    LevelA,
    #[serde(rename = "LEVEL_B")]
    LevelB,
    #[serde(rename = "LEVEL_C")]
    LevelC,
    #[serde(rename = "LEVEL_D")]
    LevelD,
    #[serde(rename = "LEVEL_E")]
    LevelE,
}

impl Criticality {
    /// Larger is more critical (LEVEL_A = 4, LEVEL_E = 0).
    pub fn rank(self) -> u8 {
        4 - self as u8
    }

    pub fn as_str(self) -> &'static str {
        ["LEVEL_A", "LEVEL_B", "LEVEL_C", "LEVEL_D", "LEVEL_E"][self as usize]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Process,
    Kvm,
}

#[derive(Debug, Clone, Serialize)]
pub struct Partition {
    pub span: Span,
    pub id: Spanned<u32>,
    pub name: Spanned<String>,
    pub criticality: Option<Spanned<Criticality>>,
    pub system_partition: bool,
    pub entry_point: Option<Spanned<String>>,
    pub executable: Option<Spanned<String>>,
    pub backend: Spanned<Backend>,
    pub arguments: Option<Spanned<String>>,
    pub sampling_ports: Vec<SamplingPort>,
    pub queuing_ports: Vec<QueuingPort>,
    pub processes: Vec<ProcessDecl>,
    /// `pt:MaxTasks`: processes and threads the partition may have at once (pids cgroup);
    /// `None`: [`DEFAULT_MAX_TASKS`].
    pub max_tasks: Option<Spanned<u32>>,
    /// `pt:MaxOpenFiles`: its RLIMIT_NOFILE; `None`: [`DEFAULT_MAX_OPEN_FILES`].
    pub max_open_files: Option<Spanned<u32>>,
    /// `<pt:Mount>` children: host paths bound into the partition's read-only file view.
    pub mounts: Vec<BindMount>,
    /// Ports declared with a malformed attribute (already reported): channels naming them
    /// are not reported again.
    #[serde(skip)]
    pub malformed_ports: Vec<String>,
}

/// Tasks (processes plus threads) a partition may have when `pt:MaxTasks` is absent: room for
/// a runtime with many ARINC processes, far below what would let a fork bomb hurt the host.
pub const DEFAULT_MAX_TASKS: u32 = 512;
/// Largest `pt:MaxTasks` (the kernel's PID_MAX_LIMIT).
pub const MAX_TASKS_LIMIT: u32 = 4_194_304;
/// Open descriptors a partition may have when `pt:MaxOpenFiles` is absent (the usual soft
/// limit of a Linux login).
pub const DEFAULT_MAX_OPEN_FILES: u32 = 1024;
/// Largest `pt:MaxOpenFiles` (the kernel's default `fs.nr_open`).
pub const MAX_OPEN_FILES_LIMIT: u32 = 1_048_576;

/// `<pt:Mount Source=".." Target=".." Writable="false"/>` inside a `<Partition>`: the host
/// path `source` appears at `target` in the partition's file view, read-only unless writable.
#[derive(Debug, Clone, Serialize)]
pub struct BindMount {
    pub span: Span,
    pub source: Spanned<String>,
    pub target: Spanned<String>,
    pub writable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Direction {
    Source,
    Destination,
}

#[derive(Debug, Clone, Serialize)]
pub struct SamplingPort {
    pub span: Span,
    pub name: Spanned<String>,
    pub max_message_size: Spanned<u32>,
    pub direction: Spanned<Direction>,
    pub refresh_period: Option<Spanned<Nanos>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueuingPort {
    pub span: Span,
    pub name: Spanned<String>,
    pub max_message_size: Spanned<u32>,
    pub direction: Spanned<Direction>,
    pub max_nb_messages: Spanned<u32>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProcessDecl {
    pub span: Span,
    pub name: Spanned<String>,
    pub stack_size: Option<Spanned<u64>>,
}

/// How a later element names a partition: by identifier, by name, or both (then they must agree).
#[derive(Debug, Clone, Serialize)]
pub struct PartitionRef {
    pub span: Span,
    pub id: Option<Spanned<u32>>,
    pub name: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionMemory {
    pub span: Span,
    pub partition: PartitionRef,
    pub regions: Vec<MemoryRegion>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemoryRegion {
    pub span: Span,
    pub name: Option<Spanned<String>>,
    pub kind: Option<Spanned<String>>,
    pub size_bytes: Spanned<u64>,
    pub physical_address: Option<Spanned<u64>>,
    pub access: Option<Spanned<String>>,
    /// Cache colors the region may use (`pt:Colors`); `None` means all.
    pub colors: Option<Spanned<Vec<u32>>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModuleSchedule {
    pub span: Span,
    pub id: Spanned<u32>,
    pub name: Spanned<String>,
    pub major_frame: Spanned<Nanos>,
    pub initial: Option<Spanned<bool>>,
    pub partitions: Vec<PartitionSchedule>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionSchedule {
    pub span: Span,
    pub partition: PartitionRef,
    pub period: Spanned<Nanos>,
    pub duration: Spanned<Nanos>,
    pub set_module_schedule: bool,
    pub schedule_change_action: Option<Spanned<ScheduleChangeAction>>,
    pub windows: Vec<Window>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ScheduleChangeAction {
    Ignore,
    ColdStart,
    WarmStart,
}

#[derive(Debug, Clone, Serialize)]
pub struct Window {
    pub span: Span,
    pub id: Spanned<u32>,
    pub start: Spanned<Nanos>,
    pub duration: Spanned<Nanos>,
    pub period_start: bool,
    pub core: Spanned<u32>,
}

impl Window {
    pub fn end(&self) -> Nanos {
        Nanos(self.start.value.0.saturating_add(self.duration.value.0))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorLevel {
    Module,
    Partition,
    Process,
}

/// The ARINC 653 error codes an HM table can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    DeadlineMissed,
    ApplicationError,
    NumericError,
    IllegalRequest,
    StackOverflow,
    MemoryViolation,
    HardwareFault,
    PowerFailure,
}

impl ErrorCode {
    pub const ALL: [(&'static str, ErrorCode); 8] = [
        ("DEADLINE_MISSED", ErrorCode::DeadlineMissed),
        ("APPLICATION_ERROR", ErrorCode::ApplicationError),
        ("NUMERIC_ERROR", ErrorCode::NumericError),
        ("ILLEGAL_REQUEST", ErrorCode::IllegalRequest),
        ("STACK_OVERFLOW", ErrorCode::StackOverflow),
        ("MEMORY_VIOLATION", ErrorCode::MemoryViolation),
        ("HARDWARE_FAULT", ErrorCode::HardwareFault),
        ("POWER_FAILURE", ErrorCode::PowerFailure),
    ];
}

#[derive(Debug, Clone, Serialize)]
pub struct SystemHmTable {
    pub span: Span,
    pub states: Vec<SystemStateLevels>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SystemStateLevels {
    pub span: Span,
    pub state: Spanned<u32>,
    pub description: Option<String>,
    pub errors: Vec<ErrorIdLevel>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ErrorIdLevel {
    pub span: Span,
    pub error_id: Spanned<u32>,
    pub description: Option<String>,
    pub level: Spanned<ErrorLevel>,
    pub code: Option<Spanned<ErrorCode>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ModuleAction {
    Ignore,
    Shutdown,
    Reset,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PartitionAction {
    Ignore,
    Idle,
    WarmStart,
    ColdStart,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModuleHmTable {
    pub span: Span,
    pub callback: Option<String>,
    pub states: Vec<SystemStateActions<ModuleAction>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionHmTable {
    pub span: Span,
    pub partition: PartitionRef,
    pub callback: Option<String>,
    pub states: Vec<SystemStateActions<PartitionAction>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SystemStateActions<A> {
    pub span: Span,
    pub state: Spanned<u32>,
    pub description: Option<String>,
    pub actions: Vec<ErrorIdAction<A>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ErrorIdAction<A> {
    pub span: Span,
    pub error_id: Spanned<u32>,
    pub description: Option<String>,
    pub action: Spanned<A>,
    pub code: Option<Spanned<ErrorCode>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PortKind {
    Sampling,
    Queuing,
}

impl PortKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PortKind::Sampling => "sampling",
            PortKind::Queuing => "queuing",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Channel {
    pub span: Span,
    pub id: Spanned<u32>,
    pub name: Option<Spanned<String>>,
    pub source: Option<ChannelEnd>,
    pub destinations: Vec<ChannelEnd>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChannelEnd {
    Standard { span: Span, partition: PartitionRef, port: Spanned<String> },
    Pseudo { span: Span, name: Option<Spanned<String>>, address: Spanned<PseudoAddress>, procedure: Option<String> },
}

impl ChannelEnd {
    pub fn span(&self) -> Span {
        match self {
            ChannelEnd::Standard { span, .. } | ChannelEnd::Pseudo { span, .. } => *span,
        }
    }
}

/// Where a pseudo partition lives. Only UDP is supported: `udp:HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PseudoAddress {
    pub host: String,
    pub port: u16,
}

impl Module {
    pub fn partition(&self, id: u32) -> Option<&Partition> {
        self.partitions.iter().find(|p| p.id.value == id)
    }

    pub fn partition_by_name(&self, name: &str) -> Option<&Partition> {
        self.partitions.iter().find(|p| p.name.value == name)
    }

    /// The partition a reference designates, by id first, then by name.
    pub fn resolve(&self, r: &PartitionRef) -> Option<&Partition> {
        match (&r.id, &r.name) {
            (Some(id), _) => self.partition(id.value),
            (None, Some(name)) => self.partition_by_name(&name.value),
            (None, None) => None,
        }
    }

    /// The schedule active at start: the one marked InitialModuleSchedule, else the first.
    pub fn initial_schedule(&self) -> Option<&ModuleSchedule> {
        self.schedules.iter().find(|s| s.initial.as_ref().is_some_and(|i| i.value)).or(self.schedules.first())
    }

    pub fn memory_of(&self, partition_id: u32) -> Option<&PartitionMemory> {
        self.memory.iter().find(|m| self.resolve(&m.partition).is_some_and(|p| p.id.value == partition_id))
    }

    /// Total bytes of a partition's memory requirements.
    pub fn memory_bytes(&self, partition_id: u32) -> u64 {
        self.memory_of(partition_id).map_or(0, |m| m.regions.iter().map(|r| r.size_bytes.value).fold(0u64, u64::saturating_add))
    }
}
