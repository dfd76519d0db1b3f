package paimoncleanup

// Orphan-file removal as units: the C functions paimon_cleanup_orphan_* (include/paimon_cleanup.h)
// for engines that schedule the work on their own workers.

/*
#include <stdlib.h>
#include "paimon_cleanup.h"
*/
import "C"

import "context"

// Orphan-file removal split into units that an engine schedules on its own workers (the Java
// binding's OrphanUnits). Every unit, partial result, plan state and decision is an opaque,
// versioned byte string: ship it, store it, retry it. The result equals
// Context.RemoveOrphanFiles with the same config (same report, same files left):
//
//	plan, err := table.OrphanUnitsPlan(ctx, exec, cfg, nil)                 // driver
//	var merged []byte                                                      // workers, any order:
//	for _, u := range plan.Units { r, _ := OrphanUnitExecute(ctx, exec, u, nil, nil); merged, _ = OrphanPartialsMerge(merged, r) }
//	decision, err := table.OrphanUnitsDecide(ctx, exec, cfg, plan.State, merged, nil)
//	deleted := merge of OrphanUnitExecute over decision.Units (the delete units; none: nil)
//	report, err := table.OrphanUnitsFinish(ctx, exec, decision.State, deleted, nil)
//
// The sharded decision (no process holds every candidate) replaces decide: OrphanPartialSplit
// each plan unit's result into a summary and K pieces; merge the summaries (for the driver) and
// each shard's pieces; then (t: a Context of the table on the host deciding shard k)
//
//	g, err := table.OrphanUnitsGate(ctx, exec, plan.State, summary, K, nil)  // driver; g.Decide is true
//	for g.Decide {
//		reports = one t.OrphanShardDecide(ctx, exec, cfg, g.Gate, k, piece[k], nil).Report per shard k
//		g, err = table.OrphanUnitsGate(ctx, exec, g.State, summary, K, nil)    // again: confirms the round
//	}
//	decision, err := OrphanUnitsConclude(g.State, summary, reports)
//	deleted := merge of OrphanUnitExecute over every shard's DeleteUnits
//	report, err := table.OrphanUnitsFinish(ctx, exec, decision, deleted, nil)
//
// Ownership: every []byte returned is a Go copy (the native buffers are freed before a function
// returns); the arguments are only read during the call. Thread-safety: every function may be
// called from many goroutines at once. Errors: an *Error with the library's status
// (StatusInvalidArgument for foreign, corrupted or doubled bytes and missing results,
// StatusCancelled when ctx is done, ...). A veto (OrphanConfig.Veto) is asked by
// OrphanUnitsDecide and OrphanShardDecide; a panic in it keeps the file, stops the call and is
// re-raised by that call.

// OrphanStep is what a driver step returns: its state (or decision) and the units to execute.
type OrphanStep struct {
	// State is the plan state (plan) or the decision (decide): keep it on the driver for the
	// next step.
	State []byte
	// Units are the units to execute with OrphanUnitExecute: the plan units (plan) or the
	// delete units (decide; none in a dry run or when nothing is to be deleted).
	Units [][]byte
}

// OrphanSplit is a plan unit's result split for the sharded decision.
type OrphanSplit struct {
	// Summary (counters, failures, empty directories) goes to the driver: merge every summary
	// and pass it to OrphanUnitsGate and OrphanUnitsConclude.
	Summary []byte
	// Shards holds one piece per shard (Shards[i] is shard i): merge each shard's pieces for
	// OrphanShardDecide.
	Shards [][]byte
}

// OrphanGated is what OrphanUnitsGate returns.
type OrphanGated struct {
	State []byte // the driver's updated state, for the next gate and for OrphanUnitsConclude
	Gate  []byte // what every shard of this round decides with (ship it to the shard tasks)
	// Decide: the shards must decide (again) with Gate: after the first gate, and after one
	// that found a new version. False confirms the round the shards decided.
	Decide bool
}

