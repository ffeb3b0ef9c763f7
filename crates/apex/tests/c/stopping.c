/* SUSPEND, RESUME and STOP of another process really stop it, whatever it is doing: spinning
 * (never calling the runtime), blocked in TIMED_WAIT, waiting for its next release, suspended.
 * With the argument "multicore" (and PARTITA_STANDALONE_CPUS=a,b) the targets run on core 1
 * while the controller runs on core 0, so the requests cross cores. Needs real-time
 * scheduling. Checks compare counters, never durations. */
#include "check.h"

static atomic_long spin_count, wait_count, periodic_count;
static atomic_int spin_starts, wait_starts;
static PROCESS_ID_TYPE spinner_id, waiter_id, periodic_id, controller_id;

static void spinner(void)
{
    atomic_fetch_add(&spin_starts, 1);
    for (;;)
        atomic_fetch_add_explicit(&spin_count, 1, memory_order_relaxed);
}

static void waiter(void)
{
    RETURN_CODE_TYPE rc;
    atomic_fetch_add(&wait_starts, 1);
    for (;;) {
        TIMED_WAIT(1 * MS, &rc);
        atomic_fetch_add(&wait_count, 1);
    }
}

static void periodic(void)
{
    RETURN_CODE_TYPE rc;
    for (;;) {
        atomic_fetch_add(&periodic_count, 1);
        PERIODIC_WAIT(&rc);
    }
}

/* Waits (bounded) until *c moves; true if it did. */
static int progresses(atomic_long *c)
{
    RETURN_CODE_TYPE rc;
    long before = atomic_load(c);
    for (int i = 0; i < 1000; i++) {
        TIMED_WAIT(2 * MS, &rc);
        if (atomic_load(c) != before)
            return 1;
    }
    return 0;
}

/* True if *c does not move during `ms` milliseconds of the controller sleeping. */
static int frozen(atomic_long *c, int ms)
{
    RETURN_CODE_TYPE rc;
    long before = atomic_load(c);
    TIMED_WAIT(ms * MS, &rc);
    return atomic_load(c) == before;
}

static PROCESS_STATE_TYPE state(PROCESS_ID_TYPE id)
{
    PROCESS_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_PROCESS_STATUS(id, &st, &rc);
    return st.PROCESS_STATE;
}

static void controller(void)
{
    RETURN_CODE_TYPE rc;

    check_true("spinner runs", progresses(&spin_count));
    SUSPEND(spinner_id, &rc);
    check_eq("SUSPEND spinner", rc, NO_ERROR);
    check_true("suspended spinner does not run", frozen(&spin_count, 30));
    check_eq("suspended spinner is WAITING", state(spinner_id), WAITING);
    RESUME(spinner_id, &rc);
    check_eq("RESUME spinner", rc, NO_ERROR);
    check_true("resumed spinner runs again", progresses(&spin_count));
    check_eq("resumed spinner did not restart", atomic_load(&spin_starts), 1);

    STOP(spinner_id, &rc);
    check_eq("STOP spinner", rc, NO_ERROR);
    check_true("stopped spinner does not run", frozen(&spin_count, 30));
    check_eq("stopped spinner is DORMANT", state(spinner_id), DORMANT);
    START(spinner_id, &rc);
    check_eq("START spinner again", rc, NO_ERROR);
    check_true("restarted spinner runs", progresses(&spin_count));
    check_eq("spinner restarted from its entry point", atomic_load(&spin_starts), 2);

    SUSPEND(spinner_id, &rc);
    STOP(spinner_id, &rc);
    check_eq("STOP of a suspended process", rc, NO_ERROR);
    check_true("stopped (was suspended) spinner does not run", frozen(&spin_count, 20));
    START(spinner_id, &rc);
    check_true("spinner restarted after stop while suspended", progresses(&spin_count));
    check_eq("third start", atomic_load(&spin_starts), 3);
    STOP(spinner_id, &rc);

    check_true("waiter runs", progresses(&wait_count));
    SUSPEND(waiter_id, &rc);
    check_eq("SUSPEND of a process in TIMED_WAIT", rc, NO_ERROR);
    check_true("suspended waiter stays suspended past its time-out", frozen(&wait_count, 30));
    RESUME(waiter_id, &rc);
    check_true("resumed waiter runs again", progresses(&wait_count));
    STOP(waiter_id, &rc);
    check_eq("STOP of a process in TIMED_WAIT", rc, NO_ERROR);
    check_true("stopped waiter does not run", frozen(&wait_count, 30));
    START(waiter_id, &rc);
    check_true("restarted waiter runs", progresses(&wait_count));
    check_eq("waiter restarted from its entry point", atomic_load(&wait_starts), 2);
    STOP(waiter_id, &rc);

    check_true("periodic process is released", progresses(&periodic_count));
    STOP(periodic_id, &rc);
    check_eq("STOP of a process waiting for its release", rc, NO_ERROR);
    check_true("stopped periodic process is not released", frozen(&periodic_count, 60));
    START(periodic_id, &rc);
    check_true("restarted periodic process is released again", progresses(&periodic_count));

    finish();
}

int main(int argc, char **argv)
{
    RETURN_CODE_TYPE rc;
    int multicore = argc > 1 && strcmp(argv[1], "multicore") == 0;
    spinner_id = create("SPINNER", spinner, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    waiter_id = create("WAITER", waiter, 6, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    periodic_id = create("PERIODIC", periodic, 7, 20 * MS, INFINITE_TIME_VALUE);
    controller_id = create("CONTROLLER", controller, 20, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    if (multicore) {
        PARTITION_STATUS_TYPE ps;
        GET_PARTITION_STATUS(&ps, &rc);
        check_eq("two cores", ps.NUM_ASSIGNED_CORES, 2);
        INITIALIZE_PROCESS_CORE_AFFINITY(spinner_id, 1, &rc);
        check_eq("spinner on core 1", rc, NO_ERROR);
        INITIALIZE_PROCESS_CORE_AFFINITY(waiter_id, 1, &rc);
        INITIALIZE_PROCESS_CORE_AFFINITY(periodic_id, 1, &rc);
        INITIALIZE_PROCESS_CORE_AFFINITY(controller_id, 0, &rc);
    }
    START(spinner_id, &rc);
    START(waiter_id, &rc);
    START(periodic_id, &rc);
    START(controller_id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
