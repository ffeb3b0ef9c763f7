/* A destination queue that overflows over UDP (tests/run_udp.rs); argv[1] picks the role.
 *   sender    two bursts of TOTAL numbered messages of varying length on queuing port "q", as
 *             fast as its queue allows; after each, once its module took them all, it keeps
 *             writing how many it sent on sampling port "sent" ("sender done N"). The second
 *             burst waits until the receiver writes 1 on sampling port "drained".
 *   receiver  the queue "q" (of depth DEPTH) overflows twice; each time it lets it fill while
 *             the burst goes on (messages are lost), then receives everything.
 *             Burst 1, received by this process: "receiver first rc RC seq S ok O" (the first
 *             receive: INVALID_CONFIG with the oldest message intact) and "receiver done got N
 *             later_invalid I bad B" (later receives NO_ERROR, in order and intact).
 *             Burst 2, while process "waiter" waits in RECEIVE (suspended, so it cannot take
 *             messages as they come): this process's RECEIVE hands the oldest message to the
 *             waiter and gets the next: "waiter rc RC seq S ok O", "receiver second rc RC seq
 *             S ok O", "receiver done got N later_invalid I bad B". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ARINC653.h"

#define MS 1000000LL
#define TOTAL 40u
#define DEPTH 8
#define MAX 16

static QUEUING_PORT_ID_TYPE q;
static SAMPLING_PORT_ID_TYPE sent, drained;
static PROCESS_ID_TYPE waiter_id;
static volatile int waiter_done;

static APEX_BYTE pattern(unsigned seq, int i) { return (APEX_BYTE)(seq * 31u + (unsigned)i * 7u); }
static int length_of(unsigned seq) { return 4 + (int)(seq % (MAX - 3)); } /* 4..MAX */

static void check(const char *name, long got, long want) {
    if (got != want) printf("FAIL %s got %ld want %ld\n", name, got, want);
}

static int intact(unsigned seq, const APEX_BYTE *msg, MESSAGE_SIZE_TYPE len) {
    if (len != length_of(seq)) return 0;
    for (int i = 4; i < len; i++)
        if (msg[i] != pattern(seq, i)) return 0;
    return 1;
}

static PROCESS_ID_TYPE create(const char *name, void (*entry)(void), int priority) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strncpy(attr.NAME, name, sizeof attr.NAME);
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)entry;
    attr.BASE_PRIORITY = priority;
    attr.PERIOD = INFINITE_TIME_VALUE;
    attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
    CREATE_PROCESS(&attr, &id, &rc);
    if (rc != NO_ERROR) { printf("CREATE_PROCESS %d\n", (int)rc); exit(1); }
    return id;
}

/* Sends messages first..last-1 and waits until the module took them all. */
static void burst(unsigned first, unsigned last) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[MAX];
    for (unsigned seq = first; seq < last; seq++) {
        int n = length_of(seq);
        memcpy(msg, &seq, 4);
        for (int i = 4; i < n; i++) msg[i] = pattern(seq, i);
        SEND_QUEUING_MESSAGE(q, msg, n, INFINITE_TIME_VALUE, &rc);
        if (rc != NO_ERROR) { printf("sender send %u: %d\n", seq, (int)rc); return; }
    }
    QUEUING_PORT_STATUS_TYPE st;
    do {
        TIMED_WAIT(1 * MS, &rc);
        GET_QUEUING_PORT_STATUS(q, &st, &rc);
    } while (st.NB_MESSAGE > 0);
    printf("sender done %u\n", last);
}

static void sender(void) {
    RETURN_CODE_TYPE rc;
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity;
    unsigned total = TOTAL, ready = 0;
    burst(0, TOTAL);
    while (!ready) {
        WRITE_SAMPLING_MESSAGE(sent, (MESSAGE_ADDR_TYPE)&total, sizeof total, &rc);
        TIMED_WAIT(10 * MS, &rc);
        READ_SAMPLING_MESSAGE(drained, (MESSAGE_ADDR_TYPE)&ready, &len, &validity, &rc);
    }
    burst(TOTAL, 2 * TOTAL);
    total = 2 * TOTAL;
    for (;;) {
        WRITE_SAMPLING_MESSAGE(sent, (MESSAGE_ADDR_TYPE)&total, sizeof total, &rc);
        TIMED_WAIT(10 * MS, &rc);
    }
}

/* Waits until the sender sent `total` and the queue is full (a message was lost), and a
 * little more for a datagram still on its way to land (and be lost) too. */
