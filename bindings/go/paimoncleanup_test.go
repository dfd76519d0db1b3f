package paimoncleanup

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixturesDir is $PAIMON_FIXTURES, else ../shared/fixtures/java-written-tables next to the
// repository. Tests that need it skip when it is missing, unless PAIMON_REQUIRE_FIXTURES=1.
func fixturesDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PAIMON_FIXTURES")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "fixtures", "java-written-tables")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if os.Getenv("PAIMON_REQUIRE_FIXTURES") == "1" {
			t.Fatalf("fixture tables not found at %s", dir)
		}
		t.Skipf("fixture tables not found at %s", dir)
	}
	return dir
}

// copyFixture copies fixture table rel into a fresh t.TempDir() and returns the copy.
func copyFixture(t *testing.T, rel string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(rel))
	if err := copyDir(filepath.Join(fixturesDir(t), rel), dst); err != nil {
		t.Fatalf("copy %s: %v", rel, err)
	}
	return dst
}

// copyDir copies the directory tree src to dst (created, writable).
func copyDir(src, dst string) error {
	return filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, strings.TrimPrefix(path, src))
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

func asError(err error, target **Error) bool { return errors.As(err, target) }

func newExecutor(t *testing.T) *Executor {
	t.Helper()
	exec, err := NewExecutor(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Close() })
	return exec
}

func newContext(t *testing.T, uri string) *Context {
	t.Helper()
	c, err := NewContext(uri, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func expireAll(dryRun bool) ExpireConfig {
	return ExpireConfig{RetainMin: 1, OlderThan: time.Now(), MaxExpires: 1000, DryRun: dryRun}
}

func wantStatus(t *testing.T, err error, s Status) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("expected *Error with %s, got %T %v", s, err, err)
	}
	if e.Status != s || e.Message == "" || !HasStatus(err, s) {
		t.Fatalf("expected %s with a message, got %v", s, err)
	}
	if !strings.HasPrefix(e.Error(), s.String()+": ") {
		t.Fatalf("Error() = %q", e.Error())
	}
}

func TestVersion(t *testing.T) {
	if Version() == "" {
		t.Fatal("empty version")
	}
	if ABIVersion() != HeaderABIVersion {
		t.Fatalf("ABI %d, header %d", ABIVersion(), HeaderABIVersion)
	}
	if StatusNotFound.String() != "not_found" || ClassManifestList.String() != "manifest_list" ||
		KindDropPartitions.String() != "drop_partitions" {
		t.Fatal("names")
	}
}

func TestParseOlderThan(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	got, err := ParseOlderThan("1 d", now)
	if err != nil || got.UnixMilli() != now.UnixMilli()-86_400_000 {
		t.Fatalf("1 d: %v %v", got, err)
	}
	got, err = ParseOlderThan("2023-11-01 00:00:00Z", now)
	if err != nil || got.UnixMilli() != 1_698_796_800_000 {
		t.Fatalf("timestamp: %v %v", got, err)
	}
	for _, bad := range []string{"", "12345", "yesterday", "2023-13-01 00:00:00", "2030-01-01 00:00:00Z"} {
		_, err := ParseOlderThan(bad, now)
		wantStatus(t, err, StatusInvalidArgument)
	}
}

