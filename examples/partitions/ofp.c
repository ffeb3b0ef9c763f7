/* OFP: the operational flight program of seed 002 Table III as an ARINC 653 partition.
 * GnC 20 ms / 2 ms, NavReader 20 ms / 6 ms, SwmReader 80 ms / 3 ms, AdtReader 80 ms / 10 ms
 * (execution times scaled, see demo.h); rate-monotonic priorities. GnC publishes its attitude
 * estimate on the sampling port "attitude" every cycle, takes the Monitor's queued
 * "commands" without waiting, and reports once a second. */
#include "demo.h"

static volatile long cycles[4];
static SAMPLING_PORT_ID_TYPE attitude_port;
static QUEUING_PORT_ID_TYPE commands_port;
static long commands_received;

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
    struct attitude a;
    char command[COMMAND_SIZE + 1];
    MESSAGE_SIZE_TYPE len;
    for (;;) {
        burn((SYSTEM_TIME_TYPE)(MS(2) * demo_scale));
        cycles[0]++;
        GET_TIME(&now, &rc);
        a.time = now;
        a.cycle = cycles[0];
        a.roll = 0.1 * (double)(cycles[0] % 100);
        a.pitch = 2.0;
        a.yaw = 90.0;
        WRITE_SAMPLING_MESSAGE(attitude_port, &a, sizeof a, &rc);
        for (;;) {
            RECEIVE_QUEUING_MESSAGE(commands_port, 0, (MESSAGE_ADDR_TYPE)command, &len, &rc);
            if (rc != NO_ERROR) break;
            command[len] = 0;
            if (++commands_received % 5 == 1) printf("command from Monitor: %s\n", command);
        }
        if (cycles[0] % 50 == 0)
            printf("t=%.3f s GnC %ld, NavReader %ld, SwmReader %ld, AdtReader %ld cycles, %ld commands\n", now / 1e9, cycles[0],
                   cycles[1], cycles[2], cycles[3], commands_received);
        PERIODIC_WAIT(&rc);
    }
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    demo_args(argc, argv);
    CREATE_SAMPLING_PORT("attitude", ATTITUDE_SIZE, SOURCE, MS(20), &attitude_port, &rc);
    check(rc, "CREATE_SAMPLING_PORT attitude");
    CREATE_QUEUING_PORT("commands", COMMAND_SIZE, 16, DESTINATION, FIFO, &commands_port, &rc);
    check(rc, "CREATE_QUEUING_PORT commands");
    periodic("GnC", MS(20), MS(20), 40, gnc);
    periodic("NavReader", MS(20), MS(20), 39, nav_reader);
    periodic("SwmReader", MS(80), MS(80), 30, swm_reader);
    periodic("AdtReader", MS(80), MS(80), 29, adt_reader);
    printf("initialized 4 processes; going NORMAL\n");
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("SET_PARTITION_MODE returned %d\n", (int)rc); /* not reached */
    return 1;
}
