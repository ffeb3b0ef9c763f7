/* A multi-core partition that checks time partitioning per core from the inside: one busy
 * process per partition core (INITIALIZE_PROCESS_CORE_AFFINITY), each spinning on GET_TIME
 * and printing every interval during which it ran as "ran CORE START END" (ns since the
 * module epoch), and "wrong cpu CORE" if it ever finds itself on another core than its own. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "ARINC653.h"

static int cpu_of[2];

static void spin(int core) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE start, last, now;
    int wrong = 0;
    GET_TIME(&start, &rc);
    last = start;
    for (;;) {
        GET_TIME(&now, &rc);
        if (now - last > 50000) {
            printf("ran %d %lld %lld\n", core, (long long)start, (long long)last);
            start = now;
        }
        if (!wrong && sched_getcpu() != cpu_of[core]) {
            printf("wrong cpu %d\n", core);
            wrong = 1;
        }
        last = now;
    }
}

static void spin0(void) { spin(0); }
static void spin1(void) { spin(1); }

int main(void) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    SYSTEM_ADDRESS_TYPE entries[2] = {(SYSTEM_ADDRESS_TYPE)spin0, (SYSTEM_ADDRESS_TYPE)spin1};
    PARTITION_STATUS_TYPE st;
    GET_PARTITION_STATUS(&st, &rc);
    if (st.NUM_ASSIGNED_CORES != 2) { printf("cores %d\n", (int)st.NUM_ASSIGNED_CORES); return 1; }
    /* The runtime pins the initialization process to the first core. */
    cpu_of[0] = sched_getcpu();
    cpu_of[1] = 1 - cpu_of[0];
    for (int core = 0; core < 2; core++) {
        memset(&attr, 0, sizeof attr);
        snprintf(attr.NAME, sizeof attr.NAME, "spinner%d", core);
        attr.ENTRY_POINT = entries[core];
        attr.BASE_PRIORITY = 5;
        attr.PERIOD = INFINITE_TIME_VALUE;
        attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
        CREATE_PROCESS(&attr, &id, &rc);
        if (rc != NO_ERROR) { printf("CREATE_PROCESS %d\n", (int)rc); return 1; }
        INITIALIZE_PROCESS_CORE_AFFINITY(id, core, &rc);
        if (rc != NO_ERROR) { printf("INITIALIZE_PROCESS_CORE_AFFINITY %d\n", (int)rc); return 1; }
        START(id, &rc);
        if (rc != NO_ERROR) { printf("START %d\n", (int)rc); return 1; }
    }
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("SET_PARTITION_MODE returned %d\n", (int)rc);
    return 1;
}