// OrphanShardDecision is what OrphanShardDecide returns.
type OrphanShardDecision struct {
	Report      []byte   // the shard's report, for OrphanUnitsConclude
	DeleteUnits [][]byte // executed after OrphanUnitsConclude succeeded (none in a dry run)
}

// onDriverWithConfig runs one step that takes an orphan config, with the context and executor
// locked, cfg converted and the run control of ctx and opts. A veto gets a native token, so
// that a panicking veto stops the call; the panic is re-raised here.
func (c *Context) onDriverWithConfig(ctx context.Context, e *Executor, cfg *OrphanConfig, opts *RunOptions,
	call func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor, native *C.PaimonCleanupOrphanConfig,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus) error {
	cp, ep, release, err := c.handles(e)
	if err != nil {
		return err
	}
	defer release()
	run, err := newRunCall(ctx, opts, cfg.Veto != nil)
	if err != nil {
		return err
	}
	native, handle, err := cfg.native(run)
	if err != nil {
		return run.finish(err)
	}
	defer C.paimon_cleanup_orphan_config_free(native)
	if handle != 0 {
		defer handle.Delete()
	}
	var cerr *C.PaimonCleanupError
	status := call(cp, ep, native, run.options, &cerr)
	return run.finish(takeError(status, &cerr))
}

