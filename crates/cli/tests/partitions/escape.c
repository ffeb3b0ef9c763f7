/* Tries to leave its CPUs: moves its initialization thread to the CPU given as argument, then
 * to every CPU, and prints what the kernel answered and where the thread may run after each. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include "ARINC653.h"

static void report(const char *what, int rc) {
    cpu_set_t now;
    CPU_ZERO(&now);
    sched_getaffinity(0, sizeof now, &now);
    printf("%s %d errno %d allowed", what, rc, rc == 0 ? 0 : errno);
    for (int c = 0; c < 8; c++)
        if (CPU_ISSET(c, &now)) printf(" %d", c);
    printf(" on %d\n", sched_getcpu());
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    cpu_set_t set;
    setvbuf(stdout, NULL, _IOLBF, 0);
    CPU_ZERO(&set);
    CPU_SET(argc > 1 ? atoi(argv[1]) : 0, &set);
    report("other", sched_setaffinity(0, sizeof set, &set));
    CPU_ZERO(&set);
    for (int c = 0; c < 8; c++) CPU_SET(c, &set);
    report("all", sched_setaffinity(0, sizeof set, &set));
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
