/* Sampling and queuing ports seen from partitions; argv[1] picks the role:
 *   errors  every return code of the port services, validity and refresh, time-outs and the
 *           waiting order, on channels from this partition to itself. Prints "ok NAME" or
 *           "FAIL NAME got X want Y" per check, then "errors done".
 *   tx      sends numbered messages of varying length on queuing port "q" (blocking when
 *           full) and writes its counter on sampling port "counter"; prints "tx done N".
 *   rx      receives them, checking order, length and content of each; reads "counter"
 *           checking no message is torn; prints "rx done N bad B torn T".
 *   spy     destination of "counter": tries to write into its port memory.
 *   udptx HOST PORT / udprx   tx and rx with 300 messages, 1 ms apart, to another module over
 *           UDP; then udptx sends malformed and stale datagrams straight to HOST:PORT (the
 *           receiving module's queuing channel) and rx reports any extra delivery. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ARINC653.h"

#define MS 1000000LL

static void check(const char *name, long got, long want) {
    if (got == want) printf("ok %s\n", name);
    else printf("FAIL %s got %ld want %ld\n", name, got, want);
}

static PROCESS_ID_TYPE create(const char *name, void (*entry)(void), int prio) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strncpy(attr.NAME, name, sizeof attr.NAME);
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)entry;
    attr.BASE_PRIORITY = prio;
    attr.PERIOD = INFINITE_TIME_VALUE;
    attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
    CREATE_PROCESS(&attr, &id, &rc);
    if (rc != NO_ERROR) { printf("CREATE_PROCESS %s %d\n", name, (int)rc); exit(1); }
    return id;
}

static PROCESS_ID_TYPE spawn(const char *name, void (*entry)(void), int prio) {
    RETURN_CODE_TYPE rc;
    PROCESS_ID_TYPE id = create(name, entry, prio);
    START(id, &rc);
    return id;
}

static void idle_forever(void) {
    RETURN_CODE_TYPE rc;
    for (;;) TIMED_WAIT(1000 * MS, &rc);
}

/* ------------------------------------------------------------------ errors */

static SAMPLING_PORT_ID_TYPE s_out, s_in;
static QUEUING_PORT_ID_TYPE q_out, q_in;
static PROCESS_ID_TYPE low_id, high_id;

/* What each blocked receiver got: FIFO serves the one that waited first the first message,
 * whatever the priorities (the higher-priority one then runs first and records first). */
static char got_low[8], got_high[8], pgot_low[8], pgot_high[8];
static QUEUING_PORT_ID_TYPE p_out, p_in;
static PROCESS_ID_TYPE plow_id, phigh_id;

static void blocked_receiver(QUEUING_PORT_ID_TYPE port, char *got) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE buf[32];
    MESSAGE_SIZE_TYPE len;
    RECEIVE_QUEUING_MESSAGE(port, INFINITE_TIME_VALUE, buf, &len, &rc);
    if (rc == NO_ERROR && len < 8) memcpy(got, buf, (size_t)len);
    idle_forever();
}
static void low_first(void) { blocked_receiver(q_in, got_low); }
static void high_second(void) { blocked_receiver(q_in, got_high); }
static void plow_first(void) { blocked_receiver(p_in, pgot_low); }
static void phigh_second(void) { blocked_receiver(p_in, pgot_high); }

