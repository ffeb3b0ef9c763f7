/* The urgent partition of a FIXED_PRIORITY core: every 20 ms it needs 10 ms of CPU, and it
 * reports how many periods it completed. Served by priority, it preempts the busy partition
 * of lower priority on the same core whenever it is released. */
#include <stdio.h>
#include <string.h>
#include "ARINC653.h"

static void work(void) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE start, now;
    long done = 0;
    for (;;) {
        GET_TIME(&start, &rc);
        do GET_TIME(&now, &rc); while (now - start < 10000000);
        printf("period %ld done at %lld\n", ++done, (long long)now);
        PERIODIC_WAIT(&rc);
    }
}

int main(void) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strcpy(attr.NAME, "work");
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)work;
    attr.BASE_PRIORITY = 1;
    attr.PERIOD = 20000000;
    attr.TIME_CAPACITY = 20000000;
    CREATE_PROCESS(&attr, &id, &rc);
    START(id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
