/* A process that divides by zero raises NUMERIC_ERROR to the partition's error handler at once
 * (run with PARTITA_STANDALONE_PROCESS_LEVEL=NUMERIC_ERROR, so that the error is the handler's);
 * the handler sees the failed process FAULTED (not DORMANT: START is NO_ACTION), STOPs it, which
 * makes it DORMANT, and restarts it. The process that started the divider checks that the
 * handler ran before it went on (the handler preempts every process of the partition). */
#include "check.h"

static atomic_int handled, divider_starts, after_division;
static volatile int zero, hundred = 100;
static PROCESS_ID_TYPE divider_id, main_id;
static ERROR_STATUS_TYPE seen;
static PROCESS_STATE_TYPE state_in_handler = DORMANT;
static RETURN_CODE_TYPE start_rc = NO_ERROR, stop_rc = INVALID_CONFIG, restart_rc = INVALID_CONFIG;
static PROCESS_STATE_TYPE state_after_stop = FAULTED;

static PROCESS_STATE_TYPE state(PROCESS_ID_TYPE id)
{
    PROCESS_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_PROCESS_STATUS(id, &st, &rc);
    return st.PROCESS_STATE;
}

static void handler(void)
{
    RETURN_CODE_TYPE rc;
    ERROR_STATUS_TYPE st;
    for (;;) {
        GET_ERROR_STATUS(&st, &rc);
        if (rc != NO_ERROR)
            break;
        seen = st;
        if (st.ERROR_CODE == NUMERIC_ERROR) {
            state_in_handler = state(st.FAILED_PROCESS_ID);
            START(st.FAILED_PROCESS_ID, &start_rc);
            STOP(st.FAILED_PROCESS_ID, &stop_rc);
            state_after_stop = state(st.FAILED_PROCESS_ID);
            START(st.FAILED_PROCESS_ID, &restart_rc);
        }
        atomic_fetch_add(&handled, 1);
    }
    STOP_SELF();
}

static void divider(void)
{
    if (atomic_fetch_add(&divider_starts, 1) == 0) {
        volatile int q = hundred / zero;
        (void)q;
        atomic_fetch_add(&after_division, 1);
    }
}

static void main_process(void)
{
    RETURN_CODE_TYPE rc;
    START(divider_id, &rc);
    check_eq("START divider", rc, NO_ERROR);
    /* The divider (higher priority) runs and faults at once; the handler, above every process,
     * has taken the error before this process goes on. */
    check_eq("the handler took the NUMERIC_ERROR before the next process ran", atomic_load(&handled), 1);
    check_eq("ERROR_CODE", seen.ERROR_CODE, NUMERIC_ERROR);
    check_eq("the failed process id is the divider", seen.FAILED_PROCESS_ID, divider_id);
    check_eq("the faulted process is FAULTED for the handler", state_in_handler, FAULTED);
    check_eq("START of a FAULTED process is NO_ACTION", start_rc, NO_ACTION);
    check_eq("STOP of the failed process from the handler", stop_rc, NO_ERROR);
    check_eq("after STOP it is DORMANT", state_after_stop, DORMANT);
    check_eq("the handler restarts it", restart_rc, NO_ERROR);
    for (int i = 0; i < 1000 && atomic_load(&divider_starts) < 2; i++)
        TIMED_WAIT(1 * MS, &rc);
    check_eq("the divider ran again from its entry point", atomic_load(&divider_starts), 2);
    check_eq("the division never completed", atomic_load(&after_division), 0);
    for (int i = 0; i < 1000 && state(divider_id) != DORMANT; i++)
        TIMED_WAIT(1 * MS, &rc);
    check_eq("the restarted divider finished (DORMANT)", state(divider_id), DORMANT);
    finish();
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    CREATE_ERROR_HANDLER((SYSTEM_ADDRESS_TYPE)handler, 64 * 1024, &rc);
    check_eq("CREATE_ERROR_HANDLER", rc, NO_ERROR);
    divider_id = create("DIVIDER", divider, 30, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    main_id = create("MAIN", main_process, 10, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    START(main_id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
