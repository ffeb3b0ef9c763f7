/* Priority changes under the module are made by its scheduling broker (the partition holds no
 * CAP_SYS_NICE): the caller waits for the answer in the kernel. No process of a lower priority
 * may run meanwhile. L (priority 10) counts without end; H (priority 20) never blocks, so L can
 * run only inside H's brokered calls: H changes its own priority 1,000 times (SET_PRIORITY,
 * alternately to a priority new to the partition, which re-ranks), and locks and unlocks
 * preemption 1,000 times, reading L's counter around each call. Prints "lower ran N of M". */
#include <stdio.h>
#include <string.h>
#include "ARINC653.h"

static volatile unsigned long counter;
static volatile int l_started;

static void low(void) {
    l_started = 1;
    for (;;) counter++;
}

static void high(void) {
    RETURN_CODE_TYPE rc;
    LOCK_LEVEL_TYPE level;
    PROCESS_ID_TYPE me;
    int ran = 0, calls = 0;
    GET_MY_ID(&me, &rc);
    /* Let L start counting first (it runs while H waits for its release). */
    while (!l_started) TIMED_WAIT(1000000, &rc);
    for (int i = 0; i < 1000; i++) {
        unsigned long c0 = counter;
        SET_PRIORITY(me, (i % 2) ? 20 : 30 + (i % 50), &rc);
        if (rc != NO_ERROR) { printf("SET_PRIORITY %d\n", (int)rc); fflush(stdout); }
        ran += counter != c0;
        calls++;
        c0 = counter;
        LOCK_PREEMPTION(&level, &rc);
        UNLOCK_PREEMPTION(&level, &rc);
        ran += counter != c0;
        calls++;
    }
    printf("lower ran %d of %d\n", ran, calls);
    fflush(stdout);
    for (;;) TIMED_WAIT(1000000000, &rc);
}

int main(void) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    SYSTEM_ADDRESS_TYPE entries[2] = {(SYSTEM_ADDRESS_TYPE)low, (SYSTEM_ADDRESS_TYPE)high};
    int prio[2] = {10, 20};
    const char *names[2] = {"L", "H"};
    for (int k = 0; k < 2; k++) {
        memset(&attr, 0, sizeof attr);
        strncpy(attr.NAME, names[k], sizeof attr.NAME);
        attr.ENTRY_POINT = entries[k];
        attr.STACK_SIZE = 65536;
        attr.BASE_PRIORITY = prio[k];
        attr.PERIOD = INFINITE_TIME_VALUE;
        attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
        attr.DEADLINE = SOFT;
        CREATE_PROCESS(&attr, &id, &rc);
        if (rc != NO_ERROR) { printf("CREATE_PROCESS %d\n", (int)rc); return 1; }
        START(id, &rc);
        if (rc != NO_ERROR) { printf("START %d\n", (int)rc); return 1; }
    }
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
