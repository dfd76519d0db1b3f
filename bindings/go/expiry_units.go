package paimoncleanup

// Snapshot expiry as units: the C functions paimon_cleanup_expiry_* (include/paimon_cleanup.h)
// for engines that schedule the work on their own workers.

/*
#include <stdlib.h>
#include "paimon_cleanup.h"
*/
import "C"

import (
	"context"
	"unsafe"
)

// Snapshot expiry split into units that an engine schedules on its own workers (the Java
// binding's ExpiryUnits). Every unit and every partial result is an opaque, versioned byte
// string: ship it, store it, retry it. The result equals Context.ExpireSnapshots (same report,
// same files left):
//
//	plan, err := table.ExpiryUnitsPlan(ctx, exec, cfg, nil)            // driver
//	var candidates []byte                                              // workers, any order:
//	for _, u := range plan.Units { r, _ := ExpiryUnitExecute(ctx, exec, u, nil, nil); candidates, _ = ExpiryPartialsMerge(candidates, r) }
//	protect, err := table.ExpiryUnitsProtect(ctx, exec, plan.State, candidates, nil)
//	kept := merge of ExpiryUnitExecute over protect.Units (none: nil)
//	decision, err := table.ExpiryUnitsDecide(ctx, exec, protect.State, candidates, kept, nil)
//	deleted := merge of ExpiryUnitExecute over decision.Units (the delete units)
//	report, err := table.ExpiryUnitsFinish(ctx, exec, decision.State, deleted, nil)
//
// The sharded decision (no process holds every candidate) replaces protect and decide:
// ExpiryPartialSplit each candidate result into a summary and K pieces, ExpiryUnitsGate on the
// driver with the merged summaries, ExpiryShardDecide per shard with its merged pieces,
// ExpiryUnitExecute the shards' delete units, ExpiryUnitsConclude with every shard's report,
// then ExpiryUnitsFinish.
//
// Ownership: every []byte returned is a Go copy (the native buffers are freed before a function
// returns); the arguments are only read during the call. Thread-safety: every function may be
// called from many goroutines at once. Errors: an *Error with the library's status
// (StatusInvalidArgument for foreign, corrupted or doubled bytes, StatusStorage when a delete
// unit failed and finish stops before the metadata, StatusCancelled when ctx is done, ...).

// ExpiryStep is what a driver step returns: its state (or decision) and the units to execute.
type ExpiryStep struct {
	// State is the plan state (plan), the new state (protect) or the decision (decide): keep
	// it on the driver for the next step.
	State []byte
	// Units are the units to execute with ExpiryUnitExecute (possibly none).
	Units [][]byte
}

// ExpirySplit is a candidate result split for the sharded decision.
type ExpirySplit struct {
	// Summary goes to the driver: merge every summary and pass it to ExpiryUnitsGate.
	Summary []byte
	// Shards holds one piece per shard (Shards[i] is shard i): merge each shard's pieces for
	// ExpiryShardDecide.
	Shards [][]byte
}

// ExpiryGated is what ExpiryUnitsGate returns.
type ExpiryGated struct {
	Decision []byte // the decision so far, for ExpiryUnitsConclude (keep it on the driver)
	Gate     []byte // what every shard decides with (ship it to the shard tasks)
}

// ExpiryShardDecision is what ExpiryShardDecide returns.
type ExpiryShardDecision struct {
	Report      []byte   // the shard's report, for ExpiryUnitsConclude
	DeleteUnits [][]byte // executed after ExpiryUnitsConclude succeeded (none in a dry run)
	// Paths: with a gate that hands the paths to the tasks, in a dry run, every path the shard
	// would delete (in the single-process order); otherwise empty.
	Paths []string
}

// ExpiryExecuted is what ExpiryUnitExecuteHandingPaths returns.
type ExpiryExecuted struct {
	Result []byte // the unit's partial result, merged like ExpiryUnitExecute's
	// Paths: for a delete unit of a gate that hands the paths to the tasks, every path it
	// deleted, in order; otherwise empty.
	Paths []string
}

// bufferOut is one buffer out-parameter; free() releases it (nil is fine).
type bufferOut struct{ p *C.PaimonCleanupBuffer }

func (b *bufferOut) free() { C.paimon_cleanup_buffer_free(b.p); b.p = nil }

// bytes copies the buffer into Go memory.
func (b *bufferOut) bytes() []byte { return copyBuffer(b.p) }

// bufferListOut is one buffer-list out-parameter; free() releases it and its buffers.
type bufferListOut struct{ p *C.PaimonCleanupBufferList }

func (l *bufferListOut) free() { C.paimon_cleanup_buffer_list_free(l.p); l.p = nil }

