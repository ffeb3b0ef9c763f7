/* Monitor: a telemetry partition on core 1. Once a second it reports its own partition status
 * and the module schedule in force. */
#include "demo.h"

static void heartbeat(void) {
    RETURN_CODE_TYPE rc;
    PARTITION_STATUS_TYPE ps;
    SCHEDULE_STATUS_TYPE ms;
    SYSTEM_TIME_TYPE now;
    long beats = 0;
    for (;;) {
        burn((SYSTEM_TIME_TYPE)(MS(2) * demo_scale));
        if (++beats % 25 == 0) {
            GET_TIME(&now, &rc);
            GET_PARTITION_STATUS(&ps, &rc);
            GET_MODULE_SCHEDULE_STATUS(&ms, &rc);
            printf("t=%.3f s heartbeat %ld: partition %d mode %d period %lld ms, schedule %d\n", now / 1e9, beats,
                   (int)ps.IDENTIFIER, (int)ps.OPERATING_MODE, (long long)(ps.PERIOD / 1000000), (int)ms.CURRENT_SCHEDULE);
        }
        PERIODIC_WAIT(&rc);
    }
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    demo_args(argc, argv);
    periodic("Heartbeat", MS(40), MS(40), 10, heartbeat);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
