#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets from the Java fixture tables (docs/fuzzing.md):
#   corpus/avro_manifest/  every Avro manifest list, manifest and index manifest
#   corpus/json_metadata/  every snapshot, schema and EARLIEST/LATEST hint, plus a tag and a
#                          consumer written here (the fixtures have none)
#   corpus/binary_row/     every distinct BinaryRow of those manifests (partitions, keys, stats;
#                          extracted by the extract_rows binary) plus rows holding every type
# The corpora are git-ignored: the fixture files are copied, never committed.
# Usage: fuzz/seed.sh [FIXTURES_DIR]   (default: $PAIMON_FIXTURES or ../shared/fixtures/java-written-tables)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
fixtures="${1:-${PAIMON_FIXTURES:-$root/../shared/fixtures/java-written-tables}}"
if [ ! -f "$fixtures/INDEX.md" ]; then
    echo "seed.sh: no fixture tables at $fixtures (pass the directory or set PAIMON_FIXTURES)" >&2
    exit 1
fi
corpus="$here/corpus"
mkdir -p "$corpus/avro_manifest" "$corpus/json_metadata" "$corpus/binary_row"

# Copies a file into a corpus directory under its content hash (duplicates collapse).
add() {
    local sum
    sum="$(sha1sum "$2" | cut -c1-40)"
    cp "$2" "$1/$sum"
}

avro_files=()
while IFS= read -r -d '' f; do
    if [ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')" = "4f626a01" ]; then
        add "$corpus/avro_manifest" "$f"
        avro_files+=("$f")
    fi
done < <(find "$fixtures" -path '*/manifest/*' -type f -print0)

while IFS= read -r -d '' f; do
    add "$corpus/json_metadata" "$f"
done < <(find "$fixtures" \( -path '*/snapshot/*' -o -path '*/schema/*' -o -path '*/tag/*' \
    -o -path '*/consumer/*' -o -path '*/changelog/*' \) -type f -print0)
cat > "$corpus/json_metadata/tag-seed" <<'JSON'
{"version":3,"id":2,"schemaId":0,"baseManifestList":"manifest-list-a-0","deltaManifestList":"manifest-list-a-1","changelogManifestList":null,"commitUser":"u","commitIdentifier":9223372036854775807,"commitKind":"APPEND","timeMillis":1700000000000,"logOffsets":{},"totalRecordCount":3,"deltaRecordCount":3,"tagCreateTime":[2024,1,2,3,4,5,600000000],"tagTimeRetained":86400.000000000}
JSON
printf '{"nextSnapshot":7}' > "$corpus/json_metadata/consumer-seed"
printf '{"id":0,"fields":[{"id":0,"name":"d","type":"DECIMAL(38, 4)"},{"id":1,"name":"t","type":"TIMESTAMP(9) WITH LOCAL TIME ZONE"},{"id":2,"name":"s","type":"VARCHAR(10) NOT NULL"}],"partitionKeys":["d","t","s"],"primaryKeys":[],"options":{"partition.legacy-name":"false"}}' \
    > "$corpus/json_metadata/schema-seed"

(cd "$here" && cargo run -q --bin extract_rows -- "$corpus/binary_row" "${avro_files[@]}")

for t in avro_manifest json_metadata binary_row; do
    echo "seed.sh: corpus/$t: $(find "$corpus/$t" -type f | wc -l) files"
done