/* Starts `first`, then `second` once `first` waits on `port`, then sends "one" and "two". */
static void two_waiters(QUEUING_PORT_ID_TYPE port, QUEUING_PORT_ID_TYPE out, PROCESS_ID_TYPE first, PROCESS_ID_TYPE second, const char *name) {
    RETURN_CODE_TYPE rc;
    QUEUING_PORT_STATUS_TYPE qs;
    START(first, &rc);
    do { TIMED_WAIT(1 * MS, &rc); GET_QUEUING_PORT_STATUS(port, &qs, &rc); } while (qs.WAITING_PROCESSES < 1);
    START(second, &rc);
    do { TIMED_WAIT(1 * MS, &rc); GET_QUEUING_PORT_STATUS(port, &qs, &rc); } while (qs.WAITING_PROCESSES < 2);
    check(name, qs.WAITING_PROCESSES, 2);
    SEND_QUEUING_MESSAGE(out, (const APEX_BYTE *)"one", 4, 0, &rc);
    SEND_QUEUING_MESSAGE(out, (const APEX_BYTE *)"two", 4, 0, &rc);
    do { TIMED_WAIT(1 * MS, &rc); GET_QUEUING_PORT_STATUS(port, &qs, &rc); } while (qs.WAITING_PROCESSES > 0);
}

/* Sampling write and read make no system call: this process puts its own thread under a
 * seccomp filter allowing only write, exit, exit_group and rt_sigreturn (anything else raises SIGSYS,
 * whose handler reports it and ends the program), then writes and reads 10000 times. */
static PROCESS_ID_TYPE quiet_id;
static atomic_int quiet_done;

static void on_sigsys(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)ctx;
    char msg[] = "FAIL sampling_no_system_call got nnn want none\n";
    int nr = info->si_syscall;
    msg[33] = (char)('0' + nr / 100 % 10);
    msg[34] = (char)('0' + nr / 10 % 10);
    msg[35] = (char)('0' + nr % 10);
    write(1, msg, sizeof msg - 1);
    syscall(SYS_exit_group, 3);
}

static void quiet(void) {
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof filter / sizeof filter[0], .filter = filter };
    struct sigaction sa;
    APEX_BYTE msg[64], buf[64];
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity;
    RETURN_CODE_TYPE rc, worst = NO_ERROR;
    memset(&sa, 0, sizeof sa);
    memset(msg, 7, sizeof msg);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        printf("FAIL sampling_no_system_call got seccomp want filter\n");
        atomic_store(&quiet_done, 1);
        return;
    }
    for (int i = 0; i < 10000; i++) {
        msg[0] = (APEX_BYTE)i;
        WRITE_SAMPLING_MESSAGE(s_out, msg, 64, &rc);
        if (rc != NO_ERROR) worst = rc;
        READ_SAMPLING_MESSAGE(s_in, buf, &len, &validity, &rc);
        if (rc != NO_ERROR || len != 64 || buf[0] != (APEX_BYTE)i) worst = 99;
    }
    if (worst == NO_ERROR) write(1, "ok sampling_no_system_call\n", 27);
    else write(1, "FAIL sampling_no_system_call got error want none\n", 50);
    atomic_store(&quiet_done, 1);
    syscall(SYS_exit, 0);
}

static void normal_checks(void) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE buf[64];
    MESSAGE_SIZE_TYPE len;
    SYSTEM_TIME_TYPE t0, t1;
    SAMPLING_PORT_ID_TYPE late;

    CREATE_SAMPLING_PORT("s_late", 8, SOURCE, INFINITE_TIME_VALUE, &late, &rc);
    check("create_in_normal", rc, INVALID_MODE);

    GET_TIME(&t0, &rc);
    RETURN_CODE_TYPE rrc;
    RECEIVE_QUEUING_MESSAGE(q_in, 20 * MS, buf, &len, &rrc);
    GET_TIME(&t1, &rc);
    check("receive_timed_out", rrc, TIMED_OUT);
    check("receive_waited_its_time_out", t1 - t0 >= 20 * MS, 1);
    check("receive_timed_out_length", len, 0);

    for (int i = 0; i < 4; i++) SEND_QUEUING_MESSAGE(q_out, (const APEX_BYTE *)"fill", 4, 0, &rc);
    SEND_QUEUING_MESSAGE(q_out, (const APEX_BYTE *)"more", 4, 20 * MS, &rc);
    check("send_full_timed_out", rc, TIMED_OUT);
    CLEAR_QUEUING_PORT(q_in, &rc);

    /* Two receivers wait, the low-priority one first. FIFO serves low first; PRIORITY high. */
    two_waiters(q_in, q_out, low_id, high_id, "waiting_processes");
    two_waiters(p_in, p_out, plow_id, phigh_id, "waiting_processes_priority");
    check("priority_higher_waiter_first", strcmp(pgot_high, "one"), 0);
    check("priority_lower_waiter_second", strcmp(pgot_low, "two"), 0);
    check("fifo_first_waiter_first", strcmp(got_low, "one"), 0);
    check("fifo_second_waiter_second", strcmp(got_high, "two"), 0);
    fflush(stdout);
    START(quiet_id, &rc);
    while (!atomic_load(&quiet_done)) TIMED_WAIT(1 * MS, &rc);
    printf("errors done\n");
    idle_forever();
}

