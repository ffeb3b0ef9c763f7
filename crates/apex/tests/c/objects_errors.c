/* Return codes of the buffer, blackboard, semaphore, event and mutex services in every error
 * case that needs no waiting: in COLD_START (main = initialization process, which may not wait)
 * and in NORMAL (CREATE_* is INVALID_MODE; preemption locked, a process may not wait). Also the
 * implementation limits and message integrity through a buffer and a blackboard. Standalone. */
#include "check.h"

static BUFFER_ID_TYPE buf;
static BLACKBOARD_ID_TYPE bb;
static SEMAPHORE_ID_TYPE sem;
static EVENT_ID_TYPE ev;
static MUTEX_ID_TYPE mtx, low_mtx;

static void normal_checks(void)
{
    RETURN_CODE_TYPE rc;
    BUFFER_ID_TYPE b;
    BLACKBOARD_ID_TYPE k;
    SEMAPHORE_ID_TYPE s;
    EVENT_ID_TYPE e;
    MUTEX_ID_TYPE m;
    LOCK_LEVEL_TYPE level;
    APEX_BYTE msg[64];
    MESSAGE_SIZE_TYPE len = -1;

    CREATE_BUFFER("B2", 16, 4, FIFO, &b, &rc);
    check_eq("CREATE_BUFFER in NORMAL is INVALID_MODE", rc, INVALID_MODE);
    CREATE_BUFFER("B3", 16, 4, (QUEUING_DISCIPLINE_TYPE)9, &b, &rc);
    check_eq("CREATE_BUFFER in NORMAL with a bad discipline is INVALID_MODE", rc, INVALID_MODE);
    CREATE_BLACKBOARD("K2", 16, &k, &rc);
    check_eq("CREATE_BLACKBOARD in NORMAL is INVALID_MODE", rc, INVALID_MODE);
    CREATE_SEMAPHORE("S2", 0, 1, FIFO, &s, &rc);
    check_eq("CREATE_SEMAPHORE in NORMAL is INVALID_MODE", rc, INVALID_MODE);
    CREATE_EVENT("E2", &e, &rc);
    check_eq("CREATE_EVENT in NORMAL is INVALID_MODE", rc, INVALID_MODE);
    CREATE_MUTEX("M2", 10, FIFO, &m, &rc);
    check_eq("CREATE_MUTEX in NORMAL is INVALID_MODE", rc, INVALID_MODE);

    LOCK_PREEMPTION(&level, &rc);
    RECEIVE_BUFFER(buf, 10 * MS, msg, &len, &rc);
    check_eq("RECEIVE_BUFFER waiting with preemption locked is INVALID_MODE", rc, INVALID_MODE);
    READ_BLACKBOARD(bb, INFINITE_TIME_VALUE, msg, &len, &rc);
    check_eq("READ_BLACKBOARD waiting with preemption locked is INVALID_MODE", rc, INVALID_MODE);
    WAIT_SEMAPHORE(sem, 10 * MS, &rc);
    check_eq("WAIT_SEMAPHORE waiting with preemption locked is INVALID_MODE", rc, INVALID_MODE);
    WAIT_EVENT(ev, 10 * MS, &rc);
    check_eq("WAIT_EVENT waiting with preemption locked is INVALID_MODE", rc, INVALID_MODE);
    ACQUIRE_MUTEX(mtx, 0, &rc);
    check_eq("ACQUIRE_MUTEX holding the preemption lock is INVALID_MODE", rc, INVALID_MODE);
    PROCESS_ID_TYPE me;
    GET_MY_ID(&me, &rc);
    GET_PROCESS_MUTEX_STATE(me, &m, &rc);
    check_eq("GET_PROCESS_MUTEX_STATE with the preemption lock", m, PREEMPTION_LOCK_MUTEX);
    UNLOCK_PREEMPTION(&level, &rc);

    WAIT_SEMAPHORE(sem, 0, &rc);
    check_eq("WAIT_SEMAPHORE(0) on 0 is NOT_AVAILABLE", rc, NOT_AVAILABLE);
    WAIT_SEMAPHORE(sem, 5 * MS, &rc);
    check_eq("WAIT_SEMAPHORE times out: TIMED_OUT", rc, TIMED_OUT);
    WAIT_EVENT(ev, 5 * MS, &rc);
    check_eq("WAIT_EVENT times out: TIMED_OUT", rc, TIMED_OUT);
    len = -1;
    RECEIVE_BUFFER(buf, 5 * MS, msg, &len, &rc);
    check_eq("RECEIVE_BUFFER times out: TIMED_OUT", rc, TIMED_OUT);
    check_eq("RECEIVE_BUFFER times out: LENGTH 0", len, 0);
    READ_BLACKBOARD(bb, 5 * MS, msg, &len, &rc);
    check_eq("READ_BLACKBOARD times out: TIMED_OUT", rc, TIMED_OUT);

    /* Mutex rules for a process (base priority 20). */
    ACQUIRE_MUTEX(low_mtx, 0, &rc);
    check_eq("ACQUIRE_MUTEX below the caller's priority is INVALID_CONFIG", rc, INVALID_CONFIG);
    RELEASE_MUTEX(mtx, &rc);
    check_eq("RELEASE_MUTEX not owned is INVALID_MODE", rc, INVALID_MODE);
    ACQUIRE_MUTEX(mtx, -5, &rc);
    check_eq("ACQUIRE_MUTEX with TIME_OUT -5 is INVALID_PARAM", rc, INVALID_PARAM);
    ACQUIRE_MUTEX(mtx, 0, &rc);
    check_eq("ACQUIRE_MUTEX available", rc, NO_ERROR);
    PROCESS_STATUS_TYPE st;
    GET_PROCESS_STATUS(me, &st, &rc);
    check_eq("the owner runs at the mutex priority", st.CURRENT_PRIORITY, 40);
    GET_PROCESS_MUTEX_STATE(me, &m, &rc);
    check_eq("GET_PROCESS_MUTEX_STATE of the owner", m, mtx);
    int nested = 1;
    for (;;) {
        ACQUIRE_MUTEX(mtx, 0, &rc);
        if (rc != NO_ERROR)
            break;
        nested++;
    }
    check_eq("ACQUIRE_MUTEX nests up to MAX_LOCK_LEVEL, then INVALID_CONFIG", rc, INVALID_CONFIG);
    check_eq("lock count reached MAX_LOCK_LEVEL", nested, MAX_LOCK_LEVEL);
    MUTEX_STATUS_TYPE ms;
    GET_MUTEX_STATUS(mtx, &ms, &rc);
    check_eq("GET_MUTEX_STATUS owner", ms.MUTEX_OWNER, me);
    check_eq("GET_MUTEX_STATUS state", ms.MUTEX_STATE, OWNED);
    check_eq("GET_MUTEX_STATUS lock count", ms.LOCK_COUNT, MAX_LOCK_LEVEL);
    MUTEX_ID_TYPE other;
    GET_MUTEX_ID("MHIGH", &other, &rc);
    ACQUIRE_MUTEX(other, 0, &rc);
    check_eq("ACQUIRE_MUTEX of a second mutex is INVALID_MODE", rc, INVALID_MODE);
    SET_PRIORITY(me, 30, &rc);
    check_eq("SET_PRIORITY of a mutex owner", rc, NO_ERROR);
    GET_PROCESS_STATUS(me, &st, &rc);
    check_eq("SET_PRIORITY of a mutex owner is retained until the release", st.CURRENT_PRIORITY, 40);
    while (nested-- > 1)
        RELEASE_MUTEX(mtx, &rc);
    GET_PROCESS_STATUS(me, &st, &rc);
    check_eq("the owner keeps the mutex priority until the last release", st.CURRENT_PRIORITY, 40);
    RELEASE_MUTEX(mtx, &rc);
    check_eq("RELEASE_MUTEX (last)", rc, NO_ERROR);
    GET_PROCESS_STATUS(me, &st, &rc);
    check_eq("after the release the retained priority applies", st.CURRENT_PRIORITY, 30);
    GET_MUTEX_STATUS(mtx, &ms, &rc);
    check_eq("released mutex is AVAILABLE", ms.MUTEX_STATE, AVAILABLE);
    check_eq("released mutex has no owner", ms.MUTEX_OWNER, NO_MUTEX_OWNED);
    GET_PROCESS_MUTEX_STATE(me, &m, &rc);
    check_eq("GET_PROCESS_MUTEX_STATE after the release", m, NO_MUTEX_OWNED);
    ACQUIRE_MUTEX(mtx, 0, &rc);
    RESET_MUTEX(mtx, me, &rc);
    check_eq("RESET_MUTEX of the owner", rc, NO_ERROR);
    GET_MUTEX_STATUS(mtx, &ms, &rc);
    check_eq("RESET_MUTEX makes it AVAILABLE", ms.MUTEX_STATE, AVAILABLE);
    RESET_MUTEX(mtx, me, &rc);
    check_eq("RESET_MUTEX of a process that does not own it is INVALID_MODE", rc, INVALID_MODE);
    RESET_MUTEX(mtx, 999, &rc);
    check_eq("RESET_MUTEX of an unknown process is INVALID_PARAM", rc, INVALID_PARAM);
    RESET_MUTEX(999, me, &rc);
    check_eq("RESET_MUTEX of an unknown mutex is INVALID_PARAM", rc, INVALID_PARAM);
    finish();
}

