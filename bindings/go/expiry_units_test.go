package paimoncleanup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"
)

// genTable writes a table with paimon-gen ($PAIMON_GEN, else target/release/paimon-gen of this
// repository): 24 snapshots, compactions every 3 commits (so expiry frees data files) and 2
// tags (so protect units have work). Skips when paimon-gen is missing unless
// PAIMON_REQUIRE_GEN=1 (scripts/test-bindings.sh builds it and sets that).
func genTable(t *testing.T) string {
	t.Helper()
	gen := os.Getenv("PAIMON_GEN")
	if gen == "" {
		gen = filepath.Join("..", "..", "target", "release", "paimon-gen")
	}
	if st, err := os.Stat(gen); err != nil || st.IsDir() {
		if os.Getenv("PAIMON_REQUIRE_GEN") == "1" {
			t.Fatalf("paimon-gen not found at %s", gen)
		}
		t.Skipf("paimon-gen not found at %s (set PAIMON_GEN)", gen)
	}
	table := filepath.Join(t.TempDir(), "gen")
	out, err := exec.Command(gen, table, "--snapshots", "24", "--files-per-commit", "3",
		"--partitions", "2", "--buckets", "2", "--compact-every", "3", "--tags", "2",
		"--seed", "7").CombinedOutput()
	if err != nil {
		t.Fatalf("paimon-gen: %v\n%s", err, out)
	}
	return table
}

// unitsConfig expires every snapshot but the last 3.
func unitsConfig() ExpireConfig {
	return ExpireConfig{RetainMin: 3, OlderThan: time.Now(), MaxExpires: 1000}
}

