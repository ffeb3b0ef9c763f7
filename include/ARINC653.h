/*
 * ARINC653.h — the APEX C binding of Partita (ARINC 653 Part 1, plus the Part 2 services
 * named in design.md §4).
 *
 * Build a partition program against the static library:
 *
 *     cargo build --release
 *     cc -I include app.c -L target/release -lpartita_apex -lpthread -o app
 *
 * The program's main() is the partition's initialization process: it runs in COLD_START or
 * WARM_START, creates processes (and later ports and other resources), starts them and calls
 * SET_PARTITION_MODE(NORMAL), which does not return. Under `partita run` the module passes the
 * partition's control block; a program started by hand runs standalone (see the library's
 * documentation: PARTITA_STANDALONE_PERIOD, PARTITA_STANDALONE_CPUS, PARTITA_STANDALONE_TRACE).
 *
 * Conventions of this binding:
 *  - APEX_INTEGER is 32-bit, APEX_LONG_INTEGER 64-bit; SYSTEM_TIME_TYPE counts nanoseconds and
 *    INFINITE_TIME_VALUE (-1) is infinite.
 *  - Names (NAME_TYPE, char[30]) are read up to 30 characters, stopping at a NUL: both a full
 *    NAME_TYPE buffer and a string literal work. Name parameters are declared `const char *`
 *    (the same ABI as the standard's NAME_TYPE parameters): with the array type, GCC warns
 *    (-Wstringop-overread) on every literal shorter than 30 characters.
 *  - Input message addresses are declared `const void *` (the same ABI as MESSAGE_ADDR_TYPE), so
 *    that string literals and char buffers pass without casts in C and C++.
 *  - ARINC priorities MIN_PRIORITY_VALUE (1) .. MAX_PRIORITY_VALUE (239) (P1-5; 0 and 240 are
 *    INVALID_PARAM): the distinct priorities a partition uses are ranked onto its band of Linux
 *    SCHED_FIFO levels (11..73 by default), exact in order while their number fits the band,
 *    the lowest sharing one level beyond (the partition's log says which; docs/porting.md). A
 *    process runs on one core of the partition; without real-time permission the library warns
 *    once and runs under SCHED_OTHER (priorities are then not enforced).
 *  - STOP and SUSPEND of another process act asynchronously through a signal
 *    (SIGRTMAX - 2, which the application must not block or use), and take effect only outside
 *    the C library, so that no C library lock is left held: a process interrupted inside libc
 *    (or the dynamic loader, libgcc_s, libstdc++) goes on until the call returns into the
 *    program. The library wraps malloc, calloc, realloc, free, the printf family (also the
 *    _FORTIFY_SOURCE __*_chk ones), puts, fputs, fputc, putc, putchar, fwrite, fread, fgets,
 *    getc, fgetc, fflush, fopen, fclose: the request takes effect as such a call returns; inside
 *    any other libc function it takes effect at a re-sent signal (every 2 ms) that finds the
 *    process outside the C runtime. Not covered: a lock the program holds across calls
 *    (flockfile), libc locks held while libc calls back into the program (dl_iterate_phdr,
 *    fopencookie), a program statically linked against libc. See docs/porting.md. Other
 *    limits: the stack of a stopped process is abandoned (C++ destructors and Rust drops of its frames do not
 *    run); blocking system calls of the target are restarted (SA_RESTART) unless they never are
 *    (e.g. nanosleep returns EINTR).
 *
 * Every service declared here is implemented: process, time, partition and module schedule
 * services; buffers, blackboards, semaphores, events and mutexes (MUTEX_PRIORITY is a priority
 * ceiling; a process owns at most one mutex, the preemption lock counting as one); sampling and
 * queuing ports (Part 1 and the Part 2 sampling services); health monitoring (error handler,
 * RAISE_APPLICATION_ERROR, REPORT_APPLICATION_MESSAGE; see docs/health-monitor.md).
 *
 * Ports: a read or receive writes up to the port's MAX_MESSAGE_SIZE bytes at MESSAGE_ADDR.
 * Sampling WRITE and READ make no system call. A program run standalone has no configured
 * port (every CREATE is INVALID_CONFIG). READ_UPDATED_SAMPLING_MESSAGE of a message already
 * read returns NO_ACTION, UPDATED = CONSUMED_MESSAGE and LENGTH 0; READ_SAMPLING_MESSAGE_
 * CONDITIONAL of a message older than REF_TIME_STAMP (or of an empty port) is NOT_AVAILABLE.
 * RECEIVE_QUEUING_MESSAGE after messages were lost to a full queue (only an inter-module
 * channel loses any) returns the next message, LENGTH set, with INVALID_CONFIG, once.
 */
