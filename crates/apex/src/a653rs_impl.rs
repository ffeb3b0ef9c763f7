//! The `a653rs` traits (DLR's hypervisor-independent ARINC 653 bindings) implemented by
//! [`Partita`], so that a partition written against `a653rs::prelude` runs on Partita by naming
//! `Partita` as its hypervisor type. Every trait function is a thin translation onto the
//! services of this crate; the semantics and return codes are theirs.
//!
//! Translations where the two APIs differ:
//! - ids: a653rs' ids are 64-bit, Partita's 32-bit; an id outside the 32-bit range names no
//!   object, so it is INVALID_PARAM like any unknown id.
//! - names: a653rs' `ApexName` is 32 bytes, ARINC 653's NAME_TYPE (and Partita's) 30; a name is
//!   read like a C name, up to the first NUL or the 30th byte, and given back NUL-padded.
//! - message sizes and ranges: `u32` in a653rs; a value beyond `i32::MAX` is INVALID_PARAM
//!   (it exceeds every limit anyway).
//! - a message slice for RECEIVE_BUFFER / READ_BLACKBOARD must have room for the object's
//!   MAX_MESSAGE_SIZE (as a653rs' checked wrappers ensure); a shorter one is INVALID_PARAM
//!   instead of a write past its end.
//!
//! - `ErrorStatus::failed_address` is an `extern "C" fn()` in a653rs, which safe code may call,
//!   so a faulting data address cannot soundly go there: it is always [`no_failed_address`]
//!   (`partita_apex::get_error_status` gives the address itself).
//!
//! - a message slice for READ_SAMPLING_MESSAGE / RECEIVE_QUEUING_MESSAGE must have room for the
//!   port's MAX_MESSAGE_SIZE too (INVALID_PARAM otherwise), so no message is ever cut short.
//! - a653rs' RECEIVE_QUEUING_MESSAGE reports a queue overflow (the standard's INVALID_CONFIG
//!   with a delivered message) as `Ok((length, true))`.
//!
//! Not implemented because Partita does not have the services yet: memory blocks
//! (`ApexMemoryBlockP2`).

use crate::kernel::waitq::Discipline;
use crate::names::Name;
use crate::types as p;
use a653rs::bindings as a;

/// Partita as an `a653rs` hypervisor: `impl Partition<Partita> for MyPartition` and
/// `MyPartition.run()`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Partita;

impl From<p::ErrorReturnCode> for a::ErrorReturnCode {
    fn from(e: p::ErrorReturnCode) -> Self {
        match e {
            p::ErrorReturnCode::NoAction => a::ErrorReturnCode::NoAction,
            p::ErrorReturnCode::NotAvailable => a::ErrorReturnCode::NotAvailable,
            p::ErrorReturnCode::InvalidParam => a::ErrorReturnCode::InvalidParam,
            p::ErrorReturnCode::InvalidConfig => a::ErrorReturnCode::InvalidConfig,
            p::ErrorReturnCode::InvalidMode => a::ErrorReturnCode::InvalidMode,
            p::ErrorReturnCode::TimedOut => a::ErrorReturnCode::TimedOut,
        }
    }
}

type Res<T> = Result<T, a::ErrorReturnCode>;

fn id32(id: i64) -> Res<i32> {
    i32::try_from(id).map_err(|_| a::ErrorReturnCode::InvalidParam)
}

fn size32(v: u32) -> Res<i32> {
    i32::try_from(v).map_err(|_| a::ErrorReturnCode::InvalidParam)
}

/// A count Partita never reports negative, as a653rs' unsigned type.
fn count(v: i32) -> u32 {
    v.max(0) as u32
}

fn name(n: &a::ApexName) -> Name {
    Name::from_bytes(n)
}

fn apex_name(n: &Name) -> a::ApexName {
    let mut out = [0; a::MAX_NAME_LENGTH];
    out[..n.as_bytes().len()].copy_from_slice(n.as_bytes());
    out
}

fn discipline(d: a::QueuingDiscipline) -> Discipline {
    match d {
        a::QueuingDiscipline::Fifo => Discipline::Fifo,
        a::QueuingDiscipline::Priority => Discipline::Priority,
    }
}

