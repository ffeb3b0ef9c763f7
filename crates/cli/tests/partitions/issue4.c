/* Issue 4's acceptance module (tests/run_issue4.rs), standard APEX names only; argv[1] picks
 * the role. Checks print "ok NAME" or "FAIL NAME got X want Y".
 *   producer  each period sends PER_PERIOD numbered messages of varying length on queuing port
 *             "cmds" and, before each, writes the same number on sampling port "state"; every
 *             50 periods it tries bad calls (too long, empty, unknown ids) between them. After
 *             TOTAL messages: "producer done TOTAL".
 *   consumer  receives them checking number, length and content ("lost"/"dup"/"reordered"/
 *             "corrupt" counts) and after each reads "state": valid, untorn, never older than
 *             the message, never going back. "consumer done N lost L dup D reordered R corrupt
 *             C invalid I torn T old O".
 *   faulty    destination of "state". First start: tries to reach the others' ports and
 *             processes, then its periodic worker raises an application error (its error
 *             handler reports it) and later writes through a null pointer (MEMORY_VIOLATION,
 *             COLD_START by the HM tables). Restarted: reports its start condition, then reads
 *             "state" each period: "faulty reads N valid V torn T". */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ARINC653.h"

#define MS 1000000LL
#define MAX 64
#define PER_PERIOD 20
#define TOTAL 5000u

static void check(const char *name, long got, long want)
{
    if (got == want)
        printf("ok %s\n", name);
    else
        printf("FAIL %s got %ld want %ld\n", name, got, want);
}

static void start_process(const char *name, void (*entry)(void), SYSTEM_TIME_TYPE period)
{
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strncpy(attr.NAME, name, sizeof attr.NAME - 1);
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)entry;
    attr.STACK_SIZE = 64 * 1024;
    attr.BASE_PRIORITY = 10;
    attr.PERIOD = period;
    attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
    attr.DEADLINE = SOFT;
    CREATE_PROCESS(&attr, &id, &rc);
    if (rc == NO_ERROR)
        START(id, &rc);
    if (rc != NO_ERROR) {
        printf("FAIL start_%s got %d want 0\n", name, (int)rc);
        exit(1);
    }
}

static APEX_BYTE pattern(unsigned seq, int i) { return (APEX_BYTE)(seq * 13u + (unsigned)i * 5u + 1u); }
static int length_of(unsigned seq) { return 4 + (int)(seq % (MAX - 3)); } /* 4..64 */

static QUEUING_PORT_ID_TYPE cmds;
static SAMPLING_PORT_ID_TYPE state;

/* A sample: its number, then that number's low byte repeated (a torn one mixes two). */
static void make_sample(unsigned seq, APEX_BYTE *s)
{
    memset(s, (int)(seq & 0xff), MAX);
    memcpy(s, &seq, 4);
}

