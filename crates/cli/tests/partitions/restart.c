/* Restart semantics seen from the partition: the first start (NORMAL_START) asks for
 * COLD_START; the restarted partition reports START_CONDITION = PARTITION_RESTART and mode
 * COLD_START, then goes NORMAL with a periodic process that reports its releases. */
#include <stdio.h>
#include <string.h>
#include "ARINC653.h"

static void tick(void) {
    RETURN_CODE_TYPE rc;
    long n = 0;
    for (;;) {
        printf("release %ld\n", ++n);
        PERIODIC_WAIT(&rc);
    }
}

int main(void) {
    PARTITION_STATUS_TYPE st;
    RETURN_CODE_TYPE rc;
    GET_PARTITION_STATUS(&st, &rc);
    printf("start condition %d mode %d\n", (int)st.START_CONDITION, (int)st.OPERATING_MODE);
    if (st.START_CONDITION == NORMAL_START) {
        SET_PARTITION_MODE(WARM_START, &rc);
        printf("WARM_START from COLD_START: %d\n", (int)rc); /* INVALID_MODE */
        SET_PARTITION_MODE(COLD_START, &rc);
        printf("not reached\n");
        return 1;
    }
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    memset(&attr, 0, sizeof attr);
    strcpy(attr.NAME, "tick");
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)tick;
    attr.BASE_PRIORITY = 10;
    attr.PERIOD = st.PERIOD;
    attr.TIME_CAPACITY = st.PERIOD;
    CREATE_PROCESS(&attr, &id, &rc);
    START(id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