fn operating_mode(m: p::OperatingMode) -> a::OperatingMode {
    match m {
        p::OperatingMode::Idle => a::OperatingMode::Idle,
        p::OperatingMode::ColdStart => a::OperatingMode::ColdStart,
        p::OperatingMode::WarmStart => a::OperatingMode::WarmStart,
        p::OperatingMode::Normal => a::OperatingMode::Normal,
    }
}

fn start_condition(c: p::StartCondition) -> a::StartCondition {
    match c {
        p::StartCondition::NormalStart => a::StartCondition::NormalStart,
        p::StartCondition::PartitionRestart => a::StartCondition::PartitionRestart,
        p::StartCondition::HmModuleRestart => a::StartCondition::HmModuleRestart,
        p::StartCondition::HmPartitionRestart => a::StartCondition::HmPartitionRestart,
    }
}

fn process_state(s: p::ProcessState) -> a::ProcessState {
    match s {
        p::ProcessState::Dormant => a::ProcessState::Dormant,
        p::ProcessState::Ready => a::ProcessState::Ready,
        p::ProcessState::Running => a::ProcessState::Running,
        p::ProcessState::Waiting => a::ProcessState::Waiting,
        p::ProcessState::Faulted => a::ProcessState::Faulted,
    }
}

fn to_process_attribute(attr: &a::ApexProcessAttribute) -> p::ProcessAttribute {
    p::ProcessAttribute {
        period: attr.period,
        time_capacity: attr.time_capacity,
        entry_point: attr.entry_point,
        stack_size: attr.stack_size,
        base_priority: attr.base_priority,
        deadline: match attr.deadline {
            a::Deadline::Soft => p::Deadline::Soft,
            a::Deadline::Hard => p::Deadline::Hard,
        },
        name: name(&attr.name),
    }
}

fn from_process_attribute(attr: &p::ProcessAttribute) -> a::ApexProcessAttribute {
    a::ApexProcessAttribute {
        period: attr.period,
        time_capacity: attr.time_capacity,
        entry_point: attr.entry_point,
        stack_size: attr.stack_size,
        base_priority: attr.base_priority,
        deadline: match attr.deadline {
            p::Deadline::Soft => a::Deadline::Soft,
            p::Deadline::Hard => a::Deadline::Hard,
        },
        name: apex_name(&attr.name),
    }
}

impl a::ApexLimits for Partita {
    const SYSTEM_LIMIT_NUMBER_OF_PROCESSES: a::ApexUnsigned = p::MAX_NUMBER_OF_PROCESSES as u32;
    const SYSTEM_LIMIT_MESSAGE_SIZE: a::MessageSize = crate::services::objects::buffer::MAX_MESSAGE_SIZE as u32;
    const SYSTEM_LIMIT_NUMBER_OF_MESSAGES: a::MessageRange = crate::services::objects::buffer::MAX_NB_MESSAGE as u32;
    const SYSTEM_LIMIT_NUMBER_OF_BUFFERS: a::ApexUnsigned = crate::services::objects::MAX_OBJECTS as u32;
    const SYSTEM_LIMIT_NUMBER_OF_BLACKBOARDS: a::ApexUnsigned = crate::services::objects::MAX_OBJECTS as u32;
    const SYSTEM_LIMIT_NUMBER_OF_SEMAPHORES: a::ApexUnsigned = crate::services::objects::MAX_OBJECTS as u32;
    const SYSTEM_LIMIT_NUMBER_OF_EVENTS: a::ApexUnsigned = crate::services::objects::MAX_OBJECTS as u32;
    const SYSTEM_LIMIT_NUMBER_OF_MUTEXES: a::ApexUnsigned = crate::services::objects::MAX_OBJECTS as u32;
}

impl a::ApexPartitionP4 for Partita {
    fn get_partition_status() -> a::ApexPartitionStatus {
        let s = crate::get_partition_status();
        a::ApexPartitionStatus {
            period: s.period,
            duration: s.duration,
            identifier: s.identifier.into(),
            lock_level: s.lock_level,
            operating_mode: operating_mode(s.operating_mode),
            start_condition: start_condition(s.start_condition),
            num_assigned_cores: s.num_assigned_cores,
        }
    }

