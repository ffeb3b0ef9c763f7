/* ARINC 653 P1-5 priorities 1..239 on one core: processes at 1, 63, 64, 100, 150, 200 and 239
 * preempt each other in priority order, SET_PRIORITY to a priority new to the partition
 * re-ranks it between the others, a mutex ceiling at 239 holds off a process at 239 until the
 * release, and 0 and 240 are INVALID_PARAM. Each process appends to one log; the checks compare
 * the order (never durations). The order must hold whatever band of Linux levels the partition
 * gets, as long as it has one level per distinct priority in use (11 here): the test runs it
 * with the default band and with a band of exactly 11 levels.
 * With the argument "overflow" it only creates the processes and the mutex and ends (the caller
 * gives it a band too narrow and looks at what the runtime says). With "chain" it checks the
 * chain of preemptions only: under `partita run` a priority change at run time (SET_PRIORITY, a
 * mutex owner raised to its ceiling) is a system call the module's scheduling broker makes for
 * the caller, which waits for it, and meanwhile a lower process of the partition may run.
 * Needs real-time scheduling. */
#include "check.h"

#if MIN_PRIORITY_VALUE != 1 || MAX_PRIORITY_VALUE != 239
#error "ARINC 653 P1-5 priorities are 1..239"
#endif

#define CHAIN 7
static const PRIORITY_TYPE chain_prio[CHAIN] = {1, 63, 64, 100, 150, 200, 239};
static PROCESS_ID_TYPE chain_id[CHAIN], q_id, r_id, mx_id, x_id;
static MUTEX_ID_TYPE ceiling_mutex;
static int chain_only;

static int log_buf[64];
static atomic_int log_len;

static void note(int what)
{
    int i = atomic_fetch_add(&log_len, 1);
    if (i < 64)
        log_buf[i] = what;
}

/* Codes of the log besides the chain's priorities (a priority p noted on entry is p, after the
 * process it started ran, -p). */
enum { R1 = 1001, R2, Q1, Q2, Q3, M1, M2, M3, X = 1100 };

static PRIORITY_TYPE current_priority(PROCESS_ID_TYPE id)
{
    PROCESS_STATUS_TYPE s;
    RETURN_CODE_TYPE rc;
    GET_PROCESS_STATUS(id, &s, &rc);
    return rc == NO_ERROR ? s.CURRENT_PRIORITY : -1;
}

/* R (160): suspends itself; resumed, it must preempt Q only once Q is below 160. */
static void r_entry(void)
{
    RETURN_CODE_TYPE rc;
    note(R1);
    SUSPEND_SELF(INFINITE_TIME_VALUE, &rc);
    note(R2);
}

/* Q (140): moves itself to 170 and 155, priorities no process had: above and below R. */
static void q_entry(void)
{
    RETURN_CODE_TYPE rc;
    note(Q1);
    SET_PRIORITY(q_id, 170, &rc);
    check_eq("SET_PRIORITY to 170, a new priority", rc, NO_ERROR);
    check_eq("current priority 170", current_priority(q_id), 170);
    RESUME(r_id, &rc); /* R (160) is ready, below Q (170): Q goes on */
    check_eq("RESUME R", rc, NO_ERROR);
    note(Q2);
    SET_PRIORITY(q_id, 155, &rc); /* now below R: R runs here */
    check_eq("SET_PRIORITY to 155, a new priority", rc, NO_ERROR);
    note(Q3);
}

/* X (239): started by the owner of the 239 ceiling mutex, runs only after its release. */
static void x_entry(void)
{
    note(X);
}

/* MX (200): owns the mutex of ceiling 239, so runs at 239. */
static void mx_entry(void)
{
    RETURN_CODE_TYPE rc;
    ACQUIRE_MUTEX(ceiling_mutex, INFINITE_TIME_VALUE, &rc);
    check_eq("ACQUIRE_MUTEX of ceiling 239 at priority 200", rc, NO_ERROR);
    check_eq("the owner runs at the ceiling 239", current_priority(mx_id), 239);
    note(M1);
    START(x_id, &rc); /* 239 as well: no preemption of the owner at 239 */
    note(M2);
    RELEASE_MUTEX(ceiling_mutex, &rc); /* back to 200: X runs here */
    check_eq("RELEASE_MUTEX", rc, NO_ERROR);
    check_eq("the owner is back at 200", current_priority(mx_id), 200);
    note(M3);
}

