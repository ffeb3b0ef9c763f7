/* Health-monitor scenarios, chosen by the first argument. The partition reports its start
 * condition and mode; on its first start (NORMAL_START) a periodic WORKER process commits the
 * chosen fault; after an HM restart it only runs. With a second argument "handler" it has an
 * error handler that reports each error it gets. The scenarios:
 *   none      nothing (for injected errors)      raise     RAISE_APPLICATION_ERROR
 *   segv      write through a null pointer       fpe       integer division by zero
 *   stack     unbounded recursion                syscall   reboot(2), a forbidden system call
 *   exit      the program exits                  deadline  the worker overruns its capacity
 *   raise_segv  RAISE_APPLICATION_ERROR, then a null-pointer write a few periods later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ARINC653.h"

static const char *scenario = "none";
static volatile int zero, hundred = 100;
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
        snprintf(line, sizeof line, "handler: code %d length %d process %d message %.*s", (int)st.ERROR_CODE, (int)st.LENGTH,
                 (int)st.FAILED_PROCESS_ID, (int)st.LENGTH, (const char *)st.MESSAGE);
        say(line);
    }
    STOP_SELF();
}

static int recurse(int n)
{
    volatile char frame[1024];
    frame[0] = (char)n;
    return recurse(n + 1) + frame[0];
}

static int is(const char *s)
{
    return strcmp(scenario, s) == 0;
}

static void worker(void)
{
    RETURN_CODE_TYPE rc;
    long period = 0;
    for (;;) {
        period++;
        if (period == 1 && (is("raise") || is("raise_segv"))) {
            RAISE_APPLICATION_ERROR(APPLICATION_ERROR, "sensor out of range", 19, &rc);
            printf("raised: %d\n", (int)rc);
        }
        if (period == 1 && is("segv")) {
            say("writing through a null pointer");
            *nowhere = 1;
        }
        if (period == 5 && is("raise_segv")) {
            say("writing through a null pointer");
            *nowhere = 1;
        }
        if (period == 1 && is("fpe"))
            printf("quotient %d\n", hundred / zero);
        if (period == 1 && is("stack"))
            printf("recursion %d\n", recurse(0));
        if (period == 1 && is("syscall")) {
            long r = syscall(SYS_reboot, 0, 0, 0, 0);
            printf("reboot returned %ld errno %d\n", r, errno);
        }
        if (period == 1 && is("exit")) {
            fflush(stdout);
            exit(3);
        }
        if (period <= 3 && is("deadline")) {
            SYSTEM_TIME_TYPE start, t;
            GET_TIME(&start, &rc);
            do
                GET_TIME(&t, &rc);
            while (t - start < 30000000LL);
        }
        if (period % 10 == 0)
            printf("alive %ld\n", period);
        PERIODIC_WAIT(&rc);
    }
}

int main(int argc, char **argv)
{
    PARTITION_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_PARTITION_STATUS(&st, &rc);
    printf("start condition %d mode %d\n", (int)st.START_CONDITION, (int)st.OPERATING_MODE);
    fflush(stdout);
    if (argc > 1 && st.START_CONDITION == NORMAL_START)
        scenario = argv[1];
    if (argc > 2 && strcmp(argv[2], "handler") == 0) {
        CREATE_ERROR_HANDLER((SYSTEM_ADDRESS_TYPE)handler, 64 * 1024, &rc);
        printf("CREATE_ERROR_HANDLER: %d\n", (int)rc);
    }
    PROCESS_ATTRIBUTE_TYPE attr;
    memset(&attr, 0, sizeof attr);
    strcpy(attr.NAME, "WORKER");
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)worker;
    attr.STACK_SIZE = 64 * 1024;
    attr.BASE_PRIORITY = 10;
    attr.PERIOD = 20000000LL;
    attr.TIME_CAPACITY = is("deadline") ? 2000000LL : INFINITE_TIME_VALUE;
    attr.DEADLINE = SOFT;
    PROCESS_ID_TYPE id;
    CREATE_PROCESS(&attr, &id, &rc);
    START(id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