    fn set_partition_mode(operating_mode: a::OperatingMode) -> Res<()> {
        Ok(crate::set_partition_mode(operating_mode as u32)?)
    }
}

impl a::ApexProcessP4 for Partita {
    fn create_process(attributes: &a::ApexProcessAttribute) -> Res<a::ProcessId> {
        Ok(crate::create_process(&to_process_attribute(attributes))?.into())
    }

    fn start(process_id: a::ProcessId) -> Res<()> {
        Ok(crate::start(id32(process_id)?)?)
    }
}

impl a::ApexProcessP1 for Partita {
    fn set_priority(process_id: a::ProcessId, priority: a::Priority) -> Res<()> {
        Ok(crate::set_priority(id32(process_id)?, priority)?)
    }

    fn suspend_self(time_out: a::ApexSystemTime) -> Res<()> {
        Ok(crate::suspend_self(time_out)?)
    }

    fn suspend(process_id: a::ProcessId) -> Res<()> {
        Ok(crate::suspend(id32(process_id)?)?)
    }

    fn resume(process_id: a::ProcessId) -> Res<()> {
        Ok(crate::resume(id32(process_id)?)?)
    }

    fn stop_self() {
        crate::stop_self()
    }

    fn stop(process_id: a::ProcessId) -> Res<()> {
        Ok(crate::stop(id32(process_id)?)?)
    }

    fn delayed_start(process_id: a::ProcessId, delay_time: a::ApexSystemTime) -> Res<()> {
        Ok(crate::delayed_start(id32(process_id)?, delay_time)?)
    }

    fn lock_preemption() -> Res<a::LockLevel> {
        Ok(crate::lock_preemption()?)
    }

    fn unlock_preemption() -> Res<a::LockLevel> {
        Ok(crate::unlock_preemption()?)
    }

    fn get_my_id() -> Res<a::ProcessId> {
        Ok(crate::get_my_id()?.into())
    }

    fn get_process_id(process_name: a::ProcessName) -> Res<a::ProcessId> {
        Ok(crate::get_process_id(&name(&process_name))?.into())
    }

    fn get_process_status(process_id: a::ProcessId) -> Res<a::ApexProcessStatus> {
        let s = crate::get_process_status(id32(process_id)?)?;
        Ok(a::ApexProcessStatus {
            deadline_time: s.deadline_time,
            current_priority: s.current_priority,
            process_state: process_state(s.process_state),
            attributes: from_process_attribute(&s.attributes),
        })
    }

    fn initialize_process_core_affinity(process_id: a::ProcessId, processor_core_id: a::ProcessorCoreId) -> Res<()> {
        Ok(crate::initialize_process_core_affinity(id32(process_id)?, processor_core_id)?)
    }

    fn get_my_processor_core_id() -> a::ProcessorCoreId {
        crate::get_my_processor_core_id()
    }

    fn get_my_index() -> Res<a::ProcessIndex> {
        Ok(crate::get_my_index()?)
    }
}

impl a::ApexTimeP4 for Partita {
    fn periodic_wait() -> Res<()> {
        Ok(crate::periodic_wait()?)
    }

    fn get_time() -> a::ApexSystemTime {
        crate::get_time()
    }
}

impl a::ApexTimeP1 for Partita {
    fn timed_wait(delay_time: a::ApexSystemTime) -> Res<()> {
        Ok(crate::timed_wait(delay_time)?)
    }

    fn replenish(budget_time: a::ApexSystemTime) -> Res<()> {
        Ok(crate::replenish(budget_time)?)
    }
}

impl a::ApexErrorP4 for Partita {
    fn report_application_message(message: &[a::ApexByte]) -> Res<()> {
        Ok(crate::report_application_message(message)?)
    }

    fn raise_application_error(error_code: a::ErrorCode, message: &[a::ApexByte]) -> Res<()> {
        Ok(crate::raise_application_error(error_code as u32, message)?)
    }
}

/// The `failed_address` of every a653rs `ErrorStatus` from Partita (see the module
/// documentation); calling it does nothing.
pub extern "C" fn no_failed_address() {}

