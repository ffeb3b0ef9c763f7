/* A test guest that ends at once: prints a line and returns 3 (the start-up code writes it to
   the exit port), so that the health monitor restarts it again and again. */
#include "partita_guest.h"

int main(void) {
    pt_puts("exit guest started\n");
    return 3;
}
