/* Scheduling order on one core: priority preemption, FIFO among equal priorities with
 * TIMED_WAIT(0) yielding, release order at NORMAL, and LOCK_PREEMPTION holding off a
 * higher-priority process until UNLOCK_PREEMPTION. Each process appends to one log; the checks
 * compare the order (never durations). Needs real-time scheduling. */
#include "check.h"

static char log_buf[64][8];
static atomic_int log_len;

static void note(const char *what)
{
    int i = atomic_fetch_add(&log_len, 1);
    if (i < 64)
        strncpy(log_buf[i], what, 7);
}

static PROCESS_ID_TYPE low_id, high_id, eq1_id, eq2_id, first_id, locker_id, late_id, end_id, relock_id, mid_id;
static int relock_runs;

static void high_entry(void)
{
    note("H");
    STOP_SELF();
}

static void low_entry(void)
{
    RETURN_CODE_TYPE rc;
    note("L1");
    START(high_id, &rc); /* H preempts here */
    note("L2");
    STOP_SELF();
}

static void eq_entry(void)
{
    RETURN_CODE_TYPE rc;
    PROCESS_ID_TYPE me;
    GET_MY_ID(&me, &rc);
    for (int i = 0; i < 3; i++) {
        note(me == eq1_id ? "E1" : "E2");
        TIMED_WAIT(0, &rc); /* the other one of the same priority runs */
    }
}

static void first_entry(void)
{
    RETURN_CODE_TYPE rc;
    note("F");
    START(low_id, &rc);
}

static void late_entry(void)
{
    note("X");
}

/* Stops itself while holding the preemption lock; restarted, it must run at its base priority
 * again (MID, of higher priority, preempts it). */
static void relock_entry(void)
{
    RETURN_CODE_TYPE rc;
    LOCK_LEVEL_TYPE level;
    if (relock_runs++ == 0) {
        LOCK_PREEMPTION(&level, &rc);
        note("R1");
        STOP_SELF();
    }
    note("R2");
    START(mid_id, &rc);
    note("R3");
}

static void mid_entry(void)
{
    note("M");
}

static void locker_entry(void)
{
    RETURN_CODE_TYPE rc;
    LOCK_LEVEL_TYPE level;
    LOCK_PREEMPTION(&level, &rc);
    START(late_id, &rc); /* higher priority, but preemption is locked */
    note("K1");
    LOCK_PREEMPTION(&level, &rc);
    UNLOCK_PREEMPTION(&level, &rc);
    note("K2"); /* still locked (level 1) */
    UNLOCK_PREEMPTION(&level, &rc); /* X runs here */
    note("K3");
    START(relock_id, &rc);
    START(relock_id, &rc);
    START(end_id, &rc);
}

static void end_entry(void)
{
    char got[64 * 8] = "";
    for (int i = 0; i < atomic_load(&log_len) && i < 64; i++) {
        strcat(got, log_buf[i]);
        strcat(got, " ");
    }
    printf("ORDER %s\n", got);
    /* F (50) starts L (5), which waits behind the equal pair (10); L starts H (40), which preempts
     * it at once; LOCKER (2) holds X (60) off until its lock level is back to 0; RELOCK (3)
     * stops itself while locked and, restarted, is preempted by MID (4) again. */
    const char *expected = "F E1 E2 E1 E2 E1 E2 L1 H L2 K1 K2 X K3 R1 R2 M R3 ";
    check_true("order", strcmp(got, expected) == 0);
    if (strcmp(got, expected) != 0)
        printf("expected %s\n", expected);
    finish();
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    /* Released at NORMAL in priority order: FIRST (50) before the equal pair (10), which go in
     * START order, before LOCKER (2), although LOCKER was started first. */
    low_id = create("LOW", low_entry, 5, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    high_id = create("HIGH", high_entry, 40, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    eq1_id = create("EQ1", eq_entry, 10, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    eq2_id = create("EQ2", eq_entry, 10, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    first_id = create("FIRST", first_entry, 50, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    locker_id = create("LOCKER", locker_entry, 2, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    late_id = create("LATE", late_entry, 60, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    end_id = create("END", end_entry, 1, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    relock_id = create("RELOCK", relock_entry, 3, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    mid_id = create("MID", mid_entry, 4, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    START(locker_id, &rc);
    START(eq1_id, &rc);
    START(eq2_id, &rc);
    START(first_id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
