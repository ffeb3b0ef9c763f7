/* The priority-order program of the APEX tests (crates/apex/tests/c/priorities.c) as a
 * partition: run on a FIXED_PRIORITY core, it gets a narrow band of Linux levels from the module
 * (run_apex.rs), where its 11 distinct priorities out of 1..239 must keep their order. */
#include "../../../apex/tests/c/priorities.c"
