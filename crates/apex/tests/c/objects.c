/* Blocking behaviour of the intra-partition objects, on one core with real-time priorities:
 * wake-up order by queuing discipline (PRIORITY: by current priority; FIFO: by arrival),
 * hand-off of buffer and blackboard messages to waiting processes, blocked senders, events
 * waking every waiter, WAITING state, STOP and SUSPEND/RESUME of waiting processes, and the
 * mutex priority (a ceiling: neither a middle- nor a higher-priority process preempts the owner).
 * The controller runs at priority 5, below every worker, so it runs only when they all wait.
 * Checks compare orders and counters, never durations. */
#include "check.h"

static char order[64];
static void note(char c)
{
    size_t n = strlen(order);
    order[n] = c;
    order[n + 1] = 0;
}

static SEMAPHORE_ID_TYPE sem_prio, sem_fifo, sem_stop, sem_done;
static BUFFER_ID_TYPE buf;
static BLACKBOARD_ID_TYPE board;
static EVENT_ID_TYPE ev, never;
static MUTEX_ID_TYPE mtx, held;
static PROCESS_ID_TYPE a_id, b_id, c_id, recv_id, send_id, r1_id, r2_id, w1_id, w2_id, stopv_id, susp_id, low_id, mid_id,
    high_id, holder_id, stopper_id;
static SEMAPHORE_ID_TYPE current_sem;
static atomic_int susp_rc = -1, stopped_returned;

/* Workers A (20), B (30), C (40) wait on current_sem and note their letter. */
static void wa(void) { RETURN_CODE_TYPE rc; WAIT_SEMAPHORE(current_sem, INFINITE_TIME_VALUE, &rc); if (rc == NO_ERROR) note('A'); }
static void wb(void) { RETURN_CODE_TYPE rc; WAIT_SEMAPHORE(current_sem, INFINITE_TIME_VALUE, &rc); if (rc == NO_ERROR) note('B'); }
static void wc(void) { RETURN_CODE_TYPE rc; WAIT_SEMAPHORE(current_sem, INFINITE_TIME_VALUE, &rc); if (rc == NO_ERROR) note('C'); }

static APEX_BYTE received[64];
static MESSAGE_SIZE_TYPE received_len;
static void receiver(void)
{
    RETURN_CODE_TYPE rc;
    RECEIVE_BUFFER(buf, INFINITE_TIME_VALUE, received, &received_len, &rc);
    check_eq("blocked RECEIVE_BUFFER gets the message", rc, NO_ERROR);
}

static void sender(void)
{
    RETURN_CODE_TYPE rc;
    SEND_BUFFER(buf, "from the blocked sender", 23, INFINITE_TIME_VALUE, &rc);
    check_eq("blocked SEND_BUFFER completes when room is made", rc, NO_ERROR);
    note('S');
}

static APEX_BYTE r1_msg[32], r2_msg[32];
static MESSAGE_SIZE_TYPE r1_len, r2_len;
static void reader1(void) { RETURN_CODE_TYPE rc; READ_BLACKBOARD(board, INFINITE_TIME_VALUE, r1_msg, &r1_len, &rc); if (rc == NO_ERROR) note('1'); }
static void reader2(void) { RETURN_CODE_TYPE rc; READ_BLACKBOARD(board, 500 * MS, r2_msg, &r2_len, &rc); if (rc == NO_ERROR) note('2'); }

static void ewait1(void) { RETURN_CODE_TYPE rc; WAIT_EVENT(ev, INFINITE_TIME_VALUE, &rc); if (rc == NO_ERROR) note('x'); }
static void ewait2(void) { RETURN_CODE_TYPE rc; WAIT_EVENT(ev, 1000 * MS, &rc); if (rc == NO_ERROR) note('y'); }

static void stop_victim(void)
{
    RETURN_CODE_TYPE rc;
    WAIT_SEMAPHORE(sem_stop, INFINITE_TIME_VALUE, &rc);
    atomic_store(&stopped_returned, 1);
}

static void suspended_waiter(void)
{
    RETURN_CODE_TYPE rc;
    WAIT_SEMAPHORE(sem_stop, 200 * MS, &rc);
    atomic_store(&susp_rc, (int)rc);
}