static int errors(void) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE buf[64], big[65];
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity;
    SAMPLING_PORT_ID_TYPE id;
    memset(big, 'x', sizeof big);

    CREATE_SAMPLING_PORT("nope", 64, SOURCE, INFINITE_TIME_VALUE, &id, &rc);
    check("create_unconfigured", rc, INVALID_CONFIG);
    CREATE_SAMPLING_PORT("s_out", 32, SOURCE, INFINITE_TIME_VALUE, &id, &rc);
    check("create_wrong_size", rc, INVALID_CONFIG);
    CREATE_SAMPLING_PORT("s_out", 64, DESTINATION, INFINITE_TIME_VALUE, &id, &rc);
    check("create_wrong_direction", rc, INVALID_CONFIG);
    CREATE_SAMPLING_PORT("s_in", 64, DESTINATION, 60 * MS, &id, &rc);
    check("create_wrong_refresh", rc, INVALID_CONFIG);
    CREATE_QUEUING_PORT("s_out", 64, 4, SOURCE, FIFO, &id, &rc);
    check("create_sampling_as_queuing", rc, INVALID_CONFIG);
    CREATE_SAMPLING_PORT("s_out", 64, SOURCE, INFINITE_TIME_VALUE, &s_out, &rc);
    check("create_sampling_source", rc, NO_ERROR);
    CREATE_SAMPLING_PORT("s_out", 64, SOURCE, INFINITE_TIME_VALUE, &id, &rc);
    check("create_twice", rc, NO_ACTION);
    CREATE_SAMPLING_PORT("s_in", 64, DESTINATION, 50 * MS, &s_in, &rc);
    check("create_sampling_destination", rc, NO_ERROR);
    GET_SAMPLING_PORT_ID("s_in", &id, &rc);
    check("get_sampling_port_id", rc == NO_ERROR && id == s_in, 1);
    GET_SAMPLING_PORT_ID("s_late", &id, &rc);
    check("get_id_of_uncreated", rc, INVALID_CONFIG);

    READ_SAMPLING_MESSAGE(s_in, buf, &len, &validity, &rc);
    check("read_empty", rc, NO_ACTION);
    check("read_empty_length", len, 0);
    READ_SAMPLING_MESSAGE(s_out, buf, &len, &validity, &rc);
    check("read_source", rc, INVALID_MODE);
    WRITE_SAMPLING_MESSAGE(s_in, (const APEX_BYTE *)"hi", 2, &rc);
    check("write_destination", rc, INVALID_MODE);
    WRITE_SAMPLING_MESSAGE(s_out, big, 65, &rc);
    check("write_too_long", rc, INVALID_CONFIG);
    WRITE_SAMPLING_MESSAGE(s_out, big, 0, &rc);
    check("write_empty", rc, INVALID_PARAM);
    WRITE_SAMPLING_MESSAGE(99, big, 4, &rc);
    check("write_unknown_id", rc, INVALID_PARAM);
    READ_SAMPLING_MESSAGE(s_in, buf, &len, &validity, &rc);
    check("bad_writes_left_the_port_empty", rc, NO_ACTION);

    WRITE_SAMPLING_MESSAGE(s_out, (const APEX_BYTE *)"hello", 5, &rc);
    check("write", rc, NO_ERROR);
    memset(buf, 0, sizeof buf);
    READ_SAMPLING_MESSAGE(s_in, buf, &len, &validity, &rc);
    check("read", rc, NO_ERROR);
    check("read_content", len == 5 && memcmp(buf, "hello", 5) == 0, 1);
    check("read_valid", validity, VALID);
    UPDATED_TYPE updated;
    READ_UPDATED_SAMPLING_MESSAGE(s_in, buf, &len, &updated, &rc);
    check("read_updated_consumed", rc == NO_ACTION && updated == CONSUMED_MESSAGE && len == 0, 1);
    WRITE_SAMPLING_MESSAGE(s_out, (const APEX_BYTE *)"world!", 6, &rc);
    SAMPLING_PORT_CURRENT_STATUS_TYPE cs;
    GET_SAMPLING_PORT_CURRENT_STATUS(s_in, &cs, &rc);
    check("current_status_new_fresh", rc == NO_ERROR && cs.UPDATED == NEW_MESSAGE && cs.MESSAGE_AGE == FRESH && cs.MAX_MESSAGE_SIZE == 64, 1);
    READ_UPDATED_SAMPLING_MESSAGE(s_in, buf, &len, &updated, &rc);
    check("read_updated_new", rc == NO_ERROR && updated == NEW_MESSAGE && len == 6 && memcmp(buf, "world!", 6) == 0, 1);
    SYSTEM_TIME_TYPE stamp;
    READ_SAMPLING_MESSAGE_CONDITIONAL(s_in, cs.TIME_STAMP + 1, buf, &len, &stamp, &rc);
    check("conditional_older", rc == NOT_AVAILABLE && stamp == cs.TIME_STAMP, 1);
    READ_SAMPLING_MESSAGE_CONDITIONAL(s_in, cs.TIME_STAMP, buf, &len, &stamp, &rc);
    check("conditional_recent", rc == NO_ERROR && len == 6, 1);

    TIMED_WAIT(60 * MS, &rc); /* older than the 50 ms refresh period */
    READ_SAMPLING_MESSAGE(s_in, buf, &len, &validity, &rc);
    check("read_stale", rc == NO_ERROR && validity == INVALID && len == 6, 1);
    SAMPLING_PORT_STATUS_TYPE ss;
    GET_SAMPLING_PORT_STATUS(s_in, &ss, &rc);
    check("status", rc == NO_ERROR && ss.LAST_MSG_VALIDITY == INVALID && ss.REFRESH_PERIOD == 50 * MS && ss.PORT_DIRECTION == DESTINATION, 1);
    GET_SAMPLING_PORT_CURRENT_STATUS(s_in, &cs, &rc);
    check("current_status_stale", cs.MESSAGE_AGE == STALE && cs.UPDATED == CONSUMED_MESSAGE, 1);
    WRITE_SAMPLING_MESSAGE(s_out, (const APEX_BYTE *)"again", 5, &rc);
    READ_SAMPLING_MESSAGE(s_in, buf, &len, &validity, &rc);
    check("refreshed_valid", validity, VALID);

    QUEUING_PORT_ID_TYPE qid;
    CREATE_QUEUING_PORT("q_out", 32, 5, SOURCE, FIFO, &qid, &rc);
    check("create_queuing_wrong_depth", rc, INVALID_CONFIG);
    CREATE_QUEUING_PORT("q_out", 32, 4, SOURCE, FIFO, &q_out, &rc);
    check("create_queuing_source", rc, NO_ERROR);
    CREATE_QUEUING_PORT("q_in", 32, 4, DESTINATION, FIFO, &q_in, &rc);
    check("create_queuing_destination", rc, NO_ERROR);
    CREATE_QUEUING_PORT("q_in", 32, 4, DESTINATION, FIFO, &qid, &rc);
    check("create_queuing_twice", rc, NO_ACTION);
    GET_QUEUING_PORT_ID("q_out", &qid, &rc);
    check("get_queuing_port_id", rc == NO_ERROR && qid == q_out, 1);

    RECEIVE_QUEUING_MESSAGE(q_out, 0, buf, &len, &rc);
    check("receive_on_source", rc, INVALID_MODE);
    SEND_QUEUING_MESSAGE(q_in, (const APEX_BYTE *)"x", 1, 0, &rc);
    check("send_on_destination", rc, INVALID_MODE);
    SEND_QUEUING_MESSAGE(q_out, big, 33, 0, &rc);
    check("send_too_long", rc, INVALID_CONFIG);
    SEND_QUEUING_MESSAGE(q_out, big, 0, 0, &rc);
    check("send_empty", rc, INVALID_PARAM);
    SEND_QUEUING_MESSAGE(77, big, 1, 0, &rc);
    check("send_unknown_id", rc, INVALID_PARAM);
    RECEIVE_QUEUING_MESSAGE(q_in, 0, buf, &len, &rc);
    check("receive_empty", rc, NOT_AVAILABLE);
    RECEIVE_QUEUING_MESSAGE(q_in, 10 * MS, buf, &len, &rc);
    check("receive_wait_outside_a_process", rc, INVALID_MODE);
    char m[4] = "m0";
    for (int i = 0; i < 4; i++) {
        m[1] = (char)('0' + i);
        SEND_QUEUING_MESSAGE(q_out, (const APEX_BYTE *)m, 3, 0, &rc);
        if (rc != NO_ERROR) check("send", rc, NO_ERROR);
    }
    SEND_QUEUING_MESSAGE(q_out, (const APEX_BYTE *)"m4", 3, 0, &rc);
    check("send_full", rc, NOT_AVAILABLE);
    QUEUING_PORT_STATUS_TYPE qs;
    GET_QUEUING_PORT_STATUS(q_in, &qs, &rc);
    check("queue_status", rc == NO_ERROR && qs.NB_MESSAGE == 4 && qs.MAX_NB_MESSAGE == 4 && qs.MAX_MESSAGE_SIZE == 32, 1);
    RECEIVE_QUEUING_MESSAGE(q_in, 0, buf, &len, &rc);
    check("receive_oldest", rc == NO_ERROR && len == 3 && strcmp((char *)buf, "m0") == 0, 1);
    RECEIVE_QUEUING_MESSAGE(q_in, 0, buf, &len, &rc);
    check("receive_next", rc == NO_ERROR && strcmp((char *)buf, "m1") == 0, 1);
    CLEAR_QUEUING_PORT(q_out, &rc);
    check("clear_source", rc, INVALID_MODE);
    CLEAR_QUEUING_PORT(q_in, &rc);
    check("clear", rc, NO_ERROR);
    GET_QUEUING_PORT_STATUS(q_out, &qs, &rc);
    check("cleared_seen_by_source", qs.NB_MESSAGE, 0);

    low_id = create("low", low_first, 5);
    high_id = create("high", high_second, 9);
    quiet_id = create("quiet", quiet, 15);
    plow_id = create("plow", plow_first, 5);
    phigh_id = create("phigh", phigh_second, 9);
    CREATE_QUEUING_PORT("p_out", 32, 4, SOURCE, PRIORITY, &p_out, &rc);
    CREATE_QUEUING_PORT("p_in", 32, 4, DESTINATION, PRIORITY, &p_in, &rc);
    check("create_priority_port", rc, NO_ERROR);
    spawn("checks", normal_checks, 20);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}