// mergeReversed merges results in reverse order, alternating the argument order.
func mergeReversed(t *testing.T, parts [][]byte) []byte {
	t.Helper()
	var out []byte
	for i := len(parts) - 1; i >= 0; i-- {
		var err error
		if i%2 == 0 {
			out, err = ExpiryPartialsMerge(out, parts[i])
		} else {
			out, err = ExpiryPartialsMerge(parts[i], out)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// executeReversed executes every unit, the last one first, and merges the results.
func executeReversed(t *testing.T, e *Executor, units [][]byte) []byte {
	t.Helper()
	results := make([][]byte, 0, len(units))
	for i := len(units) - 1; i >= 0; i-- {
		r, err := ExpiryUnitExecute(context.Background(), e, units[i], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	return mergeReversed(t, results)
}

// outcome is what two runs must agree on: expired snapshots, files and bytes per class, paths.
func outcome(r *Report) string {
	paths := make([]string, 0, len(r.Paths))
	for _, p := range r.Paths {
		paths = append(paths, p.Class.String()+" "+p.Path)
	}
	sort.Strings(paths)
	return fmt.Sprintf("expired %d, classes %v, paths %v", r.Expired, r.Classes, paths)
}

// runUnsharded runs plan, candidates, protect, protect units, decide, delete units, finish; a
// truncated delete unit and a doubled result are refused first, with nothing deleted.
func runUnsharded(t *testing.T, e *Executor, table string) *Report {
	ctx := context.Background()
	tbl := newContext(t, table)
	plan, err := tbl.ExpiryUnitsPlan(ctx, e, unitsConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.State) == 0 || len(plan.Units) == 0 {
		t.Fatalf("plan: %d state bytes, %d units", len(plan.State), len(plan.Units))
	}
	candidates := executeReversed(t, e, plan.Units)
	protect, err := tbl.ExpiryUnitsProtect(ctx, e, plan.State, candidates, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(protect.Units) == 0 {
		t.Fatal("no protect units (the retained snapshots and tags protect files)")
	}
	kept := executeReversed(t, e, protect.Units)
	decision, err := tbl.ExpiryUnitsDecide(ctx, e, protect.State, candidates, kept, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(decision.Units) == 0 {
		t.Fatal("no delete units")
	}

	before := treeOf(t, table)
	broken := decision.Units[0][:len(decision.Units[0])/2]
	_, err = ExpiryUnitExecute(ctx, e, broken, nil, nil)
	wantStatus(t, err, StatusInvalidArgument)
	if after := treeOf(t, table); !reflect.DeepEqual(after, before) {
		t.Fatal("a refused delete unit changed the table")
	}
	_, err = ExpiryPartialsMerge(candidates, candidates)
	wantStatus(t, err, StatusInvalidArgument)

	deleted := executeReversed(t, e, decision.Units)
	report, err := tbl.ExpiryUnitsFinish(ctx, e, decision.State, deleted, nil)
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// runSharded runs split, gate, one decision per shard (the last shard first), conclude, the
// delete units and finish; a missing shard report is refused. With pathsToTasks the gate hands
// the freed data and changelog paths to the tasks: the delete units run through
// ExpiryUnitExecuteHandingPaths, and the paths they deleted come back beside the report.
func runSharded(t *testing.T, e *Executor, table string, shards uint32, pathsToTasks bool) (*Report, []string) {
	ctx := context.Background()
	tbl := newContext(t, table)
	plan, err := tbl.ExpiryUnitsPlan(ctx, e, unitsConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var summaries [][]byte
	pieces := make([][][]byte, shards)
	for i := len(plan.Units) - 1; i >= 0; i-- {
		r, err := ExpiryUnitExecute(ctx, e, plan.Units[i], nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ExpiryPartialSplit(r, shards)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Shards) != int(shards) {
			t.Fatalf("%d pieces for %d shards", len(s.Shards), shards)
		}
		summaries = append(summaries, s.Summary)
		for k := range pieces {
			pieces[k] = append(pieces[k], s.Shards[k])
		}
	}
	gated, err := tbl.ExpiryUnitsGate(ctx, e, plan.State, mergeReversed(t, summaries), shards, pathsToTasks, nil)
	if err != nil {
		t.Fatal(err)
	}
	var reports, deleteUnits [][]byte
	for k := int(shards) - 1; k >= 0; k-- {
		d, err := ExpiryShardDecide(ctx, e, gated.Gate, uint32(k), mergeReversed(t, pieces[k]), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Paths) != 0 {
			// Only a dry run's shards hand out paths; these runs delete.
			t.Fatalf("shard %d of a real run handed out %d paths", k, len(d.Paths))
		}
		reports = append(reports, d.Report)
		deleteUnits = append(deleteUnits, d.DeleteUnits...)
	}
	if len(deleteUnits) == 0 {
		t.Fatal("no delete units")
	}
	_, err = ExpiryUnitsConclude(gated.Decision, reports[1:])
	wantStatus(t, err, StatusInvalidArgument)
	decision, err := ExpiryUnitsConclude(gated.Decision, reports)
	if err != nil {
		t.Fatal(err)
	}
	var deleted []byte
	var taskPaths []string
	if pathsToTasks {
		var results [][]byte
		for i := len(deleteUnits) - 1; i >= 0; i-- {
			_, err := ExpiryUnitExecute(ctx, e, deleteUnits[i], nil, nil)
			wantStatus(t, err, StatusInvalidArgument) // its paths would be lost
			x, err := ExpiryUnitExecuteHandingPaths(ctx, e, deleteUnits[i], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, x.Result)
			taskPaths = append(taskPaths, x.Paths...)
		}
		deleted = mergeReversed(t, results)
	} else {
		deleted = executeReversed(t, e, deleteUnits)
	}
	report, err := tbl.ExpiryUnitsFinish(ctx, e, decision, deleted, nil)
	if err != nil {
		t.Fatal(err)
	}
	return report, taskPaths
}

// TestExpiryUnits: the unsharded and the sharded unit sequences, units executed in reverse
// order, give the single-process run's report and leave the same files.
func TestExpiryUnits(t *testing.T) {
	source := genTable(t)
	dir := t.TempDir()
	one, units, sharded := filepath.Join(dir, "one"), filepath.Join(dir, "units"), filepath.Join(dir, "sharded")
	handed := filepath.Join(dir, "handed")
	for _, dst := range []string{one, units, sharded, handed} {
		if err := copyDir(source, dst); err != nil {
			t.Fatal(err)
		}
	}
	e := newExecutor(t)
	single, err := newContext(t, one).ExpireSnapshots(context.Background(), e, unitsConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if single.Expired == 0 || single.Files(ClassData) == 0 {
		t.Fatalf("the table should free data files: %v", single)
	}
	t.Logf("single-process: %v", single)
	want := outcome(single)

	if got := outcome(runUnsharded(t, e, units)); got != want {
		t.Fatalf("units:\n%s\nsingle-process:\n%s", got, want)
	}
	if !reflect.DeepEqual(treeOf(t, units), treeOf(t, one)) {
		t.Fatal("the units left other files than the single-process run")
	}
	if single.PathsElsewhere {
		t.Fatal("the one-call report says its paths are elsewhere")
	}
	report, taskPaths := runSharded(t, e, sharded, 3, false)
	if got := outcome(report); got != want {
		t.Fatalf("sharded:\n%s\nsingle-process:\n%s", got, want)
	}
	if report.PathsElsewhere || len(taskPaths) != 0 {
		t.Fatalf("paths elsewhere without pathsToTasks: %v, %d task paths", report.PathsElsewhere, len(taskPaths))
	}
	if !reflect.DeepEqual(treeOf(t, sharded), treeOf(t, one)) {
		t.Fatal("the sharded units left other files than the single-process run")
	}

	// The paths handed to the tasks: the same files go, the same counts come back, the report's
	// listing is a sample (and says so), and the tasks' paths with it are every path.
	report, taskPaths = runSharded(t, e, handed, 3, true)
	if !reflect.DeepEqual(treeOf(t, handed), treeOf(t, one)) {
		t.Fatal("the units handing their paths to the tasks left other files than the single-process run")
	}
	if !report.PathsElsewhere {
		t.Fatal("PathsElsewhere is false for a run whose tasks kept the paths")
	}
	if report.Expired != single.Expired || !reflect.DeepEqual(report.Classes, single.Classes) {
		t.Fatalf("counts differ: %v / %v against %v / %v", report.Expired, report.Classes, single.Expired, single.Classes)
	}
	// The listing: the driver's metadata files and at most 20 of the tasks' paths.
	if len(taskPaths) == 0 || len(report.Paths) > len(single.Paths)-len(taskPaths)+20 {
		t.Fatalf("%d task paths, %d listed, %d in the one-call run", len(taskPaths), len(report.Paths), len(single.Paths))
	}
	union := map[string]bool{}
	for _, p := range taskPaths {
		union[p] = true
	}
	for _, p := range report.Paths {
		union[p.Path] = true
	}
	all := map[string]bool{}
	for _, p := range single.Paths {
		all[p.Path] = true
	}
	if !reflect.DeepEqual(union, all) {
		t.Fatalf("tasks' paths and the listing (%d) are not the one-call run's paths (%d)", len(union), len(all))
	}
}

// TestExpiryUnitsArgumentErrors: foreign bytes are refused before anything runs.
func TestExpiryUnitsArgumentErrors(t *testing.T) {
	e := newExecutor(t)
	_, err := ExpiryUnitExecute(context.Background(), e, []byte("not a unit"), nil, nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = ExpiryPartialsMerge([]byte("x"), []byte("y"))
	wantStatus(t, err, StatusInvalidArgument)
	_, err = ExpiryPartialSplit([]byte("x"), 2)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = ExpiryUnitsConclude([]byte("x"), [][]byte{[]byte("y")})
	wantStatus(t, err, StatusInvalidArgument)
	_, err = ExpiryUnitExecute(context.Background(), e, []byte("x"), map[string]string{"k\x00": "v"}, nil)
	wantStatus(t, err, StatusInvalidArgument)
	if merged, err := ExpiryPartialsMerge(nil, nil); err != nil || len(merged) != 0 {
		t.Fatalf("merge of two empty results: %v %v", merged, err)
	}
}