/* Mutex: LOW (20) owns the mutex (priority 50) while MID (30) and HIGH (45) are started. */
static void mid(void) { note('m'); }
static void high(void)
{
    RETURN_CODE_TYPE rc;
    PROCESS_STATUS_TYPE st;
    note('h');
    ACQUIRE_MUTEX(mtx, INFINITE_TIME_VALUE, &rc);
    check_eq("HIGH gets the mutex at the release", rc, NO_ERROR);
    GET_PROCESS_STATUS(high_id, &st, &rc);
    check_eq("the new owner runs at the mutex priority", st.CURRENT_PRIORITY, 50);
    note('H');
    RELEASE_MUTEX(mtx, &rc);
}
static void low(void)
{
    RETURN_CODE_TYPE rc;
    PROCESS_STATUS_TYPE st;
    MUTEX_STATUS_TYPE ms;
    ACQUIRE_MUTEX(mtx, INFINITE_TIME_VALUE, &rc);
    check_eq("LOW acquires the mutex", rc, NO_ERROR);
    note('L');
    START(mid_id, &rc);
    START(high_id, &rc);
    note('l'); /* neither MID nor HIGH preempted the owner */
    /* The owner may not wait (P1-5): on one core nobody below the mutex priority runs before
     * the release. */
    TIMED_WAIT(2 * MS, &rc);
    check_eq("the owner may not TIMED_WAIT", rc, INVALID_MODE);
    GET_MUTEX_STATUS(mtx, &ms, &rc);
    check_eq("nobody waits for the mutex", ms.WAITING_PROCESSES, 0);
    GET_PROCESS_STATUS(high_id, &st, &rc);
    check_eq("HIGH is READY", st.PROCESS_STATE, READY);
    note('R');
    RELEASE_MUTEX(mtx, &rc); /* LOW back at 20: HIGH preempts it at once, gets the mutex, then MID */
    note('r');
    GET_PROCESS_STATUS(low_id, &st, &rc);
    check_eq("LOW is back at its own priority", st.CURRENT_PRIORITY, 20);
    SIGNAL_SEMAPHORE(sem_done, &rc);
}

/* HOLDER (30) owns a mutex (priority 50) and runs on (an owner may not wait); STOPPER (60, above
 * the mutex priority) preempts it and STOPs it. */
static atomic_int holder_owns;
static void holder(void)
{
    RETURN_CODE_TYPE rc;
    ACQUIRE_MUTEX(held, 0, &rc);
    WAIT_EVENT(never, INFINITE_TIME_VALUE, &rc);
    check_eq("the owner may not WAIT_EVENT", rc, INVALID_MODE);
    atomic_store(&holder_owns, 1);
    for (;;)
        atomic_signal_fence(memory_order_seq_cst);
}
static void stopper(void)
{
    RETURN_CODE_TYPE rc;
    MUTEX_STATUS_TYPE ms;
    START(holder_id, &rc);
    for (int i = 0; i < 1000 && !atomic_load(&holder_owns); i++)
        TIMED_WAIT(1 * MS, &rc);
    GET_MUTEX_STATUS(held, &ms, &rc);
    check_true("the holder owns the mutex", ms.MUTEX_STATE == OWNED && ms.MUTEX_OWNER == holder_id);
    STOP(holder_id, &rc);
    check_eq("STOP of the owner", rc, NO_ERROR);
    GET_MUTEX_STATUS(held, &ms, &rc);
    check_true("STOP of the owner makes the mutex AVAILABLE", ms.MUTEX_STATE == AVAILABLE && ms.LOCK_COUNT == 0);
}

static PROCESS_STATE_TYPE state(PROCESS_ID_TYPE id)
{
    PROCESS_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_PROCESS_STATUS(id, &st, &rc);
    return st.PROCESS_STATE;
}

static void run_three(SEMAPHORE_ID_TYPE s, const char *what, const char *expected)
{
    RETURN_CODE_TYPE rc;
    SEMAPHORE_STATUS_TYPE ss;
    current_sem = s;
    order[0] = 0;
    START(a_id, &rc);
    START(b_id, &rc);
    START(c_id, &rc);
    GET_SEMAPHORE_STATUS(s, &ss, &rc);
    check_eq("three processes wait on the semaphore", ss.WAITING_PROCESSES, 3);
    check_eq("a process waiting on a semaphore is WAITING", state(a_id), WAITING);
    for (int i = 0; i < 3; i++)
        SIGNAL_SEMAPHORE(s, &rc);
    check_true(what, strcmp(order, expected) == 0);
    if (strcmp(order, expected) != 0)
        printf("  order %s, expected %s\n", order, expected);
    GET_SEMAPHORE_STATUS(s, &ss, &rc);
    check_true("each signal went to a waiter: value still 0", ss.CURRENT_VALUE == 0 && ss.WAITING_PROCESSES == 0);
}

