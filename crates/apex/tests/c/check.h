/* Tiny check helpers shared by the C test programs (standalone partitions). Each check prints
 * "PASS what" or "FAIL what: got X, expected Y"; finish() prints a summary line and exits with
 * the number of failures (capped). */
#ifndef PARTITA_TEST_CHECK_H
#define PARTITA_TEST_CHECK_H

#include <ARINC653.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int check_passed;
static atomic_int check_failed;

static inline void check_eq(const char *what, long long got, long long expected)
{
    if (got == expected) {
        atomic_fetch_add(&check_passed, 1);
        printf("PASS %s\n", what);
    } else {
        atomic_fetch_add(&check_failed, 1);
        printf("FAIL %s: got %lld, expected %lld\n", what, got, expected);
    }
}

static inline void check_true(const char *what, int ok)
{
    check_eq(what, ok ? 1 : 0, 1);
}

static inline void finish(void)
{
    int f = atomic_load(&check_failed);
    printf("SUMMARY %d passed, %d failed\n", atomic_load(&check_passed), f);
    fflush(stdout);
    exit(f > 100 ? 100 : f);
}

static inline PROCESS_ATTRIBUTE_TYPE attributes(const char *name, void (*entry)(void), PRIORITY_TYPE prio,
                                                SYSTEM_TIME_TYPE period, SYSTEM_TIME_TYPE capacity)
{
    PROCESS_ATTRIBUTE_TYPE a;
    memset(&a, 0, sizeof a);
    a.PERIOD = period;
    a.TIME_CAPACITY = capacity;
    a.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)entry;
    a.STACK_SIZE = 64 * 1024;
    a.BASE_PRIORITY = prio;
    a.DEADLINE = SOFT;
    strncpy(a.NAME, name, MAX_NAME_LENGTH);
    return a;
}

static inline PROCESS_ID_TYPE create(const char *name, void (*entry)(void), PRIORITY_TYPE prio,
                                     SYSTEM_TIME_TYPE period, SYSTEM_TIME_TYPE capacity)
{
    PROCESS_ATTRIBUTE_TYPE a = attributes(name, entry, prio, period, capacity);
    PROCESS_ID_TYPE id = 0;
    RETURN_CODE_TYPE rc;
    CREATE_PROCESS(&a, &id, &rc);
    if (rc != NO_ERROR) {
        printf("FAIL create %s: rc %d\n", name, (int)rc);
        atomic_fetch_add(&check_failed, 1);
    }
    return id;
}

static inline SYSTEM_TIME_TYPE now(void)
{
    SYSTEM_TIME_TYPE t;
    RETURN_CODE_TYPE rc;
    GET_TIME(&t, &rc);
    return t;
}

#define MS 1000000LL

#endif
