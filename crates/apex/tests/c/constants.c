/* Every constant and type of ARINC 653 Part 1-5 (and the Part 2 services Partita implements) that
 * a conforming partition may name is defined by ARINC653.h: this program names each one (it does
 * not compile otherwise) and checks the values P1-5 fixes. Run by
 * c_programs::the_header_defines_every_p1_5_constant_and_type. */
#include "check.h"

static const long long constants[] = {
    (long long)SYSTEM_LIMIT_NUMBER_OF_PARTITIONS,
    (long long)SYSTEM_LIMIT_NUMBER_OF_MESSAGES,
    (long long)SYSTEM_LIMIT_MESSAGE_SIZE,
    (long long)SYSTEM_LIMIT_NUMBER_OF_PROCESSES,
    (long long)SYSTEM_LIMIT_NUMBER_OF_SAMPLING_PORTS,
    (long long)SYSTEM_LIMIT_NUMBER_OF_QUEUING_PORTS,
    (long long)SYSTEM_LIMIT_NUMBER_OF_BUFFERS,
    (long long)SYSTEM_LIMIT_NUMBER_OF_BLACKBOARDS,
    (long long)SYSTEM_LIMIT_NUMBER_OF_SEMAPHORES,
    (long long)SYSTEM_LIMIT_NUMBER_OF_EVENTS,
    (long long)SYSTEM_LIMIT_NUMBER_OF_MUTEXES,
    (long long)NO_ERROR,
    (long long)NO_ACTION,
    (long long)NOT_AVAILABLE,
    (long long)INVALID_PARAM,
    (long long)INVALID_CONFIG,
    (long long)INVALID_MODE,
    (long long)TIMED_OUT,
    (long long)MAX_NAME_LENGTH,
    (long long)SOURCE,
    (long long)DESTINATION,
    (long long)FIFO,
    (long long)PRIORITY,
    (long long)INFINITE_TIME_VALUE,
    (long long)MAX_NUMBER_OF_PROCESSES,
    (long long)MIN_PRIORITY_VALUE,
    (long long)MAX_PRIORITY_VALUE,
    (long long)MAX_LOCK_LEVEL,
    (long long)NULL_PROCESS_ID,
    (long long)MAIN_PROCESS_ID,
    (long long)DORMANT,
    (long long)READY,
    (long long)RUNNING,
    (long long)WAITING,
    (long long)FAULTED,
    (long long)SOFT,
    (long long)HARD,
    (long long)CORE_AFFINITY_NO_PREFERENCE,
    (long long)MAX_NUMBER_OF_PARTITIONS,
    (long long)IDLE,
    (long long)COLD_START,
    (long long)WARM_START,
    (long long)NORMAL,
    (long long)NORMAL_START,
    (long long)PARTITION_RESTART,
    (long long)HM_MODULE_RESTART,
    (long long)HM_PARTITION_RESTART,
    (long long)MAX_NUMBER_OF_SAMPLING_PORTS,
    (long long)INVALID,
    (long long)VALID,
    (long long)EMPTY_PORT,
    (long long)CONSUMED_MESSAGE,
    (long long)NEW_MESSAGE,
    (long long)MAX_NUMBER_OF_QUEUING_PORTS,
    (long long)MAX_NUMBER_OF_BUFFERS,
    (long long)MAX_NUMBER_OF_BLACKBOARDS,
    (long long)EMPTY,
    (long long)OCCUPIED,
    (long long)MAX_NUMBER_OF_SEMAPHORES,
    (long long)MAX_SEMAPHORE_VALUE,
    (long long)MAX_NUMBER_OF_EVENTS,
    (long long)DOWN,
    (long long)UP,
    (long long)MAX_NUMBER_OF_MUTEXES,
    (long long)NO_MUTEX_OWNED,
    (long long)PREEMPTION_LOCK_MUTEX,
    (long long)AVAILABLE,
    (long long)OWNED,
    (long long)MAX_ERROR_MESSAGE_SIZE,
    (long long)DEADLINE_MISSED,
    (long long)APPLICATION_ERROR,
    (long long)NUMERIC_ERROR,
    (long long)ILLEGAL_REQUEST,
    (long long)STACK_OVERFLOW,
    (long long)MEMORY_VIOLATION,
    (long long)HARDWARE_FAULT,
    (long long)POWER_FAIL,
    (long long)PROCESSES_PAUSE,
    (long long)PROCESSES_SCHEDULED,
};