int main(void)
{
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[64], in[64];
    MESSAGE_SIZE_TYPE len;
    BUFFER_ID_TYPE b = -1;
    char name[16];

    /* ---------------------------------------------------------------- buffers */
    CREATE_BUFFER("B", 16, 2, FIFO, &buf, &rc);
    check_eq("CREATE_BUFFER", rc, NO_ERROR);
    CREATE_BUFFER("B", 16, 2, FIFO, &b, &rc);
    check_eq("CREATE_BUFFER with a name in use is NO_ACTION", rc, NO_ACTION);
    CREATE_BUFFER("BX", 0, 2, FIFO, &b, &rc);
    check_eq("CREATE_BUFFER MAX_MESSAGE_SIZE 0 is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_BUFFER("BX", SYSTEM_LIMIT_MESSAGE_SIZE + 1, 2, FIFO, &b, &rc);
    check_eq("CREATE_BUFFER MAX_MESSAGE_SIZE above the limit is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_BUFFER("BX", 16, 0, FIFO, &b, &rc);
    check_eq("CREATE_BUFFER MAX_NB_MESSAGE 0 is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_BUFFER("BX", 16, SYSTEM_LIMIT_NUMBER_OF_MESSAGES + 1, FIFO, &b, &rc);
    check_eq("CREATE_BUFFER MAX_NB_MESSAGE above the limit is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_BUFFER("BX", 16, 2, (QUEUING_DISCIPLINE_TYPE)7, &b, &rc);
    check_eq("CREATE_BUFFER bad discipline is INVALID_PARAM", rc, INVALID_PARAM);
    check_eq("failed CREATE_BUFFER leaves BUFFER_ID alone", b, -1);
    GET_BUFFER_ID("B", &b, &rc);
    check_eq("GET_BUFFER_ID", rc, NO_ERROR);
    check_eq("GET_BUFFER_ID is the created id", b, buf);
    GET_BUFFER_ID("nope", &b, &rc);
    check_eq("GET_BUFFER_ID unknown is INVALID_CONFIG", rc, INVALID_CONFIG);
    SEND_BUFFER(buf + 100, "x", 1, 0, &rc);
    check_eq("SEND_BUFFER unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    SEND_BUFFER(buf, "x", 17, 0, &rc);
    check_eq("SEND_BUFFER LENGTH above MAX_MESSAGE_SIZE is INVALID_PARAM", rc, INVALID_PARAM);
    SEND_BUFFER(buf, "x", 0, 0, &rc);
    check_eq("SEND_BUFFER LENGTH 0 is INVALID_PARAM", rc, INVALID_PARAM);
    SEND_BUFFER(buf, "x", 1, -2, &rc);
    check_eq("SEND_BUFFER TIME_OUT -2 is INVALID_PARAM", rc, INVALID_PARAM);
    len = 99;
    RECEIVE_BUFFER(buf, 0, in, &len, &rc);
    check_eq("RECEIVE_BUFFER empty, TIME_OUT 0: NOT_AVAILABLE", rc, NOT_AVAILABLE);
    check_eq("RECEIVE_BUFFER empty: LENGTH 0", len, 0);
    RECEIVE_BUFFER(buf, 10 * MS, in, &len, &rc);
    check_eq("RECEIVE_BUFFER waiting in the initialization process is INVALID_MODE", rc, INVALID_MODE);
    RECEIVE_BUFFER(-1, 0, in, &len, &rc);
    check_eq("RECEIVE_BUFFER unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    RECEIVE_BUFFER(buf, -7, in, &len, &rc);
    check_eq("RECEIVE_BUFFER TIME_OUT -7 is INVALID_PARAM", rc, INVALID_PARAM);
    for (int i = 0; i < 16; i++)
        msg[i] = (APEX_BYTE)(0xA0 + i);
    SEND_BUFFER(buf, msg, 16, 0, &rc);
    check_eq("SEND_BUFFER 16 bytes", rc, NO_ERROR);
    SEND_BUFFER(buf, "second", 6, 0, &rc);
    check_eq("SEND_BUFFER second message", rc, NO_ERROR);
    SEND_BUFFER(buf, "third", 5, 0, &rc);
    check_eq("SEND_BUFFER full, TIME_OUT 0: NOT_AVAILABLE", rc, NOT_AVAILABLE);
    SEND_BUFFER(buf, "third", 5, INFINITE_TIME_VALUE, &rc);
    check_eq("SEND_BUFFER full, waiting in the initialization process: INVALID_MODE", rc, INVALID_MODE);
    BUFFER_STATUS_TYPE bs;
    GET_BUFFER_STATUS(buf, &bs, &rc);
    check_eq("GET_BUFFER_STATUS", rc, NO_ERROR);
    check_eq("NB_MESSAGE", bs.NB_MESSAGE, 2);
    check_eq("MAX_NB_MESSAGE", bs.MAX_NB_MESSAGE, 2);
    check_eq("MAX_MESSAGE_SIZE", bs.MAX_MESSAGE_SIZE, 16);
    check_eq("WAITING_PROCESSES", bs.WAITING_PROCESSES, 0);
    GET_BUFFER_STATUS(0, &bs, &rc);
    check_eq("GET_BUFFER_STATUS unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    memset(in, 0, sizeof in);
    RECEIVE_BUFFER(buf, 0, in, &len, &rc);
    check_eq("RECEIVE_BUFFER first", rc, NO_ERROR);
    check_eq("first message length", len, 16);
    check_true("first message bytes intact", memcmp(in, msg, 16) == 0);
    RECEIVE_BUFFER(buf, 0, in, &len, &rc);
    check_true("second message in FIFO order", rc == NO_ERROR && len == 6 && memcmp(in, "second", 6) == 0);

    /* ---------------------------------------------------------------- blackboards */
    BLACKBOARD_ID_TYPE k = -1;
    CREATE_BLACKBOARD("K", 32, &bb, &rc);
    check_eq("CREATE_BLACKBOARD", rc, NO_ERROR);
    CREATE_BLACKBOARD("K", 32, &k, &rc);
    check_eq("CREATE_BLACKBOARD with a name in use is NO_ACTION", rc, NO_ACTION);
    CREATE_BLACKBOARD("KX", 0, &k, &rc);
    check_eq("CREATE_BLACKBOARD MAX_MESSAGE_SIZE 0 is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_BLACKBOARD("KX", SYSTEM_LIMIT_MESSAGE_SIZE + 1, &k, &rc);
    check_eq("CREATE_BLACKBOARD above the limit is INVALID_PARAM", rc, INVALID_PARAM);
    GET_BLACKBOARD_ID("K", &k, &rc);
    check_true("GET_BLACKBOARD_ID", rc == NO_ERROR && k == bb);
    GET_BLACKBOARD_ID("KX", &k, &rc);
    check_eq("GET_BLACKBOARD_ID unknown is INVALID_CONFIG", rc, INVALID_CONFIG);
    READ_BLACKBOARD(bb, 0, in, &len, &rc);
    check_eq("READ_BLACKBOARD empty, TIME_OUT 0: NOT_AVAILABLE", rc, NOT_AVAILABLE);
    READ_BLACKBOARD(bb, 5 * MS, in, &len, &rc);
    check_eq("READ_BLACKBOARD waiting in the initialization process: INVALID_MODE", rc, INVALID_MODE);
    READ_BLACKBOARD(bb, -3, in, &len, &rc);
    check_eq("READ_BLACKBOARD TIME_OUT -3 is INVALID_PARAM", rc, INVALID_PARAM);
    READ_BLACKBOARD(77, 0, in, &len, &rc);
    check_eq("READ_BLACKBOARD unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    DISPLAY_BLACKBOARD(bb, "x", 33, &rc);
    check_eq("DISPLAY_BLACKBOARD LENGTH above MAX_MESSAGE_SIZE is INVALID_PARAM", rc, INVALID_PARAM);
    DISPLAY_BLACKBOARD(bb, "x", -1, &rc);
    check_eq("DISPLAY_BLACKBOARD LENGTH -1 is INVALID_PARAM", rc, INVALID_PARAM);
    DISPLAY_BLACKBOARD(77, "x", 1, &rc);
    check_eq("DISPLAY_BLACKBOARD unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    DISPLAY_BLACKBOARD(bb, "board one", 9, &rc);
    check_eq("DISPLAY_BLACKBOARD", rc, NO_ERROR);
    DISPLAY_BLACKBOARD(bb, "board 2", 7, &rc);
    BLACKBOARD_STATUS_TYPE ks;
    GET_BLACKBOARD_STATUS(bb, &ks, &rc);
    check_true("GET_BLACKBOARD_STATUS OCCUPIED, size 32, 0 waiting",
               rc == NO_ERROR && ks.EMPTY_INDICATOR == OCCUPIED && ks.MAX_MESSAGE_SIZE == 32 && ks.WAITING_PROCESSES == 0);
    for (int i = 0; i < 2; i++) {
        memset(in, 0, sizeof in);
        READ_BLACKBOARD(bb, 0, in, &len, &rc);
        check_true("READ_BLACKBOARD gets the last display, and it stays", rc == NO_ERROR && len == 7 && memcmp(in, "board 2", 7) == 0);
    }
    CLEAR_BLACKBOARD(bb, &rc);
    check_eq("CLEAR_BLACKBOARD", rc, NO_ERROR);
    CLEAR_BLACKBOARD(78, &rc);
    check_eq("CLEAR_BLACKBOARD unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    GET_BLACKBOARD_STATUS(bb, &ks, &rc);
    check_eq("cleared blackboard is EMPTY", ks.EMPTY_INDICATOR, EMPTY);
    GET_BLACKBOARD_STATUS(78, &ks, &rc);
    check_eq("GET_BLACKBOARD_STATUS unknown id is INVALID_PARAM", rc, INVALID_PARAM);

    /* ---------------------------------------------------------------- semaphores */
    SEMAPHORE_ID_TYPE s = -1;
    CREATE_SEMAPHORE("S", 1, 2, PRIORITY, &sem, &rc);
    check_eq("CREATE_SEMAPHORE", rc, NO_ERROR);
    CREATE_SEMAPHORE("S", 1, 2, PRIORITY, &s, &rc);
    check_eq("CREATE_SEMAPHORE with a name in use is NO_ACTION", rc, NO_ACTION);
    CREATE_SEMAPHORE("SX", -1, 2, FIFO, &s, &rc);
    check_eq("CREATE_SEMAPHORE CURRENT_VALUE -1 is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_SEMAPHORE("SX", 3, 2, FIFO, &s, &rc);
    check_eq("CREATE_SEMAPHORE CURRENT_VALUE above MAXIMUM_VALUE is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_SEMAPHORE("SX", 0, MAX_SEMAPHORE_VALUE + 1, FIFO, &s, &rc);
    check_eq("CREATE_SEMAPHORE MAXIMUM_VALUE above MAX_SEMAPHORE_VALUE is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_SEMAPHORE("SX", 0, 0, FIFO, &s, &rc);
    check_eq("CREATE_SEMAPHORE MAXIMUM_VALUE 0 is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_SEMAPHORE("SX", 0, 1, (QUEUING_DISCIPLINE_TYPE)2, &s, &rc);
    check_eq("CREATE_SEMAPHORE bad discipline is INVALID_PARAM", rc, INVALID_PARAM);
    GET_SEMAPHORE_ID("S", &s, &rc);
    check_true("GET_SEMAPHORE_ID", rc == NO_ERROR && s == sem);
    GET_SEMAPHORE_ID("SX", &s, &rc);
    check_eq("GET_SEMAPHORE_ID unknown is INVALID_CONFIG", rc, INVALID_CONFIG);
    WAIT_SEMAPHORE(sem, -2, &rc);
    check_eq("WAIT_SEMAPHORE TIME_OUT -2 is INVALID_PARAM", rc, INVALID_PARAM);
    WAIT_SEMAPHORE(55, 0, &rc);
    check_eq("WAIT_SEMAPHORE unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    WAIT_SEMAPHORE(sem, 0, &rc);
    check_eq("WAIT_SEMAPHORE on 1", rc, NO_ERROR);
    WAIT_SEMAPHORE(sem, 0, &rc);
    check_eq("WAIT_SEMAPHORE on 0, TIME_OUT 0: NOT_AVAILABLE", rc, NOT_AVAILABLE);
    WAIT_SEMAPHORE(sem, INFINITE_TIME_VALUE, &rc);
    check_eq("WAIT_SEMAPHORE waiting in the initialization process: INVALID_MODE", rc, INVALID_MODE);
    SIGNAL_SEMAPHORE(sem, &rc);
    SIGNAL_SEMAPHORE(sem, &rc);
    check_eq("SIGNAL_SEMAPHORE up to MAXIMUM_VALUE", rc, NO_ERROR);
    SIGNAL_SEMAPHORE(sem, &rc);
    check_eq("SIGNAL_SEMAPHORE at MAXIMUM_VALUE is NO_ACTION", rc, NO_ACTION);
    SIGNAL_SEMAPHORE(55, &rc);
    check_eq("SIGNAL_SEMAPHORE unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    SEMAPHORE_STATUS_TYPE ss;
    GET_SEMAPHORE_STATUS(sem, &ss, &rc);
    check_true("GET_SEMAPHORE_STATUS 2/2, 0 waiting", rc == NO_ERROR && ss.CURRENT_VALUE == 2 && ss.MAXIMUM_VALUE == 2 && ss.WAITING_PROCESSES == 0);
    GET_SEMAPHORE_STATUS(55, &ss, &rc);
    check_eq("GET_SEMAPHORE_STATUS unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    WAIT_SEMAPHORE(sem, 0, &rc);
    WAIT_SEMAPHORE(sem, 0, &rc); /* back to 0 for the NORMAL checks */

    /* ---------------------------------------------------------------- events */
    EVENT_ID_TYPE e = -1;
    CREATE_EVENT("E", &ev, &rc);
    check_eq("CREATE_EVENT", rc, NO_ERROR);
    CREATE_EVENT("E", &e, &rc);
    check_eq("CREATE_EVENT with a name in use is NO_ACTION", rc, NO_ACTION);
    EVENT_STATUS_TYPE es;
    GET_EVENT_STATUS(ev, &es, &rc);
    check_true("a new event is DOWN", rc == NO_ERROR && es.EVENT_STATE == DOWN && es.WAITING_PROCESSES == 0);
    WAIT_EVENT(ev, 0, &rc);
    check_eq("WAIT_EVENT DOWN, TIME_OUT 0: NOT_AVAILABLE", rc, NOT_AVAILABLE);
    WAIT_EVENT(ev, 5 * MS, &rc);
    check_eq("WAIT_EVENT waiting in the initialization process: INVALID_MODE", rc, INVALID_MODE);
    WAIT_EVENT(ev, -4, &rc);
    check_eq("WAIT_EVENT TIME_OUT -4 is INVALID_PARAM", rc, INVALID_PARAM);
    SET_EVENT(ev, &rc);
    check_eq("SET_EVENT", rc, NO_ERROR);
    WAIT_EVENT(ev, 0, &rc);
    check_eq("WAIT_EVENT UP", rc, NO_ERROR);
    GET_EVENT_STATUS(ev, &es, &rc);
    check_eq("SET_EVENT makes it UP", es.EVENT_STATE, UP);
    RESET_EVENT(ev, &rc);
    check_eq("RESET_EVENT", rc, NO_ERROR);
    GET_EVENT_STATUS(ev, &es, &rc);
    check_eq("RESET_EVENT makes it DOWN", es.EVENT_STATE, DOWN);
    SET_EVENT(99, &rc);
    check_eq("SET_EVENT unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    RESET_EVENT(99, &rc);
    check_eq("RESET_EVENT unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    WAIT_EVENT(99, 0, &rc);
    check_eq("WAIT_EVENT unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    GET_EVENT_STATUS(99, &es, &rc);
    check_eq("GET_EVENT_STATUS unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    GET_EVENT_ID("E", &e, &rc);
    check_true("GET_EVENT_ID", rc == NO_ERROR && e == ev);
    GET_EVENT_ID("EX", &e, &rc);
    check_eq("GET_EVENT_ID unknown is INVALID_CONFIG", rc, INVALID_CONFIG);
    /* The implementation limit: SYSTEM_LIMIT_NUMBER_OF_EVENTS per partition. */
    int made = 1;
    for (int i = 0; i < SYSTEM_LIMIT_NUMBER_OF_EVENTS + 5; i++) {
        snprintf(name, sizeof name, "EV%d", i);
        CREATE_EVENT(name, &e, &rc);
        if (rc != NO_ERROR)
            break;
        made++;
    }
    check_eq("CREATE_EVENT beyond the limit is INVALID_CONFIG", rc, INVALID_CONFIG);
    check_eq("exactly SYSTEM_LIMIT_NUMBER_OF_EVENTS events", made, SYSTEM_LIMIT_NUMBER_OF_EVENTS);
    CREATE_EVENT("E", &e, &rc);
    check_eq("CREATE_EVENT beyond the limit with a name in use is INVALID_CONFIG", rc, INVALID_CONFIG);

    /* ---------------------------------------------------------------- mutexes */
    MUTEX_ID_TYPE m = -1;
    CREATE_MUTEX("M", 40, PRIORITY, &mtx, &rc);
    check_eq("CREATE_MUTEX", rc, NO_ERROR);
    CREATE_MUTEX("M", 40, PRIORITY, &m, &rc);
    check_eq("CREATE_MUTEX with a name in use is NO_ACTION", rc, NO_ACTION);
    CREATE_MUTEX("MX", 0, FIFO, &m, &rc);
    check_eq("CREATE_MUTEX priority 0 is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_MUTEX("MX", MAX_PRIORITY_VALUE + 1, FIFO, &m, &rc);
    check_eq("CREATE_MUTEX priority above MAX is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_MUTEX("MX", 10, (QUEUING_DISCIPLINE_TYPE)5, &m, &rc);
    check_eq("CREATE_MUTEX bad discipline is INVALID_PARAM", rc, INVALID_PARAM);
    CREATE_MUTEX("MLOW", 10, FIFO, &low_mtx, &rc);
    CREATE_MUTEX("MHIGH", 60, FIFO, &m, &rc);
    check_eq("CREATE_MUTEX MHIGH", rc, NO_ERROR);
    GET_MUTEX_ID("M", &m, &rc);
    check_true("GET_MUTEX_ID", rc == NO_ERROR && m == mtx);
    GET_MUTEX_ID("MX", &m, &rc);
    check_eq("GET_MUTEX_ID unknown is INVALID_CONFIG", rc, INVALID_CONFIG);
    MUTEX_STATUS_TYPE ms;
    GET_MUTEX_STATUS(mtx, &ms, &rc);
    check_true("GET_MUTEX_STATUS of a new mutex",
               rc == NO_ERROR && ms.MUTEX_OWNER == NO_MUTEX_OWNED && ms.MUTEX_STATE == AVAILABLE && ms.MUTEX_PRIORITY == 40 &&
                   ms.LOCK_COUNT == 0 && ms.WAITING_PROCESSES == 0);
    GET_MUTEX_STATUS(0, &ms, &rc);
    check_eq("GET_MUTEX_STATUS unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    ACQUIRE_MUTEX(mtx, 0, &rc);
    check_eq("ACQUIRE_MUTEX in the initialization process is INVALID_MODE", rc, INVALID_MODE);
    ACQUIRE_MUTEX(0, 0, &rc);
    check_eq("ACQUIRE_MUTEX unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    RELEASE_MUTEX(0, &rc);
    check_eq("RELEASE_MUTEX unknown id is INVALID_PARAM", rc, INVALID_PARAM);
    GET_PROCESS_MUTEX_STATE(1234, &m, &rc);
    check_eq("GET_PROCESS_MUTEX_STATE unknown process is INVALID_PARAM", rc, INVALID_PARAM);

    PROCESS_ID_TYPE p = create("normal", normal_checks, 20, INFINITE_TIME_VALUE, INFINITE_TIME_VALUE);
    GET_PROCESS_MUTEX_STATE(p, &m, &rc);
    check_true("GET_PROCESS_MUTEX_STATE of a process owning none", rc == NO_ERROR && m == NO_MUTEX_OWNED);
    START(p, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("FAIL SET_PARTITION_MODE(NORMAL) returned %d\n", (int)rc);
    return 1;
}
