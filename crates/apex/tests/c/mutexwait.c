/* ARINC 653 P1-5 rules checked here (standalone, one core, real-time scheduling):
 *  - a process that owns a mutex (or holds the preemption lock) may not block: TIMED_WAIT,
 *    PERIODIC_WAIT, SUSPEND_SELF and WAIT_SEMAPHORE / WAIT_EVENT / RECEIVE_BUFFER / SEND_BUFFER /
 *    READ_BLACKBOARD with a TIME_OUT other than 0 return INVALID_MODE (with TIME_OUT 0 the
 *    resource rule applies: NOT_AVAILABLE); after RELEASE_MUTEX they block again;
 *  - SET_PRIORITY of another ready process makes it the newest of its new priority: lowered to,
 *    or set again at, the priority of a ready process, it runs after that one.
 * Queuing ports (same rule) need a module: see the module tests. */
#include "check.h"

static MUTEX_ID_TYPE mutex_id;
static SEMAPHORE_ID_TYPE sem_id;
static EVENT_ID_TYPE event_id;
static BUFFER_ID_TYPE empty_buffer, full_buffer;
static BLACKBOARD_ID_TYPE board_id;
static PROCESS_ID_TYPE x_id, y_id, owner_id, periodic_id;
static char order[8];
static atomic_int order_len;
static atomic_int periodic_done;

static void note(char c)
{
    int n = atomic_fetch_add(&order_len, 1);
    if (n < (int)sizeof order - 1)
        order[n] = c;
}

static void proc_x(void)
{
    note('X');
}

static void proc_y(void)
{
    note('Y');
}

