package paimoncleanup

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestListTables: a pattern picks the tables of a warehouse, sorted by name; each location
// opens with NewContext; no match, a pattern without '.' and an object-store URI are errors.
func TestListTables(t *testing.T) {
	wh := filepath.Join(t.TempDir(), "wh")
	fixtures := fixturesDir(t)
	for dst, rel := range map[string]string{
		"db.db/pk_09":       "parquet/pk_09.db/pk_09",
		"other.db/pk_copy":  "parquet/pk_09.db/pk_09",
		"db.db/append":      "parquet/append_table_with_append_pt_branch.db/append_table_with_append_pt_branch",
		"db.db/not_a_table": "",
	} {
		if rel == "" {
			if err := os.MkdirAll(filepath.Join(wh, dst, "snapshot"), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := copyDir(filepath.Join(fixtures, rel), filepath.Join(wh, dst)); err != nil {
			t.Fatal(err)
		}
	}

	all, err := ListTables(wh, "*.*")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range all {
		names = append(names, tb.Name)
	}
	if want := []string{"db.append", "db.pk_09", "other.pk_copy"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tables %v, want %v", names, want)
	}
	db, err := ListTables(wh, "db.pk*")
	if err != nil {
		t.Fatal(err)
	}
	if len(db) != 1 || db[0].Name != "db.pk_09" {
		t.Fatalf("db.pk*: %v", db)
	}
	a, errA := os.Stat(db[0].Location)
	b, errB := os.Stat(filepath.Join(wh, "db.db", "pk_09"))
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		t.Fatalf("location %s is not the table's directory (%v, %v)", db[0].Location, errA, errB)
	}
	s, err := newContext(t, db[0].Location).Summary(newExecutor(t))
	if err != nil || !s.HasSnapshots {
		t.Fatalf("the listed location does not open as the table: %+v %v", s, err)
	}
	_, err = ListTables(wh, "db.nothing*")
	wantStatus(t, err, StatusNotFound)
	_, err = ListTables(wh, "nodot")
	wantStatus(t, err, StatusInvalidArgument)
	_, err = ListTables("s3://bucket/wh", "db.*")
	wantStatus(t, err, StatusUnsupported)
}
