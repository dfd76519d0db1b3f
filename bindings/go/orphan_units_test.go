package paimoncleanup

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// orphanUnitsFixture is the Java-written table of the orphan-units tests: partitioned, with a
// branch.
const orphanUnitsFixture = "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch"

// orphanUnitsPlanted are the orphan files plantOrphanUnits adds: the Java test's three
// (a manifest, a manifest list, a temporary snapshot file) and a data file in a partition of its
// own, whose directories the deletion leaves empty.
var orphanUnitsPlanted = []string{
	"manifest/manifest-planted-units-0",
	"manifest/manifest-list-planted-units-0",
	"snapshot/.snapshot-9.planted.tmp",
	"pt=3/bucket-0/data-planted-units-0.parquet",
}

// plantOrphanUnits writes orphanUnitsPlanted into table, 7 bytes each, 3 days old.
func plantOrphanUnits(t *testing.T, table string) {
	t.Helper()
	old := time.Now().Add(-72 * time.Hour)
	for _, name := range orphanUnitsPlanted {
		p := filepath.Join(table, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 7), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// orphanCopies copies the fixture n times into one temporary directory (before planting).
func orphanCopies(t *testing.T, names ...string) []string {
	t.Helper()
	source := filepath.Join(fixturesDir(t), orphanUnitsFixture)
	dir := t.TempDir()
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = filepath.Join(dir, name)
		if err := copyDir(source, out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// orphanCfg is the config of every run of a test: one cut-off (a day ago) for all of them, so
// the reports agree on it.
func orphanCfg(cutoff time.Time, dryRun bool) OrphanConfig {
	return OrphanConfig{OlderThan: cutoff, DryRun: dryRun}
}

// orphanOutcome is what two orphan runs must agree on: kind, dry run, files and bytes per class,
// totals, the counters, the cut-off, failures and the sorted paths with their classes.
func orphanOutcome(r *Report) string {
	paths := make([]string, 0, len(r.Paths))
	for _, p := range r.Paths {
		paths = append(paths, p.Class.String()+" "+p.Path)
	}
	sort.Strings(paths)
	return fmt.Sprintf("%s dry=%v classes %v total %d files / %d bytes, dirs removed %d, candidates %d, "+
		"referenced %d, vetoed %d, cut-off %d, failures %v, paths %v",
		r.Kind, r.DryRun, r.Classes, r.TotalFiles, r.TotalBytes, r.DirsRemoved, r.Candidates,
		r.Referenced, r.Vetoed, r.Cutoff.UnixMilli(), r.Failures, paths)
}

// orphanMergeRandomly merges results in a shuffled order and a random tree shape, as an
// engine's reduce may.
func orphanMergeRandomly(t *testing.T, parts [][]byte, rnd *rand.Rand) []byte {
	t.Helper()
	todo := append([][]byte(nil), parts...)
	rnd.Shuffle(len(todo), func(i, j int) { todo[i], todo[j] = todo[j], todo[i] })
	if len(todo) == 0 {
		return nil
	}
	for len(todo) > 1 {
		i := rnd.Intn(len(todo))
		a := todo[i]
		todo = append(todo[:i], todo[i+1:]...)
		j := rnd.Intn(len(todo))
		b := todo[j]
		todo = append(todo[:j], todo[j+1:]...)
		if rnd.Intn(2) == 0 {
			a, b = b, a
		}
		m, err := OrphanPartialsMerge(a, b)
		if err != nil {
			t.Fatal(err)
		}
		todo = append(todo, m)
	}
	return todo[0]
}

// orphanExecute executes units[order[0]], units[order[1]], ... and returns the results in that
// order.
func orphanExecute(t *testing.T, e *Executor, units [][]byte, order []int) [][]byte {
	t.Helper()
	out := make([][]byte, 0, len(order))
	for _, i := range order {
		r, err := OrphanUnitExecute(context.Background(), e, units[i], nil, nil)
		if err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
		out = append(out, r)
	}
	return out
}

// reverseOrder is len-1, ..., 1, 0.
func reverseOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = n - 1 - i
	}
	return out
}

// checkRefusedDeleteUnit executes a truncated delete unit: StatusInvalidArgument, nothing
// deleted.
func checkRefusedDeleteUnit(t *testing.T, e *Executor, table string, unit []byte) {
	t.Helper()
	before := treeOf(t, table)
	_, err := OrphanUnitExecute(context.Background(), e, unit[:len(unit)/2], nil, nil)
	wantStatus(t, err, StatusInvalidArgument)
	if !reflect.DeepEqual(treeOf(t, table), before) {
		t.Fatal("a refused delete unit changed the table")
	}
}

// runOrphanUnsharded runs plan, the plan units (shuffled), merge (random order and shape),
// decide, the delete units (reversed) and finish on table. A missing unit result, a result
// merged twice, a truncated delete unit and a missing delete result are refused first, with
// nothing deleted.
func runOrphanUnsharded(t *testing.T, e *Executor, table string, cfg OrphanConfig) *Report {
	t.Helper()
	ctx := context.Background()
	tbl := newContext(t, table)
	rnd := rand.New(rand.NewSource(20))
	plan, err := tbl.OrphanUnitsPlan(ctx, e, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.State) == 0 || len(plan.Units) < 2 {
		t.Fatalf("plan: %d state bytes, %d units", len(plan.State), len(plan.Units))
	}
	parts := orphanExecute(t, e, plan.Units, rnd.Perm(len(plan.Units)))
	merged := orphanMergeRandomly(t, parts, rnd)
	if again := orphanMergeRandomly(t, parts, rand.New(rand.NewSource(7))); !bytes.Equal(merged, again) {
		t.Fatal("merging in another order and shape gave other bytes")
	}
	// nil and the merge of two nils are neutral.
	empty, err := OrphanPartialsMerge(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range [][]byte{nil, empty} {
		if m, err := OrphanPartialsMerge(n, merged); err != nil || !bytes.Equal(m, merged) {
			t.Fatalf("merging %d neutral bytes changed the result: %v", len(n), err)
		}
	}

	before := treeOf(t, table)
	_, err = tbl.OrphanUnitsDecide(ctx, e, cfg, plan.State, orphanMergeRandomly(t, parts[1:], rnd), nil)
	wantStatus(t, err, StatusInvalidArgument) // a missing unit result
	_, err = OrphanPartialsMerge(merged, parts[0])
	wantStatus(t, err, StatusInvalidArgument) // a unit's result twice
	if !reflect.DeepEqual(treeOf(t, table), before) {
		t.Fatal("a refused call changed the table")
	}

	decision, err := tbl.OrphanUnitsDecide(ctx, e, cfg, plan.State, merged, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DryRun != (len(decision.Units) == 0) {
		t.Fatalf("dry run %v, %d delete units", cfg.DryRun, len(decision.Units))
	}
	if !reflect.DeepEqual(treeOf(t, table), before) {
		t.Fatal("decide changed the table")
	}
	var deleted []byte
	if len(decision.Units) > 0 {
		checkRefusedDeleteUnit(t, e, table, decision.Units[0])
		results := orphanExecute(t, e, decision.Units, reverseOrder(len(decision.Units)))
		_, err = tbl.OrphanUnitsFinish(ctx, e, decision.State, orphanMergeRandomly(t, results[1:], rnd), nil)
		wantStatus(t, err, StatusInvalidArgument) // a missing delete unit result
		deleted = orphanMergeRandomly(t, results, rnd)
	}
	report, err := tbl.OrphanUnitsFinish(ctx, e, decision.State, deleted, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("unsharded: %d plan units, %d delete units", len(plan.Units), len(decision.Units))
	return report
}

// runOrphanSharded runs plan, the plan units (reversed), split into shards pieces, gate, one
// decision per shard (the last shard first) until a gate confirms the round, conclude, the
// delete units (reversed) and finish on table. Refused first, with nothing deleted: a result
// split twice, a shard count out of range, a summary missing a unit, another shard count at the
// gate, another shard's piece, a missing or doubled shard report, a truncated delete unit.
func runOrphanSharded(t *testing.T, e *Executor, table string, cfg OrphanConfig, shards uint32) *Report {
	t.Helper()
	ctx := context.Background()
	tbl := newContext(t, table)
	rnd := rand.New(rand.NewSource(3))
	plan, err := tbl.OrphanUnitsPlan(ctx, e, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Units) < 2 {
		t.Fatalf("plan: %d units", len(plan.Units))
	}
	before := treeOf(t, table)
	var summaries [][]byte
	pieces := make([][][]byte, shards)
	for _, r := range orphanExecute(t, e, plan.Units, reverseOrder(len(plan.Units))) {
		s, err := OrphanPartialSplit(r, shards)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Shards) != int(shards) || len(s.Summary) == 0 {
			t.Fatalf("%d pieces for %d shards, %d summary bytes", len(s.Shards), shards, len(s.Summary))
		}
		summaries = append(summaries, s.Summary)
		for k := range pieces {
			pieces[k] = append(pieces[k], s.Shards[k])
		}
	}
	_, err = OrphanPartialSplit(pieces[0][0], shards)
	wantStatus(t, err, StatusInvalidArgument) // already split
	_, err = OrphanPartialSplit(summaries[0], shards)
	wantStatus(t, err, StatusInvalidArgument) // already split
	summary := orphanMergeRandomly(t, summaries, rnd)
	_, err = OrphanPartialSplit(summary, 0)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = OrphanPartialSplit(summary, 65537)
	wantStatus(t, err, StatusInvalidArgument)
	merged := make([][]byte, shards)
	for k := range pieces {
		merged[k] = orphanMergeRandomly(t, pieces[k], rnd)
	}

	_, err = tbl.OrphanUnitsGate(ctx, e, plan.State, orphanMergeRandomly(t, summaries[1:], rnd), shards, nil)
	wantStatus(t, err, StatusInvalidArgument) // a summary missing a unit
	_, err = tbl.OrphanUnitsGate(ctx, e, plan.State, summary, shards+1, nil)
	wantStatus(t, err, StatusInvalidArgument) // another shard count
	gated, err := tbl.OrphanUnitsGate(ctx, e, plan.State, summary, shards, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !gated.Decide || len(gated.State) == 0 || len(gated.Gate) == 0 {
		t.Fatalf("first gate: decide %v, %d state bytes, %d gate bytes", gated.Decide, len(gated.State), len(gated.Gate))
	}
	_, err = OrphanUnitsConclude(gated.State, summary, nil)
	wantStatus(t, err, StatusInvalidArgument) // an unconfirmed round
	if shards > 1 {
		_, err = tbl.OrphanShardDecide(ctx, e, cfg, gated.Gate, 1, merged[0], nil)
		wantStatus(t, err, StatusInvalidArgument) // another shard's piece
	}
	var reports, deleteUnits [][]byte
	rounds := 0
	for ; gated.Decide; rounds++ {
		if rounds == 3 {
			t.Fatal("the gate keeps asking the shards to decide again on a table nothing writes to")
		}
		reports, deleteUnits = nil, nil
		for k := int(shards) - 1; k >= 0; k-- {
			d, err := tbl.OrphanShardDecide(ctx, e, cfg, gated.Gate, uint32(k), merged[k], nil)
			if err != nil {
				t.Fatalf("shard %d: %v", k, err)
			}
			if len(d.Report) == 0 {
				t.Fatalf("shard %d: empty report", k)
			}
			reports = append(reports, d.Report)
			deleteUnits = append(deleteUnits, d.DeleteUnits...)
		}
		gated, err = tbl.OrphanUnitsGate(ctx, e, gated.State, summary, shards, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	if cfg.DryRun != (len(deleteUnits) == 0) {
		t.Fatalf("dry run %v, %d delete units", cfg.DryRun, len(deleteUnits))
	}
	_, err = OrphanUnitsConclude(gated.State, summary, reports[1:])
	wantStatus(t, err, StatusInvalidArgument) // a missing shard report
	_, err = OrphanUnitsConclude(gated.State, summary, append(append([][]byte(nil), reports...), reports[0]))
	wantStatus(t, err, StatusInvalidArgument) // a doubled shard report
	if !reflect.DeepEqual(treeOf(t, table), before) {
		t.Fatal("the sharded decision changed the table")
	}
	decision, err := OrphanUnitsConclude(gated.State, summary, reports)
	if err != nil {
		t.Fatal(err)
	}
	var deleted []byte
	if len(deleteUnits) > 0 {
		checkRefusedDeleteUnit(t, e, table, deleteUnits[0])
		deleted = orphanMergeRandomly(t, orphanExecute(t, e, deleteUnits, reverseOrder(len(deleteUnits))), rnd)
	}
	report, err := tbl.OrphanUnitsFinish(ctx, e, decision, deleted, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sharded: %d plan units, %d shards, %d round(s), %d delete units", len(plan.Units), shards, rounds, len(deleteUnits))
	return report
}

// TestOrphanUnits: on three copies of a table with planted orphans, the single-process run, the
// unsharded units and the sharded units (3 shards) delete the same files with the same report,
// and leave exactly the table's own files.
func TestOrphanUnits(t *testing.T) {
	copies := orphanCopies(t, "one", "units", "sharded")
	one, units, sharded := copies[0], copies[1], copies[2]
	e := newExecutor(t)
	pristine := treeOf(t, one)
	summaryBefore, err := newContext(t, one).Summary(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range copies {
		plantOrphanUnits(t, table)
	}
	cfg := orphanCfg(time.Now().Add(-24*time.Hour), false)

	single, err := newContext(t, one).RemoveOrphanFiles(context.Background(), e, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("single-process: %s", orphanOutcome(single))
	if single.Kind != KindRemoveOrphanFiles || single.DryRun || single.TotalFiles != uint64(len(orphanUnitsPlanted)) ||
		single.Files(ClassData) != 1 || single.Files(ClassManifest) != 1 || single.Files(ClassManifestList) != 1 {
		t.Fatalf("the single-process run should delete the planted files: %s", orphanOutcome(single))
	}
	want := orphanOutcome(single)

	if got := orphanOutcome(runOrphanUnsharded(t, e, units, cfg)); got != want {
		t.Fatalf("units:\n%s\nsingle-process:\n%s", got, want)
	}
	if got := orphanOutcome(runOrphanSharded(t, e, sharded, cfg, 3)); got != want {
		t.Fatalf("sharded:\n%s\nsingle-process:\n%s", got, want)
	}

	for _, table := range copies {
		name := filepath.Base(table)
		if got := treeOf(t, table); !reflect.DeepEqual(got, pristine) {
			t.Fatalf("%s: the files left are not the table's own:\n%s\nwant:\n%s",
				name, strings.Join(got, "\n"), strings.Join(pristine, "\n"))
		}
		for _, p := range orphanUnitsPlanted {
			if _, err := os.Stat(filepath.Join(table, filepath.FromSlash(p))); !os.IsNotExist(err) {
				t.Fatalf("%s: %s still there (%v)", name, p, err)
			}
		}
		s, err := newContext(t, table).Summary(e)
		if err != nil {
			t.Fatal(err)
		}
		if s != summaryBefore {
			t.Fatalf("%s: summary %+v, before %+v", name, s, summaryBefore)
		}
	}
}

// TestOrphanUnitsDryRun: dry runs with a veto keeping the planted data file change nothing and
// report what the dry single-process run reports; the veto is asked by decide and by the
// shards.
func TestOrphanUnitsDryRun(t *testing.T) {
	copies := orphanCopies(t, "one", "units", "sharded")
	e := newExecutor(t)
	for _, table := range copies {
		plantOrphanUnits(t, table)
	}
	planted := treeOf(t, copies[0])
	var asked []string
	cfg := orphanCfg(time.Now().Add(-24*time.Hour), true)
	cfg.Veto = func(p string) bool {
		asked = append(asked, p)
		return strings.HasPrefix(p, "pt=3/")
	}

	single, err := newContext(t, copies[0]).RemoveOrphanFiles(context.Background(), e, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !single.DryRun || single.Vetoed != 1 || single.TotalFiles != uint64(len(orphanUnitsPlanted)-1) {
		t.Fatalf("dry single-process run: %s", orphanOutcome(single))
	}
	want := orphanOutcome(single)
	askedSingle := len(asked)
	if askedSingle == 0 {
		t.Fatal("the veto was not asked")
	}

	asked = nil
	if got := orphanOutcome(runOrphanUnsharded(t, e, copies[1], cfg)); got != want {
		t.Fatalf("dry units:\n%s\nsingle-process:\n%s", got, want)
	}
	if len(asked) != askedSingle {
		t.Fatalf("the veto was asked %d times by the units, %d by the single-process run", len(asked), askedSingle)
	}
	asked = nil
	if got := orphanOutcome(runOrphanSharded(t, e, copies[2], cfg, 3)); got != want {
		t.Fatalf("dry sharded:\n%s\nsingle-process:\n%s", got, want)
	}
	if len(asked) != askedSingle {
		t.Fatalf("the veto was asked %d times by the shards, %d by the single-process run", len(asked), askedSingle)
	}
	for _, table := range copies {
		if !reflect.DeepEqual(treeOf(t, table), planted) {
			t.Fatalf("%s: a dry run changed the table", filepath.Base(table))
		}
	}
}

// TestOrphanUnitsVetoPanic: a veto that panics in decide keeps every file, stops the call and
// is re-raised by OrphanUnitsDecide.
func TestOrphanUnitsVetoPanic(t *testing.T) {
	table := orphanCopies(t, "t")[0]
	plantOrphanUnits(t, table)
	e := newExecutor(t)
	tbl := newContext(t, table)
	ctx := context.Background()
	cfg := orphanCfg(time.Now().Add(-24*time.Hour), false)
	plan, err := tbl.OrphanUnitsPlan(ctx, e, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	merged := orphanMergeRandomly(t, orphanExecute(t, e, plan.Units, reverseOrder(len(plan.Units))), rand.New(rand.NewSource(1)))
	before := treeOf(t, table)
	func() {
		defer func() {
			if v := recover(); v != "veto boom" {
				t.Fatalf("recovered %v", v)
			}
		}()
		cfg.Veto = func(string) bool { panic("veto boom") }
		_, _ = tbl.OrphanUnitsDecide(ctx, e, cfg, plan.State, merged, nil)
		t.Fatal("no panic")
	}()
	if !reflect.DeepEqual(treeOf(t, table), before) {
		t.Fatal("the table changed")
	}
}

// TestOrphanUnitsArgumentErrors: foreign bytes are refused before anything runs.
func TestOrphanUnitsArgumentErrors(t *testing.T) {
	e := newExecutor(t)
	ctx := context.Background()
	_, err := OrphanUnitExecute(ctx, e, []byte("not a unit"), nil, nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = OrphanUnitExecute(ctx, e, []byte{1, 2, 3}, map[string]string{"k\x00": "v"}, nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = OrphanPartialsMerge([]byte("x"), []byte("y"))
	wantStatus(t, err, StatusInvalidArgument)
	_, err = OrphanPartialsMerge(nil, []byte("y"))
	wantStatus(t, err, StatusInvalidArgument)
	_, err = OrphanPartialSplit([]byte("x"), 2)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = OrphanUnitsConclude([]byte("x"), []byte("y"), [][]byte{[]byte("z")})
	wantStatus(t, err, StatusInvalidArgument)
	_, err = OrphanUnitsConclude(nil, nil, [][]byte{nil, []byte("z")})
	wantStatus(t, err, StatusInvalidArgument)
	// Two empty results merge into the encoded empty result (runOrphanUnsharded checks that it
	// is neutral).
	if _, err := OrphanPartialsMerge(nil, nil); err != nil {
		t.Fatalf("merge of two empty results: %v", err)
	}

	table := orphanCopies(t, "t")[0]
	before := treeOf(t, table)
	tbl := newContext(t, table)
	cfg := orphanCfg(time.Now().Add(-24*time.Hour), false)
	_, err = tbl.OrphanUnitsDecide(ctx, e, cfg, []byte("state"), []byte("merged"), nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = tbl.OrphanUnitsFinish(ctx, e, []byte("decision"), nil, nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = tbl.OrphanUnitsGate(ctx, e, []byte("state"), []byte("summary"), 2, nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = tbl.OrphanShardDecide(ctx, e, cfg, []byte("gate"), 0, []byte("piece"), nil)
	wantStatus(t, err, StatusInvalidArgument)
	// A cut-off within the last hour is refused while writers may run, as by RemoveOrphanFiles.
	_, err = tbl.OrphanUnitsPlan(ctx, e, OrphanConfig{OlderThan: time.Now()}, nil)
	wantStatus(t, err, StatusInvalidArgument)
	if !reflect.DeepEqual(treeOf(t, table), before) {
		t.Fatal("a refused call changed the table")
	}
}