func TestHandlesAndArgumentErrors(t *testing.T) {
	_, err := NewExecutor(100000)
	wantStatus(t, err, StatusInvalidArgument)

	exec := newExecutor(t)
	if exec.WorkerThreads() != 2 {
		t.Fatalf("workers %d", exec.WorkerThreads())
	}
	if err := exec.SetIOConcurrency(16); err != nil || exec.IOConcurrency() != 16 {
		t.Fatalf("io concurrency: %v %d", err, exec.IOConcurrency())
	}
	wantStatus(t, exec.SetIOConcurrency(1<<30), StatusInvalidArgument)

	_, err = NewContext("", nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = NewContext("/tmp/t", map[string]string{"": "v"})
	wantStatus(t, err, StatusInvalidArgument)
	_, err = NewContext("/tmp/t\x00x", nil)
	wantStatus(t, err, StatusInvalidArgument)

	missing := newContext(t, filepath.Join(t.TempDir(), "no-such-table"))
	_, err = missing.Summary(exec)
	wantStatus(t, err, StatusNotFound)
	_, err = missing.ExpireSnapshots(context.Background(), exec, expireAll(false), nil)
	wantStatus(t, err, StatusNotFound)
	_, err = missing.RemoveOrphanFiles(context.Background(), exec, OrphanConfig{}, nil)
	wantStatus(t, err, StatusNotFound)
	_, err = missing.ExpireSnapshots(context.Background(), exec, ExpireConfig{RetainMin: -1}, nil)
	wantStatus(t, err, StatusInvalidArgument)

	// A cancelled context: CANCELLED before anything is read, unwrapping to context.Canceled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = missing.ExpireSnapshots(ctx, exec, expireAll(true), nil)
	wantStatus(t, err, StatusCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("errors.Is(err, context.Canceled) is false for %v", err)
	}

	// Closed handles are errors, not crashes; Close twice is fine.
	c, err := NewContext("/tmp/t", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.Close()
	_, err = c.Summary(exec)
	wantStatus(t, err, StatusInvalidArgument)
	e2, err := NewExecutor(1)
	if err != nil {
		t.Fatal(err)
	}
	e2.Close()
	_, err = missing.Summary(e2)
	wantStatus(t, err, StatusInvalidArgument)
}

func TestSummaryAndExpireSnapshots(t *testing.T) {
	table := copyFixture(t, scenarioFixture)
	exec := newExecutor(t)
	tbl := newContext(t, table)

	before, err := tbl.Summary(exec)
	if err != nil {
		t.Fatal(err)
	}
	if !before.HasSnapshots || before.SnapshotCount != 8 || before.LatestSnapshotID != 8 || before.LiveFileCount == 0 {
		t.Fatalf("summary %+v", before)
	}

	dry, err := tbl.ExpireSnapshots(context.Background(), exec, expireAll(true), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !dry.DryRun || dry.Kind != KindExpireSnapshots || dry.Expired != 7 || uint64(len(dry.Paths)) != dry.TotalFiles {
		t.Fatalf("dry run %+v", dry)
	}
	if s, _ := tbl.Summary(exec); s.SnapshotCount != 8 {
		t.Fatal("the dry run changed the table")
	}

	var mu sync.Mutex
	var phases []string
	opts := &RunOptions{Progress: func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
	}}
	real, err := tbl.ExpireSnapshots(context.Background(), exec, expireAll(false), opts)
	if err != nil {
		t.Fatal(err)
	}
	if real.DryRun || real.Expired != dry.Expired || real.TotalFiles != dry.TotalFiles || real.TotalBytes != dry.TotalBytes {
		t.Fatalf("real %v vs dry %v", real, dry)
	}
	if real.ExpiredRange == nil || *real.ExpiredRange != (IDRange{1, 7}) || real.EarliestAfter == nil || *real.EarliestAfter != 8 {
		t.Fatalf("ranges %+v %+v", real.ExpiredRange, real.EarliestAfter)
	}
	if real.Files(ClassSnapshotMeta) != 7 || len(real.Failures) != 0 {
		t.Fatalf("report %+v", real)
	}
	for _, p := range real.Paths {
		if _, err := os.Stat(filepath.Join(table, p.Path)); !os.IsNotExist(err) {
			t.Fatalf("%s (%s) still exists", p.Path, p.Class)
		}
	}
	if len(phases) == 0 {
		t.Fatal("no progress")
	}
	t.Logf("progress phases %v; %s", phases, real)
	after, err := tbl.Summary(exec)
	if err != nil || after.SnapshotCount != 1 || after.LiveFileCount != before.LiveFileCount {
		t.Fatalf("after %+v %v", after, err)
	}
}

// treeOf lists every file under root (relative path and size), sorted by path.
func treeOf(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			rel, _ := filepath.Rel(root, path)
			out = append(out, rel+" "+strconv.FormatInt(info.Size(), 10))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestMaxMemory(t *testing.T) {
	exec := newExecutor(t)
	table := copyFixture(t, scenarioFixture)
	tbl := newContext(t, table)
	before := treeOf(t, table)
	for _, bound := range []uint64{1, 512} {
		_, err := tbl.ExpireSnapshots(context.Background(), exec, expireAll(false), &RunOptions{MaxMemory: bound})
		wantStatus(t, err, StatusMemoryLimit)
		if !strings.Contains(err.Error(), "max_memory") || !strings.HasPrefix(err.Error(), "memory_limit: ") {
			t.Fatalf("bound %d: %v", bound, err)
		}
		if after := treeOf(t, table); !reflect.DeepEqual(after, before) {
			t.Fatalf("bound %d changed the table: %d files before, %d after", bound, len(before), len(after))
		}
	}
	// An ample bound runs as an unbounded run does.
	free := newContext(t, copyFixture(t, scenarioFixture))
	want, err := free.ExpireSnapshots(context.Background(), exec, expireAll(false), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tbl.ExpireSnapshots(context.Background(), exec, expireAll(false), &RunOptions{MaxMemory: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if got.Expired != want.Expired || got.TotalFiles != want.TotalFiles || got.TotalFiles == 0 {
		t.Fatalf("bounded %v vs unbounded %v", got, want)
	}
	if s, _ := tbl.Summary(exec); s.SnapshotCount != 1 {
		t.Fatalf("after the bounded run %+v", s)
	}
}

func TestLog(t *testing.T) {
	exec := newExecutor(t)
	tbl := newContext(t, copyFixture(t, scenarioFixture))
	var mu sync.Mutex
	var info, verbose, expiry int
	opts := &RunOptions{Log: func(e LogEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case e.Level == LogInfo:
			info++
		case e.Level > LogInfo:
			verbose++
		}
		if strings.Contains(e.Message, "expired") && strings.HasPrefix(e.Target, "paimon_cleanup") {
			expiry++
		}
	}}
	if _, err := tbl.ExpireSnapshots(context.Background(), exec, expireAll(false), opts); err != nil {
		t.Fatal(err)
	}
	if info == 0 || verbose != 0 || expiry == 0 {
		t.Fatalf("info %d, more verbose %d, about expiry %d", info, verbose, expiry)
	}
	// A more verbose level passes debug events; a bad level is an argument error.
	debug := 0
	tbl2 := newContext(t, copyFixture(t, scenarioFixture))
	_, err := tbl2.ExpireSnapshots(context.Background(), exec, expireAll(true), &RunOptions{
		LogLevel: LogDebug,
		Log: func(e LogEvent) {
			mu.Lock()
			defer mu.Unlock()
			if e.Level == LogDebug {
				debug++
			}
		},
	})
	if err != nil || debug == 0 {
		t.Fatalf("debug events %d, %v", debug, err)
	}
	_, err = tbl2.ExpireSnapshots(context.Background(), exec, expireAll(true), &RunOptions{LogLevel: 9, Log: func(LogEvent) {}})
	wantStatus(t, err, StatusInvalidArgument)
	// A panic in the log function stops the run and is re-raised.
	func() {
		defer func() {
			if v := recover(); v != "log boom" {
				t.Fatalf("recovered %v", v)
			}
		}()
		_, _ = tbl2.ExpireSnapshots(context.Background(), exec, expireAll(true), &RunOptions{Log: func(LogEvent) { panic("log boom") }})
		t.Fatal("no panic")
	}()
}

func TestCancelFromProgressAndPanic(t *testing.T) {
	exec := newExecutor(t)
	tbl := newContext(t, copyFixture(t, scenarioFixture))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := tbl.ExpireSnapshots(ctx, exec, expireAll(false), &RunOptions{Progress: func(Progress) { cancel() }})
	wantStatus(t, err, StatusCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("not context.Canceled: %v", err)
	}
	// A rerun converges.
	if _, err := tbl.ExpireSnapshots(context.Background(), exec, expireAll(false), nil); err != nil {
		t.Fatal(err)
	}
	if s, _ := tbl.Summary(exec); s.SnapshotCount != 1 {
		t.Fatalf("after rerun %+v", s)
	}

	// A panic in the callback stops the run and is re-raised here.
	tbl2 := newContext(t, copyFixture(t, scenarioFixture))
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Fatalf("recovered %v", v)
			}
		}()
		_, _ = tbl2.ExpireSnapshots(context.Background(), exec, expireAll(true), &RunOptions{Progress: func(Progress) { panic("boom") }})
		t.Fatal("no panic")
	}()
}

func TestRemoveOrphanFiles(t *testing.T) {
	table := copyFixture(t, scenarioFixture)
	plantOrphans(t, table)
	exec := newExecutor(t)
	tbl := newContext(t, table)
	ctx := context.Background()

	dry, err := tbl.RemoveOrphanFiles(ctx, exec, OrphanConfig{DryRun: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dry.Kind != KindRemoveOrphanFiles || !dry.DryRun || dry.TotalFiles != 2 || dry.Cutoff.IsZero() {
		t.Fatalf("dry run %+v", dry)
	}

	// The veto keeps the planted data file.
	var vetoed []string
	r, err := tbl.RemoveOrphanFiles(ctx, exec, OrphanConfig{Veto: func(p string) bool {
		vetoed = append(vetoed, p)
		return strings.HasPrefix(p, "f1=10/")
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Vetoed != 1 || r.TotalFiles != 1 || r.Files(ClassManifest) != 1 || len(vetoed) != 2 {
		t.Fatalf("veto run %+v, asked %v", r, vetoed)
	}
	if _, err := os.Stat(filepath.Join(table, "manifest/manifest-planted-orphan-0")); !os.IsNotExist(err) {
		t.Fatal("orphan manifest still there")
	}
	if _, err := os.Stat(filepath.Join(table, "f1=10/bucket-0/data-planted-orphan-0.parquet")); err != nil {
		t.Fatal("vetoed file deleted")
	}
	// A panicking veto keeps the file, stops the run and re-raises.
	func() {
		defer func() {
			if v := recover(); v != "veto boom" {
				t.Fatalf("recovered %v", v)
			}
		}()
		_, _ = tbl.RemoveOrphanFiles(ctx, exec, OrphanConfig{Veto: func(string) bool { panic("veto boom") }}, nil)
		t.Fatal("no panic")
	}()
	if _, err := os.Stat(filepath.Join(table, "f1=10/bucket-0/data-planted-orphan-0.parquet")); err != nil {
		t.Fatal("file deleted although the veto panicked")
	}
	r, err = tbl.RemoveOrphanFiles(ctx, exec, OrphanConfig{}, nil)
	if err != nil || r.TotalFiles != 1 || r.Files(ClassData) != 1 {
		t.Fatalf("final run %+v %v", r, err)
	}
	// A cut-off within the last hour is refused while writers may run.
	_, err = tbl.RemoveOrphanFiles(ctx, exec, OrphanConfig{OlderThan: time.Now()}, nil)
	wantStatus(t, err, StatusInvalidArgument)
}

func TestDropPartitions(t *testing.T) {
	table := copyFixture(t, scenarioFixture)
	exec := newExecutor(t)
	tbl := newContext(t, table)
	ctx := context.Background()
	before, err := tbl.Summary(exec)
	if err != nil {
		t.Fatal(err)
	}

	_, err = tbl.DropPartitions(ctx, exec, []PartitionSpec{{"no_such_key": "1"}}, nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = tbl.DropPartitions(ctx, exec, nil, nil)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = tbl.PreviewDropPartitions(ctx, exec, []PartitionSpec{{"no_such_key": "1"}}, nil)
	wantStatus(t, err, StatusInvalidArgument)

	// The preview commits nothing and names what the drop then commits.
	files := treeOf(t, table)
	preview, err := tbl.PreviewDropPartitions(ctx, exec, []PartitionSpec{{"f1": "20"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !preview.DryRun || preview.Kind != KindDropPartitions || len(preview.Committed) != 0 ||
		len(preview.Names) != 1 || preview.Names[0] != "f1=20" || preview.MarkedFiles == 0 {
		t.Fatalf("preview %+v", preview)
	}
	if !reflect.DeepEqual(treeOf(t, table), files) {
		t.Fatal("the preview changed the table")
	}

	r, err := tbl.DropPartitions(ctx, exec, []PartitionSpec{{"f1": "20"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.MarkedFiles != preview.MarkedFiles || r.MarkedRows != preview.MarkedRows || r.MarkedBytes != preview.MarkedBytes ||
		!reflect.DeepEqual(r.Names, preview.Names) {
		t.Fatalf("drop %+v differs from its preview %+v", r, preview)
	}
	if r.Kind != KindDropPartitions || len(r.Names) != 1 || r.Names[0] != "f1=20" || r.MarkedFiles == 0 ||
		len(r.Committed) != 1 || r.Committed[0] != before.LatestSnapshotID+1 {
		t.Fatalf("drop %+v", r)
	}
	if len(r.Partitions) != 1 || r.Partitions[0][0] != (PartitionField{"f1", "20"}) {
		t.Fatalf("partitions %+v", r.Partitions)
	}
	after, err := tbl.Summary(exec)
	if err != nil || after.LatestSnapshotID != before.LatestSnapshotID+1 || after.LiveFileCount+r.MarkedFiles != before.LiveFileCount {
		t.Fatalf("after drop %+v (before %+v) %v", after, before, err)
	}
	if _, err := os.Stat(filepath.Join(table, "f1=20")); err != nil {
		t.Fatal("drop deleted files; it must only commit")
	}
}

func TestConcurrentSummaries(t *testing.T) {
	exec := newExecutor(t)
	tbl := newContext(t, copyFixture(t, scenarioFixture))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := tbl.Summary(exec); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestCallbacksFromNativeThreads(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	started := progressFromNativeThreads(&RunOptions{Progress: func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Phase == "foreign thread" {
			calls++
		}
	}}, 4, 25)
	if started != 4 || calls != 100 {
		t.Fatalf("%d threads, %d calls", started, calls)
	}
	func() {
		defer func() {
			if v := recover(); v != "from a native thread" {
				t.Fatalf("recovered %v", v)
			}
		}()
		progressFromNativeThreads(&RunOptions{Progress: func(Progress) { panic("from a native thread") }}, 2, 5)
		t.Fatal("no panic")
	}()
}

// A context on a branch (NewBranchContext sets BranchOption): the summary and snapshot expiry
// see only that branch; main keeps its snapshots; a bad branch name is refused.
func TestBranchContext(t *testing.T) {
	table := copyFixture(t, "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch")
	exec := newExecutor(t)
	mainCtx := newContext(t, table)
	branch, err := NewBranchContext(table, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { branch.Close() })
	mainBefore, err := mainCtx.Summary(exec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := branch.ExpireSnapshots(context.Background(), exec, expireAll(false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Expired != 1 {
		t.Fatalf("branch expiry %+v", r)
	}
	if s, err := branch.Summary(exec); err != nil || s.SnapshotCount != 1 || s.EarliestSnapshotID != 2 {
		t.Fatalf("branch after %+v %v", s, err)
	}
	if s, err := mainCtx.Summary(exec); err != nil || s != mainBefore {
		t.Fatalf("main changed: %+v -> %+v %v", mainBefore, s, err)
	}
	if _, err := NewBranchContext(table, "../x", nil); err == nil {
		t.Fatal("a path-like branch name was accepted")
	} else {
		wantStatus(t, err, StatusInvalidArgument)
	}
}
