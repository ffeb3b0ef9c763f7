/* Asks for the module schedule named "other" from its initialization process and prints the
 * return code and the schedule status; then prints the schedule in force once per period. */
#include <stdio.h>
#include <string.h>
#include "ARINC653.h"

static void report(void) {
    RETURN_CODE_TYPE rc;
    SCHEDULE_STATUS_TYPE st;
    for (;;) {
        GET_MODULE_SCHEDULE_STATUS(&st, &rc);
        printf("current %d\n", (int)st.CURRENT_SCHEDULE);
        PERIODIC_WAIT(&rc);
    }
}

int main(void) {
    RETURN_CODE_TYPE rc;
    SCHEDULE_ID_TYPE other;
    SCHEDULE_STATUS_TYPE st;
    PROCESS_ATTRIBUTE_TYPE attr;
    PROCESS_ID_TYPE id;
    GET_MODULE_SCHEDULE_ID("other", &other, &rc);
    SET_MODULE_SCHEDULE(other, &rc);
    printf("SET_MODULE_SCHEDULE %d\n", (int)rc);
    GET_MODULE_SCHEDULE_STATUS(&st, &rc);
    printf("next %d other %d\n", (int)st.NEXT_SCHEDULE, (int)other);
    memset(&attr, 0, sizeof attr);
    strcpy(attr.NAME, "report");
    attr.ENTRY_POINT = (SYSTEM_ADDRESS_TYPE)report;
    attr.BASE_PRIORITY = 5;
    attr.PERIOD = 20000000;
    attr.TIME_CAPACITY = 20000000;
    CREATE_PROCESS(&attr, &id, &rc);
    START(id, &rc);
    SET_PARTITION_MODE(NORMAL, &rc);
    return 1;
}
