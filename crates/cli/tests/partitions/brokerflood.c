/* Two roles for the broker-flood test (run_hostile.rs):
 *   flood: a multi-core partition; its process on the partition's second core makes brokered
 *          scheduling calls (sched_setparam on itself) without end during the odd half-seconds
 *          of module time, and nothing during the even ones; prints "calls N" at the end of
 *          each odd half-second.
 *   count: one process counts loop rounds and prints "window START COUNT" for each of its
 *          windows (a gap of more than 1 ms in its clock reads starts a new window).
 * The test compares the counter's rounds per window in the flood's half-seconds with those in
 * the quiet ones: a broker serving the flood on the counter's CPU would take them. */
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include "ARINC653.h"

#define HALF_S 500000000LL

static void flood(void) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE now;
    struct sched_param p;
    long calls = 0;
    for (;;) {
        GET_TIME(&now, &rc);
        if ((now / HALF_S) % 2 == 1) {
            sched_getparam(0, &p);
            sched_setparam(0, &p);
            calls++;
        } else if (calls > 0) {
            printf("calls %ld\n", calls);
            fflush(stdout);
            calls = 0;
        }
    }
}

static void count(void) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE start, last, now;
    unsigned long rounds = 0;
    volatile unsigned long sink = 0;
    GET_TIME(&start, &rc);
    last = start;
    for (;;) {
        for (int i = 0; i < 256; i++) sink += i;
        GET_TIME(&now, &rc);
        if (now - last > 1000000LL) {
            printf("window %lld %lu\n", (long long)start, rounds);
            fflush(stdout);
            start = now;
            rounds = 0;
        }
        rounds++;
        last = now;
    }
}

int main(int argc, char **argv) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    int is_flood = argc > 1 && strcmp(argv[1], "flood") == 0;
    memset(&attr, 0, sizeof attr);
    strcpy(attr.NAME, is_flood ? "flood" : "count");
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)(is_flood ? flood : count);
    attr.BASE_PRIORITY = 5;
    attr.PERIOD = INFINITE_TIME_VALUE;
    attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
    CREATE_PROCESS(&attr, &id, &rc);
    if (rc != NO_ERROR) { printf("CREATE_PROCESS %d\n", (int)rc); return 1; }
    if (is_flood) {
        INITIALIZE_PROCESS_CORE_AFFINITY(id, 1, &rc);
        if (rc != NO_ERROR) { printf("INITIALIZE_PROCESS_CORE_AFFINITY %d\n", (int)rc); return 1; }
    }
    START(id, &rc);
    if (rc != NO_ERROR) { printf("START %d\n", (int)rc); return 1; }
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("SET_PARTITION_MODE returned %d\n", (int)rc);
    return 1;
}
