// Package paimoncleanup is the Go binding of paimon-cleanup, Apache Paimon table maintenance
// (expire snapshots / changelogs / tags / consumers, remove orphan files, drop and expire
// partitions) through its C ABI (include/paimon_cleanup.h), with cgo.
//
//	exec, err := paimoncleanup.NewExecutor(4) // one per process, shared by goroutines
//	if err != nil { ... }
//	defer exec.Close()
//	table, err := paimoncleanup.NewContext("s3://bucket/wh/db.db/t",
//		map[string]string{"s3.region": "eu-west-1"})
//	if err != nil { ... }
//	defer table.Close()
//	report, err := table.ExpireSnapshots(ctx, exec, paimoncleanup.ExpireConfig{RetainMin: 10}, nil)
//	var e *paimoncleanup.Error
//	if errors.As(err, &e) && e.Status == paimoncleanup.StatusNotFound { ... }
//
// Linking: by default the package links target/release/libpaimon_cleanup.so of this repository
// (build it with CMake first: `cmake --build build`, which also links libpaimon_cleanup.so.1, the
// SONAME the loader looks for); build with -tags paimon_cleanup_pkgconfig to link an
// installed copy through pkg-config. See docs/c-api.md, "Bindings".
//
// Threads and cancellation: Executor and Context are safe for concurrent use by many goroutines.
// Every operation blocks its goroutine (and its OS thread, as every cgo call does) until done.
// Cancelling the context.Context given to an operation stops it at its next check (at once when
// the context is cancelled from inside a progress or veto callback); it then returns an *Error
// with StatusCancelled that unwraps to ctx.Err(). Progress and veto callbacks
// run on the calling goroutine's thread or on one of the executor's native worker threads (cgo
// handles this; the Go function runs on a Go stack either way); calls of one operation never
// overlap. A callback that panics stops the operation, and the panic is re-raised in the
// goroutine that called the operation once it has returned.
package paimoncleanup