fn error_code(code: u32) -> a::ErrorCode {
    use p::error_code as c;
    match code {
        c::DEADLINE_MISSED => a::ErrorCode::DeadlineMissed,
        c::APPLICATION_ERROR => a::ErrorCode::ApplicationError,
        c::NUMERIC_ERROR => a::ErrorCode::NumericError,
        c::ILLEGAL_REQUEST => a::ErrorCode::IllegalRequest,
        c::STACK_OVERFLOW => a::ErrorCode::StackOverflow,
        c::MEMORY_VIOLATION => a::ErrorCode::MemoryViolation,
        c::HARDWARE_FAULT => a::ErrorCode::HardwareFault,
        // The health monitor only queues the standard's codes; POWER_FAIL is the last.
        _ => a::ErrorCode::PowerFail,
    }
}

impl a::ApexErrorP1 for Partita {
    fn create_error_handler(entry_point: a::SystemAddress, stack_size: a::StackSize) -> Res<()> {
        Ok(crate::create_error_handler(entry_point, stack_size)?)
    }

    fn get_error_status() -> Res<a::ErrorStatus> {
        let s = crate::get_error_status()?;
        Ok(a::ErrorStatus {
            failed_address: no_failed_address,
            failed_process_id: s.failed_process_id.into(),
            error_code: error_code(s.code),
            length: s.length.min(s.message.len()) as a::ErrorMessageSize,
            message: s.message,
        })
    }

    fn configure_error_handler(concurrency_control: a::ErrorHandlerConcurrencyControl, processor_core_id: a::ProcessorCoreId) -> Res<()> {
        Ok(crate::configure_error_handler(concurrency_control as u32, processor_core_id)?)
    }
}

impl a::ApexScheduleP2 for Partita {
    fn set_module_schedule(schedule_id: a::ScheduleId) -> Res<()> {
        Ok(crate::set_module_schedule(id32(schedule_id)?)?)
    }

    fn get_module_schedule_status() -> Res<a::ApexScheduleStatus> {
        let s = crate::get_module_schedule_status();
        Ok(a::ApexScheduleStatus {
            time_of_last_schedule_switch: s.time_of_last_schedule_switch,
            current_schedule: s.current_schedule.into(),
            next_schedule: s.next_schedule.into(),
        })
    }

    fn get_module_schedule_id(schedule_name: a::ScheduleName) -> Res<a::ScheduleId> {
        Ok(crate::get_module_schedule_id(&name(&schedule_name))?.into())
    }
}

impl a::ApexBufferP1 for Partita {
    fn create_buffer(
        buffer_name: a::BufferName,
        max_message_size: a::MessageSize,
        max_nb_message: a::MessageRange,
        queuing_discipline: a::QueuingDiscipline,
    ) -> Res<a::BufferId> {
        let (size, range) = (size32(max_message_size)?, size32(max_nb_message)?);
        Ok(crate::create_buffer(name(&buffer_name), size, range, discipline(queuing_discipline))?.into())
    }

    fn send_buffer(buffer_id: a::BufferId, message: &[a::ApexByte], time_out: a::ApexSystemTime) -> Res<()> {
        Ok(crate::send_buffer(id32(buffer_id)?, message, time_out)?)
    }

    unsafe fn receive_buffer(buffer_id: a::BufferId, time_out: a::ApexSystemTime, message: &mut [a::ApexByte]) -> Res<a::MessageSize> {
        Ok(crate::receive_buffer(id32(buffer_id)?, time_out, message)? as a::MessageSize)
    }

    fn get_buffer_id(buffer_name: a::BufferName) -> Res<a::BufferId> {
        Ok(crate::get_buffer_id(&name(&buffer_name))?.into())
    }

    fn get_buffer_status(buffer_id: a::BufferId) -> Res<a::BufferStatus> {
        let s = crate::get_buffer_status(id32(buffer_id)?)?;
        Ok(a::BufferStatus {
            nb_message: count(s.nb_message),
            max_nb_message: count(s.max_nb_message),
            max_message_size: count(s.max_message_size),
            waiting_processes: s.waiting_processes,
        })
    }
}