static int torn_sample(const APEX_BYTE *s, MESSAGE_SIZE_TYPE len, unsigned *seq)
{
    memcpy(seq, s, 4);
    if (len != MAX)
        return 1;
    for (int i = 4; i < MAX; i++)
        if (s[i] != (APEX_BYTE)(*seq & 0xff))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ producer */

static void bad_calls(void)
{
    RETURN_CODE_TYPE rc;
    APEX_BYTE big[MAX + 1];
    memset(big, 0xEE, sizeof big);
    SEND_QUEUING_MESSAGE(cmds, big, MAX + 1, 0, &rc);
    check("send_oversized", rc, INVALID_CONFIG);
    SEND_QUEUING_MESSAGE(cmds, big, 0, 0, &rc);
    check("send_empty", rc, INVALID_PARAM);
    SEND_QUEUING_MESSAGE(cmds, big, -1, 0, &rc);
    check("send_negative_length", rc, INVALID_PARAM);
    SEND_QUEUING_MESSAGE(cmds + state + 40, big, 4, 0, &rc);
    check("send_unknown_id", rc, INVALID_PARAM);
    SEND_QUEUING_MESSAGE(-1, big, 4, 0, &rc);
    check("send_negative_id", rc, INVALID_PARAM);
    WRITE_SAMPLING_MESSAGE(state, big, MAX + 1, &rc);
    check("write_oversized", rc, INVALID_CONFIG);
    WRITE_SAMPLING_MESSAGE(cmds + state + 40, big, 4, &rc);
    check("write_unknown_id", rc, INVALID_PARAM);
}

static void producer_body(void)
{
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[MAX], sample[MAX];
    unsigned seq = 0;
    for (unsigned period = 0; seq < TOTAL; period++) {
        for (int k = 0; k < PER_PERIOD && seq < TOTAL; k++, seq++) {
            make_sample(seq, sample);
            WRITE_SAMPLING_MESSAGE(state, sample, MAX, &rc);
            if (rc != NO_ERROR)
                printf("FAIL write %u got %d want 0\n", seq, (int)rc);
            int n = length_of(seq);
            memcpy(msg, &seq, 4);
            for (int i = 4; i < n; i++)
                msg[i] = pattern(seq, i);
            SEND_QUEUING_MESSAGE(cmds, msg, n, INFINITE_TIME_VALUE, &rc);
            if (rc != NO_ERROR)
                printf("FAIL send %u got %d want 0\n", seq, (int)rc);
            if (k == PER_PERIOD / 2 && period % 50 == 0)
                bad_calls();
        }
        fflush(stdout);
        PERIODIC_WAIT(&rc);
    }
    printf("producer done %u\n", seq);
    fflush(stdout);
    for (;;) {
        /* Keep the sample fresh: the last number again. */
        make_sample(TOTAL - 1, sample);
        WRITE_SAMPLING_MESSAGE(state, sample, MAX, &rc);
        PERIODIC_WAIT(&rc);
    }
}

static int producer(void)
{
    RETURN_CODE_TYPE rc;
    CREATE_QUEUING_PORT("cmds", MAX, 32, SOURCE, FIFO, &cmds, &rc);
    check("producer_create_cmds", rc, NO_ERROR);
    CREATE_SAMPLING_PORT("state", MAX, SOURCE, INFINITE_TIME_VALUE, &state, &rc);
    check("producer_create_state", rc, NO_ERROR);
    start_process("producer", producer_body, 20 * MS);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}

/* ------------------------------------------------------------------ consumer */

static void consumer_body(void)
{
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[MAX], sample[MAX];
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity;
    unsigned expected = 0, got = 0, lost = 0, dup = 0, reordered = 0, corrupt = 0, invalid = 0, torn = 0, old = 0;
    unsigned last_sample = 0;
    while (expected < TOTAL) {
        RECEIVE_QUEUING_MESSAGE(cmds, INFINITE_TIME_VALUE, msg, &len, &rc);
        if (rc != NO_ERROR) {
            printf("FAIL receive got %d want 0\n", (int)rc);
            break;
        }
        got++;
        unsigned seq;
        memcpy(&seq, msg, 4);
        int ok = len == length_of(seq);
        for (int i = 4; ok && i < len; i++)
            ok = msg[i] == pattern(seq, i);
        if (!ok)
            corrupt++;
        if (seq == expected)
            expected++;
        else if (seq < expected)
            dup++;
        else if (seq > expected) {
            lost += seq - expected;
            reordered++;
            expected = seq + 1;
        }
        READ_SAMPLING_MESSAGE(state, sample, &len, &validity, &rc);
        if (rc != NO_ERROR) {
            printf("FAIL read got %d want 0\n", (int)rc);
            continue;
        }
        unsigned s;
        if (torn_sample(sample, len, &s))
            torn++;
        else if (s < seq || s < last_sample)
            old++;
        else
            last_sample = s;
        if (validity != VALID)
            invalid++;
        if (got == TOTAL / 2) {
            RECEIVE_QUEUING_MESSAGE(cmds + state + 40, 0, msg, &len, &rc);
            check("receive_unknown_id", rc, INVALID_PARAM);
            READ_SAMPLING_MESSAGE(cmds + state + 40, sample, &len, &validity, &rc);
            check("read_unknown_id", rc, INVALID_PARAM);
        }
    }
    printf("consumer done %u lost %u dup %u reordered %u corrupt %u invalid %u torn %u old %u last %u\n", got, lost, dup, reordered, corrupt,
           invalid, torn, old, last_sample);
    fflush(stdout);
    /* Nothing more may come: the bad sends of the producer never reached the queue. */
    RECEIVE_QUEUING_MESSAGE(cmds, 200 * MS, msg, &len, &rc);
    check("nothing_after_the_last", rc, TIMED_OUT);
    fflush(stdout);
    for (;;)
        TIMED_WAIT(1000 * MS, &rc);
}

static int consumer(void)
{
    RETURN_CODE_TYPE rc;
    CREATE_QUEUING_PORT("cmds", MAX, 32, DESTINATION, FIFO, &cmds, &rc);
    check("consumer_create_cmds", rc, NO_ERROR);
    CREATE_SAMPLING_PORT("state", MAX, DESTINATION, 100 * MS, &state, &rc);
    check("consumer_create_state", rc, NO_ERROR);
    start_process("consumer", consumer_body, INFINITE_TIME_VALUE);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}

/* ------------------------------------------------------------------ faulty */

static int restarted;
static int *volatile nowhere;

static void say(const char *s)
{
    RETURN_CODE_TYPE rc;
    REPORT_APPLICATION_MESSAGE(s, (MESSAGE_SIZE_TYPE)strlen(s), &rc);
}

static void handler(void)
{
    ERROR_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    char line[256];
    for (;;) {
        GET_ERROR_STATUS(&st, &rc);
        if (rc != NO_ERROR)
            break;
        snprintf(line, sizeof line, "handler: code %d length %d message %.*s", (int)st.ERROR_CODE, (int)st.LENGTH, (int)st.LENGTH,
                 (const char *)st.MESSAGE);
        say(line);
    }
    STOP_SELF();
}

static void faulty_worker(void)
{
    RETURN_CODE_TYPE rc;
    APEX_BYTE sample[MAX];
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity;
    unsigned reads = 0, valid = 0, torn = 0, s;
    for (long period = 1;; period++) {
        if (!restarted && period == 1) {
            RAISE_APPLICATION_ERROR(APPLICATION_ERROR, "sensor out of range", 19, &rc);
            check("raise_application_error", rc, NO_ERROR);
        }
        if (!restarted && period == 10) {
            say("writing through a null pointer");
            *nowhere = 1;
        }
        READ_SAMPLING_MESSAGE(state, sample, &len, &validity, &rc);
        if (rc == NO_ERROR) {
            reads++;
            valid += validity == VALID;
            torn += torn_sample(sample, len, &s);
        }
        if (restarted && period == 50) {
            printf("faulty reads %u valid %u torn %u\n", reads, valid, torn);
            fflush(stdout);
        }
        PERIODIC_WAIT(&rc);
    }
}

/* Ports and processes of the other partitions are out of reach. */
static void reach_out(void)
{
    RETURN_CODE_TYPE rc;
    QUEUING_PORT_ID_TYPE q;
    APEX_BYTE buf[MAX];
    MESSAGE_SIZE_TYPE len;
    CREATE_QUEUING_PORT("cmds", MAX, 32, DESTINATION, FIFO, &q, &rc);
    check("create_others_queuing_port", rc, INVALID_CONFIG);
    CREATE_QUEUING_PORT("cmds", MAX, 32, SOURCE, FIFO, &q, &rc);
    check("create_others_queuing_source", rc, INVALID_CONFIG);
    for (int id = -1; id < 8; id++) {
        if (id == state)
            continue;
        RECEIVE_QUEUING_MESSAGE(id, 0, buf, &len, &rc);
        if (rc != INVALID_PARAM)
            check("receive_guessed_id", rc, INVALID_PARAM);
    }
    check("receive_guessed_ids", 1, 1);
    WRITE_SAMPLING_MESSAGE(state, (const APEX_BYTE *)"forged", 6, &rc);
    check("write_own_destination", rc, INVALID_MODE);
    errno = 0;
    check("signal_other_processes", kill(-1, 0) == -1 && errno == ESRCH, 1);
    printf("faulty fds");
    for (int fd = 0; fd < 256; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            printf(" %d", fd);
    printf("\n");
}

static int faulty(void)
{
    PARTITION_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_PARTITION_STATUS(&st, &rc);
    printf("start condition %d mode %d\n", (int)st.START_CONDITION, (int)st.OPERATING_MODE);
    restarted = st.START_CONDITION != NORMAL_START;
    if (!restarted) {
        /* Before its own CREATE (after it, any CREATE of "state" is NO_ACTION). */
        CREATE_SAMPLING_PORT("state", MAX, SOURCE, INFINITE_TIME_VALUE, &state, &rc);
        check("become_the_writer", rc, INVALID_CONFIG);
    }
    CREATE_SAMPLING_PORT("state", MAX, DESTINATION, 100 * MS, &state, &rc);
    check("faulty_create_state", rc, NO_ERROR);
    if (!restarted)
        reach_out();
    fflush(stdout);
    CREATE_ERROR_HANDLER((SYSTEM_ADDRESS_TYPE)handler, 64 * 1024, &rc);
    check("create_error_handler", rc, NO_ERROR);
    start_process("worker", faulty_worker, 20 * MS);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}

int main(int argc, char **argv)
{
    const char *role = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(role, "producer"))
        return producer();
    if (!strcmp(role, "consumer"))
        return consumer();
    if (!strcmp(role, "faulty"))
        return faulty();
    printf("unknown role %s\n", role);
    return 1;
}