static void controller(void)
{
    RETURN_CODE_TYPE rc;
    APEX_BYTE in[64];
    MESSAGE_SIZE_TYPE len;

    /* Started A (20), B (30), C (40) in that order: PRIORITY wakes C, B, A; FIFO wakes A, B, C. */
    run_three(sem_prio, "PRIORITY semaphore wakes by priority", "CBA");
    run_three(sem_fifo, "FIFO semaphore wakes by arrival", "ABC");
    /* Raising A while it waits moves it first in a PRIORITY queue. */
    current_sem = sem_prio;
    order[0] = 0;
    START(a_id, &rc);
    START(b_id, &rc);
    SET_PRIORITY(a_id, 35, &rc);
    SIGNAL_SEMAPHORE(sem_prio, &rc);
    SIGNAL_SEMAPHORE(sem_prio, &rc);
    check_true("PRIORITY order uses the current priority", strcmp(order, "AB") == 0);

    /* Buffer: a message goes straight to a waiting receiver. */
    START(recv_id, &rc);
    check_eq("receiver waits on the empty buffer", state(recv_id), WAITING);
    SEND_BUFFER(buf, "hand-off", 8, 0, &rc);
    check_eq("SEND_BUFFER to a waiting receiver", rc, NO_ERROR);
    check_true("the receiver got the message intact", received_len == 8 && memcmp(received, "hand-off", 8) == 0);
    /* A blocked sender's message enters the buffer when a receive makes room. */
    SEND_BUFFER(buf, "one", 3, 0, &rc);
    SEND_BUFFER(buf, "two", 3, 0, &rc);
    order[0] = 0;
    START(send_id, &rc);
    BUFFER_STATUS_TYPE bs;
    GET_BUFFER_STATUS(buf, &bs, &rc);
    check_true("the sender waits on the full buffer", bs.NB_MESSAGE == 2 && bs.WAITING_PROCESSES == 1 && state(send_id) == WAITING);
    RECEIVE_BUFFER(buf, 0, in, &len, &rc);
    check_true("receive 'one'", rc == NO_ERROR && len == 3 && memcmp(in, "one", 3) == 0);
    check_true("the sender was released by the receive", strcmp(order, "S") == 0);
    RECEIVE_BUFFER(buf, 0, in, &len, &rc);
    check_true("receive 'two'", rc == NO_ERROR && len == 3 && memcmp(in, "two", 3) == 0);
    RECEIVE_BUFFER(buf, 0, in, &len, &rc);
    check_true("then the blocked sender's message", rc == NO_ERROR && len == 23 && memcmp(in, "from the blocked sender", 23) == 0);

    /* Blackboard: a display releases every waiting reader with the message. */
    order[0] = 0;
    START(r1_id, &rc);
    START(r2_id, &rc);
    BLACKBOARD_STATUS_TYPE ks;
    GET_BLACKBOARD_STATUS(board, &ks, &rc);
    check_eq("two readers wait on the empty blackboard", ks.WAITING_PROCESSES, 2);
    DISPLAY_BLACKBOARD(board, "shown", 5, &rc);
    check_true("both readers released", strchr(order, '1') && strchr(order, '2'));
    check_true("both readers got the message", r1_len == 5 && r2_len == 5 && !memcmp(r1_msg, "shown", 5) && !memcmp(r2_msg, "shown", 5));

    /* Event: SET_EVENT releases every waiter. */
    order[0] = 0;
    START(w1_id, &rc);
    START(w2_id, &rc);
    EVENT_STATUS_TYPE es;
    GET_EVENT_STATUS(ev, &es, &rc);
    check_eq("two processes wait on the event", es.WAITING_PROCESSES, 2);
    SET_EVENT(ev, &rc);
    check_true("SET_EVENT released both", strchr(order, 'x') && strchr(order, 'y'));

    /* STOP of a waiting process takes it out of the queue: a later signal is not lost. */
    START(stopv_id, &rc);
    STOP(stopv_id, &rc);
    check_eq("STOP of a waiting process", rc, NO_ERROR);
    SEMAPHORE_STATUS_TYPE ss;
    GET_SEMAPHORE_STATUS(sem_stop, &ss, &rc);
    check_eq("the stopped process left the queue", ss.WAITING_PROCESSES, 0);
    check_eq("the stopped process is DORMANT", state(stopv_id), DORMANT);
    SIGNAL_SEMAPHORE(sem_stop, &rc);
    GET_SEMAPHORE_STATUS(sem_stop, &ss, &rc);
    check_eq("a signal after the STOP is kept", ss.CURRENT_VALUE, 1);
    check_eq("the stopped process never returned from its wait", atomic_load(&stopped_returned), 0);
    WAIT_SEMAPHORE(sem_stop, 0, &rc);

    /* SUSPEND of a waiting process: it gets the unit, stays suspended until RESUME. */
    START(susp_id, &rc);
    SUSPEND(susp_id, &rc);
    check_eq("SUSPEND of a waiting process", rc, NO_ERROR);
    SIGNAL_SEMAPHORE(sem_stop, &rc);
    GET_SEMAPHORE_STATUS(sem_stop, &ss, &rc);
    check_true("the suspended waiter got the unit", ss.CURRENT_VALUE == 0 && ss.WAITING_PROCESSES == 0);
    TIMED_WAIT(2 * MS, &rc);
    check_eq("the suspended waiter does not run", atomic_load(&susp_rc), -1);
    check_eq("the suspended waiter is WAITING", state(susp_id), WAITING);
    RESUME(susp_id, &rc);
    check_eq("RESUME", rc, NO_ERROR);
    check_eq("after RESUME its wait returns NO_ERROR", atomic_load(&susp_rc), NO_ERROR);
    /* ... and when its time-out expires while suspended, it leaves the queue at once (a later
     * signal is not given to it) and its wait returns TIMED_OUT after RESUME. */
    atomic_store(&susp_rc, -1);
    START(susp_id, &rc);
    SUSPEND(susp_id, &rc);
    TIMED_WAIT(400 * MS, &rc); /* past its 200 ms time-out */
    GET_SEMAPHORE_STATUS(sem_stop, &ss, &rc);
    check_eq("a suspended waiter leaves the queue when its time-out expires", ss.WAITING_PROCESSES, 0);
    SIGNAL_SEMAPHORE(sem_stop, &rc);
    GET_SEMAPHORE_STATUS(sem_stop, &ss, &rc);
    check_eq("so a signal after its time-out is kept", ss.CURRENT_VALUE, 1);
    check_eq("it is still suspended (WAITING)", state(susp_id), WAITING);
    RESUME(susp_id, &rc);
    check_eq("after RESUME its wait returns TIMED_OUT", atomic_load(&susp_rc), TIMED_OUT);
    WAIT_SEMAPHORE(sem_stop, 0, &rc);

    /* Mutex priority. */
    order[0] = 0;
    START(low_id, &rc);
    WAIT_SEMAPHORE(sem_done, INFINITE_TIME_VALUE, &rc);
    check_true("mutex order: owner not preempted, HIGH gets it at the release", strcmp(order, "LlRhHmr") == 0);
    if (strcmp(order, "LlRhHmr") != 0)
        printf("  order %s\n", order);

    /* A mutex owner that is STOPped gives the mutex back (STOPPER runs at once and is done). */
    START(stopper_id, &rc);
    check_eq("the stopper is done", state(stopper_id), DORMANT);
    check_eq("the stopped holder is DORMANT", state(holder_id), DORMANT);
    GET_EVENT_STATUS(never, &es, &rc);
    check_eq("nobody waits on the event", es.WAITING_PROCESSES, 0);
    finish();
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    CREATE_SEMAPHORE("prio", 0, 10, PRIORITY, &sem_prio, &rc);
    CREATE_SEMAPHORE("fifo", 0, 10, FIFO, &sem_fifo, &rc);
    CREATE_SEMAPHORE("stop", 0, 10, FIFO, &sem_stop, &rc);
    CREATE_SEMAPHORE("done", 0, 10, FIFO, &sem_done, &rc);
    CREATE_BUFFER("buf", 32, 2, FIFO, &buf, &rc);
    CREATE_BLACKBOARD("board", 32, &board, &rc);
    CREATE_EVENT("ev", &ev, &rc);
    CREATE_EVENT("never", &never, &rc);
    CREATE_MUTEX("mtx", 50, PRIORITY, &mtx, &rc);
    CREATE_MUTEX("held", 50, FIFO, &held, &rc);
    check_eq("objects created", rc, NO_ERROR);
    SYSTEM_TIME_TYPE inf = INFINITE_TIME_VALUE;
    a_id = create("A", wa, 20, inf, inf);
    b_id = create("B", wb, 30, inf, inf);
    c_id = create("C", wc, 40, inf, inf);
    recv_id = create("receiver", receiver, 30, inf, inf);
    send_id = create("sender", sender, 30, inf, inf);
    r1_id = create("reader1", reader1, 30, inf, inf);
    r2_id = create("reader2", reader2, 31, inf, inf);
    w1_id = create("ewait1", ewait1, 30, inf, inf);
    w2_id = create("ewait2", ewait2, 32, inf, inf);
    stopv_id = create("stop_victim", stop_victim, 30, inf, inf);
    susp_id = create("suspended", suspended_waiter, 30, inf, inf);
    low_id = create("low", low, 20, inf, inf);
    mid_id = create("mid", mid, 30, inf, inf);
    high_id = create("high", high, 45, inf, inf);
    holder_id = create("holder", holder, 30, inf, inf);
    stopper_id = create("stopper", stopper, 60, inf, inf);
    PROCESS_ID_TYPE ctl = create("controller", controller, 5, inf, inf);
    START(ctl, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("FAIL SET_PARTITION_MODE(NORMAL) returned %d\n", (int)rc);
    return 1;
}
