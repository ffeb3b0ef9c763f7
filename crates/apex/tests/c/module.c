/* A partition run by the fake module of tests/module_contract.rs (control block on fd 3,
 * doorbell on fd 4): reports what the control block says, asks for a module schedule change,
 * runs a periodic process, then asks the module to restart it (COLD_START), which parks the
 * caller until the module ends the program. */
#include "check.h"

static void periodic(void)
{
    RETURN_CODE_TYPE rc;
    for (int k = 0; k < 3; k++) {
        printf("release %d\n", k);
        PERIODIC_WAIT(&rc);
    }
    printf("asking for COLD_START\n");
    fflush(stdout);
    SET_PARTITION_MODE(COLD_START, &rc);
    printf("FAIL SET_PARTITION_MODE(COLD_START) returned %d\n", (int)rc);
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    PARTITION_STATUS_TYPE ps;
    SCHEDULE_STATUS_TYPE ss;
    SCHEDULE_ID_TYPE sid = -1;

    GET_PARTITION_STATUS(&ps, &rc);
    printf("status id=%d period=%lld duration=%lld mode=%d start=%d cores=%u\n", (int)ps.IDENTIFIER,
           (long long)ps.PERIOD, (long long)ps.DURATION, (int)ps.OPERATING_MODE, (int)ps.START_CONDITION,
           (unsigned)ps.NUM_ASSIGNED_CORES);
    GET_MODULE_SCHEDULE_ID("second", &sid, &rc);
    check_eq("GET_MODULE_SCHEDULE_ID(second)", rc, NO_ERROR);
    check_eq("schedule id of second", sid, 7);
    GET_MODULE_SCHEDULE_STATUS(&ss, &rc);
    check_eq("current schedule", ss.CURRENT_SCHEDULE, 3);
    SET_MODULE_SCHEDULE(sid, &rc);
    check_eq("SET_MODULE_SCHEDULE(second)", rc, NO_ERROR);
    GET_MODULE_SCHEDULE_STATUS(&ss, &rc);
    check_eq("next schedule is the requested one", ss.NEXT_SCHEDULE, 7);
    SET_MODULE_SCHEDULE(99, &rc);
    check_eq("SET_MODULE_SCHEDULE(unknown) is INVALID_PARAM", rc, INVALID_PARAM);

    PROCESS_ID_TYPE id = create("PERIODIC", periodic, 10, ps.PERIOD, ps.PERIOD);
    START(id, &rc);
    printf("SUMMARY %d passed, %d failed\n", atomic_load(&check_passed), atomic_load(&check_failed));
    fflush(stdout);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