/* ------------------------------------------------------------------ tx / rx */

static APEX_BYTE pattern(unsigned seq, int i) { return (APEX_BYTE)(seq * 31u + (unsigned)i * 7u); }
static int length_of(unsigned seq) { return 4 + (int)(seq % 61); } /* 4..64 */

static QUEUING_PORT_ID_TYPE q;
static SAMPLING_PORT_ID_TYPE counter;
static unsigned total = 20000;
static int udp; /* 1 ms between messages; garbage after them */
static const char *garbage_host;
static int garbage_port;

/* Datagrams the receiving module must refuse (layout: partita_abi::ports, DATAGRAM_HEADER). */
static void send_garbage(void) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_port = htons((unsigned short)garbage_port);
    inet_pton(AF_INET, garbage_host, &to.sin_addr);
    unsigned char d[24 + 8];
    memset(d, 0, sizeof d);
    memcpy(d, "PTU1", 4);
    unsigned channel = 1, length = 4;
    unsigned long long seq = 1; /* long since accepted: stale */
    memcpy(d + 4, &channel, 4);
    memcpy(d + 8, &seq, 8);
    memcpy(d + 16, &length, 4);
    memcpy(d + 24, "OLD!", 4);
    sendto(s, d, 28, 0, (struct sockaddr *)&to, sizeof to);      /* stale */
    sendto(s, d, 3, 0, (struct sockaddr *)&to, sizeof to);       /* shorter than a header */
    sendto(s, d, 30, 0, (struct sockaddr *)&to, sizeof to);      /* size does not match length */
    seq = 1000000;
    memcpy(d + 8, &seq, 8);
    length = 9999;
    memcpy(d + 16, &length, 4);
    sendto(s, d, 28, 0, (struct sockaddr *)&to, sizeof to);      /* longer than the port */
    length = 4;
    memcpy(d + 16, &length, 4);
    d[0] = 'X';
    sendto(s, d, 28, 0, (struct sockaddr *)&to, sizeof to);      /* bad magic */
    close(s);
}