impl a::ApexBlackboardP1 for Partita {
    fn create_blackboard(blackboard_name: a::BlackboardName, max_message_size: a::MessageSize) -> Res<a::BlackboardId> {
        Ok(crate::create_blackboard(name(&blackboard_name), size32(max_message_size)?)?.into())
    }

    fn display_blackboard(blackboard_id: a::BlackboardId, message: &[a::ApexByte]) -> Res<()> {
        Ok(crate::display_blackboard(id32(blackboard_id)?, message)?)
    }

    unsafe fn read_blackboard(
        blackboard_id: a::BlackboardId,
        time_out: a::ApexSystemTime,
        message: &mut [a::ApexByte],
    ) -> Res<a::MessageSize> {
        Ok(crate::read_blackboard(id32(blackboard_id)?, time_out, message)? as a::MessageSize)
    }

    fn clear_blackboard(blackboard_id: a::BlackboardId) -> Res<()> {
        Ok(crate::clear_blackboard(id32(blackboard_id)?)?)
    }

    fn get_blackboard_id(blackboard_name: a::BlackboardName) -> Res<a::BlackboardId> {
        Ok(crate::get_blackboard_id(&name(&blackboard_name))?.into())
    }

    fn get_blackboard_status(blackboard_id: a::BlackboardId) -> Res<a::BlackboardStatus> {
        let s = crate::get_blackboard_status(id32(blackboard_id)?)?;
        Ok(a::BlackboardStatus {
            empty_indicator: if s.occupied { a::EmptyIndicator::Occupied } else { a::EmptyIndicator::Empty },
            max_message_size: count(s.max_message_size),
            waiting_processes: s.waiting_processes,
        })
    }
}

impl a::ApexSemaphoreP1 for Partita {
    fn create_semaphore(
        semaphore_name: a::SemaphoreName,
        current_value: a::SemaphoreValue,
        maximum_value: a::SemaphoreValue,
        queuing_discipline: a::QueuingDiscipline,
    ) -> Res<a::SemaphoreId> {
        Ok(crate::create_semaphore(name(&semaphore_name), current_value, maximum_value, discipline(queuing_discipline))?.into())
    }

    fn wait_semaphore(semaphore_id: a::SemaphoreId, time_out: a::ApexSystemTime) -> Res<()> {
        Ok(crate::wait_semaphore(id32(semaphore_id)?, time_out)?)
    }

    fn signal_semaphore(semaphore_id: a::SemaphoreId) -> Res<()> {
        Ok(crate::signal_semaphore(id32(semaphore_id)?)?)
    }

    fn get_semaphore_id(semaphore_name: a::SemaphoreName) -> Res<a::SemaphoreId> {
        Ok(crate::get_semaphore_id(&name(&semaphore_name))?.into())
    }

    fn get_semaphore_status(semaphore_id: a::SemaphoreId) -> Res<a::SemaphoreStatus> {
        let s = crate::get_semaphore_status(id32(semaphore_id)?)?;
        Ok(a::SemaphoreStatus { current_value: s.current_value, maximum_value: s.maximum_value, waiting_processes: s.waiting_processes })
    }
}

impl a::ApexEventP1 for Partita {
    fn create_event(event_name: a::EventName) -> Res<a::EventId> {
        Ok(crate::create_event(name(&event_name))?.into())
    }

    fn set_event(event_id: a::EventId) -> Res<()> {
        Ok(crate::set_event(id32(event_id)?)?)
    }

    fn reset_event(event_id: a::EventId) -> Res<()> {
        Ok(crate::reset_event(id32(event_id)?)?)
    }

    fn wait_event(event_id: a::EventId, time_out: a::ApexSystemTime) -> Res<()> {
        Ok(crate::wait_event(id32(event_id)?, time_out)?)
    }

    fn get_event_id(event_name: a::EventName) -> Res<a::EventId> {
        Ok(crate::get_event_id(&name(&event_name))?.into())
    }

    fn get_event_status(event_id: a::EventId) -> Res<a::EventStatus> {
        let s = crate::get_event_status(id32(event_id)?)?;
        Ok(a::EventStatus {
            event_state: if s.up { a::EventState::Up } else { a::EventState::Down },
            waiting_processes: s.waiting_processes,
        })
    }
}