/*
#include <stdlib.h>
#include "paimon_cleanup.h"

// Exported from callbacks.go.
extern void paimonCleanupGoProgress(void *user_data, char *phase, uint64_t done, uint64_t total,
                                    uint64_t bytes);
extern _Bool paimonCleanupGoVeto(void *user_data, char *path);
extern void paimonCleanupGoLog(void *user_data, int32_t level, char *target, char *message);

// The callbacks take a cgo.Handle as user data: passed as an integer so no Go pointer reaches C.
static PaimonCleanupStatus pcgo_set_progress(PaimonCleanupRunOptions *o, uintptr_t handle,
                                             PaimonCleanupError **err) {
	return paimon_cleanup_run_options_set_progress(
		o, (PaimonCleanupProgressFn)paimonCleanupGoProgress, (void *)handle, err);
}
static PaimonCleanupStatus pcgo_set_log(PaimonCleanupRunOptions *o, uintptr_t handle,
                                        int32_t min_level, PaimonCleanupError **err) {
	return paimon_cleanup_run_options_set_log(o, (PaimonCleanupLogFn)paimonCleanupGoLog, min_level,
	                                          (void *)handle, err);
}
static PaimonCleanupStatus pcgo_set_veto(PaimonCleanupOrphanConfig *c, uintptr_t handle,
                                         PaimonCleanupError **err) {
	return paimon_cleanup_orphan_config_set_veto(c, (PaimonCleanupVetoFn)paimonCleanupGoVeto,
	                                             (void *)handle, err);
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Version is the version of the loaded library, e.g. "0.1.0".
func Version() string { return C.GoString(C.paimon_cleanup_version()) }

// ABIVersion is the C ABI version of the loaded library.
func ABIVersion() uint32 { return uint32(C.paimon_cleanup_abi_version()) }

// ParseOlderThan parses an older_than cut-off as Paimon Java's procedures and the CLI's
// --older-than take it: a timestamp ("2024-01-01 12:00:00", local time zone unless it ends
// with Z or an offset) or a duration counted back from now ("1 d", "30 min"). A bare number,
// an invalid date and a cut-off after now are StatusInvalidArgument errors. The result goes to
// ExpireConfig.OlderThan or OrphanConfig.OlderThan.
func ParseOlderThan(text string, now time.Time) (time.Time, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	var ms C.int64_t
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_parse_older_than(ctext, C.int64_t(now.UnixMilli()), &ms, &cerr), &cerr); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(int64(ms)), nil
}

// HeaderABIVersion is the C ABI version of the header this package was compiled against.
const HeaderABIVersion = uint32(C.PAIMON_CLEANUP_ABI_VERSION)

// ---------------------------------------------------------------------------------------------
// Status and errors

// Status is the library's status code (stable numbers; unknown values mean errors).
type Status int32

// The status codes of paimon_cleanup.h.
const (
	StatusOK              Status = 0
	StatusInvalidArgument Status = 1
	StatusNotFound        Status = 2
	StatusMalformed       Status = 3
	StatusUnsupported     Status = 4
	StatusStorage         Status = 5
	StatusPathRefused     Status = 6
	StatusCancelled       Status = 7
	StatusConflict        Status = 8
	StatusInternal        Status = 9
	StatusNullPointer     Status = 10
	StatusInvalidUTF8     Status = 11
	StatusPanic           Status = 12
	// StatusMemoryLimit: the run needed more memory than RunOptions.MaxMemory; it stopped
	// while planning, so nothing was deleted or committed.
	StatusMemoryLimit Status = 13
)

// String is the library's name of the status ("ok", "not_found", ..., "unknown").
func (s Status) String() string { return C.GoString(C.paimon_cleanup_status_name(C.int32_t(s))) }

// Error is a failed call: the library's status code and message.
type Error struct {
	Status  Status
	Message string
	cause   error // ctx.Err() when the operation was cancelled through its context
}

func (e *Error) Error() string { return e.Status.String() + ": " + e.Message }

// Unwrap returns context.Canceled / context.DeadlineExceeded when the operation stopped because
// its context.Context was done, so errors.Is(err, context.Canceled) works.
func (e *Error) Unwrap() error { return e.cause }

// HasStatus reports whether err is (or wraps) an *Error with status s.
func HasStatus(err error, s Status) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == s
}

// takeError turns a returned status and the error object in *slot into a Go error, freeing
// the object and clearing the slot. The slot is passed by address so that it is read only
// after the call that filled it has returned.
func takeError(status C.PaimonCleanupStatus, slot **C.PaimonCleanupError) error {
	err := *slot
	*slot = nil
	defer C.paimon_cleanup_error_free(err)
	if status == C.PAIMON_CLEANUP_STATUS_OK {
		return nil
	}
	msg := C.GoString(C.paimon_cleanup_error_message(err))
	if msg == "" {
		msg = "call failed"
	}
	return &Error{Status: Status(status), Message: msg}
}

// ---------------------------------------------------------------------------------------------
// Executor

// Executor owns the library's worker threads and its I/O concurrency. A process normally
// creates one and shares it. Safe for concurrent use; Close waits for calls in flight.
type Executor struct {
	mu  sync.RWMutex
	ptr *C.PaimonCleanupExecutor
}

// NewExecutor creates an executor with workerThreads threads (0 = one per CPU; at most 1024).
func NewExecutor(workerThreads uint32) (*Executor, error) {
	var ptr *C.PaimonCleanupExecutor
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_executor_new(C.uint32_t(workerThreads), &ptr, &cerr), &cerr); err != nil {
		return nil, err
	}
	e := &Executor{ptr: ptr}
	runtime.SetFinalizer(e, (*Executor).Close)
	return e, nil
}

// acquire read-locks the executor for one call; the caller must call e.mu.RUnlock().
func (e *Executor) acquire() (*C.PaimonCleanupExecutor, error) {
	if e == nil {
		return nil, &Error{Status: StatusNullPointer, Message: "nil *Executor"}
	}
	e.mu.RLock()
	if e.ptr == nil {
		e.mu.RUnlock()
		return nil, &Error{Status: StatusInvalidArgument, Message: "the executor is closed"}
	}
	return e.ptr, nil
}

// SetIOConcurrency sets the storage requests kept in flight by operations started afterwards
// (0 = automatic: 8 on a local file system, 64 on object stores; at most 4096).
func (e *Executor) SetIOConcurrency(n uint32) error {
	ptr, err := e.acquire()
	if err != nil {
		return err
	}
	defer e.mu.RUnlock()
	var cerr *C.PaimonCleanupError
	return takeError(C.paimon_cleanup_executor_set_io_concurrency(ptr, C.uint32_t(n), &cerr), &cerr)
}

// WorkerThreads is the resolved number of worker threads (0 once closed).
func (e *Executor) WorkerThreads() uint32 {
	ptr, err := e.acquire()
	if err != nil {
		return 0
	}
	defer e.mu.RUnlock()
	return uint32(C.paimon_cleanup_executor_worker_threads(ptr))
}

// IOConcurrency is the configured I/O concurrency (0 = automatic).
func (e *Executor) IOConcurrency() uint32 {
	ptr, err := e.acquire()
	if err != nil {
		return 0
	}
	defer e.mu.RUnlock()
	return uint32(C.paimon_cleanup_executor_io_concurrency(ptr))
}

// Close waits for the calls in flight, stops the worker threads and frees the executor.
// Calling it again does nothing. Never call it from a progress or veto callback.
func (e *Executor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ptr != nil {
		C.paimon_cleanup_executor_free(e.ptr)
		e.ptr = nil
		runtime.SetFinalizer(e, nil)
	}
	return nil
}

// ---------------------------------------------------------------------------------------------
// Context

// Context is a table: its location and the options used to reach and read it (storage
// credentials, endpoint, ... and overrides of table options). Safe for concurrent use; Close
// waits for calls in flight. Every maintenance operation is a method taking the Executor.
type Context struct {
	mu  sync.RWMutex
	ptr *C.PaimonCleanupContext
}

// noNUL refuses strings with a NUL byte, which C would silently truncate.
func noNUL(what string, values ...string) error {
	for _, v := range values {
		if strings.IndexByte(v, 0) >= 0 {
			return &Error{Status: StatusInvalidArgument, Message: what + " contains a NUL byte"}
		}
	}
	return nil
}

// cStrings is a C array of C strings, freed by free().
type cStrings struct {
	array **C.char
	items []*C.char
}

func newCStrings(values []string) *cStrings {
	s := &cStrings{}
	if len(values) == 0 {
		return s
	}
	s.array = (**C.char)(C.malloc(C.size_t(len(values)) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	elems := unsafe.Slice(s.array, len(values))
	for i, v := range values {
		elems[i] = C.CString(v)
		s.items = append(s.items, elems[i])
	}
	return s
}

func (s *cStrings) free() {
	for _, p := range s.items {
		C.free(unsafe.Pointer(p))
	}
	C.free(unsafe.Pointer(s.array))
}

// BranchOption is the option key that selects the branch every operation of a context works
// on (default "main"), like Paimon Java's `branch` table option. A table URI ending in
// `<table>$branch_<name>` names the branch too.
const BranchOption = "branch"

// NewBranchContext creates a context on branch `branch` of the table at uri (NewContext with
// the BranchOption set): expiry, tags, consumers and partitions change only that branch's
// versions and keep every file any branch reads; orphan removal is table-wide.
func NewBranchContext(uri, branch string, options map[string]string) (*Context, error) {
	all := make(map[string]string, len(options)+1)
	for k, v := range options {
		all[k] = v
	}
	all[BranchOption] = branch
	return NewContext(uri, all)
}

// NewContext creates a context for the table at uri (a local path, file://, s3://, ...) with
// the given options. The table is not opened here: a missing table is reported by the
// operations (StatusNotFound).
func NewContext(uri string, options map[string]string) (*Context, error) {
	keys := make([]string, 0, len(options))
	values := make([]string, 0, len(options))
	for k, v := range options {
		keys = append(keys, k)
		values = append(values, v)
	}
	if err := noNUL("the table URI", uri); err != nil {
		return nil, err
	}
	if err := noNUL("an option", append(append([]string(nil), keys...), values...)...); err != nil {
		return nil, err
	}
	ck, cv := newCStrings(keys), newCStrings(values)
	defer ck.free()
	defer cv.free()
	curi := C.CString(uri)
	defer C.free(unsafe.Pointer(curi))
	var ptr *C.PaimonCleanupContext
	var cerr *C.PaimonCleanupError
	status := C.paimon_cleanup_context_new(curi, ck.array, cv.array, C.size_t(len(keys)), &ptr, &cerr)
	if err := takeError(status, &cerr); err != nil {
		return nil, err
	}
	c := &Context{ptr: ptr}
	runtime.SetFinalizer(c, (*Context).Close)
	return c, nil
}

// Close waits for the calls in flight and frees the context. Calling it again does nothing.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ptr != nil {
		C.paimon_cleanup_context_free(c.ptr)
		c.ptr = nil
		runtime.SetFinalizer(c, nil)
	}
	return nil
}

// handles read-locks the context and the executor for one call; release() unlocks both.
func (c *Context) handles(e *Executor) (*C.PaimonCleanupContext, *C.PaimonCleanupExecutor, func(), error) {
	if c == nil {
		return nil, nil, nil, &Error{Status: StatusNullPointer, Message: "nil *Context"}
	}
	c.mu.RLock()
	if c.ptr == nil {
		c.mu.RUnlock()
		return nil, nil, nil, &Error{Status: StatusInvalidArgument, Message: "the context is closed"}
	}
	ep, err := e.acquire()
	if err != nil {
		c.mu.RUnlock()
		return nil, nil, nil, err
	}
	return c.ptr, ep, func() { e.mu.RUnlock(); c.mu.RUnlock() }, nil
}

// TableSummary is an overview of a table's main branch.
type TableSummary struct {
	HasSnapshots       bool
	EarliestSnapshotID int64 // 0 when HasSnapshots is false
	LatestSnapshotID   int64 // 0 when HasSnapshots is false
	SnapshotCount      uint64
	TagCount           uint64
	BranchCount        uint64 // branches other than main
	LiveFileCount      uint64 // live data files of the latest snapshot
	LiveFileBytes      uint64
}

// Summary reads the table (read-only) and returns an overview of the context's branch (main
// unless the BranchOption names another).
func (c *Context) Summary(e *Executor) (TableSummary, error) {
	cp, ep, release, err := c.handles(e)
	if err != nil {
		return TableSummary{}, err
	}
	defer release()
	var s C.PaimonCleanupTableSummary
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_table_summary(cp, ep, &s, &cerr), &cerr); err != nil {
		return TableSummary{}, err
	}
	return TableSummary{
		HasSnapshots:       bool(s.has_snapshots),
		EarliestSnapshotID: int64(s.earliest_snapshot_id),
		LatestSnapshotID:   int64(s.latest_snapshot_id),
		SnapshotCount:      uint64(s.snapshot_count),
		TagCount:           uint64(s.tag_count),
		BranchCount:        uint64(s.branch_count),
		LiveFileCount:      uint64(s.live_file_count),
		LiveFileBytes:      uint64(s.live_file_bytes),
	}, nil
}

// ---------------------------------------------------------------------------------------------
// Run options: progress, cancellation and the memory bound

// Progress is one progress report of a running operation.
type Progress struct {
	Phase string // current step, e.g. "data files"
	Done  uint64 // items of the step processed so far
	Total uint64 // items of the step in all (0 = unknown)
	Bytes uint64 // bytes deleted (dry run: deletable) so far in the whole run
}

// RunOptions are the optional settings of one long operation. Cancellation comes from the
// context.Context passed to the operation.
type RunOptions struct {
	// Progress, when set, is called with the progress of the operation. It must return quickly
	// and must not call an operation of this package.
	Progress func(Progress)
	// Log, when set, receives the library's log events of this operation at LogLevel or more
	// severe (paimon_cleanup_run_options_set_log; nothing is installed process-wide, so only
	// this operation's events reach it). Called on library threads, never after the operation
	// returned; calls never overlap. It must return quickly and must not call an operation of
	// this package. A panic in it stops the run and is re-raised by the operation.
	Log func(LogEvent)
	// LogLevel is the least severe level passed to Log; 0 means LogInfo.
	LogLevel LogLevel
	// MaxMemory, when not 0, bounds in bytes what the operation's large structures (candidate
	// files, protection's reduced manifests, merged live entries, the deletion plan, the report's
	// paths) may hold at once: an operation whose plan needs more fails with
	// StatusInvalidArgument while planning, before it deletes or commits anything
	// (paimon_cleanup_run_options_set_max_memory). 0: no bound.
	MaxMemory uint64
}

// LogLevel is the severity of a log event (PaimonCleanupLogLevel).
type LogLevel int32

// The log levels, most severe first.
const (
	LogError LogLevel = 1
	LogWarn  LogLevel = 2
	LogInfo  LogLevel = 3 // a few lines per run
	LogDebug LogLevel = 4 // a line per storage request
	LogTrace LogLevel = 5
)

// LogEvent is one log event of a running operation.
type LogEvent struct {
	Level   LogLevel
	Target  string // where it comes from (a Rust module path)
	Message string // the text, then ` key=value` fields
}

// runCall is the native run control of one operation: its own cancellation token (cancelled
// when ctx is done or a callback panics) and, when asked for, the progress trampoline.
type runCall struct {
	ctx      context.Context
	progress func(Progress)
	log      func(LogEvent)
	token    *C.PaimonCleanupCancelToken
	options  *C.PaimonCleanupRunOptions
	handle   cgo.Handle
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	panicked interface{}
	didPanic bool
}

// newRunCall prepares the run control; needToken asks for a native token even when neither ctx
// nor opts needs one (a veto callback that may panic).
func newRunCall(ctx context.Context, opts *RunOptions, needToken bool) (*runCall, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	r := &runCall{ctx: ctx}
	var maxMemory uint64
	logLevel := LogInfo
	if opts != nil {
		r.progress = opts.Progress
		r.log = opts.Log
		maxMemory = opts.MaxMemory
		if opts.LogLevel != 0 {
			logLevel = opts.LogLevel
		}
	}
	if ctx.Done() == nil && r.progress == nil && r.log == nil && maxMemory == 0 && !needToken {
		return r, nil // nothing to watch: NULL run options
	}
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_cancel_token_new(&r.token, &cerr), &cerr); err != nil {
		return nil, err
	}
	if err := takeError(C.paimon_cleanup_run_options_new(&r.options, &cerr), &cerr); err != nil {
		r.close()
		return nil, err
	}
	if err := takeError(C.paimon_cleanup_run_options_set_cancel_token(r.options, r.token, &cerr), &cerr); err != nil {
		r.close()
		return nil, err
	}
	if maxMemory != 0 {
		if err := takeError(C.paimon_cleanup_run_options_set_max_memory(r.options, C.uint64_t(maxMemory), &cerr), &cerr); err != nil {
			r.close()
			return nil, err
		}
	}
	if r.progress != nil || r.log != nil {
		r.handle = cgo.NewHandle(r)
	}
	if r.progress != nil {
		if err := takeError(C.pcgo_set_progress(r.options, C.uintptr_t(r.handle), &cerr), &cerr); err != nil {
			r.close()
			return nil, err
		}
	}
	if r.log != nil {
		if err := takeError(C.pcgo_set_log(r.options, C.uintptr_t(r.handle), C.int32_t(logLevel), &cerr), &cerr); err != nil {
			r.close()
			return nil, err
		}
	}
	if ctx.Err() != nil {
		C.paimon_cleanup_cancel_token_cancel(r.token) // already done: fail before reading anything
	} else if ctx.Done() != nil {
		r.stop = make(chan struct{})
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			select {
			case <-ctx.Done():
				C.paimon_cleanup_cancel_token_cancel(r.token)
			case <-r.stop:
			}
		}()
	}
	return r, nil
}

// cancelIfDone cancels the run's native token when its context is done.
func (r *runCall) cancelIfDone() {
	if r.token != nil && r.ctx.Err() != nil {
		C.paimon_cleanup_cancel_token_cancel(r.token)
	}
}

// recordPanic remembers the first panic of a callback and cancels the run.
func (r *runCall) recordPanic(v interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.didPanic {
		r.didPanic, r.panicked = true, v
		C.paimon_cleanup_cancel_token_cancel(r.token)
	}
}

// finish releases the native objects, re-raises a callback's panic and attaches ctx.Err() to
// a cancellation error.
func (r *runCall) finish(err error) error {
	r.close()
	r.mu.Lock()
	didPanic, panicked := r.didPanic, r.panicked
	r.mu.Unlock()
	if didPanic {
		panic(panicked)
	}
	var e *Error
	if errors.As(err, &e) && e.Status == StatusCancelled && r.ctx.Err() != nil {
		e.cause = r.ctx.Err()
	}
	return err
}

func (r *runCall) close() {
	if r.stop != nil {
		close(r.stop)
		r.wg.Wait()
		r.stop = nil
	}
	if r.handle != 0 {
		r.handle.Delete()
		r.handle = 0
	}
	C.paimon_cleanup_run_options_free(r.options)
	C.paimon_cleanup_cancel_token_free(r.token)
	r.options, r.token = nil, nil
}

// runReport runs one report-returning operation with its handles locked and its run control.
func (c *Context) runReport(ctx context.Context, e *Executor, opts *RunOptions,
	call func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor, o *C.PaimonCleanupRunOptions,
		out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus) (*Report, error) {
	cp, ep, release, err := c.handles(e)
	if err != nil {
		return nil, err
	}
	defer release()
	run, err := newRunCall(ctx, opts, false)
	if err != nil {
		return nil, err
	}
	var out *C.PaimonCleanupReport
	var cerr *C.PaimonCleanupError
	status := call(cp, ep, run.options, &out, &cerr)
	defer C.paimon_cleanup_report_free(out)
	if err := run.finish(takeError(status, &cerr)); err != nil {
		return nil, err
	}
	return convertReport(out), nil
}

// ---------------------------------------------------------------------------------------------
// Configurations

// ExpireConfig holds the settings of a snapshot or changelog expiry. A zero field is unset: the
// table's option applies (schema options overridden by the Context's options), then Paimon's
// default. Out-of-range values are reported as StatusInvalidArgument.
type ExpireConfig struct {
	RetainMin    int64          // snapshot.num-retained.min (default 10)
	RetainMax    int64          // snapshot.num-retained.max
	TimeRetained *time.Duration // snapshot.time-retained (default 1h); 0 = no age protection
	OlderThan    time.Time      // absolute cut-off instead of TimeRetained; not in the future
	MaxExpires   int64          // snapshot.expire.limit (default 50)
	// CleanEmptyDirs sets snapshot.clean-empty-directories when not nil.
	CleanEmptyDirs      *bool
	DryRun              bool // compute and report, change nothing
	RefuseIfTagsPin     bool // StatusConflict when a tag pins an expiring snapshot
	DeleteAllChangelogs bool // changelog expiry: remove every changelog older than the earliest snapshot
}

func (cfg *ExpireConfig) native() (*C.PaimonCleanupExpireConfig, error) {
	var p *C.PaimonCleanupExpireConfig
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_expire_config_new(&p, &cerr), &cerr); err != nil {
		return nil, err
	}
	steps := []func() C.PaimonCleanupStatus{}
	if cfg.RetainMin != 0 {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_retain_min(p, C.int64_t(cfg.RetainMin), &cerr)
		})
	}
	if cfg.RetainMax != 0 {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_retain_max(p, C.int64_t(cfg.RetainMax), &cerr)
		})
	}
	if cfg.TimeRetained != nil {
		if *cfg.TimeRetained < 0 {
			C.paimon_cleanup_expire_config_free(p)
			return nil, &Error{Status: StatusInvalidArgument, Message: "TimeRetained must not be negative"}
		}
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_time_retained_ms(p, C.uint64_t(cfg.TimeRetained.Milliseconds()), &cerr)
		})
	}
	if !cfg.OlderThan.IsZero() {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_older_than_ms(p, C.int64_t(cfg.OlderThan.UnixMilli()), &cerr)
		})
	}
	if cfg.MaxExpires != 0 {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_max_expires(p, C.int64_t(cfg.MaxExpires), &cerr)
		})
	}
	if cfg.CleanEmptyDirs != nil {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_clean_empty_dirs(p, C.bool(*cfg.CleanEmptyDirs), &cerr)
		})
	}
	steps = append(steps,
		func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_dry_run(p, C.bool(cfg.DryRun), &cerr)
		},
		func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_refuse_if_tags_pin(p, C.bool(cfg.RefuseIfTagsPin), &cerr)
		},
		func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_expire_config_set_delete_all_changelogs(p, C.bool(cfg.DeleteAllChangelogs), &cerr)
		})
	for _, step := range steps {
		if err := takeError(step(), &cerr); err != nil {
			C.paimon_cleanup_expire_config_free(p)
			return nil, err
		}
	}
	return p, nil
}

// OrphanConfig holds the settings of an orphan-file removal.
type OrphanConfig struct {
	// OlderThan is the cut-off: only files modified before it may be deleted. Zero = now - 1
	// day. A cut-off within the last hour is refused unless NoWritersRunning is set.
	OlderThan time.Time
	DryRun    bool
	// NoWritersRunning declares that nothing writes to the table during the run (DANGER: files
	// of an uncommitted write look like orphans; see the C header).
	NoWritersRunning bool
	// ExternalRootsOwned declares that the table's external data roots belong to it alone, so
	// they are listed and cleaned (DANGER: default false skips them, because tables configured
	// with one root share its directories; see the C header).
	ExternalRootsOwned bool
	ListConcurrency    uint32 // 0 = the executor's I/O concurrency
	DeleteConcurrency  uint32 // 0 = the executor's I/O concurrency
	// Veto, when set, is asked about every file the run would delete (path relative to the
	// table root when under it); returning true keeps the file. A panic keeps the file, stops
	// the run and is re-raised by the call that asked (RemoveOrphanFiles, OrphanUnitsDecide,
	// OrphanShardDecide).
	Veto func(path string) bool
}

// vetoCall is the state behind one run's veto trampoline.
type vetoCall struct {
	veto func(string) bool
	run  *runCall
}

func (cfg *OrphanConfig) native(run *runCall) (*C.PaimonCleanupOrphanConfig, cgo.Handle, error) {
	var p *C.PaimonCleanupOrphanConfig
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_orphan_config_new(&p, &cerr), &cerr); err != nil {
		return nil, 0, err
	}
	var handle cgo.Handle
	fail := func(err error) (*C.PaimonCleanupOrphanConfig, cgo.Handle, error) {
		C.paimon_cleanup_orphan_config_free(p)
		if handle != 0 {
			handle.Delete()
		}
		return nil, 0, err
	}
	if !cfg.OlderThan.IsZero() {
		if err := takeError(C.paimon_cleanup_orphan_config_set_older_than_ms(p, C.int64_t(cfg.OlderThan.UnixMilli()), &cerr), &cerr); err != nil {
			return fail(err)
		}
	}
	if err := takeError(C.paimon_cleanup_orphan_config_set_dry_run(p, C.bool(cfg.DryRun), &cerr), &cerr); err != nil {
		return fail(err)
	}
	if err := takeError(C.paimon_cleanup_orphan_config_set_no_writers_running(p, C.bool(cfg.NoWritersRunning), &cerr), &cerr); err != nil {
		return fail(err)
	}
	if err := takeError(C.paimon_cleanup_orphan_config_set_external_roots_owned(p, C.bool(cfg.ExternalRootsOwned), &cerr), &cerr); err != nil {
		return fail(err)
	}
	if err := takeError(C.paimon_cleanup_orphan_config_set_list_concurrency(p, C.uint32_t(cfg.ListConcurrency), &cerr), &cerr); err != nil {
		return fail(err)
	}
	if err := takeError(C.paimon_cleanup_orphan_config_set_delete_concurrency(p, C.uint32_t(cfg.DeleteConcurrency), &cerr), &cerr); err != nil {
		return fail(err)
	}
	if cfg.Veto != nil {
		handle = cgo.NewHandle(&vetoCall{veto: cfg.Veto, run: run})
		if err := takeError(C.pcgo_set_veto(p, C.uintptr_t(handle), &cerr), &cerr); err != nil {
			return fail(err)
		}
	}
	return p, handle, nil
}

// PartitionExpireStrategy selects how a partition expiry dates a partition.
type PartitionExpireStrategy int32

// The strategies; the zero value leaves partition.expiration-strategy to the table.
const (
	StrategyTableDefault PartitionExpireStrategy = iota
	StrategyValuesTime                           // the time in the partition values
	StrategyUpdateTime                           // the last time a file was added
)

// PartitionExpireConfig holds the settings of a partition expiry. Zero fields take the table's
// partition.expiration-* / partition.timestamp-* options, then Paimon's defaults.
type PartitionExpireConfig struct {
	ExpirationTime     time.Duration // partition.expiration-time (required somewhere)
	Strategy           PartitionExpireStrategy
	TimestampFormatter string // e.g. "yyyyMMdd"
	TimestampPattern   string // e.g. "$dt $hr:00:00"
	MaxExpires         uint64 // partition.expiration-max-num (default 100)
	BatchSize          uint64 // partition.expiration-batch-size (default: one commit)
	DryRun             bool
	Now                time.Time // measure from this time instead of the wall clock
}

func (cfg *PartitionExpireConfig) native() (*C.PaimonCleanupPartitionExpireConfig, error) {
	var p *C.PaimonCleanupPartitionExpireConfig
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_partition_expire_config_new(&p, &cerr), &cerr); err != nil {
		return nil, err
	}
	var steps []func() C.PaimonCleanupStatus
	if err := noNUL("a timestamp formatter or pattern", cfg.TimestampFormatter, cfg.TimestampPattern); err != nil {
		C.paimon_cleanup_partition_expire_config_free(p)
		return nil, err
	}
	if cfg.ExpirationTime < 0 {
		C.paimon_cleanup_partition_expire_config_free(p)
		return nil, &Error{Status: StatusInvalidArgument, Message: "ExpirationTime must not be negative"}
	}
	if cfg.ExpirationTime != 0 {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_partition_expire_config_set_expiration_time_ms(p, C.uint64_t(cfg.ExpirationTime.Milliseconds()), &cerr)
		})
	}
	if cfg.Strategy != StrategyTableDefault {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_partition_expire_config_set_strategy(p, C.int32_t(cfg.Strategy-1), &cerr)
		})
	}
	for _, s := range []struct {
		value string
		set   func(*C.PaimonCleanupPartitionExpireConfig, *C.char, **C.PaimonCleanupError) C.PaimonCleanupStatus
	}{
		{cfg.TimestampFormatter, func(p *C.PaimonCleanupPartitionExpireConfig, v *C.char, e **C.PaimonCleanupError) C.PaimonCleanupStatus {
			return C.paimon_cleanup_partition_expire_config_set_timestamp_formatter(p, v, e)
		}},
		{cfg.TimestampPattern, func(p *C.PaimonCleanupPartitionExpireConfig, v *C.char, e **C.PaimonCleanupError) C.PaimonCleanupStatus {
			return C.paimon_cleanup_partition_expire_config_set_timestamp_pattern(p, v, e)
		}},
	} {
		if s.value == "" {
			continue
		}
		s := s
		steps = append(steps, func() C.PaimonCleanupStatus {
			cs := C.CString(s.value)
			defer C.free(unsafe.Pointer(cs))
			return s.set(p, cs, &cerr)
		})
	}
	if cfg.MaxExpires != 0 {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_partition_expire_config_set_max_expires(p, C.uint64_t(cfg.MaxExpires), &cerr)
		})
	}
	if cfg.BatchSize != 0 {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_partition_expire_config_set_batch_size(p, C.uint64_t(cfg.BatchSize), &cerr)
		})
	}
	if !cfg.Now.IsZero() {
		steps = append(steps, func() C.PaimonCleanupStatus {
			return C.paimon_cleanup_partition_expire_config_set_now_ms(p, C.int64_t(cfg.Now.UnixMilli()), &cerr)
		})
	}
	steps = append(steps, func() C.PaimonCleanupStatus {
		return C.paimon_cleanup_partition_expire_config_set_dry_run(p, C.bool(cfg.DryRun), &cerr)
	})
	for _, step := range steps {
		if err := takeError(step(), &cerr); err != nil {
			C.paimon_cleanup_partition_expire_config_free(p)
			return nil, err
		}
	}
	return p, nil
}

// ---------------------------------------------------------------------------------------------
// Operations. Each blocks until done; ctx cancels it (StatusCancelled); opts may be nil.

// ExpireSnapshots expires old snapshots of main and deletes every file only they referenced, in
// crash-safe order. Files needed by retained snapshots, tags, branches, changelogs or consumers
// are never deleted.
func (c *Context) ExpireSnapshots(ctx context.Context, e *Executor, cfg ExpireConfig, opts *RunOptions) (*Report, error) {
	return c.expire(ctx, e, cfg, opts, false)
}

// ExpireChangelogs expires long-lived changelogs (tables whose changelog lifecycle is decoupled
// from snapshots) and the changelog files only they referenced.
func (c *Context) ExpireChangelogs(ctx context.Context, e *Executor, cfg ExpireConfig, opts *RunOptions) (*Report, error) {
	return c.expire(ctx, e, cfg, opts, true)
}

func (c *Context) expire(ctx context.Context, e *Executor, cfg ExpireConfig, opts *RunOptions, changelogs bool) (*Report, error) {
	native, err := cfg.native()
	if err != nil {
		return nil, err
	}
	defer C.paimon_cleanup_expire_config_free(native)
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		if changelogs {
			return C.paimon_cleanup_expire_changelogs(cp, ep, native, o, out, cerr)
		}
		return C.paimon_cleanup_expire_snapshots(cp, ep, native, o, out, cerr)
	})
}

// DeleteTag deletes a tag and the files only it kept. A missing tag is not an error: it is
// listed in Report.Missing.
func (c *Context) DeleteTag(ctx context.Context, e *Executor, tag string, dryRun bool, opts *RunOptions) (*Report, error) {
	if err := noNUL("the tag name", tag); err != nil {
		return nil, err
	}
	ctag := C.CString(tag)
	defer C.free(unsafe.Pointer(ctag))
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return C.paimon_cleanup_delete_tag(cp, ep, ctag, C.bool(dryRun), o, out, cerr)
	})
}

// ExpireTags expires tags whose retention passed and, when olderThan is not zero, every tag
// created before it.
func (c *Context) ExpireTags(ctx context.Context, e *Executor, olderThan time.Time, dryRun bool, opts *RunOptions) (*Report, error) {
	var ms int64
	if !olderThan.IsZero() {
		ms = olderThan.UnixMilli()
	}
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return C.paimon_cleanup_expire_tags(cp, ep, C.int64_t(ms), C.bool(dryRun), o, out, cerr)
	})
}

// ExpireConsumers expires consumers that have not advanced for expiration (0 = the table's
// consumer.expiration-time).
func (c *Context) ExpireConsumers(ctx context.Context, e *Executor, expiration time.Duration, dryRun bool, opts *RunOptions) (*Report, error) {
	if expiration < 0 {
		return nil, &Error{Status: StatusInvalidArgument, Message: "expiration must not be negative"}
	}
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return C.paimon_cleanup_expire_consumers(cp, ep, C.uint64_t(expiration.Milliseconds()), C.bool(dryRun), o, out, cerr)
	})
}

// Maintain runs what the table's own options ask for (tag, consumer, snapshot and changelog
// expiry); Report.Steps holds one report per step that ran.
func (c *Context) Maintain(ctx context.Context, e *Executor, dryRun bool, opts *RunOptions) (*Report, error) {
	var native *C.PaimonCleanupMaintainConfig
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_maintain_config_new(&native, &cerr), &cerr); err != nil {
		return nil, err
	}
	defer C.paimon_cleanup_maintain_config_free(native)
	if err := takeError(C.paimon_cleanup_maintain_config_set_dry_run(native, C.bool(dryRun), &cerr), &cerr); err != nil {
		return nil, err
	}
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return C.paimon_cleanup_maintain(cp, ep, native, o, out, cerr)
	})
}

// RemoveOrphanFiles deletes files older than the cut-off that no snapshot, tag, branch or
// changelog references.
func (c *Context) RemoveOrphanFiles(ctx context.Context, e *Executor, cfg OrphanConfig, opts *RunOptions) (*Report, error) {
	cp, ep, release, err := c.handles(e)
	if err != nil {
		return nil, err
	}
	defer release()
	// A veto needs a native token, so that a panicking veto can stop the run.
	run, err := newRunCall(ctx, opts, cfg.Veto != nil)
	if err != nil {
		return nil, err
	}
	native, handle, err := cfg.native(run)
	if err != nil {
		return nil, run.finish(err)
	}
	defer C.paimon_cleanup_orphan_config_free(native)
	if handle != 0 {
		defer handle.Delete()
	}
	var out *C.PaimonCleanupReport
	var cerr *C.PaimonCleanupError
	status := C.paimon_cleanup_remove_orphan_files(cp, ep, native, run.options, &out, &cerr)
	defer C.paimon_cleanup_report_free(out)
	if err := run.finish(takeError(status, &cerr)); err != nil {
		return nil, err
	}
	return convertReport(out), nil
}

// PartitionSpec selects partitions to drop: partition key -> value, read as Paimon Java reads a
// spec and matched against the partition values (not the directory names): the table's default
// partition name (partition.default-name, "__DEFAULT_PARTITION__") means NULL, "" the empty
// string and " " one space, although all three share one directory; other types are written as
// in the directory name or in SQL. Naming a prefix of the partition keys selects every
// partition below it.
type PartitionSpec map[string]string

// DropPartitions commits one OVERWRITE snapshot marking every live file of the matching
// partitions deleted (the files go with a later snapshot expiry). Nothing is committed on error.
func (c *Context) DropPartitions(ctx context.Context, e *Executor, specs []PartitionSpec, opts *RunOptions) (*Report, error) {
	return c.dropPartitions(ctx, e, specs, opts, false)
}

// PreviewDropPartitions reports what DropPartitions would do now, committing nothing: the
// matching partitions of the latest snapshot and the live files, rows and bytes a drop would mark
// deleted (a dry-run report without snapshot ids). Specs are checked as by DropPartitions (same
// errors); a writer that commits in between can change what a later drop commits.
func (c *Context) PreviewDropPartitions(ctx context.Context, e *Executor, specs []PartitionSpec, opts *RunOptions) (*Report, error) {
	return c.dropPartitions(ctx, e, specs, opts, true)
}

func (c *Context) dropPartitions(ctx context.Context, e *Executor, specs []PartitionSpec, opts *RunOptions, preview bool) (*Report, error) {
	for _, spec := range specs {
		for k, v := range spec {
			if err := noNUL("a partition spec", k, v); err != nil {
				return nil, err
			}
		}
	}
	n := len(specs)
	var cspecs *C.PaimonCleanupPartitionSpec
	var arrays []*cStrings
	defer func() {
		for _, a := range arrays {
			a.free()
		}
		C.free(unsafe.Pointer(cspecs))
	}()
	if n > 0 {
		cspecs = (*C.PaimonCleanupPartitionSpec)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.PaimonCleanupPartitionSpec{}))))
		elems := unsafe.Slice(cspecs, n)
		for i, spec := range specs {
			keys := make([]string, 0, len(spec))
			values := make([]string, 0, len(spec))
			for k, v := range spec {
				keys = append(keys, k)
				values = append(values, v)
			}
			ck, cv := newCStrings(keys), newCStrings(values)
			arrays = append(arrays, ck, cv)
			elems[i].keys = ck.array
			elems[i].values = cv.array
			elems[i].field_count = C.size_t(len(keys))
		}
	}
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		if preview {
			return C.paimon_cleanup_preview_drop_partitions(cp, ep, cspecs, C.size_t(n), o, out, cerr)
		}
		return C.paimon_cleanup_drop_partitions(cp, ep, cspecs, C.size_t(n), o, out, cerr)
	})
}

// ExpirePartitions drops the partitions older than the expiration time (one OVERWRITE commit
// per batch).
func (c *Context) ExpirePartitions(ctx context.Context, e *Executor, cfg PartitionExpireConfig, opts *RunOptions) (*Report, error) {
	native, err := cfg.native()
	if err != nil {
		return nil, err
	}
	defer C.paimon_cleanup_partition_expire_config_free(native)
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return C.paimon_cleanup_expire_partitions(cp, ep, native, o, out, cerr)
	})
}

// ---------------------------------------------------------------------------------------------
// Reports

// FileClass is the kind of a file a report counts (stable numbers).
type FileClass int32

// The file classes of paimon_cleanup.h.
const (
	ClassData          FileClass = 0
	ClassChangelogData FileClass = 1
	ClassManifest      FileClass = 2
	ClassManifestList  FileClass = 3
	ClassIndexManifest FileClass = 4
	ClassIndex         FileClass = 5
	ClassStatistics    FileClass = 6
	ClassSnapshotMeta  FileClass = 7
	ClassChangelogMeta FileClass = 8
	ClassTagMeta       FileClass = 9
	ClassConsumerMeta  FileClass = 10
	ClassOther         FileClass = 11
)

// FileClassCount is the number of file classes this package knows.
const FileClassCount = int(C.PAIMON_CLEANUP_FILE_CLASS_COUNT)

// String is the library's name of the class ("data", "manifest_list", ...).
func (f FileClass) String() string {
	return C.GoString(C.paimon_cleanup_file_class_name(C.int32_t(f)))
}

// ReportKind says which operation produced a report (stable numbers).
type ReportKind int32

// The report kinds of paimon_cleanup.h.
const (
	KindNone              ReportKind = 0
	KindExpireSnapshots   ReportKind = 1
	KindExpireChangelogs  ReportKind = 2
	KindDeleteTag         ReportKind = 3
	KindExpireTags        ReportKind = 4
	KindExpireConsumers   ReportKind = 5
	KindRemoveOrphanFiles ReportKind = 6
	KindDropPartitions    ReportKind = 7
	KindExpirePartitions  ReportKind = 8
	KindMaintain          ReportKind = 9
)

// String is the library's name of the kind ("expire_snapshots", ...).
func (k ReportKind) String() string {
	return C.GoString(C.paimon_cleanup_report_kind_name(C.int32_t(k)))
}

// ClassCount is what a run deleted of one file class.
type ClassCount struct {
	Class FileClass
	Files uint64
	Bytes uint64
}

// DeletedPath is a file a run deleted (dry run: would delete), relative to the table root when
// under it, else its full URI.
type DeletedPath struct {
	Path  string
	Class FileClass
}

// FailedDeletion is a deletion that failed (the file is still there; a later run retries it).
type FailedDeletion struct {
	Path  string
	Error string
}

// PartitionField is one key/value of a dropped partition: the value as the text that names it
// again in a PartitionSpec (the default partition name for NULL, strings verbatim, possibly ""
// or blank; other types as in the directory name).
type PartitionField struct {
	Key, Value string
}

// IDRange is an inclusive range of snapshot / changelog ids.
type IDRange struct {
	First, Last int64
}

// Report is the outcome of an operation, copied out of the library's report (the native report
// is freed before the operation returns, so a Report needs no Close). Fields that do not apply
// to Kind are zero.
type Report struct {
	Kind              ReportKind
	DryRun            bool
	Expired           uint64   // snapshots, changelogs, tags, consumers or partitions removed
	ExpiredRange      *IDRange // first and last expired snapshot / changelog id
	EarliestAfter     *int64   // earliest snapshot left by a snapshot expiry
	ChangelogsWritten uint64
	Classes           []ClassCount // classes with at least one file, in class order
	TotalFiles        uint64
	TotalBytes        uint64
	DirsRemoved       uint64
	Paths             []DeletedPath // deletion order; a sample when PathsElsewhere
	// PathsElsewhere: Paths is a sample, not every file (a snapshot expiry as units whose gate
	// handed the freed data and changelog paths to the tasks); counts and failures are complete.
	PathsElsewhere bool
	Failures       []FailedDeletion
	Names          []string // tags, consumer ids or partitions ("k=v/k2=v2")
	Missing        []string // requested items that did not exist
	Partitions     [][]PartitionField
	MarkedFiles    uint64 // data files a partition drop / expiry marked deleted
	MarkedRows     uint64
	MarkedBytes    uint64
	Committed      []int64   // snapshots committed (partition drop / expiry)
	Cutoff         time.Time // orphan-file removal cut-off (zero for other kinds)
	Candidates     uint64    // orphan-file removal: files examined
	Referenced     uint64    // ... listed files kept because a version references them (any age)
	Vetoed         uint64    // ... kept by the veto
	Warnings       []string
	Steps          []*Report // Maintain: one report per step that ran
	Elapsed        time.Duration
}

// Files is the number of files of class f the run deleted (dry run: would delete).
func (r *Report) Files(f FileClass) uint64 {
	for _, c := range r.Classes {
		if c.Class == f {
			return c.Files
		}
	}
	return 0
}

// Bytes is the size of the files of class f the run deleted (dry run: would delete).
func (r *Report) Bytes(f FileClass) uint64 {
	for _, c := range r.Classes {
		if c.Class == f {
			return c.Bytes
		}
	}
	return 0
}

func goStrings(r *C.PaimonCleanupReport, n C.size_t, at func(*C.PaimonCleanupReport, C.size_t) *C.char) []string {
	out := make([]string, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		out = append(out, C.GoString(at(r, i)))
	}
	return out
}

// convertReport copies a native report (and its steps) into Go values.
func convertReport(r *C.PaimonCleanupReport) *Report {
	out := &Report{
		Kind:              ReportKind(C.paimon_cleanup_report_kind(r)),
		DryRun:            bool(C.paimon_cleanup_report_dry_run(r)),
		PathsElsewhere:    bool(C.paimon_cleanup_report_paths_elsewhere(r)),
		Expired:           uint64(C.paimon_cleanup_report_expired_count(r)),
		ChangelogsWritten: uint64(C.paimon_cleanup_report_changelogs_written(r)),
		TotalFiles:        uint64(C.paimon_cleanup_report_total_files(r)),
		TotalBytes:        uint64(C.paimon_cleanup_report_total_bytes(r)),
		DirsRemoved:       uint64(C.paimon_cleanup_report_dirs_removed(r)),
		MarkedFiles:       uint64(C.paimon_cleanup_report_files_marked_deleted(r)),
		MarkedRows:        uint64(C.paimon_cleanup_report_rows_marked_deleted(r)),
		MarkedBytes:       uint64(C.paimon_cleanup_report_bytes_marked_deleted(r)),
		Candidates:        uint64(C.paimon_cleanup_report_candidates(r)),
		Referenced:        uint64(C.paimon_cleanup_report_referenced(r)),
		Vetoed:            uint64(C.paimon_cleanup_report_vetoed(r)),
		Elapsed:           time.Duration(C.paimon_cleanup_report_elapsed_ms(r)) * time.Millisecond,
	}
	if C.paimon_cleanup_report_has_expired_range(r) {
		out.ExpiredRange = &IDRange{
			First: int64(C.paimon_cleanup_report_first_expired_id(r)),
			Last:  int64(C.paimon_cleanup_report_last_expired_id(r)),
		}
	}
	if C.paimon_cleanup_report_has_earliest_after(r) {
		v := int64(C.paimon_cleanup_report_earliest_after_id(r))
		out.EarliestAfter = &v
	}
	for c := 0; c < FileClassCount; c++ {
		if n := uint64(C.paimon_cleanup_report_files(r, C.int32_t(c))); n > 0 {
			out.Classes = append(out.Classes, ClassCount{
				Class: FileClass(c), Files: n, Bytes: uint64(C.paimon_cleanup_report_bytes(r, C.int32_t(c))),
			})
		}
	}
	n := C.paimon_cleanup_report_path_count(r)
	out.Paths = make([]DeletedPath, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		out.Paths = append(out.Paths, DeletedPath{
			Path:  C.GoString(C.paimon_cleanup_report_path(r, i)),
			Class: FileClass(C.paimon_cleanup_report_path_class(r, i)),
		})
	}
	for i := C.size_t(0); i < C.paimon_cleanup_report_failed_count(r); i++ {
		out.Failures = append(out.Failures, FailedDeletion{
			Path:  C.GoString(C.paimon_cleanup_report_failed_path(r, i)),
			Error: C.GoString(C.paimon_cleanup_report_failed_error(r, i)),
		})
	}
	out.Names = goStrings(r, C.paimon_cleanup_report_name_count(r), func(r *C.PaimonCleanupReport, i C.size_t) *C.char {
		return C.paimon_cleanup_report_name(r, i)
	})
	out.Missing = goStrings(r, C.paimon_cleanup_report_missing_count(r), func(r *C.PaimonCleanupReport, i C.size_t) *C.char {
		return C.paimon_cleanup_report_missing(r, i)
	})
	out.Warnings = goStrings(r, C.paimon_cleanup_report_warning_count(r), func(r *C.PaimonCleanupReport, i C.size_t) *C.char {
		return C.paimon_cleanup_report_warning(r, i)
	})
	for i := C.size_t(0); i < C.paimon_cleanup_report_name_count(r); i++ {
		fields := C.paimon_cleanup_report_partition_field_count(r, i)
		if fields == 0 {
			continue
		}
		p := make([]PartitionField, 0, int(fields))
		for f := C.size_t(0); f < fields; f++ {
			p = append(p, PartitionField{
				Key:   C.GoString(C.paimon_cleanup_report_partition_key(r, i, f)),
				Value: C.GoString(C.paimon_cleanup_report_partition_value(r, i, f)),
			})
		}
		out.Partitions = append(out.Partitions, p)
	}
	for i := C.size_t(0); i < C.paimon_cleanup_report_committed_snapshot_count(r); i++ {
		out.Committed = append(out.Committed, int64(C.paimon_cleanup_report_committed_snapshot_id(r, i)))
	}
	if ms := int64(C.paimon_cleanup_report_cutoff_ms(r)); ms != 0 {
		out.Cutoff = time.UnixMilli(ms)
	}
	for i := C.size_t(0); i < C.paimon_cleanup_report_step_count(r); i++ {
		out.Steps = append(out.Steps, convertReport((*C.PaimonCleanupReport)(unsafe.Pointer(C.paimon_cleanup_report_step(r, i)))))
	}
	return out
}

// String is a one-line human-readable summary of the report.
func (r *Report) String() string {
	s := fmt.Sprintf("%s: %d files / %d bytes", r.Kind, r.TotalFiles, r.TotalBytes)
	if r.DryRun {
		s += " (dry run)"
	}
	return s
}