static void tx_body(void) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[64], sample[64];
    for (unsigned seq = 0; seq < total; seq++) {
        int n = length_of(seq);
        memcpy(msg, &seq, 4);
        for (int i = 4; i < n; i++) msg[i] = pattern(seq, i);
        SEND_QUEUING_MESSAGE(q, msg, n, INFINITE_TIME_VALUE, &rc);
        if (rc != NO_ERROR) { printf("tx send %u: %d\n", seq, (int)rc); break; }
        memset(sample, (int)(seq & 0xff), sizeof sample);
        memcpy(sample, &seq, 4);
        WRITE_SAMPLING_MESSAGE(counter, sample, 64, &rc);
        if (udp) TIMED_WAIT(1 * MS, &rc);
    }
    if (udp) {
        TIMED_WAIT(20 * MS, &rc);
        send_garbage();
    }
    printf("tx done %u\n", total);
    idle_forever();
}

static void rx_body(void) {
    RETURN_CODE_TYPE rc;
    APEX_BYTE msg[64], sample[64];
    MESSAGE_SIZE_TYPE len;
    VALIDITY_TYPE validity;
    unsigned got = 0, bad = 0, torn = 0, last_sample = 0;
    while (got < total) {
        RECEIVE_QUEUING_MESSAGE(q, INFINITE_TIME_VALUE, msg, &len, &rc);
        if (rc != NO_ERROR) { printf("rx receive: %d\n", (int)rc); bad++; break; }
        unsigned seq;
        memcpy(&seq, msg, 4);
        int ok = seq == got && len == length_of(seq);
        for (int i = 4; ok && i < len; i++) ok = msg[i] == pattern(seq, i);
        if (!ok && bad++ < 5) printf("rx bad message: got seq %u len %d, expected seq %u\n", seq, (int)len, got);
        got++;
        READ_SAMPLING_MESSAGE(counter, sample, &len, &validity, &rc);
        if (rc == NO_ERROR) {
            unsigned s;
            memcpy(&s, sample, 4);
            for (int i = 4; i < 64; i++) if (sample[i] != (APEX_BYTE)(s & 0xff)) { torn++; break; }
            if (s < last_sample || len != 64) torn++;
            last_sample = s;
        }
    }
    printf("rx done %u bad %u torn %u\n", got, bad, torn);
    if (udp) {
        unsigned extra = 0;
        for (;;) {
            RECEIVE_QUEUING_MESSAGE(q, 500 * MS, msg, &len, &rc);
            if (rc != NO_ERROR) break;
            extra++;
        }
        printf("rx extra %u samples %s\n", extra, last_sample > 0 ? "seen" : "none");
    }
    idle_forever();
}

