/* docs/c-api.md, "Progress, cancellation and logs": the progress callback type. C11 allows
 * repeating a typedef, so the compiler checks it against the header's. */
#include <paimon_cleanup.h>

/* doc-block docs/c-api.md 3 */
typedef void (*PaimonCleanupProgressFn)(void *user_data, const char *phase,
                                        uint64_t done, uint64_t total, uint64_t bytes);
/* doc-block end */

int main(void) { return 0; }
