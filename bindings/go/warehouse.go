package paimoncleanup

/*
#include <stdlib.h>
#include "paimon_cleanup.h"
*/
import "C"

import "unsafe"

// WarehouseTable is a table of a warehouse: its "db.table" name and its location (what
// NewContext takes as the table URI).
type WarehouseTable struct {
	Name     string
	Location string
}

// ListTables lists the tables of the local filesystem-catalog warehouse root
// (root/<db>.db/<table>/ directories holding a schema/ directory) that pattern names, sorted by
// name. pattern is "db.table" where either part may be or hold '*' ("db.*", "*.*"), as Paimon
// Java's procedures take a table. It reads directories on the calling goroutine's thread.
//
// Errors (*Error): StatusNotFound when no table matches, StatusInvalidArgument for a pattern
// without '.', StatusUnsupported for an object-store URI, StatusStorage when a directory
// cannot be listed.
func ListTables(root, pattern string) ([]WarehouseTable, error) {
	croot := C.CString(root)
	defer C.free(unsafe.Pointer(croot))
	cpattern := C.CString(pattern)
	defer C.free(unsafe.Pointer(cpattern))
	var list *C.PaimonCleanupTableList
	var cerr *C.PaimonCleanupError
	if err := takeError(C.paimon_cleanup_warehouse_list_tables(croot, cpattern, &list, &cerr), &cerr); err != nil {
		return nil, err
	}
	defer C.paimon_cleanup_table_list_free(list)
	n := C.paimon_cleanup_table_list_count(list)
	out := make([]WarehouseTable, 0, int(n))
	for i := C.size_t(0); i < n; i++ {
		out = append(out, WarehouseTable{
			Name:     C.GoString(C.paimon_cleanup_table_list_name(list, i)),
			Location: C.GoString(C.paimon_cleanup_table_list_location(list, i)),
		})
	}
	return out, nil
}