impl a::ApexMutexP1 for Partita {
    fn create_mutex(mutex_name: a::MutexName, mutex_priority: a::Priority, queuing_discipline: a::QueuingDiscipline) -> Res<a::MutexId> {
        Ok(crate::create_mutex(name(&mutex_name), mutex_priority, discipline(queuing_discipline))?.into())
    }

    fn acquire_mutex(mutex_id: a::MutexId, time_out: a::ApexSystemTime) -> Res<()> {
        Ok(crate::acquire_mutex(id32(mutex_id)?, time_out)?)
    }

    fn release_mutex(mutex_id: a::MutexId) -> Res<()> {
        Ok(crate::release_mutex(id32(mutex_id)?)?)
    }

    fn reset_mutex(mutex_id: a::MutexId, process_id: a::ProcessId) -> Res<()> {
        Ok(crate::reset_mutex(id32(mutex_id)?, id32(process_id)?)?)
    }

    fn get_mutex_id(mutex_name: a::MutexName) -> Res<a::MutexId> {
        Ok(crate::get_mutex_id(&name(&mutex_name))?.into())
    }

    fn get_mutex_status(mutex_id: a::MutexId) -> Res<a::MutexStatus> {
        let s = crate::get_mutex_status(id32(mutex_id)?)?;
        Ok(a::MutexStatus {
            mutex_owner: s.owner.into(),
            mutex_state: if s.owned { a::MutexState::Owned } else { a::MutexState::Available },
            mutex_priority: s.priority,
            lock_count: s.lock_count,
            waiting_processes: s.waiting_processes,
        })
    }

    /// NO_MUTEX_OWNED and PREEMPTION_LOCK_MUTEX have the same values in both (-2, -3).
    fn get_process_mutex_state(process_id: a::ProcessId) -> Res<a::MutexId> {
        Ok(crate::get_process_mutex_state(id32(process_id)?)?.into())
    }
}

fn to_port_direction(d: a::PortDirection) -> crate::PortDirection {
    match d {
        a::PortDirection::Source => crate::PortDirection::Source,
        a::PortDirection::Destination => crate::PortDirection::Destination,
    }
}

fn apex_port_direction(d: crate::PortDirection) -> a::PortDirection {
    match d {
        crate::PortDirection::Source => a::PortDirection::Source,
        crate::PortDirection::Destination => a::PortDirection::Destination,
    }
}

fn validity(v: crate::Validity) -> a::Validity {
    match v {
        crate::Validity::Invalid => a::Validity::Invalid,
        crate::Validity::Valid => a::Validity::Valid,
    }
}

/// INVALID_PARAM for a destination's receive slice without room for `max` bytes (a source's
/// call goes through, to get the standard's INVALID_MODE).
fn check_room(direction: crate::PortDirection, max: i32, room: usize) -> Res<()> {
    if direction == crate::PortDirection::Destination && room < count(max) as usize {
        return Err(a::ErrorReturnCode::InvalidParam);
    }
    Ok(())
}

impl a::ApexSamplingPortP4 for Partita {
    fn create_sampling_port(
        sampling_port_name: a::SamplingPortName,
        max_message_size: a::MessageSize,
        port_direction: a::PortDirection,
        refresh_period: a::ApexSystemTime,
    ) -> Res<a::SamplingPortId> {
        let size = size32(max_message_size)?;
        Ok(crate::create_sampling_port(&name(&sampling_port_name), size, to_port_direction(port_direction), refresh_period)?.into())
    }

    fn write_sampling_message(sampling_port_id: a::SamplingPortId, message: &[a::ApexByte]) -> Res<()> {
        Ok(crate::write_sampling_message(id32(sampling_port_id)?, message)?)
    }

    unsafe fn read_sampling_message(
        sampling_port_id: a::SamplingPortId,
        message: &mut [a::ApexByte],
    ) -> Res<(a::Validity, a::MessageSize)> {
        let id = id32(sampling_port_id)?;
        let s = crate::get_sampling_port_status(id)?;
        check_room(s.port_direction, s.max_message_size, message.len())?;
        let (len, v) = crate::read_sampling_message(id, message)?;
        Ok((validity(v), len as a::MessageSize))
    }
}

