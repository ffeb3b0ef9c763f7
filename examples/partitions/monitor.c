/* Monitor: a telemetry partition on core 1. Every period it reads the OFP's attitude (sampling
 * port, valid while younger than its 40 ms refresh period); once a second it reports it with
 * its own partition status and the module schedule in force, and queues a command for the OFP. */
#include "demo.h"

static SAMPLING_PORT_ID_TYPE attitude_port;
static QUEUING_PORT_ID_TYPE commands_port;

static void heartbeat(void) {
    RETURN_CODE_TYPE rc;
    PARTITION_STATUS_TYPE ps;
    SCHEDULE_STATUS_TYPE ms;
    SYSTEM_TIME_TYPE now;
    struct attitude a;
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity = INVALID;
    long beats = 0, valid = 0;
    char command[COMMAND_SIZE];
    for (;;) {
        burn((SYSTEM_TIME_TYPE)(MS(2) * demo_scale));
        READ_SAMPLING_MESSAGE(attitude_port, (MESSAGE_ADDR_TYPE)&a, &len, &validity, &rc);
        if (rc == NO_ERROR && validity == VALID) valid++;
        if (++beats % 25 == 0) {
            GET_TIME(&now, &rc);
            GET_PARTITION_STATUS(&ps, &rc);
            GET_MODULE_SCHEDULE_STATUS(&ms, &rc);
            printf("t=%.3f s heartbeat %ld: partition %d mode %d period %lld ms, schedule %d\n", now / 1e9, beats,
                   (int)ps.IDENTIFIER, (int)ps.OPERATING_MODE, (long long)(ps.PERIOD / 1000000), (int)ms.CURRENT_SCHEDULE);
            if (validity == VALID)
                printf("attitude from OFP cycle %ld: roll %.1f pitch %.1f yaw %.1f, age %.1f ms (%ld of %ld reads valid)\n", a.cycle,
                       a.roll, a.pitch, a.yaw, (now - a.time) / 1e6, valid, beats);
            else
                printf("attitude from OFP not valid (%ld of %ld reads valid)\n", valid, beats);
            int n = snprintf(command, sizeof command, "health check %ld ok", beats / 25);
            SEND_QUEUING_MESSAGE(commands_port, (MESSAGE_ADDR_TYPE)command, n, 0, &rc);
            if (rc != NO_ERROR) printf("command not queued: return code %d\n", (int)rc);
        }
        PERIODIC_WAIT(&rc);
    }
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    demo_args(argc, argv);
    CREATE_SAMPLING_PORT("attitude", ATTITUDE_SIZE, DESTINATION, MS(40), &attitude_port, &rc);
    check(rc, "CREATE_SAMPLING_PORT attitude");
    CREATE_QUEUING_PORT("commands", COMMAND_SIZE, 16, SOURCE, FIFO, &commands_port, &rc);
    check(rc, "CREATE_QUEUING_PORT commands");
    periodic("Heartbeat", MS(40), MS(40), 10, heartbeat);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
