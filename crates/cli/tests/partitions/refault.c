/* A partition that faults over and over (tests/run_restart.rs): a periodic WORKER writes
 * through a null pointer in its 6th period (MEMORY_VIOLATION; the test's HM table restarts the
 * partition COLD_START, so about every 120 ms with 20 ms periods), while a lower-priority
 * process keeps the partition's CPU busy for the whole window. Each start prints
 * "start condition C mode M"; the test counts the restarts in the trace. */
#include <stdio.h>
#include <string.h>
#include "ARINC653.h"

static int *volatile nowhere;

static void worker(void)
{
    RETURN_CODE_TYPE rc;
    for (long period = 1;; period++) {
        if (period == 6)
            *nowhere = 1;
        PERIODIC_WAIT(&rc);
    }
}

static void spin(void)
{
    for (;;) {
    }
}

static void start(const char *name, void (*entry)(void), PRIORITY_TYPE priority, SYSTEM_TIME_TYPE period)
{
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strncpy(attr.NAME, name, sizeof attr.NAME - 1);
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)entry;
    attr.STACK_SIZE = 64 * 1024;
    attr.BASE_PRIORITY = priority;
    attr.PERIOD = period;
    attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
    attr.DEADLINE = SOFT;
    CREATE_PROCESS(&attr, &id, &rc);
    if (rc == NO_ERROR)
        START(id, &rc);
    if (rc != NO_ERROR)
        printf("FAIL start %s: %d\n", name, (int)rc);
}

int main(void)
{
    PARTITION_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_PARTITION_STATUS(&st, &rc);
    printf("start condition %d mode %d\n", (int)st.START_CONDITION, (int)st.OPERATING_MODE);
    fflush(stdout);
    start("WORKER", worker, 10, st.PERIOD);
    start("SPIN", spin, 5, INFINITE_TIME_VALUE);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