static void await_overflow(unsigned total) {
    RETURN_CODE_TYPE rc;
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity;
    QUEUING_PORT_STATUS_TYPE st;
    unsigned seen = 0;
    for (;;) {
        READ_SAMPLING_MESSAGE(sent, (MESSAGE_ADDR_TYPE)&seen, &len, &validity, &rc);
        GET_QUEUING_PORT_STATUS(q, &st, &rc);
        if (seen == total && st.NB_MESSAGE == DEPTH) break;
        TIMED_WAIT(1 * MS, &rc);
    }
    TIMED_WAIT(50 * MS, &rc);
}

/* Receives until the queue stays empty: every message after `last` in order and intact. */
static void drain(unsigned got, unsigned last) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[MAX];
    MESSAGE_SIZE_TYPE len;
    unsigned later_invalid = 0, bad = 0;
    for (;;) {
        RECEIVE_QUEUING_MESSAGE(q, 200 * MS, msg, &len, &rc);
        if (rc == TIMED_OUT) break;
        if (rc != NO_ERROR) later_invalid++;
        unsigned seq;
        memcpy(&seq, msg, 4);
        if (seq <= last || !intact(seq, msg, len)) bad++;
        last = seq;
        got++;
    }
    printf("receiver done got %u later_invalid %u bad %u\n", got, later_invalid, bad);
}

static void waiter(void) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[MAX];
    MESSAGE_SIZE_TYPE len;
    unsigned seq = 0;
    RECEIVE_QUEUING_MESSAGE(q, INFINITE_TIME_VALUE, msg, &len, &rc);
    memcpy(&seq, msg, 4);
    printf("waiter rc %d seq %u ok %d\n", (int)rc, seq, intact(seq, msg, len));
    waiter_done = 1;
}

static void receiver(void) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[MAX];
    MESSAGE_SIZE_TYPE len;
    QUEUING_PORT_STATUS_TYPE st;
    unsigned seq;

    await_overflow(TOTAL);
    RECEIVE_QUEUING_MESSAGE(q, 0, msg, &len, &rc);
    memcpy(&seq, msg, 4);
    printf("receiver first rc %d seq %u ok %d\n", (int)rc, seq, intact(seq, msg, len));
    drain(1, seq);

    /* The waiter (of higher priority) waits on the empty queue; suspended, it stays there. */
    START(waiter_id, &rc);
    do {
        TIMED_WAIT(1 * MS, &rc);
        GET_QUEUING_PORT_STATUS(q, &st, &rc);
    } while (st.WAITING_PROCESSES != 1);
    SUSPEND(waiter_id, &rc);
    check("suspend", rc, NO_ERROR);
    unsigned one = 1;
    WRITE_SAMPLING_MESSAGE(drained, (MESSAGE_ADDR_TYPE)&one, sizeof one, &rc);
    await_overflow(2 * TOTAL);
    RECEIVE_QUEUING_MESSAGE(q, 200 * MS, msg, &len, &rc);
    memcpy(&seq, msg, 4);
    printf("receiver second rc %d seq %u ok %d\n", (int)rc, seq, intact(seq, msg, len));
    RESUME(waiter_id, &rc);
    check("resume", rc, NO_ERROR);
    while (!waiter_done) TIMED_WAIT(1 * MS, &rc);
    drain(2, seq);
    for (;;) TIMED_WAIT(1000 * MS, &rc);
}

int main(int argc, char **argv) {
    RETURN_CODE_TYPE rc;
    int tx = argc > 1 && !strcmp(argv[1], "sender");
    if (!tx && !(argc > 1 && !strcmp(argv[1], "receiver"))) { printf("unknown role\n"); return 1; }
    CREATE_QUEUING_PORT("q", MAX, DEPTH, tx ? SOURCE : DESTINATION, FIFO, &q, &rc);
    if (rc != NO_ERROR) { printf("CREATE_QUEUING_PORT %d\n", (int)rc); return 1; }
    CREATE_SAMPLING_PORT("sent", 4, tx ? SOURCE : DESTINATION, tx ? INFINITE_TIME_VALUE : 1000 * MS, &sent, &rc);
    if (rc != NO_ERROR) { printf("CREATE_SAMPLING_PORT %d\n", (int)rc); return 1; }
    CREATE_SAMPLING_PORT("drained", 4, tx ? DESTINATION : SOURCE, tx ? 1000 * MS : INFINITE_TIME_VALUE, &drained, &rc);
    if (rc != NO_ERROR) { printf("CREATE_SAMPLING_PORT %d\n", (int)rc); return 1; }
    if (!tx) waiter_id = create("waiter", waiter, 20);
    START(create(tx ? "sender" : "receiver", tx ? sender : receiver, 10), &rc);
    if (!tx) printf("receiver ready\n");
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
