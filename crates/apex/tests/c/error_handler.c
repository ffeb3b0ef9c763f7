/* The error handler, standalone (no module: the default levels make DEADLINE_MISSED and
 * APPLICATION_ERROR process level): return codes of CREATE_ERROR_HANDLER, GET_ERROR_STATUS and
 * CONFIGURE_ERROR_HANDLER, the handler receiving a raised application error with its message,
 * and a process that divides by zero (NUMERIC_ERROR, partition level by default: not for the
 * handler; the faulty process becomes DORMANT and the partition goes on), and a missed deadline
 * (process level: the handler's). */
#include "check.h"
#include <signal.h>

static atomic_int handled;
static ERROR_STATUS_TYPE seen;
static PROCESS_ID_TYPE raiser_id, divider_id, late_id;
static volatile int zero, hundred = 100;

static void handler(void)
{
    RETURN_CODE_TYPE rc;
    ERROR_STATUS_TYPE st;
    for (;;) {
        GET_ERROR_STATUS(&st, &rc);
        if (rc == NO_ACTION)
            break;
        check_eq("GET_ERROR_STATUS in the handler", rc, NO_ERROR);
        seen = st;
        atomic_fetch_add(&handled, 1);
    }
    check_eq("GET_ERROR_STATUS with no error pending is NO_ACTION", rc, NO_ACTION);
    STOP_SELF();
}

static void raiser(void)
{
    RETURN_CODE_TYPE rc;
    ERROR_STATUS_TYPE st;
    GET_ERROR_STATUS(&st, &rc);
    check_eq("GET_ERROR_STATUS outside the handler is INVALID_CONFIG", rc, INVALID_CONFIG);
    CREATE_ERROR_HANDLER((SYSTEM_ADDRESS_TYPE)handler, 64 * 1024, &rc);
    check_eq("CREATE_ERROR_HANDLER in NORMAL is INVALID_MODE", rc, INVALID_MODE);
    CONFIGURE_ERROR_HANDLER(PROCESSES_PAUSE, 0, &rc);
    check_eq("CONFIGURE_ERROR_HANDLER in NORMAL is INVALID_MODE", rc, INVALID_MODE);
    RAISE_APPLICATION_ERROR(NUMERIC_ERROR, "x", 1, &rc);
    check_eq("RAISE_APPLICATION_ERROR of another code is INVALID_PARAM", rc, INVALID_PARAM);
    char big[200];
    memset(big, 'x', sizeof big);
    RAISE_APPLICATION_ERROR(APPLICATION_ERROR, big, 129, &rc);
    check_eq("RAISE_APPLICATION_ERROR of 129 bytes is INVALID_PARAM", rc, INVALID_PARAM);
    /* The handler runs above every process: done when the call returns. */
    RAISE_APPLICATION_ERROR(APPLICATION_ERROR, "sensor out of range", 19, &rc);
    check_eq("RAISE_APPLICATION_ERROR", rc, NO_ERROR);
    check_eq("the handler took the error before the raiser went on", atomic_load(&handled), 1);
    check_eq("ERROR_CODE", seen.ERROR_CODE, APPLICATION_ERROR);
    check_eq("LENGTH", seen.LENGTH, 19);
    check_true("MESSAGE", memcmp(seen.MESSAGE, "sensor out of range", 19) == 0);
    check_eq("failed process id", seen.FAILED_PROCESS_ID, raiser_id);
    /* A second error gets the handler released again (it may still be finishing its first
     * run on another thread's behalf: give it the processor until it has). */
    RAISE_APPLICATION_ERROR(APPLICATION_ERROR, "again", 5, &rc);
    for (int i = 0; i < 1000 && atomic_load(&handled) < 2; i++)
        TIMED_WAIT(1 * MS, &rc);
    check_eq("a second error reaches the handler", atomic_load(&handled), 2);
    check_eq("its message", seen.LENGTH, 5);
    START(divider_id, &rc);
    TIMED_WAIT(20 * MS, &rc);
    PROCESS_STATUS_TYPE ps;
    GET_PROCESS_STATUS(divider_id, &ps, &rc);
    check_eq("a process that divided by zero is DORMANT", ps.PROCESS_STATE, DORMANT);
    check_eq("NUMERIC_ERROR is not the handler's (partition level)", atomic_load(&handled), 2);
    /* A missed deadline is process level: the handler gets it. */
    START(late_id, &rc);
    for (int i = 0; i < 1000 && atomic_load(&handled) < 3; i++)
        TIMED_WAIT(1 * MS, &rc);
    check_eq("the handler got the missed deadline", atomic_load(&handled), 3);
    check_eq("its code", seen.ERROR_CODE, DEADLINE_MISSED);
    check_eq("the late process", seen.FAILED_PROCESS_ID, late_id);
    finish();
}

static void divider(void)
{
    printf("divider: %d\n", hundred / zero);
    printf("FAIL the divider went on after its fault\n");
}

static void late(void)
{
    SYSTEM_TIME_TYPE start = now();
    while (now() - start < 10 * MS)
        ;
    STOP_SELF();
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    CONFIGURE_ERROR_HANDLER(PROCESSES_PAUSE, 0, &rc);
    check_eq("CONFIGURE_ERROR_HANDLER without a handler is INVALID_CONFIG", rc, INVALID_CONFIG);
    CREATE_ERROR_HANDLER((SYSTEM_ADDRESS_TYPE)handler, 128u * 1024 * 1024, &rc);
    check_eq("CREATE_ERROR_HANDLER with a stack above 64 MiB is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_ERROR_HANDLER((SYSTEM_ADDRESS_TYPE)handler, 64 * 1024, &rc);
    check_eq("CREATE_ERROR_HANDLER", rc, NO_ERROR);
    CREATE_ERROR_HANDLER((SYSTEM_ADDRESS_TYPE)handler, 64 * 1024, &rc);
    check_eq("a second CREATE_ERROR_HANDLER is NO_ACTION", rc, NO_ACTION);
    CONFIGURE_ERROR_HANDLER(7, 0, &rc);
    check_eq("CONFIGURE_ERROR_HANDLER with an unknown concurrency control is INVALID_PARAM", rc, INVALID_PARAM);
    CONFIGURE_ERROR_HANDLER(PROCESSES_PAUSE, 99, &rc);
    check_eq("CONFIGURE_ERROR_HANDLER on a core outside the partition is INVALID_CONFIG", rc, INVALID_CONFIG);
    CONFIGURE_ERROR_HANDLER(PROCESSES_SCHEDULED, 0, &rc);
    check_eq("CONFIGURE_ERROR_HANDLER", rc, NO_ERROR);
    raiser_id = create("RAISER", raiser, 10, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    divider_id = create("DIVIDER", divider, 20, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    late_id = create("LATE", late, 5, INFINITE_TIME_VALUE, 1 * MS);
    START(raiser_id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 3;
}
