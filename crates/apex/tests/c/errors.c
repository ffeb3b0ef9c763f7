/* Return codes of the process, time, partition and schedule services in every error case the
 * standard defines, in COLD_START (main = initialization process) and in NORMAL (processes).
 * Standalone, partition period 20 ms (PARTITA_STANDALONE_PERIOD=0.02). */
#include "check.h"

#include <stddef.h>

extern size_t partita_apex_layout(long long *out, size_t n);

static PROCESS_ID_TYPE periodic_id, aperiodic_id, checker_id, victim_id;

static void idle_entry(void)
{
    RETURN_CODE_TYPE rc;
    for (;;)
        TIMED_WAIT(1000 * MS, &rc);
}

static atomic_int periodic_done;

static void periodic_entry(void)
{
    RETURN_CODE_TYPE rc;
    PROCESS_ID_TYPE me;
    PROCESS_STATUS_TYPE st;
    PERIODIC_WAIT(&rc);
    check_eq("PERIODIC_WAIT", rc, NO_ERROR);
    GET_MY_ID(&me, &rc);
    GET_PROCESS_STATUS(me, &st, &rc);
    check_true("periodic deadline = release + TIME_CAPACITY on the 20 ms grid",
               st.DEADLINE_TIME > 0 && (st.DEADLINE_TIME - 10 * MS) % (20 * MS) == 0);
    SUSPEND_SELF(10 * MS, &rc);
    check_eq("SUSPEND_SELF from a periodic process is INVALID_MODE", rc, INVALID_MODE);
    REPLENISH(INFINITE_TIME_VALUE, &rc);
    check_eq("REPLENISH(INFINITE) in a periodic process is INVALID_MODE", rc, INVALID_MODE);
    REPLENISH(60 * MS, &rc);
    check_eq("REPLENISH past the next release point is INVALID_MODE", rc, INVALID_MODE);
    REPLENISH(1 * MS, &rc);
    check_eq("REPLENISH within the period", rc, NO_ERROR);
    atomic_store(&periodic_done, 1);
    for (;;)
        PERIODIC_WAIT(&rc);
}

