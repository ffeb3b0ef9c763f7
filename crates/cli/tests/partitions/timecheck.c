/* A busy partition that checks time partitioning from the inside: one process spins on
 * GET_TIME and prints every interval during which it ran (consecutive samples less than
 * 50 us apart) as "ran START END" in ns since the module epoch. The test compares them with
 * the partition's windows. */
#include <stdio.h>
#include <string.h>
#include "ARINC653.h"

static void spin(void) {
    RETURN_CODE_TYPE rc;
    SYSTEM_TIME_TYPE start, last, now;
    GET_TIME(&start, &rc);
    last = start;
    for (;;) {
        GET_TIME(&now, &rc);
        if (now - last > 50000) {
            printf("ran %lld %lld\n", (long long)start, (long long)last);
            start = now;
        }
        last = now;
    }
}

int main(void) {
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    RETURN_CODE_TYPE rc;
    memset(&attr, 0, sizeof attr);
    strcpy(attr.NAME, "spinner");
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)spin;
    attr.BASE_PRIORITY = 5;
    attr.PERIOD = INFINITE_TIME_VALUE;
    attr.TIME_CAPACITY = INFINITE_TIME_VALUE;
    CREATE_PROCESS(&attr, &id, &rc);
    if (rc != NO_ERROR) { printf("CREATE_PROCESS %d\n", (int)rc); return 1; }
    START(id, &rc);
    if (rc != NO_ERROR) { printf("START %d\n", (int)rc); return 1; }
    SET_PARTITION_MODE(NORMAL, &rc);
    printf("SET_PARTITION_MODE returned %d\n", (int)rc);
    return 1;
}