#ifndef PARTITA_ARINC653_H
#define PARTITA_ARINC653_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ general */

#define SYSTEM_LIMIT_NUMBER_OF_PARTITIONS     32
#define SYSTEM_LIMIT_NUMBER_OF_MESSAGES       512
#define SYSTEM_LIMIT_MESSAGE_SIZE             8192
#define SYSTEM_LIMIT_NUMBER_OF_PROCESSES      128
#define SYSTEM_LIMIT_NUMBER_OF_SAMPLING_PORTS 512
#define SYSTEM_LIMIT_NUMBER_OF_QUEUING_PORTS  512
#define SYSTEM_LIMIT_NUMBER_OF_BUFFERS        256
#define SYSTEM_LIMIT_NUMBER_OF_BLACKBOARDS    256
#define SYSTEM_LIMIT_NUMBER_OF_SEMAPHORES     256
#define SYSTEM_LIMIT_NUMBER_OF_EVENTS         256
#define SYSTEM_LIMIT_NUMBER_OF_MUTEXES        256

typedef uint8_t  APEX_BYTE;          /* 8-bit unsigned */
typedef int32_t  APEX_INTEGER;       /* 32-bit signed */
typedef uint32_t APEX_UNSIGNED;      /* 32-bit unsigned */
typedef int64_t  APEX_LONG_INTEGER;  /* 64-bit signed */

typedef enum {
    NO_ERROR       = 0, /* request valid and operation performed */
    NO_ACTION      = 1, /* status of system unaffected by request */
    NOT_AVAILABLE  = 2, /* resource required by request unavailable */
    INVALID_PARAM  = 3, /* invalid parameter specified in request */
    INVALID_CONFIG = 4, /* parameter incompatible with configuration */
    INVALID_MODE   = 5, /* request incompatible with current mode */
    TIMED_OUT      = 6  /* time-out tied up with request has expired */
} RETURN_CODE_TYPE;

#define MAX_NAME_LENGTH 30
typedef char NAME_TYPE[MAX_NAME_LENGTH];

typedef void *SYSTEM_ADDRESS_TYPE;
typedef APEX_BYTE *MESSAGE_ADDR_TYPE;
typedef APEX_INTEGER MESSAGE_SIZE_TYPE;
typedef APEX_INTEGER MESSAGE_RANGE_TYPE;
typedef enum { SOURCE = 0, DESTINATION = 1 } PORT_DIRECTION_TYPE;
typedef enum { FIFO = 0, PRIORITY = 1 } QUEUING_DISCIPLINE_TYPE;

/* ------------------------------------------------------------------ time */

typedef APEX_LONG_INTEGER SYSTEM_TIME_TYPE; /* nanoseconds */
#define INFINITE_TIME_VALUE ((SYSTEM_TIME_TYPE)-1)