/* Prints the summary and ends through SET_PARTITION_MODE(IDLE), which demotes the real-time
 * threads before the program exits (the caller looks for FAIL lines). */
static void end(void)
{
    RETURN_CODE_TYPE rc;
    printf("SUMMARY %d passed, %d failed\n", atomic_load(&check_passed), atomic_load(&check_failed));
    fflush(stdout);
    SET_PARTITION_MODE(IDLE, &rc);
}

static void report(void)
{
    static const int expected[] = {1,  63, 64,  100, 150, 200, 239, -200, -150, -100, -64, -63, -1,
                                   R1, Q1, Q2, R2,  Q3,  M1,  M2,  X,    M3};
    int want = chain_only ? 2 * CHAIN - 1 : (int)(sizeof expected / sizeof expected[0]);
    int n = atomic_load(&log_len), ok = n == want;
    printf("ORDER");
    for (int i = 0; i < n && i < 64; i++) {
        printf(" %d", log_buf[i]);
        if (ok && log_buf[i] != expected[i])
            ok = 0;
    }
    printf("\nEXPECTED");
    for (int i = 0; i < want; i++)
        printf(" %d", expected[i]);
    printf("\n");
    check_true("order", ok);
}

/* Each chain process starts the next (of higher priority), which preempts it at once. The
 * lowest one then runs the other scenarios and reports. */
static void chain_entry(void)
{
    RETURN_CODE_TYPE rc;
    PROCESS_ID_TYPE me;
    GET_MY_ID(&me, &rc);
    int k = 0;
    while (k < CHAIN && chain_id[k] != me)
        k++;
    note(chain_prio[k]);
    if (k + 1 < CHAIN) {
        START(chain_id[k + 1], &rc);
        note(-chain_prio[k]);
    }
    if (k != 0)
        return;
    if (!chain_only) {
        START(r_id, &rc);
        START(q_id, &rc);
        START(mx_id, &rc);
    }
    report();
    end();
}

static void out_of_range(void)
{
    RETURN_CODE_TYPE rc;
    PROCESS_ATTRIBUTE_TYPE a = attributes("BAD", x_entry, 0, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    PROCESS_ID_TYPE id;
    MUTEX_ID_TYPE m;
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("CREATE_PROCESS at priority 0", rc, INVALID_PARAM);
    a.BASE_PRIORITY = 240;
    CREATE_PROCESS(&a, &id, &rc);
    check_eq("CREATE_PROCESS at priority 240", rc, INVALID_PARAM);
    SET_PRIORITY(chain_id[0], 0, &rc);
    check_eq("SET_PRIORITY to 0", rc, INVALID_PARAM);
    SET_PRIORITY(chain_id[0], 240, &rc);
    check_eq("SET_PRIORITY to 240", rc, INVALID_PARAM);
    CREATE_MUTEX("M0", 0, FIFO, &m, &rc);
    check_eq("CREATE_MUTEX at priority 0", rc, INVALID_PARAM);
    CREATE_MUTEX("M240", 240, FIFO, &m, &rc);
    check_eq("CREATE_MUTEX at priority 240", rc, INVALID_PARAM);
}

int main(int argc, char **argv)
{
    RETURN_CODE_TYPE rc;
    char name[8];
    for (int k = 0; k < CHAIN; k++) {
        snprintf(name, sizeof name, "C%d", chain_prio[k]);
        chain_id[k] = create(name, chain_entry, chain_prio[k], INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
        check_eq("base priority as created", current_priority(chain_id[k]), chain_prio[k]);
    }
    r_id = create("R", r_entry, 160, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    q_id = create("Q", q_entry, 140, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    mx_id = create("MX", mx_entry, 200, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    x_id = create("X", x_entry, 239, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    CREATE_MUTEX("CEILING", 239, FIFO, &ceiling_mutex, &rc);
    check_eq("CREATE_MUTEX at priority 239", rc, NO_ERROR);
    out_of_range();
    if (argc > 1 && strcmp(argv[1], "overflow") == 0)
        end();
    chain_only = argc > 1 && strcmp(argv[1], "chain") == 0;
    START(chain_id[0], &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
