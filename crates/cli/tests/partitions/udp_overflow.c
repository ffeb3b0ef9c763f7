/* A destination queue that overflows over UDP (tests/run_udp.rs); argv[1] picks the role.
 *   sender    sends TOTAL numbered messages of varying length on queuing port "q" as fast as
 *             its queue allows, waits until its module took them all, then keeps writing TOTAL
 *             on sampling port "sent": "sender done TOTAL".
 *   receiver  receives nothing until "sent" says TOTAL and its queue "q" (of depth DEPTH) is
 *             full, so messages found it full and were lost; then receives everything:
 *             "receiver first rc RC seq S ok O" (the first receive: INVALID_CONFIG with the
 *             first message intact), then "receiver done got N later_invalid I bad B" (every
 *             later receive NO_ERROR, in order and intact). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ARINC653.h"

#define MS 1000000LL
#define TOTAL 40u
#define DEPTH 8
#define MAX 16

static QUEUING_PORT_ID_TYPE q;
static SAMPLING_PORT_ID_TYPE sent;

static APEX_BYTE pattern(unsigned seq, int i) { return (APEX_BYTE)(seq * 31u + (unsigned)i * 7u); }
static int length_of(unsigned seq) { return 4 + (int)(seq % (MAX - 3)); } /* 4..MAX */

static int intact(unsigned seq, const APEX_BYTE *msg, MESSAGE_SIZE_TYPE len) {
    if (len != length_of(seq)) return 0;
    for (int i = 4; i < len; i++)
        if (msg[i] != pattern(seq, i)) return 0;
    return 1;
}

static void start(const char *name, void (*entry)(void)) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strncpy(attr.NAME, name, sizeof attr.NAME);
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)entry;
    attr.BASE_PRIORITY = 10;
    attr.PERIOD = INFINITE_TIME_VALUE;
    attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
    CREATE_PROCESS(&attr, &id, &rc);
    if (rc != NO_ERROR) { printf("CREATE_PROCESS %d\n", (int)rc); exit(1); }
    START(id, &rc);
}

static void sender(void) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[MAX];
    for (unsigned seq = 0; seq < TOTAL; seq++) {
        int n = length_of(seq);
        memcpy(msg, &seq, 4);
        for (int i = 4; i < n; i++) msg[i] = pattern(seq, i);
        SEND_QUEUING_MESSAGE(q, msg, n, INFINITE_TIME_VALUE, &rc);
        if (rc != NO_ERROR) { printf("sender send %u: %d\n", seq, (int)rc); return; }
    }
    /* Empty: the module's UDP thread took (and sent) every message. */
    QUEUING_PORT_STATUS_TYPE st;
    do {
        TIMED_WAIT(1 * MS, &rc);
        GET_QUEUING_PORT_STATUS(q, &st, &rc);
    } while (st.NB_MESSAGE > 0);
    printf("sender done %u\n", TOTAL);
    unsigned total = TOTAL;
    for (;;) {
        WRITE_SAMPLING_MESSAGE(sent, (MESSAGE_ADDR_TYPE)&total, sizeof total, &rc);
        TIMED_WAIT(10 * MS, &rc);
    }
}

static void receiver(void) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[MAX];
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity;
    QUEUING_PORT_STATUS_TYPE st;
    unsigned total = 0;
    for (;;) {
        READ_SAMPLING_MESSAGE(sent, (MESSAGE_ADDR_TYPE)&total, &len, &validity, &rc);
        GET_QUEUING_PORT_STATUS(q, &st, &rc);
        if (total == TOTAL && st.NB_MESSAGE == DEPTH) break;
        TIMED_WAIT(1 * MS, &rc);
    }
    /* Let a datagram still on its way land (and be dropped) before receiving. */
    TIMED_WAIT(50 * MS, &rc);
    RECEIVE_QUEUING_MESSAGE(q, 0, msg, &len, &rc);
    unsigned first;
    memcpy(&first, msg, 4);
    printf("receiver first rc %d seq %u ok %d\n", (int)rc, first, intact(first, msg, len));
    unsigned got = 1, later_invalid = 0, bad = 0, last = first;
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
    start(tx ? "sender" : "receiver", tx ? sender : receiver);
    if (!tx) printf("receiver ready\n");
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