extern void TIMED_WAIT(SYSTEM_TIME_TYPE DELAY_TIME, RETURN_CODE_TYPE *RETURN_CODE);
extern void PERIODIC_WAIT(RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_TIME(SYSTEM_TIME_TYPE *SYSTEM_TIME, RETURN_CODE_TYPE *RETURN_CODE);
extern void REPLENISH(SYSTEM_TIME_TYPE BUDGET_TIME, RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ processes */

#define MAX_NUMBER_OF_PROCESSES SYSTEM_LIMIT_NUMBER_OF_PROCESSES
#define MIN_PRIORITY_VALUE 1
#define MAX_PRIORITY_VALUE 239
#define MAX_LOCK_LEVEL 16

typedef NAME_TYPE PROCESS_NAME_TYPE;
typedef APEX_INTEGER PROCESS_ID_TYPE;
/* ARINC 653 P1-5: no process, and the main (initialization) process. Partita numbers processes
 * from 1 in creation order, so neither is ever a created process's id. */
#define NULL_PROCESS_ID 0
#define MAIN_PROCESS_ID (-1)
typedef APEX_INTEGER PROCESS_INDEX_TYPE;
typedef APEX_INTEGER LOCK_LEVEL_TYPE;
typedef APEX_UNSIGNED STACK_SIZE_TYPE; /* bytes; 0 = default; above 64 MiB is INVALID_PARAM */
typedef APEX_INTEGER WAITING_RANGE_TYPE;
typedef APEX_INTEGER PRIORITY_TYPE;

typedef enum { DORMANT = 0, READY = 1, RUNNING = 2, WAITING = 3, FAULTED = 4 } PROCESS_STATE_TYPE;
typedef enum { SOFT = 0, HARD = 1 } DEADLINE_TYPE;

typedef struct {
    SYSTEM_TIME_TYPE PERIOD;        /* INFINITE_TIME_VALUE: aperiodic */
    SYSTEM_TIME_TYPE TIME_CAPACITY; /* INFINITE_TIME_VALUE: no deadline */
    SYSTEM_ADDRESS_TYPE ENTRY_POINT;
    STACK_SIZE_TYPE STACK_SIZE;
    PRIORITY_TYPE BASE_PRIORITY;
    DEADLINE_TYPE DEADLINE;
    PROCESS_NAME_TYPE NAME;
} PROCESS_ATTRIBUTE_TYPE;

typedef struct {
    SYSTEM_TIME_TYPE DEADLINE_TIME;
    PRIORITY_TYPE CURRENT_PRIORITY;
    PROCESS_STATE_TYPE PROCESS_STATE;
    PROCESS_ATTRIBUTE_TYPE ATTRIBUTES;
} PROCESS_STATUS_TYPE;

/* Multi-core (Part 1 supplement 4): cores are numbered 0 .. NUM_ASSIGNED_CORES - 1. A process
 * without a core preference (CORE_AFFINITY_NO_PREFERENCE, the default) runs on any of the
 * partition's cores when the partition's windows are the same on all of them, else on core 0
 * (docs/scheduling.md, "Multi-core partitions"). LOCK_PREEMPTION holds the caller's core only. */
typedef APEX_INTEGER PROCESSOR_CORE_ID_TYPE;
#define CORE_AFFINITY_NO_PREFERENCE ((PROCESSOR_CORE_ID_TYPE)-1)

extern void CREATE_PROCESS(const PROCESS_ATTRIBUTE_TYPE *ATTRIBUTES, PROCESS_ID_TYPE *PROCESS_ID,
                           RETURN_CODE_TYPE *RETURN_CODE);
extern void SET_PRIORITY(PROCESS_ID_TYPE PROCESS_ID, PRIORITY_TYPE PRIORITY, RETURN_CODE_TYPE *RETURN_CODE);
extern void SUSPEND_SELF(SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
extern void SUSPEND(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void RESUME(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void STOP_SELF(void);
extern void STOP(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void START(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void DELAYED_START(PROCESS_ID_TYPE PROCESS_ID, SYSTEM_TIME_TYPE DELAY_TIME, RETURN_CODE_TYPE *RETURN_CODE);
extern void LOCK_PREEMPTION(LOCK_LEVEL_TYPE *LOCK_LEVEL, RETURN_CODE_TYPE *RETURN_CODE);
extern void UNLOCK_PREEMPTION(LOCK_LEVEL_TYPE *LOCK_LEVEL, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_MY_ID(PROCESS_ID_TYPE *PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_PROCESS_ID(const char *PROCESS_NAME /* PROCESS_NAME_TYPE */, PROCESS_ID_TYPE *PROCESS_ID,
                           RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_PROCESS_STATUS(PROCESS_ID_TYPE PROCESS_ID, PROCESS_STATUS_TYPE *PROCESS_STATUS,
                               RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_MY_INDEX(PROCESS_INDEX_TYPE *PROCESS_INDEX, RETURN_CODE_TYPE *RETURN_CODE);
extern void INITIALIZE_PROCESS_CORE_AFFINITY(PROCESS_ID_TYPE PROCESS_ID, PROCESSOR_CORE_ID_TYPE PROCESSOR_CORE_ID,
                                             RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_MY_PROCESSOR_CORE_ID(PROCESSOR_CORE_ID_TYPE *PROCESSOR_CORE_ID, RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ partition */

#define MAX_NUMBER_OF_PARTITIONS SYSTEM_LIMIT_NUMBER_OF_PARTITIONS

typedef enum { IDLE = 0, COLD_START = 1, WARM_START = 2, NORMAL = 3 } OPERATING_MODE_TYPE;
typedef APEX_INTEGER PARTITION_ID_TYPE;
typedef APEX_UNSIGNED NUM_CORES_TYPE;
typedef enum {
    NORMAL_START = 0,
    PARTITION_RESTART = 1,
    HM_MODULE_RESTART = 2,
    HM_PARTITION_RESTART = 3
} START_CONDITION_TYPE;

typedef struct {
    SYSTEM_TIME_TYPE PERIOD;
    SYSTEM_TIME_TYPE DURATION;
    PARTITION_ID_TYPE IDENTIFIER;
    LOCK_LEVEL_TYPE LOCK_LEVEL;
    OPERATING_MODE_TYPE OPERATING_MODE;
    START_CONDITION_TYPE START_CONDITION;
    NUM_CORES_TYPE NUM_ASSIGNED_CORES;
} PARTITION_STATUS_TYPE;

extern void GET_PARTITION_STATUS(PARTITION_STATUS_TYPE *PARTITION_STATUS, RETURN_CODE_TYPE *RETURN_CODE);
/* SET_PARTITION_MODE(NORMAL) from COLD_START/WARM_START does not return. */
extern void SET_PARTITION_MODE(OPERATING_MODE_TYPE OPERATING_MODE, RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ module schedules (Part 2) */

typedef NAME_TYPE SCHEDULE_NAME_TYPE;
typedef APEX_INTEGER SCHEDULE_ID_TYPE;

typedef struct {
    SYSTEM_TIME_TYPE TIME_OF_LAST_SCHEDULE_SWITCH; /* 0 if the schedule never switched */
    SCHEDULE_ID_TYPE CURRENT_SCHEDULE;
    SCHEDULE_ID_TYPE NEXT_SCHEDULE;
} SCHEDULE_STATUS_TYPE;

/* Takes effect at the end of the current major frame. */
extern void SET_MODULE_SCHEDULE(SCHEDULE_ID_TYPE SCHEDULE_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_MODULE_SCHEDULE_STATUS(SCHEDULE_STATUS_TYPE *SCHEDULE_STATUS, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_MODULE_SCHEDULE_ID(const char *SCHEDULE_NAME /* SCHEDULE_NAME_TYPE */, SCHEDULE_ID_TYPE *SCHEDULE_ID,
                                   RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ sampling ports */

#define MAX_NUMBER_OF_SAMPLING_PORTS SYSTEM_LIMIT_NUMBER_OF_SAMPLING_PORTS

typedef NAME_TYPE SAMPLING_PORT_NAME_TYPE;
typedef APEX_INTEGER SAMPLING_PORT_ID_TYPE;
typedef enum { INVALID = 0, VALID = 1 } VALIDITY_TYPE;

typedef struct {
    SYSTEM_TIME_TYPE REFRESH_PERIOD;
    MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
    PORT_DIRECTION_TYPE PORT_DIRECTION;
    VALIDITY_TYPE LAST_MSG_VALIDITY;
} SAMPLING_PORT_STATUS_TYPE;

extern void CREATE_SAMPLING_PORT(const char *SAMPLING_PORT_NAME /* SAMPLING_PORT_NAME_TYPE */, MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE,
                                 PORT_DIRECTION_TYPE PORT_DIRECTION, SYSTEM_TIME_TYPE REFRESH_PERIOD,
                                 SAMPLING_PORT_ID_TYPE *SAMPLING_PORT_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void WRITE_SAMPLING_MESSAGE(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, const void *MESSAGE_ADDR,
                                   MESSAGE_SIZE_TYPE LENGTH, RETURN_CODE_TYPE *RETURN_CODE);
extern void READ_SAMPLING_MESSAGE(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
                                  MESSAGE_SIZE_TYPE *LENGTH, VALIDITY_TYPE *VALIDITY, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_SAMPLING_PORT_ID(const char *SAMPLING_PORT_NAME /* SAMPLING_PORT_NAME_TYPE */, SAMPLING_PORT_ID_TYPE *SAMPLING_PORT_ID,
                                 RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_SAMPLING_PORT_STATUS(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, SAMPLING_PORT_STATUS_TYPE *SAMPLING_PORT_STATUS,
                                     RETURN_CODE_TYPE *RETURN_CODE);

/* Part 2 sampling port extensions */
typedef enum { EMPTY_PORT = 0, CONSUMED_MESSAGE = 1, NEW_MESSAGE = 2 } UPDATED_TYPE;
typedef enum { STALE = 0, FRESH = 1 } AGE_TYPE;

typedef struct {
    SYSTEM_TIME_TYPE REFRESH_PERIOD;
    SYSTEM_TIME_TYPE TIME_STAMP;
    MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
    PORT_DIRECTION_TYPE PORT_DIRECTION;
    AGE_TYPE MESSAGE_AGE;
    UPDATED_TYPE UPDATED;
} SAMPLING_PORT_CURRENT_STATUS_TYPE;

extern void READ_UPDATED_SAMPLING_MESSAGE(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
                                          MESSAGE_SIZE_TYPE *LENGTH, UPDATED_TYPE *UPDATED,
                                          RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_SAMPLING_PORT_CURRENT_STATUS(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID,
                                             SAMPLING_PORT_CURRENT_STATUS_TYPE *SAMPLING_PORT_CURRENT_STATUS,
                                             RETURN_CODE_TYPE *RETURN_CODE);
extern void READ_SAMPLING_MESSAGE_CONDITIONAL(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, SYSTEM_TIME_TYPE REF_TIME_STAMP,
                                              MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE *LENGTH,
                                              SYSTEM_TIME_TYPE *TIME_STAMP, RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ queuing ports */

#define MAX_NUMBER_OF_QUEUING_PORTS SYSTEM_LIMIT_NUMBER_OF_QUEUING_PORTS

typedef NAME_TYPE QUEUING_PORT_NAME_TYPE;
typedef APEX_INTEGER QUEUING_PORT_ID_TYPE;

typedef struct {
    MESSAGE_RANGE_TYPE NB_MESSAGE;
    MESSAGE_RANGE_TYPE MAX_NB_MESSAGE;
    MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
    PORT_DIRECTION_TYPE PORT_DIRECTION;
    WAITING_RANGE_TYPE WAITING_PROCESSES;
} QUEUING_PORT_STATUS_TYPE;

extern void CREATE_QUEUING_PORT(const char *QUEUING_PORT_NAME /* QUEUING_PORT_NAME_TYPE */, MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE,
                                MESSAGE_RANGE_TYPE MAX_NB_MESSAGE, PORT_DIRECTION_TYPE PORT_DIRECTION,
                                QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE, QUEUING_PORT_ID_TYPE *QUEUING_PORT_ID,
                                RETURN_CODE_TYPE *RETURN_CODE);
extern void SEND_QUEUING_MESSAGE(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID, const void *MESSAGE_ADDR, MESSAGE_SIZE_TYPE LENGTH,
                                 SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
extern void RECEIVE_QUEUING_MESSAGE(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID, SYSTEM_TIME_TYPE TIME_OUT,
                                    MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE *LENGTH,
                                    RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_QUEUING_PORT_ID(const char *QUEUING_PORT_NAME /* QUEUING_PORT_NAME_TYPE */, QUEUING_PORT_ID_TYPE *QUEUING_PORT_ID,
                                RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_QUEUING_PORT_STATUS(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID, QUEUING_PORT_STATUS_TYPE *QUEUING_PORT_STATUS,
                                    RETURN_CODE_TYPE *RETURN_CODE);
extern void CLEAR_QUEUING_PORT(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID, RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ buffers */

#define MAX_NUMBER_OF_BUFFERS SYSTEM_LIMIT_NUMBER_OF_BUFFERS

typedef NAME_TYPE BUFFER_NAME_TYPE;
typedef APEX_INTEGER BUFFER_ID_TYPE;

typedef struct {
    MESSAGE_RANGE_TYPE NB_MESSAGE;
    MESSAGE_RANGE_TYPE MAX_NB_MESSAGE;
    MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
    WAITING_RANGE_TYPE WAITING_PROCESSES;
} BUFFER_STATUS_TYPE;

extern void CREATE_BUFFER(const char *BUFFER_NAME /* BUFFER_NAME_TYPE */, MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE,
                          MESSAGE_RANGE_TYPE MAX_NB_MESSAGE, QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE,
                          BUFFER_ID_TYPE *BUFFER_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void SEND_BUFFER(BUFFER_ID_TYPE BUFFER_ID, const void *MESSAGE_ADDR, MESSAGE_SIZE_TYPE LENGTH,
                        SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
extern void RECEIVE_BUFFER(BUFFER_ID_TYPE BUFFER_ID, SYSTEM_TIME_TYPE TIME_OUT, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
                           MESSAGE_SIZE_TYPE *LENGTH, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_BUFFER_ID(const char *BUFFER_NAME /* BUFFER_NAME_TYPE */, BUFFER_ID_TYPE *BUFFER_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_BUFFER_STATUS(BUFFER_ID_TYPE BUFFER_ID, BUFFER_STATUS_TYPE *BUFFER_STATUS, RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ blackboards */

#define MAX_NUMBER_OF_BLACKBOARDS SYSTEM_LIMIT_NUMBER_OF_BLACKBOARDS

typedef NAME_TYPE BLACKBOARD_NAME_TYPE;
typedef APEX_INTEGER BLACKBOARD_ID_TYPE;
typedef enum { EMPTY = 0, OCCUPIED = 1 } EMPTY_INDICATOR_TYPE;

typedef struct {
    EMPTY_INDICATOR_TYPE EMPTY_INDICATOR;
    MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
    WAITING_RANGE_TYPE WAITING_PROCESSES;
} BLACKBOARD_STATUS_TYPE;

extern void CREATE_BLACKBOARD(const char *BLACKBOARD_NAME /* BLACKBOARD_NAME_TYPE */, MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE,
                              BLACKBOARD_ID_TYPE *BLACKBOARD_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void DISPLAY_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, const void *MESSAGE_ADDR, MESSAGE_SIZE_TYPE LENGTH,
                               RETURN_CODE_TYPE *RETURN_CODE);
extern void READ_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, SYSTEM_TIME_TYPE TIME_OUT, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
                            MESSAGE_SIZE_TYPE *LENGTH, RETURN_CODE_TYPE *RETURN_CODE);
extern void CLEAR_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_BLACKBOARD_ID(const char *BLACKBOARD_NAME /* BLACKBOARD_NAME_TYPE */, BLACKBOARD_ID_TYPE *BLACKBOARD_ID,
                              RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_BLACKBOARD_STATUS(BLACKBOARD_ID_TYPE BLACKBOARD_ID, BLACKBOARD_STATUS_TYPE *BLACKBOARD_STATUS,
                                  RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ semaphores */

#define MAX_NUMBER_OF_SEMAPHORES SYSTEM_LIMIT_NUMBER_OF_SEMAPHORES
#define MAX_SEMAPHORE_VALUE 32767

typedef NAME_TYPE SEMAPHORE_NAME_TYPE;
typedef APEX_INTEGER SEMAPHORE_ID_TYPE;
typedef APEX_INTEGER SEMAPHORE_VALUE_TYPE;

typedef struct {
    SEMAPHORE_VALUE_TYPE CURRENT_VALUE;
    SEMAPHORE_VALUE_TYPE MAXIMUM_VALUE;
    WAITING_RANGE_TYPE WAITING_PROCESSES;
} SEMAPHORE_STATUS_TYPE;

extern void CREATE_SEMAPHORE(const char *SEMAPHORE_NAME /* SEMAPHORE_NAME_TYPE */, SEMAPHORE_VALUE_TYPE CURRENT_VALUE,
                             SEMAPHORE_VALUE_TYPE MAXIMUM_VALUE, QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE,
                             SEMAPHORE_ID_TYPE *SEMAPHORE_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void WAIT_SEMAPHORE(SEMAPHORE_ID_TYPE SEMAPHORE_ID, SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
extern void SIGNAL_SEMAPHORE(SEMAPHORE_ID_TYPE SEMAPHORE_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_SEMAPHORE_ID(const char *SEMAPHORE_NAME /* SEMAPHORE_NAME_TYPE */, SEMAPHORE_ID_TYPE *SEMAPHORE_ID,
                             RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_SEMAPHORE_STATUS(SEMAPHORE_ID_TYPE SEMAPHORE_ID, SEMAPHORE_STATUS_TYPE *SEMAPHORE_STATUS,
                                 RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ events */

#define MAX_NUMBER_OF_EVENTS SYSTEM_LIMIT_NUMBER_OF_EVENTS

typedef NAME_TYPE EVENT_NAME_TYPE;
typedef APEX_INTEGER EVENT_ID_TYPE;
typedef enum { DOWN = 0, UP = 1 } EVENT_STATE_TYPE;

typedef struct {
    EVENT_STATE_TYPE EVENT_STATE;
    WAITING_RANGE_TYPE WAITING_PROCESSES;
} EVENT_STATUS_TYPE;

extern void CREATE_EVENT(const char *EVENT_NAME /* EVENT_NAME_TYPE */, EVENT_ID_TYPE *EVENT_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void SET_EVENT(EVENT_ID_TYPE EVENT_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void RESET_EVENT(EVENT_ID_TYPE EVENT_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void WAIT_EVENT(EVENT_ID_TYPE EVENT_ID, SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_EVENT_ID(const char *EVENT_NAME /* EVENT_NAME_TYPE */, EVENT_ID_TYPE *EVENT_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_EVENT_STATUS(EVENT_ID_TYPE EVENT_ID, EVENT_STATUS_TYPE *EVENT_STATUS, RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ mutexes */

#define MAX_NUMBER_OF_MUTEXES SYSTEM_LIMIT_NUMBER_OF_MUTEXES
#define NO_MUTEX_OWNED ((PROCESS_ID_TYPE)-2)
#define PREEMPTION_LOCK_MUTEX ((MUTEX_ID_TYPE)-3)

typedef NAME_TYPE MUTEX_NAME_TYPE;
typedef APEX_INTEGER MUTEX_ID_TYPE;
typedef APEX_INTEGER LOCK_COUNT_TYPE;
typedef enum { AVAILABLE = 0, OWNED = 1 } MUTEX_STATE_TYPE;

typedef struct {
    PROCESS_ID_TYPE MUTEX_OWNER;
    MUTEX_STATE_TYPE MUTEX_STATE;
    PRIORITY_TYPE MUTEX_PRIORITY;
    LOCK_COUNT_TYPE LOCK_COUNT;
    WAITING_RANGE_TYPE WAITING_PROCESSES;
} MUTEX_STATUS_TYPE;

extern void CREATE_MUTEX(const char *MUTEX_NAME /* MUTEX_NAME_TYPE */, PRIORITY_TYPE MUTEX_PRIORITY,
                         QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE, MUTEX_ID_TYPE *MUTEX_ID,
                         RETURN_CODE_TYPE *RETURN_CODE);
extern void ACQUIRE_MUTEX(MUTEX_ID_TYPE MUTEX_ID, SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
extern void RELEASE_MUTEX(MUTEX_ID_TYPE MUTEX_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void RESET_MUTEX(MUTEX_ID_TYPE MUTEX_ID, PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_MUTEX_ID(const char *MUTEX_NAME /* MUTEX_NAME_TYPE */, MUTEX_ID_TYPE *MUTEX_ID, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_MUTEX_STATUS(MUTEX_ID_TYPE MUTEX_ID, MUTEX_STATUS_TYPE *MUTEX_STATUS, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_PROCESS_MUTEX_STATE(PROCESS_ID_TYPE PROCESS_ID, MUTEX_ID_TYPE *MUTEX_ID, RETURN_CODE_TYPE *RETURN_CODE);

/* ------------------------------------------------------------------ health monitoring */

#define MAX_ERROR_MESSAGE_SIZE 128

typedef APEX_INTEGER ERROR_MESSAGE_SIZE_TYPE;
typedef APEX_BYTE ERROR_MESSAGE_TYPE[MAX_ERROR_MESSAGE_SIZE];

typedef enum {
    DEADLINE_MISSED = 0,
    APPLICATION_ERROR = 1,
    NUMERIC_ERROR = 2,
    ILLEGAL_REQUEST = 3,
    STACK_OVERFLOW = 4,
    MEMORY_VIOLATION = 5,
    HARDWARE_FAULT = 6,
    POWER_FAIL = 7
} ERROR_CODE_TYPE;

typedef enum { PROCESSES_PAUSE = 0, PROCESSES_SCHEDULED = 1 } ERROR_HANDLER_CONCURRENCY_CONTROL_TYPE;

typedef struct {
    ERROR_CODE_TYPE ERROR_CODE;
    ERROR_MESSAGE_TYPE MESSAGE;
    ERROR_MESSAGE_SIZE_TYPE LENGTH;
    PROCESS_ID_TYPE FAILED_PROCESS_ID;
    SYSTEM_ADDRESS_TYPE FAILED_ADDRESS;
} ERROR_STATUS_TYPE;

/* Implemented: writes the message as one line on standard output (LENGTH 0..128). */
extern void REPORT_APPLICATION_MESSAGE(const void *MESSAGE_ADDR, MESSAGE_SIZE_TYPE LENGTH, RETURN_CODE_TYPE *RETURN_CODE);
/* Raises APPLICATION_ERROR (any other ERROR_CODE, or LENGTH outside 0..128: INVALID_PARAM):
 * to the error handler when the System_HM_Table makes it PROCESS level and the partition has
 * one (not when the caller is the error handler), else to the module's HM tables. */
extern void RAISE_APPLICATION_ERROR(ERROR_CODE_TYPE ERROR_CODE, const void *MESSAGE_ADDR, ERROR_MESSAGE_SIZE_TYPE LENGTH,
                                    RETURN_CODE_TYPE *RETURN_CODE);
/* The error handler is a process above all others, released by the runtime when a
 * PROCESS-level error arrives (its entry point ends by returning or STOP_SELF). Detected errors:
 * DEADLINE_MISSED, APPLICATION_ERROR, NUMERIC_ERROR (SIGFPE), MEMORY_VIOLATION (SIGSEGV, SIGBUS),
 * STACK_OVERFLOW (a fault in the guard area below a process stack), ILLEGAL_REQUEST (a system
 * call the module forbids; it fails with ENOSYS). A process that faulted is FAULTED while its
 * error waits for the error handler (START is NO_ACTION; STOP(FAILED_PROCESS_ID) makes it
 * DORMANT, and it stays FAULTED until some process stops it); when the error is not the
 * handler's it becomes DORMANT at once and the module's action applies.
 * CREATE_ERROR_HANDLER: INVALID_MODE in NORMAL, NO_ACTION if one exists, INVALID_PARAM for a
 * stack above 64 MiB, INVALID_CONFIG when no process can be created.
 * GET_ERROR_STATUS: INVALID_CONFIG outside the error handler, NO_ACTION when no error waits.
 * CONFIGURE_ERROR_HANDLER: INVALID_CONFIG without handler or for a core outside the partition,
 * INVALID_MODE in NORMAL, INVALID_PARAM for an unknown concurrency control. PROCESSES_PAUSE
 * (the default) pauses every other process of the partition, on every core, while the handler
 * runs; PROCESSES_SCHEDULED lets those on other cores go on. */
extern void CREATE_ERROR_HANDLER(SYSTEM_ADDRESS_TYPE ENTRY_POINT, STACK_SIZE_TYPE STACK_SIZE, RETURN_CODE_TYPE *RETURN_CODE);
extern void GET_ERROR_STATUS(ERROR_STATUS_TYPE *ERROR_STATUS, RETURN_CODE_TYPE *RETURN_CODE);
extern void CONFIGURE_ERROR_HANDLER(ERROR_HANDLER_CONCURRENCY_CONTROL_TYPE CONCURRENCY_CONTROL,
                                    PROCESSOR_CORE_ID_TYPE PROCESSOR_CORE_ID, RETURN_CODE_TYPE *RETURN_CODE);

#ifdef __cplusplus
}
#endif

#endif /* PARTITA_ARINC653_H */