impl a::ApexSamplingPortP1 for Partita {
    fn get_sampling_port_id(sampling_port_name: a::SamplingPortName) -> Res<a::SamplingPortId> {
        Ok(crate::get_sampling_port_id(&name(&sampling_port_name))?.into())
    }

    fn get_sampling_port_status(sampling_port_id: a::SamplingPortId) -> Res<a::ApexSamplingPortStatus> {
        let s = crate::get_sampling_port_status(id32(sampling_port_id)?)?;
        Ok(a::ApexSamplingPortStatus {
            refresh_period: s.refresh_period,
            max_message_size: count(s.max_message_size),
            port_direction: apex_port_direction(s.port_direction),
            last_msg_validity: validity(s.last_msg_validity),
        })
    }
}

impl a::ApexQueuingPortP4 for Partita {
    fn create_queuing_port(
        queuing_port_name: a::QueuingPortName,
        max_message_size: a::MessageSize,
        max_nb_message: a::MessageRange,
        port_direction: a::PortDirection,
        queuing_discipline: a::QueuingDiscipline,
    ) -> Res<a::QueuingPortId> {
        let (size, range) = (size32(max_message_size)?, size32(max_nb_message)?);
        let (direction, discipline) = (to_port_direction(port_direction), discipline(queuing_discipline));
        Ok(crate::create_queuing_port(&name(&queuing_port_name), size, range, direction, discipline)?.into())
    }

    fn send_queuing_message(queuing_port_id: a::QueuingPortId, message: &[a::ApexByte], time_out: a::ApexSystemTime) -> Res<()> {
        Ok(crate::send_queuing_message(id32(queuing_port_id)?, message, time_out)?)
    }

    unsafe fn receive_queuing_message(
        queuing_port_id: a::QueuingPortId,
        time_out: a::ApexSystemTime,
        message: &mut [a::ApexByte],
    ) -> Res<(a::MessageSize, a::QueueOverflow)> {
        let id = id32(queuing_port_id)?;
        let s = crate::get_queuing_port_status(id)?;
        check_room(s.port_direction, s.max_message_size, message.len())?;
        let m = crate::receive_queuing_message(id, time_out, message)?;
        Ok((m.length as a::MessageSize, m.overflowed))
    }

    fn get_queuing_port_status(queuing_port_id: a::QueuingPortId) -> Res<a::QueuingPortStatus> {
        let s = crate::get_queuing_port_status(id32(queuing_port_id)?)?;
        Ok(a::QueuingPortStatus {
            nb_message: count(s.nb_message),
            max_nb_message: count(s.max_nb_message),
            max_message_size: count(s.max_message_size),
            port_direction: apex_port_direction(s.port_direction),
            waiting_processes: s.waiting_processes,
        })
    }

    fn clear_queuing_port(queuing_port_id: a::QueuingPortId) -> Res<()> {
        Ok(crate::clear_queuing_port(id32(queuing_port_id)?)?)
    }
}

