/* Periodic releases in a standalone partition with a 20 ms period: release points exactly on
 * the partition period grid (read back from DEADLINE_TIME = release + TIME_CAPACITY), the first
 * one at the first period start after NORMAL, DELAYED_START offsets, a 40 ms process beside a
 * 20 ms one, and a missed deadline (reported in the trace: run with PARTITA_STANDALONE_TRACE=1).
 * Release instants are checked never to be early; lateness is not checked (noisy machines). */
#include "check.h"

#define JOBS 12
static SYSTEM_TIME_TYPE t_normal;
static SYSTEM_TIME_TYPE fast_release[JOBS], fast_start[JOBS];
static SYSTEM_TIME_TYPE slow_release[8];
static atomic_int slow_jobs;
static SYSTEM_TIME_TYPE delayed_release = -1;
static atomic_int late_done;
static PROCESS_ID_TYPE fast_id, slow_id, delayed_id, late_id;

static SYSTEM_TIME_TYPE my_release(SYSTEM_TIME_TYPE capacity)
{
    PROCESS_ID_TYPE me;
    PROCESS_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_MY_ID(&me, &rc);
    GET_PROCESS_STATUS(me, &st, &rc);
    return st.DEADLINE_TIME - capacity;
}

static void slow(void)
{
    RETURN_CODE_TYPE rc;
    for (;;) {
        int k = atomic_load(&slow_jobs);
        if (k < 8)
            slow_release[k] = my_release(40 * MS);
        atomic_fetch_add(&slow_jobs, 1);
        PERIODIC_WAIT(&rc);
    }
}

static void delayed(void)
{
    RETURN_CODE_TYPE rc;
    delayed_release = my_release(5 * MS);
    for (;;)
        PERIODIC_WAIT(&rc);
}

static void late(void)
{
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE start = now();
    while (now() < start + 6 * MS) /* overrun the 2 ms capacity */
        ;
    PERIODIC_WAIT(&rc);
    check_eq("PERIODIC_WAIT after an overrun", rc, NO_ERROR);
    atomic_store(&late_done, 1);
    for (;;)
        PERIODIC_WAIT(&rc);
}

static void fast(void)
{
    RETURN_CODE_TYPE rc;
    for (int k = 0; k < JOBS; k++) {
        fast_start[k] = now();
        fast_release[k] = my_release(10 * MS);
        PERIODIC_WAIT(&rc);
        if (rc != NO_ERROR)
            check_eq("PERIODIC_WAIT", rc, NO_ERROR);
    }
    int grid = 1, never_early = 1;
    for (int k = 0; k < JOBS; k++) {
        grid &= fast_release[k] == fast_release[0] + k * 20 * MS;
        never_early &= fast_start[k] >= fast_release[k];
    }
    check_true("first release on the period grid", fast_release[0] % (20 * MS) == 0);
    check_true("first release at the first period start after NORMAL",
               fast_release[0] >= t_normal && fast_release[0] <= t_normal + 40 * MS);
    check_true("releases every 20 ms exactly", grid);
    check_true("no release is early", never_early);

    int n = atomic_load(&slow_jobs);
    check_true("the 40 ms process ran about half as many jobs (5..7 of 12)", n >= 5 && n <= 7);
    int slow_grid = 1;
    for (int k = 0; k < n && k < 8; k++)
        slow_grid &= slow_release[k] == fast_release[0] + k * 40 * MS;
    check_true("40 ms releases on the grid, from the same first period start", slow_grid);
    check_true("DELAYED_START(5 ms) of a periodic process: first release 5 ms after a period start",
               delayed_release > 0 && delayed_release % (20 * MS) == 5 * MS);
    for (int i = 0; i < 100 && !atomic_load(&late_done); i++)
        TIMED_WAIT(5 * MS, &rc);
    check_true("the late process went on", atomic_load(&late_done));
    printf("LATE %d\n", (int)late_id);
    finish();
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    fast_id = create("FAST", fast, 20, 20 * MS, 10 * MS);
    slow_id = create("SLOW", slow, 15, 40 * MS, 40 * MS);
    delayed_id = create("DELAYED", delayed, 10, 20 * MS, 5 * MS);
    late_id = create("LATE", late, 12, 20 * MS, 2 * MS);
    START(fast_id, &rc);
    START(slow_id, &rc);
    DELAYED_START(delayed_id, 5 * MS, &rc);
    check_eq("DELAYED_START", rc, NO_ERROR);
    START(late_id, &rc);
    t_normal = now();
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