static void owner(void)
{
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[16] = {0};
    MESSAGE_SIZE_TYPE len;
    ACQUIRE_MUTEX(mutex_id, INFINITE_TIME_VALUE, &rc);
    check_eq("ACQUIRE_MUTEX", rc, NO_ERROR);
    TIMED_WAIT(1 * MS, &rc);
    check_eq("TIMED_WAIT owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    TIMED_WAIT(0, &rc);
    check_eq("TIMED_WAIT(0) owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    SUSPEND_SELF(5 * MS, &rc);
    check_eq("SUSPEND_SELF with a time-out owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    SUSPEND_SELF(INFINITE_TIME_VALUE, &rc);
    check_eq("SUSPEND_SELF(INFINITE) owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    WAIT_SEMAPHORE(sem_id, 5 * MS, &rc);
    check_eq("WAIT_SEMAPHORE with a time-out owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    WAIT_SEMAPHORE(sem_id, INFINITE_TIME_VALUE, &rc);
    check_eq("WAIT_SEMAPHORE(INFINITE) owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    WAIT_SEMAPHORE(sem_id, 0, &rc);
    check_eq("WAIT_SEMAPHORE(0) owning a mutex is NOT_AVAILABLE", rc, NOT_AVAILABLE);
    WAIT_EVENT(event_id, 5 * MS, &rc);
    check_eq("WAIT_EVENT with a time-out owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    RECEIVE_BUFFER(empty_buffer, 5 * MS, msg, &len, &rc);
    check_eq("RECEIVE_BUFFER with a time-out owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    SEND_BUFFER(full_buffer, msg, 4, 5 * MS, &rc);
    check_eq("SEND_BUFFER to a full buffer with a time-out owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    READ_BLACKBOARD(board_id, 5 * MS, msg, &len, &rc);
    check_eq("READ_BLACKBOARD with a time-out owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    RELEASE_MUTEX(mutex_id, &rc);
    check_eq("RELEASE_MUTEX", rc, NO_ERROR);
    TIMED_WAIT(1 * MS, &rc);
    check_eq("TIMED_WAIT after RELEASE_MUTEX", rc, NO_ERROR);
    WAIT_SEMAPHORE(sem_id, 1 * MS, &rc);
    check_eq("WAIT_SEMAPHORE after RELEASE_MUTEX times out", rc, TIMED_OUT);
    LOCK_PREEMPTION(&(LOCK_LEVEL_TYPE){0}, &rc);
    check_eq("LOCK_PREEMPTION", rc, NO_ERROR);
    WAIT_EVENT(event_id, 5 * MS, &rc);
    check_eq("WAIT_EVENT holding the preemption lock is INVALID_MODE", rc, INVALID_MODE);
    UNLOCK_PREEMPTION(&(LOCK_LEVEL_TYPE){0}, &rc);
    check_eq("UNLOCK_PREEMPTION", rc, NO_ERROR);
}

static void periodic(void)
{
    RETURN_CODE_TYPE rc;
    ACQUIRE_MUTEX(mutex_id, INFINITE_TIME_VALUE, &rc);
    PERIODIC_WAIT(&rc);
    check_eq("PERIODIC_WAIT owning a mutex is INVALID_MODE", rc, INVALID_MODE);
    RELEASE_MUTEX(mutex_id, &rc);
    PERIODIC_WAIT(&rc);
    check_eq("PERIODIC_WAIT after RELEASE_MUTEX", rc, NO_ERROR);
    atomic_store(&periodic_done, 1);
    for (;;)
        PERIODIC_WAIT(&rc);
}

/* Starts X then Y (Y at 10; X at `x_prio`), sets X to 10 and lets both run: returns the order. */
static const char *run_pair(PRIORITY_TYPE x_prio)
{
    RETURN_CODE_TYPE rc;
    atomic_store(&order_len, 0);
    memset(order, 0, sizeof order);
    SET_PRIORITY(x_id, x_prio, &rc); /* X is DORMANT: INVALID_MODE, its base priority is used */
    START(y_id, &rc);
    START(x_id, &rc);
    SET_PRIORITY(x_id, x_prio, &rc);
    SET_PRIORITY(x_id, 10, &rc);
    check_eq("SET_PRIORITY of another process", rc, NO_ERROR);
    for (int i = 0; i < 1000 && atomic_load(&order_len) < 2; i++)
        TIMED_WAIT(1 * MS, &rc);
    return order;
}

static void controller(void)
{
    RETURN_CODE_TYPE rc;
    START(owner_id, &rc);
    /* The owner (higher priority) has run through its checks. */
    START(periodic_id, &rc);
    for (int i = 0; i < 1000 && !atomic_load(&periodic_done); i++)
        TIMED_WAIT(1 * MS, &rc);
    check_true("the periodic process got through", atomic_load(&periodic_done));

    /* X started after Y (X newest at 10 already, whatever Linux does): the control case. */
    check_true("X started after Y at the same priority runs after it", strcmp(run_pair(10), "YX") == 0);
    /* X started first but at 20, then lowered to 10: the newest of priority 10, after Y. */
    START(x_id, &rc); /* make sure both are DORMANT again */
    STOP(x_id, &rc);
    atomic_store(&order_len, 0);
    memset(order, 0, sizeof order);
    START(x_id, &rc);
    SET_PRIORITY(x_id, 20, &rc);
    START(y_id, &rc);
    SET_PRIORITY(x_id, 10, &rc);
    check_eq("SET_PRIORITY lowering another process", rc, NO_ERROR);
    for (int i = 0; i < 1000 && atomic_load(&order_len) < 2; i++)
        TIMED_WAIT(1 * MS, &rc);
    check_true("a process lowered to a ready process's priority runs after it", strcmp(order, "YX") == 0);
    if (strcmp(order, "YX") != 0)
        printf("order: %s\n", order);
    /* X started first at 10, then set again to 10: the newest, after Y. */
    atomic_store(&order_len, 0);
    memset(order, 0, sizeof order);
    START(x_id, &rc);
    START(y_id, &rc);
    SET_PRIORITY(x_id, 10, &rc);
    check_eq("SET_PRIORITY to the same priority", rc, NO_ERROR);
    for (int i = 0; i < 1000 && atomic_load(&order_len) < 2; i++)
        TIMED_WAIT(1 * MS, &rc);
    check_true("a process set again to its priority runs after the other ready one", strcmp(order, "YX") == 0);
    if (strcmp(order, "YX") != 0)
        printf("order: %s\n", order);
    finish();
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    CREATE_MUTEX("M", 40, FIFO, &mutex_id, &rc);
    check_eq("CREATE_MUTEX", rc, NO_ERROR);
    CREATE_SEMAPHORE("S", 0, 1, FIFO, &sem_id, &rc);
    CREATE_EVENT("E", &event_id, &rc);
    CREATE_BUFFER("EMPTY", 16, 1, FIFO, &empty_buffer, &rc);
    CREATE_BUFFER("FULL", 16, 1, FIFO, &full_buffer, &rc);
    SEND_BUFFER(full_buffer, "full", 4, 0, &rc);
    check_eq("fill the buffer", rc, NO_ERROR);
    CREATE_BLACKBOARD("B", 16, &board_id, &rc);
    x_id = create("X", proc_x, 10, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    y_id = create("Y", proc_y, 10, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    owner_id = create("OWNER", owner, 30, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    periodic_id = create("PERIODIC", periodic, 30, 20 * MS, INFINITE_TIME_VALUE);
    PROCESS_ID_TYPE c = create("CONTROLLER", controller, 25, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    START(c, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
