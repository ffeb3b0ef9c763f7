/* Helpers shared by the flight-control demo partitions (examples/flight-control.xml).
 * Only standard ARINC 653 services are used, through include/ARINC653.h. */
#ifndef PARTITA_DEMO_H
#define PARTITA_DEMO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ARINC653.h"

#define MS(x) ((SYSTEM_TIME_TYPE)(x) * 1000000LL)

/* The channels of examples/flight-control.xml: the OFP's attitude estimate (sampling port
 * "attitude", MaxMessageSize 64) and the Monitor's commands (queuing port "commands", 128). */
#define ATTITUDE_SIZE 64
#define COMMAND_SIZE 128
struct attitude {
    SYSTEM_TIME_TYPE time; /* when the OFP wrote it */
    long cycle;
    double roll, pitch, yaw;
    char pad[ATTITUDE_SIZE - sizeof(SYSTEM_TIME_TYPE) - sizeof(long) - 3 * sizeof(double)];
};

/* Execution times of Table III are scaled by DEMO_SCALE (first program argument, default 0.1):
 * seed 002 observed actual WCETs far below the assigned milliseconds, and core 0 is fully
 * booked by the windows, so full-length bodies would leave no slack for switching. */
static double demo_scale = 0.1;

static void demo_args(int argc, char **argv) {
    if (argc > 1) {
        double s = atof(argv[1]);
        if (s > 0.0 && s <= 1.0) demo_scale = s;
    }
}

/* Busy work for `ns` of the process's own running time (time it is preempted does not count:
 * gaps over 20 us between clock samples are skipped). */
static void burn(SYSTEM_TIME_TYPE ns) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE last, now, done = 0;
    GET_TIME(&last, &rc);
    while (done < ns) {
        GET_TIME(&now, &rc);
        if (now - last < 20000) done += now - last;
        last = now;
    }
}

static void check(RETURN_CODE_TYPE rc, const char *what) {
    if (rc != NO_ERROR) {
        printf("%s failed: return code %d\n", what, (int)rc);
        exit(1);
    }
}

/* Creates and starts a periodic process with deadline = period. */
static PROCESS_ID_TYPE periodic(const char *name, SYSTEM_TIME_TYPE period, SYSTEM_TIME_TYPE capacity,
                                PRIORITY_TYPE priority, void (*entry)(void)) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strncpy(attr.NAME, name, sizeof attr.NAME - 1);
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)entry;
    attr.STACK_SIZE = 64 * 1024;
    attr.BASE_PRIORITY = priority;
    attr.PERIOD = period;
    attr.TIME_CAPACITY = capacity;
    attr.DEADLINE = SOFT;
    CREATE_PROCESS(&attr, &id, &rc);
    check(rc, "CREATE_PROCESS");
    START(id, &rc);
    check(rc, "START");
    return id;
}

#endif