// bytes copies every buffer of the list into Go memory.
func (l *bufferListOut) bytes() [][]byte {
	n := int(C.paimon_cleanup_buffer_list_count(l.p))
	out := make([][]byte, n)
	for i := range out {
		out[i] = copyBuffer(C.paimon_cleanup_buffer_list_get(l.p, C.size_t(i)))
	}
	return out
}

// strings copies every buffer of the list as a UTF-8 string (the paths lists).
func (l *bufferListOut) strings() []string {
	parts := l.bytes()
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

func copyBuffer(b *C.PaimonCleanupBuffer) []byte {
	n := int(C.paimon_cleanup_buffer_len(b))
	out := make([]byte, n)
	if n > 0 {
		copy(out, unsafe.Slice((*byte)(unsafe.Pointer(C.paimon_cleanup_buffer_data(b))), n))
	}
	return out
}

// bytesArg is a read-only (pointer, length) argument over b's memory for the duration of one
// call (b holds no Go pointers, so cgo allows it); nil for an empty slice.
func bytesArg(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

// cOptions are the option arrays of a unit's host (credentials, endpoint...); free() them.
// cByteArrays is a list of byte strings in C memory, as the conclude calls take them
// (pointers and lengths): a Go array holding Go pointers may not be passed to C.
type cByteArrays struct {
	ptrs  **C.uint8_t
	lens  *C.size_t
	count C.size_t
	items []unsafe.Pointer
}

// newCByteArrays copies parts into C memory; free releases it. An empty part is a NULL pointer
// with length 0.
func newCByteArrays(parts [][]byte) *cByteArrays {
	a := &cByteArrays{count: C.size_t(len(parts))}
	n := len(parts)
	if n == 0 {
		return a
	}
	a.ptrs = (**C.uint8_t)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(uintptr(0)))))
	a.lens = (*C.size_t)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.size_t(0)))))
	ps, ls := unsafe.Slice(a.ptrs, n), unsafe.Slice(a.lens, n)
	for i, r := range parts {
		if len(r) > 0 {
			p := C.CBytes(r)
			a.items = append(a.items, p)
			ps[i] = (*C.uint8_t)(p)
		}
		ls[i] = C.size_t(len(r))
	}
	return a
}

func (a *cByteArrays) free() {
	for _, p := range a.items {
		C.free(p)
	}
	C.free(unsafe.Pointer(a.ptrs))
	C.free(unsafe.Pointer(a.lens))
}

type cOptions struct {
	keys, values *cStrings
	count        C.size_t
}

func newCOptions(options map[string]string) (*cOptions, error) {
	keys := make([]string, 0, len(options))
	values := make([]string, 0, len(options))
	for k, v := range options {
		keys = append(keys, k)
		values = append(values, v)
	}
	if err := noNUL("a host option", append(append([]string(nil), keys...), values...)...); err != nil {
		return nil, err
	}
	return &cOptions{newCStrings(keys), newCStrings(values), C.size_t(len(keys))}, nil
}

func (h *cOptions) free() {
	h.keys.free()
	h.values.free()
}

// onDriver runs one driver step of the units with the context and executor locked and the run
// control of ctx and opts.
func (c *Context) onDriver(ctx context.Context, e *Executor, opts *RunOptions,
	call func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor, o *C.PaimonCleanupRunOptions,
		cerr **C.PaimonCleanupError) C.PaimonCleanupStatus) error {
	cp, ep, release, err := c.handles(e)
	if err != nil {
		return err
	}
	defer release()
	return withRun(ctx, opts, func(o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return call(cp, ep, o, cerr)
	})
}

// onExecutor runs one worker-side call (a unit, a shard) with the executor locked, the host
// options converted and the run control of ctx and opts.
func onExecutor(ctx context.Context, e *Executor, options map[string]string, opts *RunOptions,
	call func(ep *C.PaimonCleanupExecutor, h *cOptions, o *C.PaimonCleanupRunOptions,
		cerr **C.PaimonCleanupError) C.PaimonCleanupStatus) error {
	h, err := newCOptions(options)
	if err != nil {
		return err
	}
	defer h.free()
	ep, err := e.acquire()
	if err != nil {
		return err
	}
	defer e.mu.RUnlock()
	return withRun(ctx, opts, func(o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return call(ep, h, o, cerr)
	})
}