static int txrx(int tx) {
    RETURN_CODE_TYPE rc;
    if (udp) total = 300;
    CREATE_QUEUING_PORT("q", 64, tx || !udp ? 16 : 64, tx ? SOURCE : DESTINATION, FIFO, &q, &rc);
    if (rc != NO_ERROR) { printf("CREATE_QUEUING_PORT %d\n", (int)rc); return 1; }
    CREATE_SAMPLING_PORT("counter", 64, tx ? SOURCE : DESTINATION, tx ? INFINITE_TIME_VALUE : 100 * MS, &counter, &rc);
    if (rc != NO_ERROR) { printf("CREATE_SAMPLING_PORT %d\n", (int)rc); return 1; }
    spawn(tx ? "tx" : "rx", tx ? tx_body : rx_body, 10);
    if (!tx) printf("rx ready\n");
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}

/* ------------------------------------------------------------------ spy */

static int spy(void) {
    RETURN_CODE_TYPE rc;
    SAMPLING_PORT_ID_TYPE id;
    CREATE_SAMPLING_PORT("counter", 64, DESTINATION, 100 * MS, &id, &rc);
    printf("spy create %d\n", (int)rc);
    printf("spy fds");
    for (int fd = 0; fd < 256; fd++)
        if (fcntl(fd, F_GETFD) >= 0) printf(" %d", fd);
    printf("\n");
    for (int fd = 6; fd < 256; fd++) {
        if (fcntl(fd, F_GETFD) < 0) continue;
        void *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        printf("spy fd %d map-write %s\n", fd, w == MAP_FAILED ? "refused" : "ALLOWED");
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        int rw = open(path, O_RDWR);
        printf("spy fd %d reopen-write %s\n", fd, rw < 0 ? "refused" : "ALLOWED");
        printf("spy fd %d chmod %s\n", fd, fchmod(fd, 0666) != 0 ? "refused" : "ALLOWED");
        void *r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        printf("spy fd %d mprotect-write %s\n", fd, r != MAP_FAILED && mprotect(r, 4096, PROT_READ | PROT_WRITE) != 0 ? "refused" : "ALLOWED");
        pid_t child = fork();
        if (child == 0) {
            /* The default action, not the health monitor's handler: the kernel's verdict. */
            signal(SIGSEGV, SIG_DFL);
            ((volatile char *)r)[0] = 1;
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        printf("spy fd %d store %s\n", fd, WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV ? "faulted" : "ALLOWED");
    }
    printf("spy done\n");
    spawn("idle", idle_forever, 1);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}

int main(int argc, char **argv) {
    const char *role = argc > 1 ? argv[1] : "";
    if (!strcmp(role, "errors")) return errors();
    if (!strcmp(role, "tx")) return txrx(1);
    if (!strcmp(role, "rx")) return txrx(0);
    if (!strcmp(role, "spy")) return spy();
    udp = 1;
    if (!strcmp(role, "udptx") && argc > 3) {
        garbage_host = argv[2];
        garbage_port = atoi(argv[3]);
        return txrx(1);
    }
    if (!strcmp(role, "udprx")) return txrx(0);
    printf("unknown role %s\n", role);
    return 1;
}
