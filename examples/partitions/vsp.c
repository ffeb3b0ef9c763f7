/* VSP: the video streaming program of seed 002 Table III: VdoStrming 80 ms / 35 ms (scaled). */
#include "demo.h"

static void vdo_strming(void) {
    RETURN_CODE_TYPE rc;
    long frames = 0;
    for (;;) {
        burn((SYSTEM_TIME_TYPE)(MS(35) * demo_scale));
        if (++frames % 25 == 0) printf("streamed %ld video frames\n", frames);
        PERIODIC_WAIT(&rc);
    }
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    demo_args(argc, argv);
    periodic("VdoStrming", MS(80), MS(80), 20, vdo_strming);
    printf("initialized; going NORMAL\n");
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
