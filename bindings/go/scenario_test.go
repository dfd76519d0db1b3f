package paimoncleanup

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The cross-binding scenario (bindings/SCENARIO.md). With PAIMON_SCENARIO_TABLE set it runs on
// that prepared copy and prints the canonical lines to stdout for scripts/test-bindings.sh;
// otherwise it prepares its own copy and only checks that every step runs.

// scenarioFixture is the fixture table of the scenario.
const scenarioFixture = "parquet/pk_09.db/pk_09"

// plantOrphans adds the scenario's two orphan files, 3 days old.
func plantOrphans(t *testing.T, table string) {
	t.Helper()
	old := time.Now().Add(-72 * time.Hour)
	for name, size := range map[string]int{
		"f1=10/bucket-0/data-planted-orphan-0.parquet": 20,
		"manifest/manifest-planted-orphan-0":           10,
	} {
		p := filepath.Join(table, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte("0"), size), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, "\\u%04x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func jsonStrings(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = jsonQuote(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// pathsFNV1a is FNV-1a 64 over the paths sorted by bytes, each followed by '\n'.
func pathsFNV1a(paths []string) string {
	sorted := append([]string(nil), paths...)
	sort.Strings(sorted)
	h := uint64(0xcbf29ce484222325)
	for _, p := range sorted {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= 0x100000001b3
		}
		h ^= '\n'
		h *= 0x100000001b3
	}
	return fmt.Sprintf("%016x", h)
}

// summaryJSON is the canonical line of a summary.
func summaryJSON(s TableSummary) string {
	return fmt.Sprintf(`{"has_snapshots":%t,"earliest":%d,"latest":%d,"snapshots":%d,"tags":%d,`+
		`"branches":%d,"live_files":%d,"live_bytes":%d}`, s.HasSnapshots, s.EarliestSnapshotID,
		s.LatestSnapshotID, s.SnapshotCount, s.TagCount, s.BranchCount, s.LiveFileCount, s.LiveFileBytes)
}

// reportJSON is the canonical line of a report.
func reportJSON(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"kind":"%s","dry_run":%t,"expired":%d,"expired_range":`, r.Kind, r.DryRun, r.Expired)
	if r.ExpiredRange != nil {
		fmt.Fprintf(&b, "[%d,%d]", r.ExpiredRange.First, r.ExpiredRange.Last)
	} else {
		b.WriteString("null")
	}
	b.WriteString(`,"earliest_after":`)
	if r.EarliestAfter != nil {
		b.WriteString(strconv.FormatInt(*r.EarliestAfter, 10))
	} else {
		b.WriteString("null")
	}
	files := make([]string, 0, len(r.Classes))
	sizes := make([]string, 0, len(r.Classes))
	for _, c := range r.Classes {
		files = append(files, fmt.Sprintf(`"%s":%d`, c.Class, c.Files))
		sizes = append(sizes, fmt.Sprintf(`"%s":%d`, c.Class, c.Bytes))
	}
	paths := make([]string, len(r.Paths))
	for i, p := range r.Paths {
		paths[i] = p.Path
	}
	committed := make([]string, len(r.Committed))
	for i, id := range r.Committed {
		committed[i] = strconv.FormatInt(id, 10)
	}
	fmt.Fprintf(&b, `,"changelogs_written":%d,"files":{%s},"bytes":{%s},"total_files":%d,`+
		`"total_bytes":%d,"dirs_removed":%d,"failed":%d,"paths":%d,"paths_fnv1a":"%s",`+
		`"names":%s,"missing":%s,"marked":{"files":%d,"rows":%d,"bytes":%d},"committed":[%s],`+
		`"orphan":{"candidates":%d,"referenced":%d,"vetoed":%d},"warnings":%d,"steps":%d}`,
		r.ChangelogsWritten, strings.Join(files, ","), strings.Join(sizes, ","), r.TotalFiles,
		r.TotalBytes, r.DirsRemoved, len(r.Failures), len(r.Paths), pathsFNV1a(paths),
		jsonStrings(r.Names), jsonStrings(r.Missing), r.MarkedFiles, r.MarkedRows, r.MarkedBytes,
		strings.Join(committed, ","), r.Candidates, r.Referenced, r.Vetoed, len(r.Warnings), len(r.Steps))
	return b.String()
}

// runScenario runs the steps of bindings/SCENARIO.md on table and returns the lines.
func runScenario(t *testing.T, table string) []string {
	t.Helper()
	exec, err := NewExecutor(2)
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Close()
	tbl, err := NewContext(table, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	ctx := context.Background()
	var lines []string
	must := func(step string, r *Report, err error) {
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		lines = append(lines, "SCENARIO "+step+" "+reportJSON(r))
	}
	summary := func(step string) {
		s, err := tbl.Summary(exec)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		lines = append(lines, "SCENARIO "+step+" "+summaryJSON(s))
	}
	expire := func(dryRun bool) ExpireConfig {
		return ExpireConfig{RetainMin: 1, OlderThan: time.Now(), MaxExpires: 1000, DryRun: dryRun}
	}

	summary("summary-before")
	r, err := tbl.ExpireSnapshots(ctx, exec, expire(true), nil)
	must("expire-dry-run", r, err)
	r, err = tbl.ExpireSnapshots(ctx, exec, expire(false), nil)
	must("expire", r, err)
	r, err = tbl.RemoveOrphanFiles(ctx, exec, OrphanConfig{DryRun: true}, nil)
	must("orphan-dry-run", r, err)
	r, err = tbl.RemoveOrphanFiles(ctx, exec, OrphanConfig{}, nil)
	must("orphan", r, err)
	r, err = tbl.DropPartitions(ctx, exec, []PartitionSpec{{"f1": "20"}}, nil)
	must("drop-partitions", r, err)
	// Past the drop commit's millisecond: its snapshot is older than the next cut-off.
	time.Sleep(5 * time.Millisecond)
	r, err = tbl.ExpireSnapshots(ctx, exec, expire(false), nil)
	must("expire-after-drop", r, err)
	summary("summary-after")

	missing, err := NewContext(filepath.Join(table, "does-not-exist"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer missing.Close()
	if _, err := missing.Summary(exec); err != nil {
		var e *Error
		if !asError(err, &e) {
			t.Fatalf("missing table: %T %v", err, err)
		}
		lines = append(lines, fmt.Sprintf(`SCENARIO missing-table {"status":%d,"name":"%s"}`, e.Status, e.Status))
	} else {
		lines = append(lines, `SCENARIO missing-table {"status":0}`)
	}
	return lines
}

func TestScenario(t *testing.T) {
	table := os.Getenv("PAIMON_SCENARIO_TABLE")
	if table != "" {
		for _, line := range runScenario(t, table) {
			fmt.Println(line)
		}
		return
	}
	table = copyFixture(t, scenarioFixture)
	plantOrphans(t, table)
	lines := runScenario(t, table)
	if len(lines) != 9 {
		t.Fatalf("expected 9 lines, got %d", len(lines))
	}
	for _, line := range lines {
		t.Log(line)
	}
	if !strings.Contains(lines[4], `"names":[]`) || !strings.Contains(lines[5], `"names":["f1=20"]`) {
		t.Errorf("unexpected orphan / drop lines:\n%s\n%s", lines[4], lines[5])
	}
}
