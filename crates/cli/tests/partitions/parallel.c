/* A multi-core partition whose processes have no core preference (CORE_AFFINITY_NO_PREFERENCE,
 * the default): two workers of the same priority spin on GET_TIME and print every interval
 * during which they ran as "ran K START END" (ns since the module epoch). On one core the first
 * worker would keep the second from ever running (same priority, FIFO); on two they run at once.
 * Each worker also asks GET_PROCESS_STATUS of the other and prints "running K" the first time it
 * sees it RUNNING, and "core K C" for each partition core it finds itself on.
 *
 * With the argument "pause": an error handler (PROCESSES_PAUSE, the default) is released by an
 * application error that worker 0 raises every 4th interval (early in a window). It waits (at
 * most 3 ms) until neither worker's loop counter has moved for 0.2 ms, then watches them for
 * 2 ms, and prints "handler SETTLED MOVED": 1 0 when the workers were paused and stayed so;
 * "handler cut" when the window ended meanwhile (a frozen partition's counters stand still too,
 * so that observation proves nothing). */
#include <stdio.h>
#include <string.h>
#include "ARINC653.h"

static PROCESS_ID_TYPE ids[2];
static volatile unsigned long counter[2];
static int pause_mode;

static void work(int k) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE start, last, now;
    PROCESS_STATUS_TYPE st;
    int seen_running = 0, seen_core[2] = {0, 0}, intervals = 0;
    GET_TIME(&start, &rc);
    last = start;
    for (long n = 0;; n++) {
        counter[k]++;
        GET_TIME(&now, &rc);
        if (now - last > 50000) {
            printf("ran %d %lld %lld\n", k, (long long)start, (long long)last);
            fflush(stdout);
            start = now;
            if (pause_mode && k == 0 && ++intervals % 4 == 0) {
                RAISE_APPLICATION_ERROR(APPLICATION_ERROR, (MESSAGE_ADDR_TYPE) "pause", 5, &rc);
                GET_TIME(&start, &rc);
                now = start;
            }
        }
        last = now;
        if (n % 1000 == 0) {
            PROCESSOR_CORE_ID_TYPE core;
            GET_MY_PROCESSOR_CORE_ID(&core, &rc);
            if (core >= 0 && core < 2 && !seen_core[core]) {
                seen_core[core] = 1;
                printf("core %d %d\n", k, (int)core);
                fflush(stdout);
            }
            if (!seen_running) {
                GET_PROCESS_STATUS(ids[1 - k], &st, &rc);
                if (rc == NO_ERROR && st.PROCESS_STATE == RUNNING) {
                    seen_running = 1;
                    printf("running %d\n", 1 - k);
                    fflush(stdout);
                }
            }
        }
    }
}

static void worker0(void) { work(0); }
static void worker1(void) { work(1); }

static void handler(void) {
    RETURN_CODE_TYPE rc;
    ERROR_STATUS_TYPE err;
    for (;;) {
        GET_ERROR_STATUS(&err, &rc);
        if (rc != NO_ERROR) break;
        SYSTEM_TIME_TYPE t0, now, prev, stable_since;
        unsigned long c0 = counter[0], c1 = counter[1];
        int settled = 0, moved = 0, cut = 0;
        GET_TIME(&t0, &rc);
        stable_since = prev = t0;
        for (;;) {
            GET_TIME(&now, &rc);
            cut |= now - prev > 500000;
            prev = now;
            if (counter[0] != c0 || counter[1] != c1) {
                c0 = counter[0];
                c1 = counter[1];
                stable_since = now;
            } else if (now - stable_since > 200000) {
                settled = 1;
                break;
            }
            if (now - t0 > 3000000) break;
        }
        if (settled) {
            do {
                GET_TIME(&now, &rc);
                cut |= now - prev > 500000;
                prev = now;
                if (counter[0] != c0 || counter[1] != c1) moved = 1;
            } while (now - stable_since < 2200000);
        }
        if (cut)
            printf("handler cut\n");
        else
            printf("handler %d %d\n", settled, moved);
        fflush(stdout);
    }
    STOP_SELF();
}

int main(int argc, char **argv) {
    PROCESS_ATTRIBUTE_TYPE attr;
    RETURN_CODE_TYPE rc;
    SYSTEM_ADDRESS_TYPE entries[2] = {(SYSTEM_ADDRESS_TYPE)worker0, (SYSTEM_ADDRESS_TYPE)worker1};
    PARTITION_STATUS_TYPE pst;
    pause_mode = argc > 1 && strcmp(argv[1], "pause") == 0;
    GET_PARTITION_STATUS(&pst, &rc);
    if (pst.NUM_ASSIGNED_CORES != 2) { printf("cores %d\n", (int)pst.NUM_ASSIGNED_CORES); return 1; }
    if (pause_mode) {
        CREATE_ERROR_HANDLER((SYSTEM_ADDRESS_TYPE)handler, 16384, &rc);
        if (rc != NO_ERROR) { printf("CREATE_ERROR_HANDLER %d\n", (int)rc); return 1; }
    }
    for (int k = 0; k < 2; k++) {
        memset(&attr, 0, sizeof attr);
        snprintf(attr.NAME, sizeof attr.NAME, "worker%d", k);
        attr.ENTRY_POINT = entries[k];
        attr.STACK_SIZE = 65536;
        attr.BASE_PRIORITY = 10;
        attr.PERIOD = INFINITE_TIME_VALUE;
        attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
        attr.DEADLINE = SOFT;
        CREATE_PROCESS(&attr, &ids[k], &rc);
        if (rc != NO_ERROR) { printf("CREATE_PROCESS %d\n", (int)rc); return 1; }
        START(ids[k], &rc);
        if (rc != NO_ERROR) { printf("START %d\n", (int)rc); return 1; }
    }
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("SET_PARTITION_MODE returned %d\n", (int)rc);
    return 1;
}