impl a::ApexQueuingPortP1 for Partita {
    fn get_queuing_port_id(queuing_port_name: a::QueuingPortName) -> Res<a::QueuingPortId> {
        Ok(crate::get_queuing_port_id(&name(&queuing_port_name))?.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_codes_keep_their_standard_values() {
        use p::ErrorReturnCode::*;
        for e in [NoAction, NotAvailable, InvalidParam, InvalidConfig, InvalidMode, TimedOut] {
            let mapped: a::ErrorReturnCode = e.into();
            assert_eq!(mapped as u32, e as u32, "{e}");
            assert_eq!(a::ErrorReturnCode::from(e as u32), Err(mapped));
        }
    }

    #[test]
    fn names_are_read_like_c_names_and_given_back_padded() {
        let mut n = [0u8; a::MAX_NAME_LENGTH];
        n[..3].copy_from_slice(b"GnC");
        assert_eq!(name(&n).as_bytes(), b"GnC");
        assert_eq!(apex_name(&name(&n)), n);
        let long = [b'x'; a::MAX_NAME_LENGTH];
        let read = name(&long);
        assert_eq!(read.as_bytes().len(), crate::names::MAX_NAME_LENGTH);
        assert_eq!(&apex_name(&read)[crate::names::MAX_NAME_LENGTH..], &[0, 0]);
    }

    #[test]
    fn ids_and_sizes_beyond_32_bits_are_invalid_param() {
        assert_eq!(id32(i64::from(i32::MAX) + 1), Err(a::ErrorReturnCode::InvalidParam));
        assert_eq!(id32(-1), Ok(-1));
        assert_eq!(size32(u32::MAX), Err(a::ErrorReturnCode::InvalidParam));
    }

    #[test]
    fn error_codes_keep_their_standard_values() {
        for code in 0..=7 {
            assert_eq!(error_code(code) as u32, code);
        }
    }

    #[test]
    fn priority_ranges_agree() {
        // P1-5's 1..=239 on both faces: a ported partition's priorities are accepted as given.
        assert_eq!((a::MIN_PRIORITY_VALUE, a::MAX_PRIORITY_VALUE), (crate::MIN_PRIORITY_VALUE, crate::MAX_PRIORITY_VALUE));
    }

    #[test]
    fn mutex_state_values_agree() {
        assert_eq!(a::NO_MUTEX_OWNED, i64::from(crate::NO_MUTEX_OWNED));
        assert_eq!(a::PREEMPTION_LOCK_MUTEX, i64::from(crate::PREEMPTION_LOCK_MUTEX));
    }

    #[test]
    fn port_enums_keep_their_standard_values() {
        for d in [a::PortDirection::Source, a::PortDirection::Destination] {
            assert_eq!(to_port_direction(d) as u32, d as u32);
            assert_eq!(apex_port_direction(to_port_direction(d)), d);
        }
        for v in [crate::Validity::Invalid, crate::Validity::Valid] {
            assert_eq!(validity(v) as u32, v as u32);
        }
    }

    #[test]
    fn a_destination_needs_room_for_its_largest_message() {
        use crate::PortDirection::*;
        assert_eq!(check_room(Destination, 64, 63), Err(a::ErrorReturnCode::InvalidParam));
        assert_eq!(check_room(Destination, 64, 64), Ok(()));
        // A source's read is refused by the service itself, with INVALID_MODE.
        assert_eq!(check_room(Source, 64, 0), Ok(()));
    }

    /// Without a module no port is configured: every CREATE is INVALID_CONFIG, and an unknown
    /// or out-of-range id is INVALID_PARAM, through the a653rs traits as through the C ABI.
    #[test]
    fn port_services_without_a_module_give_the_standard_codes() {
        use a::{ApexQueuingPortP1, ApexQueuingPortP4, ApexSamplingPortP1, ApexSamplingPortP4};
        let mut n = [0u8; a::MAX_NAME_LENGTH];
        n[..2].copy_from_slice(b"s1");
        let err = a::ErrorReturnCode::InvalidConfig;
        assert_eq!(Partita::create_sampling_port(n, 8, a::PortDirection::Source, -1), Err(err));
        assert_eq!(Partita::create_queuing_port(n, 8, 4, a::PortDirection::Destination, a::QueuingDiscipline::Fifo), Err(err));
        assert_eq!(Partita::get_sampling_port_id(n), Err(err));
        assert_eq!(Partita::get_queuing_port_id(n), Err(err));
        let bad = a::ErrorReturnCode::InvalidParam;
        let mut buf = [0u8; 8];
        for id in [7, i64::from(i32::MAX) + 1] {
            assert_eq!(Partita::write_sampling_message(id, b"x"), Err(bad));
            // SAFETY: `buf` is a valid slice; the call fails before touching it.
            assert_eq!(unsafe { Partita::read_sampling_message(id, &mut buf) }, Err(bad));
            assert_eq!(Partita::get_sampling_port_status(id), Err(bad));
            assert_eq!(Partita::send_queuing_message(id, b"x", 0), Err(bad));
            // SAFETY: as above.
            assert_eq!(unsafe { Partita::receive_queuing_message(id, 0, &mut buf) }, Err(bad));
            assert_eq!(Partita::get_queuing_port_status(id), Err(bad));
            assert_eq!(Partita::clear_queuing_port(id), Err(bad));
        }
    }
}
