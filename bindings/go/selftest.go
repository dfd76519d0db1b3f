package paimoncleanup

// A test hook: progress callbacks from native threads the Go runtime never saw, as the
// executor's worker threads may make them. Used by the package's tests only.

/*
#cgo LDFLAGS: -lpthread
#include <pthread.h>
#include <stdint.h>

extern void paimonCleanupGoProgress(void *user_data, char *phase, uint64_t done, uint64_t total,
                                    uint64_t bytes);

typedef struct {
	uintptr_t handle;
	int calls;
} pcgo_foreign_arg;

static void *pcgo_foreign_main(void *p) {
	pcgo_foreign_arg *a = p;
	for (int i = 0; i < a->calls; i++)
		paimonCleanupGoProgress((void *)a->handle, (char *)"foreign thread", (uint64_t)i + 1,
		                        (uint64_t)a->calls, 0);
	return NULL;
}

// Runs the calls on `threads` (at most 16) new threads and joins them; returns how many started.
static int pcgo_call_from_threads(uintptr_t handle, int threads, int calls) {
	pthread_t t[16];
	pcgo_foreign_arg arg = {handle, calls};
	int started = 0;
	if (threads > 16) threads = 16;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[started], NULL, pcgo_foreign_main, &arg) == 0) started++;
	for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
	return started;
}
*/
import "C"

import "context"

// progressFromNativeThreads calls opts.Progress `calls` times from each of `threads` new native
// threads through the same trampoline the library uses; a panic is re-raised here.
func progressFromNativeThreads(opts *RunOptions, threads, calls int) int {
	run, err := newRunCall(context.Background(), opts, true)
	if err != nil {
		panic(err)
	}
	started := int(C.pcgo_call_from_threads(C.uintptr_t(run.handle), C.int(threads), C.int(calls)))
	_ = run.finish(nil)
	return started
}