// OrphanUnitsPlan plans an orphan-file removal as units (driver; reads only): checks the
// cut-off (the rules of RemoveOrphanFiles), resolves the data roots, walks the partition
// directories, reads every snapshot, tag and long-lived changelog of every branch and their
// manifest lists. Returns the plan state and the plan units ("list these directories", "read
// these manifests"). Orphan removal is table-wide: any branch's context plans the whole table.
// cfg.Veto is not used here (decide asks it). Errors: StatusInvalidArgument for a bad cut-off,
// StatusNotFound if the table does not exist, StatusMalformed / StatusNotFound / StatusStorage
// when metadata a version needs cannot be read, StatusCancelled.
func (c *Context) OrphanUnitsPlan(ctx context.Context, e *Executor, cfg OrphanConfig, opts *RunOptions) (*OrphanStep, error) {
	cfg.Veto = nil
	var state bufferOut
	var units bufferListOut
	defer state.free()
	defer units.free()
	err := c.onDriverWithConfig(ctx, e, &cfg, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		native *C.PaimonCleanupOrphanConfig, o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		return C.paimon_cleanup_orphan_units_plan(cp, ep, native, o, &state.p, &units.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &OrphanStep{State: state.bytes(), Units: units.bytes()}, nil
}

// OrphanUnitExecute executes one unit (a plan unit or a delete unit) on any host and returns its
// partial result. The unit opens the table from the URI and options it carries; hostOptions
// are added to them (they win): units never carry credentials, so pass them here (nil for
// none). Plan units only read: a failed, cancelled or repeated one changes nothing, and a
// manifest that cannot be read is carried in the result (decide judges it). A delete unit checks
// every path again before its first deletion and reports the files it could not delete in its
// result. Errors: StatusInvalidArgument for bytes that are not a unit of this format version or
// an empty option key or one with a NUL byte; StatusNotFound / StatusStorage opening the table;
// StatusPathRefused for a delete unit naming a path outside the table's roots or of the wrong
// kind; StatusCancelled.
func OrphanUnitExecute(ctx context.Context, e *Executor, unit []byte, hostOptions map[string]string, opts *RunOptions) ([]byte, error) {
	var out bufferOut
	defer out.free()
	err := onExecutor(ctx, e, hostOptions, opts, func(ep *C.PaimonCleanupExecutor, h *cOptions,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		up, un := bytesArg(unit)
		return C.paimon_cleanup_orphan_unit_execute(ep, up, un, h.keys.array, h.values.array, h.count, o, &out.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return out.bytes(), nil
}

// OrphanPartialsMerge merges two partial results (pure computation; any host). Associative and
// commutative (any order and grouping give identical bytes); nil (or empty) is the neutral
// element. Bytes that are not a partial result of this format version, results of two plans, or
// a unit's result included in both are StatusInvalidArgument.
func OrphanPartialsMerge(a, b []byte) ([]byte, error) {
	var out bufferOut
	defer out.free()
	ap, an := bytesArg(a)
	bp, bn := bytesArg(b)
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_orphan_partials_merge(ap, an, bp, bn, &out.p, &cerr), &cerr); err != nil {
		return nil, err
	}
	return out.bytes(), nil
}

// OrphanUnitsDecide decides what to delete (driver), with every safety rule of
// RemoveOrphanFiles: state is OrphanUnitsPlan's, merged every plan unit's result merged. Lists
// the versions again until no new one appears (reading the new ones' manifests itself), keeps
// every referenced file, every file whose name is referenced at another location and every file
// cfg.Veto keeps, checks every path, and returns the decision (as State) and the delete units
// (none in a dry run). cfg is the plan's config: only its veto is used here (the cut-off, dry
// run and roots are the plan's). Nothing is deleted. Errors: StatusInvalidArgument for foreign
// bytes or a missing unit result; StatusNotFound / StatusMalformed / StatusStorage when metadata
// a version still needs could not be read; StatusConflict when versions keep appearing;
// StatusPathRefused; StatusCancelled.
func (c *Context) OrphanUnitsDecide(ctx context.Context, e *Executor, cfg OrphanConfig, state, merged []byte, opts *RunOptions) (*OrphanStep, error) {
	var decision bufferOut
	var units bufferListOut
	defer decision.free()
	defer units.free()
	err := c.onDriverWithConfig(ctx, e, &cfg, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		native *C.PaimonCleanupOrphanConfig, o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		sp, sn := bytesArg(state)
		mp, mn := bytesArg(merged)
		return C.paimon_cleanup_orphan_units_decide(cp, ep, native, o, sp, sn, mp, mn, &decision.p, &units.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &OrphanStep{State: decision.bytes(), Units: units.bytes()}, nil
}

// OrphanUnitsFinish runs after every delete unit (driver): decision from OrphanUnitsDecide or
// OrphanUnitsConclude, deleted every delete unit's result merged (nil when there was none).
// Removes the data directories the deletions left empty (not in a dry run) and returns the
// report RemoveOrphanFiles returns (KindRemoveOrphanFiles). Errors: StatusInvalidArgument for
// foreign bytes or a missing delete unit result; StatusNotFound if the table does not exist;
// StatusCancelled.
func (c *Context) OrphanUnitsFinish(ctx context.Context, e *Executor, decision, deleted []byte, opts *RunOptions) (*Report, error) {
	return c.runReport(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, out **C.PaimonCleanupReport, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		dp, dn := bytesArg(decision)
		rp, rn := bytesArg(deleted)
		return C.paimon_cleanup_orphan_units_finish(cp, ep, o, dp, dn, rp, rn, out, cerr)
	})
}

// OrphanPartialSplit splits a plan unit's result (or several merged) into its summary and
// shards pieces (1 to 65,536) for the sharded decision, by the shard of each file name (pure
// computation; any host). Errors: StatusInvalidArgument for a shard count out of range, bytes
// that are not a partial result of this format version, or a result already split.
func OrphanPartialSplit(partial []byte, shards uint32) (*OrphanSplit, error) {
	var summary bufferOut
	var pieces bufferListOut
	defer summary.free()
	defer pieces.free()
	pp, pn := bytesArg(partial)
	var cerr *C.PaimonCleanupError
	status := C.paimon_cleanup_orphan_partial_split(pp, pn, C.uint32_t(shards), &summary.p, &pieces.p, &cerr)
	if err := takeError(status, &cerr); err != nil {
		return nil, err
	}
	return &OrphanSplit{Summary: summary.bytes(), Shards: pieces.bytes()}, nil
}

// OrphanUnitsGate is the gate of the sharded decision (driver), instead of decide: state is the
// plan's state or the previous gate's, summary every plan unit's summary merged, shards the
// count the results were split into. Lists the versions again until no new one appears
// (reading the new ones' manifests itself) and returns the updated state and the round's gate.
// Call it before the shards decide and again after: while Decide is true the shards decide
// (again) with the new Gate; false confirms the round for OrphanUnitsConclude. Nothing is
// deleted. Errors: StatusInvalidArgument for foreign bytes, a missing or doubled summary or
// another shard count; StatusNotFound / StatusMalformed / StatusStorage when metadata a version
// still needs could not be read; StatusConflict when versions keep appearing; StatusCancelled.
func (c *Context) OrphanUnitsGate(ctx context.Context, e *Executor, state, summary []byte, shards uint32, opts *RunOptions) (*OrphanGated, error) {
	var next, gate bufferOut
	defer next.free()
	defer gate.free()
	var decide C.bool
	err := c.onDriver(ctx, e, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		sp, sn := bytesArg(state)
		mp, mn := bytesArg(summary)
		return C.paimon_cleanup_orphan_units_gate(cp, ep, o, sp, sn, mp, mn, C.uint32_t(shards),
			&next.p, &gate.p, &decide, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &OrphanGated{State: next.bytes(), Gate: gate.bytes(), Decide: bool(decide)}, nil
}

// OrphanShardDecide decides shard `shard` of the sharded decision on any host that has the
// table's context (the shard task opens it with its own credentials; unlike ExpiryShardDecide
// there are no host options): gate is the round's OrphanGated.Gate, piece every plan unit's
// piece of that shard merged (checked complete, each unit once). Keeps every referenced file,
// every file whose name is referenced at another location and every file cfg.Veto keeps,
// checks every remaining path, and returns the shard's report and delete units (none in a dry
// run). cfg is the plan's config: only its veto is used here. Nothing is deleted. Errors:
// StatusInvalidArgument for foreign bytes, another shard's piece or a piece missing a unit;
// StatusPathRefused; StatusCancelled.
func (c *Context) OrphanShardDecide(ctx context.Context, e *Executor, cfg OrphanConfig, gate []byte, shard uint32, piece []byte, opts *RunOptions) (*OrphanShardDecision, error) {
	var report bufferOut
	var units bufferListOut
	defer report.free()
	defer units.free()
	err := c.onDriverWithConfig(ctx, e, &cfg, opts, func(cp *C.PaimonCleanupContext, ep *C.PaimonCleanupExecutor,
		native *C.PaimonCleanupOrphanConfig, o *C.PaimonCleanupRunOptions, cerr **C.PaimonCleanupError) C.PaimonCleanupStatus {
		gp, gn := bytesArg(gate)
		pp, pn := bytesArg(piece)
		return C.paimon_cleanup_orphan_shard_decide(cp, ep, native, o, gp, gn, C.uint32_t(shard), pp, pn,
			&report.p, &units.p, cerr)
	})
	if err != nil {
		return nil, err
	}
	return &OrphanShardDecision{Report: report.bytes(), DeleteUnits: units.bytes()}, nil
}

// OrphanUnitsConclude concludes the sharded decision (driver; pure computation): state from the
// gate that confirmed the round (OrphanGated.Decide false), summary every plan unit's summary
// merged, reports the round's report of every shard, each exactly once (any order). Returns the
// decision for OrphanUnitsFinish. Errors: StatusInvalidArgument for foreign bytes, an
// unconfirmed round, or a missing, doubled or stale shard report.
func OrphanUnitsConclude(state, summary []byte, reports [][]byte) ([]byte, error) {
	arr := newCByteArrays(reports)
	defer arr.free()
	var out bufferOut
	defer out.free()
	sp, sn := bytesArg(state)
	mp, mn := bytesArg(summary)
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_orphan_units_conclude(sp, sn, mp, mn, arr.ptrs, arr.lens, arr.count, &out.p, &cerr), &cerr); err != nil {
		return nil, err
	}
	return out.bytes(), nil
}
