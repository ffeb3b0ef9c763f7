/* SET_PARTITION_MODE(NORMAL) does not return to the initialization process (the process
 * created before runs, the line after the call never prints). With the argument "idle",
 * a process asks for IDLE, which standalone ends the program (status 0). */
#include "check.h"

static int want_idle;

static void worker(void)
{
    RETURN_CODE_TYPE rc;
    PARTITION_STATUS_TYPE ps;
    GET_PARTITION_STATUS(&ps, &rc);
    check_eq("worker sees NORMAL", ps.OPERATING_MODE, NORMAL);
    /* Give the initialization process every chance to (wrongly) go on. */
    TIMED_WAIT(50 * MS, &rc);
    printf("worker ran\n");
    if (want_idle) {
        SET_PARTITION_MODE(IDLE, &rc);
        printf("FAIL SET_PARTITION_MODE(IDLE) returned %d\n", (int)rc);
    }
    finish();
}

int main(int argc, char **argv)
{
    RETURN_CODE_TYPE rc;
    want_idle = argc > 1 && strcmp(argv[1], "idle") == 0;
    PROCESS_ID_TYPE id = create("WORKER", worker, 10, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    START(id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("FAIL SET_PARTITION_MODE(NORMAL) returned to the initialization process (rc %d)\n", (int)rc);
    fflush(stdout);
    return 3;
}