static const size_t type_sizes[] = {
    sizeof(APEX_BYTE),
    sizeof(APEX_INTEGER),
    sizeof(APEX_UNSIGNED),
    sizeof(APEX_LONG_INTEGER),
    sizeof(RETURN_CODE_TYPE),
    sizeof(NAME_TYPE),
    sizeof(SYSTEM_ADDRESS_TYPE),
    sizeof(MESSAGE_ADDR_TYPE),
    sizeof(MESSAGE_SIZE_TYPE),
    sizeof(MESSAGE_RANGE_TYPE),
    sizeof(PORT_DIRECTION_TYPE),
    sizeof(QUEUING_DISCIPLINE_TYPE),
    sizeof(SYSTEM_TIME_TYPE),
    sizeof(PROCESS_NAME_TYPE),
    sizeof(PROCESS_ID_TYPE),
    sizeof(PROCESS_INDEX_TYPE),
    sizeof(LOCK_LEVEL_TYPE),
    sizeof(STACK_SIZE_TYPE),
    sizeof(WAITING_RANGE_TYPE),
    sizeof(PRIORITY_TYPE),
    sizeof(PROCESS_STATE_TYPE),
    sizeof(DEADLINE_TYPE),
    sizeof(PROCESS_ATTRIBUTE_TYPE),
    sizeof(PROCESS_STATUS_TYPE),
    sizeof(PROCESSOR_CORE_ID_TYPE),
    sizeof(OPERATING_MODE_TYPE),
    sizeof(PARTITION_ID_TYPE),
    sizeof(NUM_CORES_TYPE),
    sizeof(START_CONDITION_TYPE),
    sizeof(PARTITION_STATUS_TYPE),
    sizeof(SAMPLING_PORT_NAME_TYPE),
    sizeof(SAMPLING_PORT_ID_TYPE),
    sizeof(VALIDITY_TYPE),
    sizeof(SAMPLING_PORT_STATUS_TYPE),
    sizeof(UPDATED_TYPE),
    sizeof(SAMPLING_PORT_CURRENT_STATUS_TYPE),
    sizeof(QUEUING_PORT_NAME_TYPE),
    sizeof(QUEUING_PORT_ID_TYPE),
    sizeof(QUEUING_PORT_STATUS_TYPE),
    sizeof(BUFFER_NAME_TYPE),
    sizeof(BUFFER_ID_TYPE),
    sizeof(BUFFER_STATUS_TYPE),
    sizeof(BLACKBOARD_NAME_TYPE),
    sizeof(BLACKBOARD_ID_TYPE),
    sizeof(EMPTY_INDICATOR_TYPE),
    sizeof(BLACKBOARD_STATUS_TYPE),
    sizeof(SEMAPHORE_NAME_TYPE),
    sizeof(SEMAPHORE_ID_TYPE),
    sizeof(SEMAPHORE_VALUE_TYPE),
    sizeof(SEMAPHORE_STATUS_TYPE),
    sizeof(EVENT_NAME_TYPE),
    sizeof(EVENT_ID_TYPE),
    sizeof(EVENT_STATE_TYPE),
    sizeof(EVENT_STATUS_TYPE),
    sizeof(MUTEX_NAME_TYPE),
    sizeof(MUTEX_ID_TYPE),
    sizeof(MUTEX_STATE_TYPE),
    sizeof(MUTEX_STATUS_TYPE),
    sizeof(LOCK_COUNT_TYPE),
    sizeof(ERROR_MESSAGE_SIZE_TYPE),
    sizeof(ERROR_MESSAGE_TYPE),
    sizeof(ERROR_CODE_TYPE),
    sizeof(ERROR_STATUS_TYPE),
    sizeof(ERROR_HANDLER_CONCURRENCY_CONTROL_TYPE),
    sizeof(SCHEDULE_ID_TYPE),
    sizeof(SCHEDULE_NAME_TYPE),
    sizeof(SCHEDULE_STATUS_TYPE),
};

static void never_started(void)
{
}

int main(void)
{
    check_eq("constants named", (long long)(sizeof constants / sizeof constants[0]), 79);
    check_eq("types named", (long long)(sizeof type_sizes / sizeof type_sizes[0]), 67);
    check_eq("NULL_PROCESS_ID", NULL_PROCESS_ID, 0);
    check_eq("MAIN_PROCESS_ID", MAIN_PROCESS_ID, -1);
    check_eq("INFINITE_TIME_VALUE", INFINITE_TIME_VALUE, -1);
    check_eq("CORE_AFFINITY_NO_PREFERENCE", CORE_AFFINITY_NO_PREFERENCE, -1);
    check_eq("NO_MUTEX_OWNED", NO_MUTEX_OWNED, -2);
    check_eq("PREEMPTION_LOCK_MUTEX", PREEMPTION_LOCK_MUTEX, -3);
    check_eq("MAX_LOCK_LEVEL", MAX_LOCK_LEVEL, 16);
    check_eq("MAX_ERROR_MESSAGE_SIZE", MAX_ERROR_MESSAGE_SIZE, 128);
    check_eq("FAULTED", FAULTED, 4);
    /* No created process has the id NULL_PROCESS_ID or MAIN_PROCESS_ID. */
    PROCESS_ID_TYPE first = create("FIRST", never_started, 1, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    check_true("a created process is neither NULL_PROCESS_ID nor MAIN_PROCESS_ID",
               first != NULL_PROCESS_ID && first != MAIN_PROCESS_ID);
    PROCESS_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_PROCESS_STATUS(NULL_PROCESS_ID, &st, &rc);
    check_eq("GET_PROCESS_STATUS(NULL_PROCESS_ID) is INVALID_PARAM", rc, INVALID_PARAM);
    finish();
}
