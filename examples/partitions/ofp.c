/* OFP: the operational flight program of seed 002 Table III as an ARINC 653 partition.
 * GnC 20 ms / 2 ms, NavReader 20 ms / 6 ms, SwmReader 80 ms / 3 ms, AdtReader 80 ms / 10 ms
 * (execution times scaled, see demo.h); rate-monotonic priorities. GnC reports once a second. */
#include "demo.h"

static volatile long cycles[4];

#define BODY(fn, index, exec_ms)              \
    static void fn(void) {                    \
        RETURN_CODE_TYPE rc;                  \
        for (;;) {                            \
            burn((SYSTEM_TIME_TYPE)(MS(exec_ms) * demo_scale)); \
            cycles[index]++;                  \
            PERIODIC_WAIT(&rc);               \
        }                                     \
    }

BODY(nav_reader, 1, 6)
BODY(swm_reader, 2, 3)
BODY(adt_reader, 3, 10)

static void gnc(void) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE now;
    for (;;) {
        burn((SYSTEM_TIME_TYPE)(MS(2) * demo_scale));
        if (++cycles[0] % 50 == 0) {
            GET_TIME(&now, &rc);
            printf("t=%.3f s GnC %ld, NavReader %ld, SwmReader %ld, AdtReader %ld cycles\n", now / 1e9, cycles[0], cycles[1],
                   cycles[2], cycles[3]);
        }
        PERIODIC_WAIT(&rc);
    }
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    demo_args(argc, argv);
    periodic("GnC", MS(20), MS(20), 40, gnc);
    periodic("NavReader", MS(20), MS(20), 39, nav_reader);
    periodic("SwmReader", MS(80), MS(80), 30, swm_reader);
    periodic("AdtReader", MS(80), MS(80), 29, adt_reader);
    printf("initialized 4 processes; going NORMAL\n");
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("SET_PARTITION_MODE returned %d\n", (int)rc); /* not reached */
    return 1;
}
