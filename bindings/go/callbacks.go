package paimoncleanup

// The C entry points of the Go callbacks. They are called by the library on the thread that
// called the operation or on one of the executor's native worker threads; cgo runs them on a Go
// stack either way. The user data is a cgo.Handle (an integer), so no Go pointer is kept by C.

// #include <stdbool.h>
// #include <stdint.h>
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

//export paimonCleanupGoProgress
func paimonCleanupGoProgress(userData unsafe.Pointer, phase *C.char, done, total, bytes C.uint64_t) {
	run, ok := cgo.Handle(uintptr(userData)).Value().(*runCall)
	if !ok || run.progress == nil {
		return
	}
	run.mu.Lock()
	stopping := run.didPanic
	run.mu.Unlock()
	if stopping {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			run.recordPanic(v)
		}
	}()
	// A context cancelled by the callback itself (or just before) stops the run at its next
	// check, without waiting for the watching goroutine to be scheduled.
	defer run.cancelIfDone()
	run.progress(Progress{
		Phase: C.GoString(phase),
		Done:  uint64(done),
		Total: uint64(total),
		Bytes: uint64(bytes),
	})
}

//export paimonCleanupGoLog
func paimonCleanupGoLog(userData unsafe.Pointer, level C.int32_t, target, message *C.char) {
	run, ok := cgo.Handle(uintptr(userData)).Value().(*runCall)
	if !ok || run.log == nil {
		return
	}
	run.mu.Lock()
	stopping := run.didPanic
	run.mu.Unlock()
	if stopping {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			run.recordPanic(v)
		}
	}()
	run.log(LogEvent{Level: LogLevel(level), Target: C.GoString(target), Message: C.GoString(message)})
}

//export paimonCleanupGoVeto
func paimonCleanupGoVeto(userData unsafe.Pointer, path *C.char) (keep C.bool) {
	call, ok := cgo.Handle(uintptr(userData)).Value().(*vetoCall)
	if !ok {
		return true // keep: the safe answer
	}
	defer func() {
		if v := recover(); v != nil {
			call.run.recordPanic(v)
			keep = true
		}
	}()
	defer call.run.cancelIfDone()
	return C.bool(call.veto(C.GoString(path)))
}