static void checker_entry(void)
{
    RETURN_CODE_TYPE rc;
    PROCESS_ID_TYPE me = -1;
    PROCESS_STATUS_TYPE st;
    PARTITION_STATUS_TYPE ps;
    LOCK_LEVEL_TYPE level = -1;

    GET_MY_ID(&me, &rc);
    check_eq("GET_MY_ID in a process", rc, NO_ERROR);
    check_eq("GET_MY_ID is the created id", me, checker_id);
    GET_PROCESS_STATUS(me, &st, &rc);
    check_eq("own state is RUNNING", st.PROCESS_STATE, RUNNING);
    GET_PARTITION_STATUS(&ps, &rc);
    check_eq("mode is NORMAL", ps.OPERATING_MODE, NORMAL);

    PROCESS_ATTRIBUTE_TYPE a = attributes("LATE", idle_entry, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    PROCESS_ID_TYPE id;
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("CREATE_PROCESS in NORMAL is INVALID_MODE", rc, INVALID_MODE);
    SET_PARTITION_MODE(NORMAL, &rc);
    check_eq("SET_PARTITION_MODE(NORMAL) in NORMAL is NO_ACTION", rc, NO_ACTION);
    INITIALIZE_PROCESS_CORE_AFFINITY(aperiodic_id, 0, &rc);
    check_eq("INITIALIZE_PROCESS_CORE_AFFINITY in NORMAL is INVALID_MODE", rc, INVALID_MODE);
    PERIODIC_WAIT(&rc);
    check_eq("PERIODIC_WAIT from an aperiodic process is INVALID_MODE", rc, INVALID_MODE);

    /* preemption lock */
    LOCK_PREEMPTION(&level, &rc);
    check_eq("LOCK_PREEMPTION", rc, NO_ERROR);
    check_eq("lock level 1", level, 1);
    GET_PARTITION_STATUS(&ps, &rc);
    check_eq("partition LOCK_LEVEL while locked", ps.LOCK_LEVEL, 1);
    TIMED_WAIT(1 * MS, &rc);
    check_eq("TIMED_WAIT with preemption locked is INVALID_MODE", rc, INVALID_MODE);
    SUSPEND_SELF(1 * MS, &rc);
    check_eq("SUSPEND_SELF with preemption locked is INVALID_MODE", rc, INVALID_MODE);
    for (int i = 2; i <= MAX_LOCK_LEVEL; i++)
        LOCK_PREEMPTION(&level, &rc);
    check_eq("lock level reaches MAX_LOCK_LEVEL", level, MAX_LOCK_LEVEL);
    LOCK_PREEMPTION(&level, &rc);
    check_eq("LOCK_PREEMPTION beyond MAX_LOCK_LEVEL is INVALID_CONFIG", rc, INVALID_CONFIG);
    for (int i = MAX_LOCK_LEVEL; i >= 1; i--)
        UNLOCK_PREEMPTION(&level, &rc);
    check_eq("UNLOCK_PREEMPTION back to 0", level, 0);
    check_eq("last UNLOCK_PREEMPTION", rc, NO_ERROR);
    UNLOCK_PREEMPTION(&level, &rc);
    check_eq("UNLOCK_PREEMPTION when not locked is NO_ACTION", rc, NO_ACTION);

    /* time */
    TIMED_WAIT(INFINITE_TIME_VALUE, &rc);
    check_eq("TIMED_WAIT(INFINITE) is INVALID_PARAM", rc, INVALID_PARAM);
    TIMED_WAIT(-7, &rc);
    check_eq("TIMED_WAIT(negative) is INVALID_PARAM", rc, INVALID_PARAM);
    TIMED_WAIT(0, &rc);
    check_eq("TIMED_WAIT(0)", rc, NO_ERROR);
    REPLENISH(-5, &rc);
    check_eq("REPLENISH(negative) is INVALID_PARAM", rc, INVALID_PARAM);
    REPLENISH(50 * MS, &rc);
    check_eq("REPLENISH in an aperiodic process", rc, NO_ERROR);

    /* operations on oneself */
    SUSPEND(me, &rc);
    check_eq("SUSPEND(self) is INVALID_PARAM", rc, INVALID_PARAM);
    RESUME(me, &rc);
    check_eq("RESUME(self) is INVALID_PARAM", rc, INVALID_PARAM);
    STOP(me, &rc);
    check_eq("STOP(self) is INVALID_PARAM", rc, INVALID_PARAM);
    START(me, &rc);
    check_eq("START of a running process is NO_ACTION", rc, NO_ACTION);
    SUSPEND_SELF(-5, &rc);
    check_eq("SUSPEND_SELF(negative) is INVALID_PARAM", rc, INVALID_PARAM);
    SUSPEND_SELF(0, &rc);
    check_eq("SUSPEND_SELF(0)", rc, NO_ERROR);
    SUSPEND_SELF(5 * MS, &rc);
    check_eq("SUSPEND_SELF times out", rc, TIMED_OUT);

    /* other processes */
    SUSPEND(periodic_id, &rc);
    check_eq("SUSPEND of a periodic process is INVALID_MODE", rc, INVALID_MODE);
    RESUME(periodic_id, &rc);
    check_eq("RESUME of a periodic process is INVALID_MODE", rc, INVALID_MODE);
    RESUME(aperiodic_id, &rc);
    check_eq("RESUME of a process not suspended is NO_ACTION", rc, NO_ACTION);
    SUSPEND(aperiodic_id, &rc);
    check_eq("SUSPEND", rc, NO_ERROR);
    SUSPEND(aperiodic_id, &rc);
    check_eq("SUSPEND of a suspended process is NO_ACTION", rc, NO_ACTION);
    GET_PROCESS_STATUS(aperiodic_id, &st, &rc);
    check_eq("suspended process is WAITING", st.PROCESS_STATE, WAITING);
    RESUME(aperiodic_id, &rc);
    check_eq("RESUME", rc, NO_ERROR);
    DELAYED_START(aperiodic_id, 0, &rc);
    check_eq("DELAYED_START of a started process is NO_ACTION", rc, NO_ACTION);
    SET_PRIORITY(aperiodic_id, 42, &rc);
    check_eq("SET_PRIORITY", rc, NO_ERROR);
    GET_PROCESS_STATUS(aperiodic_id, &st, &rc);
    check_eq("CURRENT_PRIORITY after SET_PRIORITY", st.CURRENT_PRIORITY, 42);
    check_eq("BASE_PRIORITY unchanged", st.ATTRIBUTES.BASE_PRIORITY, 7);
    STOP(aperiodic_id, &rc);
    check_eq("STOP", rc, NO_ERROR);
    STOP(aperiodic_id, &rc);
    check_eq("STOP of a DORMANT process is NO_ACTION", rc, NO_ACTION);
    GET_PROCESS_STATUS(aperiodic_id, &st, &rc);
    check_eq("stopped process is DORMANT", st.PROCESS_STATE, DORMANT);
    SET_PRIORITY(aperiodic_id, 5, &rc);
    check_eq("SET_PRIORITY of a DORMANT process is INVALID_MODE", rc, INVALID_MODE);
    SUSPEND(aperiodic_id, &rc);
    check_eq("SUSPEND of a DORMANT process is INVALID_MODE", rc, INVALID_MODE);
    START(aperiodic_id, &rc);
    check_eq("START again after STOP", rc, NO_ERROR);
    GET_PROCESS_STATUS(aperiodic_id, &st, &rc);
    check_eq("START resets the current priority", st.CURRENT_PRIORITY, 7);


    /* a DORMANT victim started and stopped while blocked in TIMED_WAIT */
    START(victim_id, &rc);
    TIMED_WAIT(2 * MS, &rc);
    STOP(victim_id, &rc);
    check_eq("STOP of a waiting process", rc, NO_ERROR);

    for (int i = 0; i < 400 && !atomic_load(&periodic_done); i++)
        TIMED_WAIT(5 * MS, &rc);
    check_true("the periodic process ran its checks", atomic_load(&periodic_done));
    finish();
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    PROCESS_ID_TYPE id = 0;
    PROCESS_STATUS_TYPE st;
    PARTITION_STATUS_TYPE ps;
    LOCK_LEVEL_TYPE level;
    SYSTEM_TIME_TYPE t;

    long long layout[10];
    size_t n = partita_apex_layout(layout, 10);
    check_eq("layout entries", (long long)n, 10);
    check_eq("sizeof PROCESS_ATTRIBUTE_TYPE", layout[0], sizeof(PROCESS_ATTRIBUTE_TYPE));
    check_eq("offsetof NAME", layout[1], offsetof(PROCESS_ATTRIBUTE_TYPE, NAME));
    check_eq("sizeof PROCESS_STATUS_TYPE", layout[2], sizeof(PROCESS_STATUS_TYPE));
    check_eq("offsetof ATTRIBUTES", layout[3], offsetof(PROCESS_STATUS_TYPE, ATTRIBUTES));
    check_eq("sizeof PARTITION_STATUS_TYPE", layout[4], sizeof(PARTITION_STATUS_TYPE));
    check_eq("offsetof NUM_ASSIGNED_CORES", layout[5], offsetof(PARTITION_STATUS_TYPE, NUM_ASSIGNED_CORES));
    check_eq("sizeof SCHEDULE_STATUS_TYPE", layout[6], sizeof(SCHEDULE_STATUS_TYPE));
    check_eq("offsetof NEXT_SCHEDULE", layout[7], offsetof(SCHEDULE_STATUS_TYPE, NEXT_SCHEDULE));
    check_eq("offsetof STACK_SIZE", layout[8], offsetof(PROCESS_ATTRIBUTE_TYPE, STACK_SIZE));
    check_eq("offsetof OPERATING_MODE", layout[9], offsetof(PARTITION_STATUS_TYPE, OPERATING_MODE));

    /* partition status in COLD_START */
    GET_PARTITION_STATUS(&ps, &rc);
    check_eq("GET_PARTITION_STATUS", rc, NO_ERROR);
    check_eq("mode is COLD_START", ps.OPERATING_MODE, COLD_START);
    check_eq("start condition", ps.START_CONDITION, NORMAL_START);
    check_eq("period", ps.PERIOD, 20 * MS);
    check_eq("duration", ps.DURATION, 20 * MS);
    check_eq("lock level", ps.LOCK_LEVEL, 0);
    check_eq("one core", ps.NUM_ASSIGNED_CORES, 1);
    GET_TIME(&t, &rc);
    check_eq("GET_TIME", rc, NO_ERROR);
    check_true("time is not negative", t >= 0);

    /* the initialization process is not a process */
    GET_MY_ID(&id, &rc);
    check_eq("GET_MY_ID from the initialization process is INVALID_MODE", rc, INVALID_MODE);
    PERIODIC_WAIT(&rc);
    check_eq("PERIODIC_WAIT from the initialization process is INVALID_MODE", rc, INVALID_MODE);
    SUSPEND_SELF(1 * MS, &rc);
    check_eq("SUSPEND_SELF from the initialization process is INVALID_MODE", rc, INVALID_MODE);
    REPLENISH(1 * MS, &rc);
    check_eq("REPLENISH outside NORMAL is NO_ACTION", rc, NO_ACTION);
    LOCK_PREEMPTION(&level, &rc);
    check_eq("LOCK_PREEMPTION outside NORMAL is NO_ACTION", rc, NO_ACTION);
    UNLOCK_PREEMPTION(&level, &rc);
    check_eq("UNLOCK_PREEMPTION outside NORMAL is NO_ACTION", rc, NO_ACTION);
    TIMED_WAIT(-1, &rc);
    check_eq("TIMED_WAIT(INFINITE) from init is INVALID_PARAM", rc, INVALID_PARAM);
    TIMED_WAIT(1 * MS, &rc);
    check_eq("TIMED_WAIT from init", rc, NO_ERROR);

    /* CREATE_PROCESS */
    periodic_id = create("PERIODIC", periodic_entry, 10, 20 * MS, 10 * MS);
    aperiodic_id = create("APERIODIC", idle_entry, 7, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    checker_id = create("CHECKER", checker_entry, 30, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    victim_id = create("VICTIM", idle_entry, 3, INFINITE_TIME_VALUE, 500 * MS);
    check_true("ids are distinct and positive",
               periodic_id > 0 && aperiodic_id > 0 && checker_id > 0 && periodic_id != aperiodic_id);

    PROCESS_ATTRIBUTE_TYPE a = attributes("PERIODIC", idle_entry, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("duplicate name is NO_ACTION", rc, NO_ACTION);
    a = attributes("P0", idle_entry, 0, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("priority 0 is INVALID_PARAM", rc, INVALID_PARAM);
    a = attributes("P240", idle_entry, 240, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("priority 240 is INVALID_PARAM", rc, INVALID_PARAM);
    a = attributes("PER0", idle_entry, 5, 0, INFINITE_TIME_VALUE);
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("period 0 is INVALID_PARAM", rc, INVALID_PARAM);
    a = attributes("PERNEG", idle_entry, 5, -5, INFINITE_TIME_VALUE);
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("negative period is INVALID_PARAM", rc, INVALID_PARAM);
    a = attributes("CAP", idle_entry, 5, 20 * MS, 30 * MS);
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("TIME_CAPACITY > PERIOD is INVALID_PARAM", rc, INVALID_PARAM);
    a = attributes("CAP0", idle_entry, 5, INFINITE_TIME_VALUE, 0);
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("TIME_CAPACITY 0 is INVALID_PARAM", rc, INVALID_PARAM);
    a = attributes("STACK", idle_entry, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    a.STACK_SIZE = 0xFFFFFFFFu;
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("huge STACK_SIZE is INVALID_PARAM", rc, INVALID_PARAM);
    a = attributes("MULT", idle_entry, 5, 30 * MS, 10 * MS);
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("period not a multiple of the partition period is INVALID_CONFIG", rc, INVALID_CONFIG);
    a = attributes("NOENTRY", idle_entry, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    a.ENTRY_POINT = NULL;
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("null entry point is INVALID_PARAM", rc, INVALID_PARAM);

    /* names: literals and full 30-character buffers */
    GET_PROCESS_ID("CHECKER", &id, &rc);
    check_eq("GET_PROCESS_ID with a literal", rc, NO_ERROR);
    check_eq("GET_PROCESS_ID value", id, checker_id);
    GET_PROCESS_ID("NOBODY", &id, &rc);
    check_eq("GET_PROCESS_ID of an unknown name is INVALID_CONFIG", rc, INVALID_CONFIG);
    PROCESS_NAME_TYPE full;
    memset(full, 'Z', sizeof full);
    a = attributes("", idle_entry, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    memcpy(a.NAME, full, sizeof full);
    PROCESS_ID_TYPE full_id = 0;
    CREATE_PROCESS(&a, &full_id, &rc);
    check_eq("30-character name", rc, NO_ERROR);
    GET_PROCESS_ID(full, &id, &rc);
    check_eq("GET_PROCESS_ID of a 30-character name", id, full_id);

    /* GET_PROCESS_STATUS */
    GET_PROCESS_STATUS(0, &st, &rc);
    check_eq("GET_PROCESS_STATUS(0) is INVALID_PARAM", rc, INVALID_PARAM);
    GET_PROCESS_STATUS(999, &st, &rc);
    check_eq("GET_PROCESS_STATUS(999) is INVALID_PARAM", rc, INVALID_PARAM);
    GET_PROCESS_STATUS(periodic_id, &st, &rc);
    check_eq("GET_PROCESS_STATUS", rc, NO_ERROR);
    check_eq("created process is DORMANT", st.PROCESS_STATE, DORMANT);
    check_eq("attributes: PERIOD", st.ATTRIBUTES.PERIOD, 20 * MS);
    check_eq("attributes: TIME_CAPACITY", st.ATTRIBUTES.TIME_CAPACITY, 10 * MS);
    check_eq("attributes: BASE_PRIORITY", st.ATTRIBUTES.BASE_PRIORITY, 10);
    check_true("attributes: NAME", strncmp(st.ATTRIBUTES.NAME, "PERIODIC", MAX_NAME_LENGTH) == 0);
    check_true("attributes: ENTRY_POINT", st.ATTRIBUTES.ENTRY_POINT == (SYSTEM_ADDRESS_TYPE)periodic_entry);

    /* state changes before NORMAL */
    START(999, &rc);
    check_eq("START of an unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    DELAYED_START(999, 0, &rc);
    check_eq("DELAYED_START of an unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    DELAYED_START(periodic_id, -3, &rc);
    check_eq("DELAYED_START with a negative delay is INVALID_PARAM", rc, INVALID_PARAM);
    DELAYED_START(periodic_id, 20 * MS, &rc);
    check_eq("DELAYED_START of a periodic process with delay >= period is INVALID_PARAM", rc, INVALID_PARAM);
    STOP(999, &rc);
    check_eq("STOP of an unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    STOP(periodic_id, &rc);
    check_eq("STOP of a DORMANT process is NO_ACTION", rc, NO_ACTION);
    SUSPEND(999, &rc);
    check_eq("SUSPEND of an unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    SUSPEND(aperiodic_id, &rc);
    check_eq("SUSPEND of a DORMANT process is INVALID_MODE", rc, INVALID_MODE);
    RESUME(999, &rc);
    check_eq("RESUME of an unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    RESUME(aperiodic_id, &rc);
    check_eq("RESUME of a DORMANT process is INVALID_MODE", rc, INVALID_MODE);
    SET_PRIORITY(999, 5, &rc);
    check_eq("SET_PRIORITY of an unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    SET_PRIORITY(aperiodic_id, 0, &rc);
    check_eq("SET_PRIORITY(0) is INVALID_PARAM", rc, INVALID_PARAM);
    SET_PRIORITY(aperiodic_id, 240, &rc);
    check_eq("SET_PRIORITY(240) is INVALID_PARAM", rc, INVALID_PARAM);
    SET_PRIORITY(aperiodic_id, 5, &rc);
    check_eq("SET_PRIORITY of a DORMANT process is INVALID_MODE", rc, INVALID_MODE);

    /* multi-core services */
    PROCESSOR_CORE_ID_TYPE core = -5;
    GET_MY_PROCESSOR_CORE_ID(&core, &rc);
    check_eq("GET_MY_PROCESSOR_CORE_ID", rc, NO_ERROR);
    check_eq("core 0", core, 0);
    INITIALIZE_PROCESS_CORE_AFFINITY(999, 0, &rc);
    check_eq("INITIALIZE_PROCESS_CORE_AFFINITY of an unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    INITIALIZE_PROCESS_CORE_AFFINITY(aperiodic_id, 5, &rc);
    check_eq("INITIALIZE_PROCESS_CORE_AFFINITY to a core not assigned is INVALID_CONFIG", rc, INVALID_CONFIG);
    INITIALIZE_PROCESS_CORE_AFFINITY(aperiodic_id, 0, &rc);
    check_eq("INITIALIZE_PROCESS_CORE_AFFINITY", rc, NO_ERROR);

    /* module schedules */
    SCHEDULE_ID_TYPE sid = -1;
    SCHEDULE_STATUS_TYPE ss;
    GET_MODULE_SCHEDULE_ID("standalone", &sid, &rc);
    check_eq("GET_MODULE_SCHEDULE_ID", rc, NO_ERROR);
    GET_MODULE_SCHEDULE_ID("nope", &sid, &rc);
    check_eq("GET_MODULE_SCHEDULE_ID of an unknown name is INVALID_CONFIG", rc, INVALID_CONFIG);
    GET_MODULE_SCHEDULE_STATUS(&ss, &rc);
    check_eq("GET_MODULE_SCHEDULE_STATUS", rc, NO_ERROR);
    check_eq("no switch yet", ss.TIME_OF_LAST_SCHEDULE_SWITCH, 0);
    check_eq("NEXT_SCHEDULE = CURRENT_SCHEDULE", ss.NEXT_SCHEDULE, ss.CURRENT_SCHEDULE);
    SET_MODULE_SCHEDULE(77, &rc);
    check_eq("SET_MODULE_SCHEDULE of an unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    GET_MODULE_SCHEDULE_ID("standalone", &sid, &rc);
    SET_MODULE_SCHEDULE(sid, &rc);
    check_eq("SET_MODULE_SCHEDULE", rc, NO_ERROR);

    /* partition mode */
    SET_PARTITION_MODE((OPERATING_MODE_TYPE)7, &rc);
    check_eq("SET_PARTITION_MODE(7) is INVALID_PARAM", rc, INVALID_PARAM);
    SET_PARTITION_MODE(WARM_START, &rc);
    check_eq("SET_PARTITION_MODE(WARM_START) from COLD_START is INVALID_MODE", rc, INVALID_MODE);

    /* messages */
    REPORT_APPLICATION_MESSAGE("hello from the initialization process", 37, &rc);
    check_eq("REPORT_APPLICATION_MESSAGE", rc, NO_ERROR);
    static char big[200];
    memset(big, 'x', sizeof big);
    REPORT_APPLICATION_MESSAGE(big, 129, &rc);
    check_eq("REPORT_APPLICATION_MESSAGE of 129 bytes is INVALID_PARAM", rc, INVALID_PARAM);
    REPORT_APPLICATION_MESSAGE(big, -1, &rc);
    check_eq("REPORT_APPLICATION_MESSAGE of negative length is INVALID_PARAM", rc, INVALID_PARAM);
    RAISE_APPLICATION_ERROR(APPLICATION_ERROR, "raised", 6, &rc);
    check_eq("RAISE_APPLICATION_ERROR", rc, NO_ERROR);
    RAISE_APPLICATION_ERROR(NUMERIC_ERROR, "raised", 6, &rc);
    check_eq("RAISE_APPLICATION_ERROR of another code is INVALID_PARAM", rc, INVALID_PARAM);
    RAISE_APPLICATION_ERROR(APPLICATION_ERROR, big, 200, &rc);
    check_eq("RAISE_APPLICATION_ERROR of 200 bytes is INVALID_PARAM", rc, INVALID_PARAM);

    /* the process table is full at MAX_NUMBER_OF_PROCESSES */
    int created = 5; /* PERIODIC, APERIODIC, CHECKER, VICTIM and the 30-character name */
    for (;;) {
        char name[16];
        snprintf(name, sizeof name, "FILL%d", created);
        a = attributes(name, idle_entry, 1, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
        CREATE_PROCESS(&a, &id, &rc);
        if (rc != NO_ERROR)
            break;
        created++;
    }
    check_eq("CREATE_PROCESS beyond MAX_NUMBER_OF_PROCESSES is INVALID_CONFIG", rc, INVALID_CONFIG);
    check_eq("MAX_NUMBER_OF_PROCESSES processes were created", created, MAX_NUMBER_OF_PROCESSES);

    /* start and go NORMAL */
    START(periodic_id, &rc);
    check_eq("START", rc, NO_ERROR);
    START(periodic_id, &rc);
    check_eq("START of a started process is NO_ACTION", rc, NO_ACTION);
    DELAYED_START(periodic_id, 1 * MS, &rc);
    check_eq("DELAYED_START of a started process is NO_ACTION", rc, NO_ACTION);
    GET_PROCESS_STATUS(periodic_id, &st, &rc);
    check_eq("started process waits for NORMAL", st.PROCESS_STATE, WAITING);
    START(aperiodic_id, &rc);
    START(checker_id, &rc);
    check_eq("START checker", rc, NO_ERROR);
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("FAIL SET_PARTITION_MODE(NORMAL) returned %d\n", (int)rc);
    return 1;
}