// withRun makes the run control, runs call and turns its status into an error.
func withRun(ctx context.Context, opts *RunOptions,
	call func(o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus) error {
	run, err := newRunCall(ctx, opts, false)
	if err != nil {
		return err
	}
	var cerr *C.PaimonCleanupError
	status := call(run.options, &cerr)
	return run.finish(takeError(status, &cerr))
}

// ExpiryUnitsPlan plans an expiry of the context's branch (driver; reads only): the retention
// rules of ExpireSnapshots pick the snapshots; returns the plan state and the candidate units.
func (c *Context) ExpiryUnitsPlan(ctx context.Context, e *Executor, cfg ExpireConfig, opts *RunOptions) (*ExpiryStep, error) {
	native, err := cfg.native()
	if err != nil {
		return nil, err
	}
	defer C.paimon_cleanup_expire_config_free(native)
	var state bufferOut
	var units bufferListOut
	defer state.free()
	defer units.free()
	err = c.onDriver(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return C.paimon_cleanup_expiry_units_plan(cp, ep, native, o, &state.p, &units.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &ExpiryStep{State: state.bytes(), Units: units.bytes()}, nil
}

// ExpiryUnitExecute executes one unit (candidate, protect or delete) on any host and returns its
// partial result. hostOptions are added to the options the unit carries (they win): units never
// carry credentials, so pass them here (nil for none). Candidate and protect units only read; a
// delete unit checks every path again before its first deletion and reports the files it could
// not delete in its result.
func ExpiryUnitExecute(ctx context.Context, e *Executor, unit []byte, hostOptions map[string]string, opts *RunOptions) ([]byte, error) {
	var out bufferOut
	defer out.free()
	err := onExecutor(ctx, e, hostOptions, opts, func(ep *C.PaimonCleanupExecutor, h *cOptions,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		up, un := bytesArg(unit)
		return C.paimon_cleanup_expiry_unit_execute(ep, up, un, h.keys.array, h.values.array, h.count, o, &out.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return out.bytes(), nil
}

// ExpiryUnitExecuteHandingPaths is ExpiryUnitExecute, also handing out the paths a delete unit
// of a gate with pathsToTasks deleted (that unit's result then carries counts and a sample;
// ExpiryUnitExecute refuses it).
func ExpiryUnitExecuteHandingPaths(ctx context.Context, e *Executor, unit []byte, hostOptions map[string]string, opts *RunOptions) (*ExpiryExecuted, error) {
	var out bufferOut
	var paths bufferListOut
	defer out.free()
	defer paths.free()
	err := onExecutor(ctx, e, hostOptions, opts, func(ep *C.PaimonCleanupExecutor, h *cOptions,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		up, un := bytesArg(unit)
		return C.paimon_cleanup_expiry_unit_execute_paths(ep, up, un, h.keys.array, h.values.array, h.count, o, &out.p, &paths.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &ExpiryExecuted{Result: out.bytes(), Paths: paths.strings()}, nil
}

// ExpiryPartialsMerge merges two partial results of one stage (pure computation). Associative
// and commutative; nil (or empty) is the neutral element. A unit's result included twice, or
// results of two plans or stages, are StatusInvalidArgument.
func ExpiryPartialsMerge(a, b []byte) ([]byte, error) {
	var out bufferOut
	defer out.free()
	ap, an := bytesArg(a)
	bp, bn := bytesArg(b)
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_expiry_partials_merge(ap, an, bp, bn, &out.p, &cerr), &cerr); err != nil {
		return nil, err
	}
	return out.bytes(), nil
}

// ExpiryUnitsProtect runs after the candidate units (driver): candidates is every candidate
// unit's result, merged. Reads every version that protects files and returns the new state and
// the protect units. Nothing is deleted.
func (c *Context) ExpiryUnitsProtect(ctx context.Context, e *Executor, state, candidates []byte, opts *RunOptions) (*ExpiryStep, error) {
	var next bufferOut
	var units bufferListOut
	defer next.free()
	defer units.free()
	err := c.onDriver(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		sp, sn := bytesArg(state)
		cp2, cn := bytesArg(candidates)
		return C.paimon_cleanup_expiry_units_protect(cp, ep, o, sp, sn, cp2, cn, &next.p, &units.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &ExpiryStep{State: next.bytes(), Units: units.bytes()}, nil
}

// ExpiryUnitsDecide runs after the protect units (driver): state is ExpiryUnitsProtect's,
// candidates what was given to it, protected every protect unit's result merged (nil when there
// was none). Builds and checks the deletion plan; returns the decision (as State) and the delete
// units (none in a dry run). Nothing is deleted.
func (c *Context) ExpiryUnitsDecide(ctx context.Context, e *Executor, state, candidates, protected []byte, opts *RunOptions) (*ExpiryStep, error) {
	var decision bufferOut
	var units bufferListOut
	defer decision.free()
	defer units.free()
	err := c.onDriver(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		sp, sn := bytesArg(state)
		cp2, cn := bytesArg(candidates)
		pp, pn := bytesArg(protected)
		return C.paimon_cleanup_expiry_units_decide(cp, ep, o, sp, sn, cp2, cn, pp, pn, &decision.p, &units.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &ExpiryStep{State: decision.bytes(), Units: units.bytes()}, nil
}

// ExpiryUnitsFinish runs after every delete unit (driver): decision from ExpiryUnitsDecide or
// ExpiryUnitsConclude, deleted every delete unit's result merged (nil when there was none).
// Deletes the metadata in the crash-safe order and returns the report ExpireSnapshots returns;
// StatusStorage, before any metadata is deleted, when a delete unit could not delete a file.
func (c *Context) ExpiryUnitsFinish(ctx context.Context, e *Executor, decision, deleted []byte, opts *RunOptions) (*Report, error) {
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		dp, dn := bytesArg(decision)
		rp, rn := bytesArg(deleted)
		return C.paimon_cleanup_expiry_units_finish(cp, ep, o, dp, dn, rp, rn, out, cerr)
	})
}

// ExpiryPartialSplit splits a candidate unit's result (or several merged) into its summary and
// shards pieces (1 to 65,536) for the sharded decision (pure computation).
func ExpiryPartialSplit(partial []byte, shards uint32) (*ExpirySplit, error) {
	var summary bufferOut
	var pieces bufferListOut
	defer summary.free()
	defer pieces.free()
	pp, pn := bytesArg(partial)
	var cerr *C.PaimonCleanupError
	status := C.paimon_cleanup_expiry_partial_split(pp, pn, C.uint32_t(shards), &summary.p, &pieces.p, &cerr)
	if err := takeError(status, &cerr); err != nil {
		return nil, err
	}
	return &ExpirySplit{Summary: summary.bytes(), Shards: pieces.bytes()}, nil
}

// ExpiryUnitsGate is the gate of the sharded decision (driver), instead of protect and decide:
// summary is every candidate unit's summary merged, split into shards. Decides and checks the
// metadata the expiry deletes; returns the decision so far and the gate. Nothing is deleted.
// pathsToTasks: each freed data or changelog path stays with the task that frees it
// (ExpiryShardDecision.Paths, ExpiryUnitExecuteHandingPaths); the final report then holds the
// counts, every failure and a sample of the paths.
func (c *Context) ExpiryUnitsGate(ctx context.Context, e *Executor, state, summary []byte, shards uint32, pathsToTasks bool, opts *RunOptions) (*ExpiryGated, error) {
	var decision, gate bufferOut
	defer decision.free()
	defer gate.free()
	err := c.onDriver(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		sp, sn := bytesArg(state)
		mp, mn := bytesArg(summary)
		return C.paimon_cleanup_expiry_units_gate_with_paths(cp, ep, o, sp, sn, mp, mn, C.uint32_t(shards),
			C.bool(pathsToTasks), &decision.p, &gate.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &ExpiryGated{Decision: decision.bytes(), Gate: gate.bytes()}, nil
}

// ExpiryShardDecide decides shard `shard` on any host: piece is every candidate unit's piece of
// that shard, merged. Returns the shard's report and delete units (and, see
// ExpiryShardDecision.Paths, its paths). hostOptions as for ExpiryUnitExecute. Nothing is
// deleted.
func ExpiryShardDecide(ctx context.Context, e *Executor, gate []byte, shard uint32, piece []byte, hostOptions map[string]string, opts *RunOptions) (*ExpiryShardDecision, error) {
	var report bufferOut
	var units, paths bufferListOut
	defer report.free()
	defer units.free()
	defer paths.free()
	err := onExecutor(ctx, e, hostOptions, opts, func(ep *C.PaimonCleanupExecutor, h *cOptions,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		gp, gn := bytesArg(gate)
		pp, pn := bytesArg(piece)
		return C.paimon_cleanup_expiry_shard_decide_paths(ep, gp, gn, C.uint32_t(shard), pp, pn,
			h.keys.array, h.values.array, h.count, o, &report.p, &units.p, &paths.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &ExpiryShardDecision{Report: report.bytes(), DeleteUnits: units.bytes(), Paths: paths.strings()}, nil
}

// ExpiryUnitsConclude concludes the sharded decision (driver; pure computation): decision from
// ExpiryUnitsGate, reports every shard's report exactly once (any order). Returns the decision
// for ExpiryUnitsFinish; a missing, doubled or foreign report is StatusInvalidArgument.
func ExpiryUnitsConclude(decision []byte, reports [][]byte) ([]byte, error) {
	arr := newCByteArrays(reports)
	defer arr.free()
	var out bufferOut
	defer out.free()
	dp, dn := bytesArg(decision)
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_expiry_units_conclude(dp, dn, arr.ptrs, arr.lens, arr.count, &out.p, &cerr), &cerr); err != nil {
		return nil, err
	}
	return out.bytes(), nil
}
