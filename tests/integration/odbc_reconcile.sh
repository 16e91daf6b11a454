# Reconcile over the SQL Server source: `reconcile --source odbc:` (the key_buckets grouped
# query through unixODBC + FreeTDS against `mssql-cdc sim serve`) gives the result `reconcile --source sim:` gives (computed in C by
# core/keyhash.c) on the same silver: a clean table exits 0 through both, and one planted
# defect (a row deleted from the source without capture) is named the same through both,
# exit 1. Keys: a single int (buckets by ordinal, several buckets) and a date (ordinal); a
# composite, string (nvarchar, varchar), uniqueidentifier and mixed-type key (buckets by key
# hash) gives the same buckets, matches and the same named key through both.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

build() { # build silver from the table through sim:
  M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o --checkpoint "$T/ck" \
    --facts ops.facts --control ops.control --bootstrap >/dev/null 2>"$T/err" || die "stream: $(cat "$T/err")"
  M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys "$1" --control ops.control \
    --facts ops.facts >/dev/null 2>"$T/err" || die "silver apply: $(cat "$T/err")"
}
# rec KIND [ARGS...]: reconcile through KIND, json with the run's own fields left out
rec() {
  local spec="sim:$DB"
  [ "$1" = odbc ] && spec=$SRC
  shift
  set +e
  M reconcile --source "$spec" --capture-instance dbo_orders --silver silver.o --bronze bronze.o \
    --control ops.control --sample 1.0 --seed 7 --format json "$@" >"$T/rec.json" 2>"$T/err"
  echo "rc=$?"
  set -e
  sed -e 's/"run_id":"[^"]*",//' -e 's/"seconds":[0-9.e+-]*,//' "$T/rec.json"
}
# same_rec WANT_RC WANT_PATTERN [ARGS...]: sim: and odbc: agree, with the exit code and text wanted
same_rec() {
  local want=$1 pat=$2 a b
  shift 2
  a=$(rec sim "$@") || die "reconcile sim"
  b=$(rec odbc "$@") || die "reconcile odbc"
  [ "$a" = "$b" ] || die "reconcile differs between sim: and odbc::
sim:  $a
odbc: $b
$(cat "$T/err")"
  grep -q "^rc=$want\$" <<<"$b" || die "reconcile exit, want $want: $b $(cat "$T/err")"
  grep -qF -- "$pat" <<<"$b" || die "reconcile output lacks $pat: $b"
}
fresh() { serve_stop; rm -rf "$T/lake" "$T/ck" "$DB"; }

# ---- a single int key: buckets by ordinal, negative keys, several buckets -------------------
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null
vals=$(for i in $(seq -20 40); do printf "(%d, N'c%d')," $((i * 7)) "$i"; done)
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T14:00:30
build order_id
serve_start
same_rec 0 '"buckets_by":"ordinal","source_rows":61,"silver_rows":61' --bucket-rows 10
same_rec 0 '"mismatched":0' --bucket-rows 1000000
# the planted defect: a row deleted from the source that capture has not harvested
sim_exec 2026-10-01T14:01:00 "DELETE FROM dbo.orders WHERE order_id = -63"
same_rec 1 '{"key":{"order_id":-63},"status":"EXTRA"}' --bucket-rows 10

# ---- a date key: buckets by days since 1970 -----------------------------------------------
fresh
M sim init "$DB" --table dbo.orders --keys day --at 2026-10-01T13:59:00 \
  --schema 'day DATE NOT NULL, n INT NULL' >/dev/null
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ('1969-12-30', 1), ('1970-01-01', 2), ('2026-09-01', 3), ('2026-09-02', 4), ('2999-12-31', 5)"
sim_capture 2026-10-01T14:00:30
build day
serve_start
same_rec 0 '"buckets_by":"ordinal","source_rows":5' --bucket-rows 2

# ---- keys bucketed by key hash: the key text in T-SQL (HASHBYTES over the nvarchar's UTF-16LE,
# DATALENGTH / 2, SUBSTRING, CONVERT styles) hashes as core/keyhash.c does in C -------------
# hash_case KEYS SCHEMA VALUES KEY_OF_A_ROW_TO_DELETE
hash_case() {
  fresh
  M sim init "$DB" --table dbo.orders --keys "$1" --at 2026-10-01T13:59:00 --schema "$2" >/dev/null
  sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES $3"
  sim_capture 2026-10-01T14:00:30
  build "$1"
  serve_start
  same_rec 0 '"buckets_by":"hash"' --bucket-rows 4
  same_rec 0 '"mismatched":0' --bucket-rows 1000000 --report ops.rec
  # a row deleted from the source that capture has not harvested: EXTRA in silver, named alike
  sim_exec 2026-10-01T14:01:00 "DELETE FROM dbo.orders WHERE $4"
  same_rec 1 '"status":"EXTRA"' --bucket-rows 4
}
# a composite key of a string and an int (characters outside ASCII, one outside the BMP)
vals=$(for i in $(seq 1 30); do printf "(N'r\xc3\xa9%d', %d, %d)," $((i % 4)) "$i" "$i"; done)
hash_case region,id 'region NVARCHAR(10) NOT NULL, id INT NOT NULL, n INT NULL' \
  "${vals}(N'$(printf '\xf0\x9f\x98\x80')', 99, 0), (N'', 100, NULL)" "region = N'r$(printf '\xc3\xa9')2' AND id = 6"
grep -qF '{"key":{"region":"ré2","id":6},"status":"EXTRA"}' "$T/rec.json" || die "composite: $(cat "$T/rec.json")"
# a varchar key: hashed in its code page's characters (CP1252 holds '€' and 'é'), padded char
vals=$(for i in $(seq 1 25); do printf "('k\xe2\x82\xac%02d', 'c%d')," "$i" "$i"; done)
hash_case code 'code VARCHAR(12) NOT NULL, tag CHAR(4) NULL' "${vals%,}" "code = 'k$(printf '\xe2\x82\xac')07'"
grep -qF '"code":"k€07"' "$T/rec.json" || die "varchar key: $(cat "$T/rec.json")"
# a uniqueidentifier key
vals=$(for i in $(seq 10 40); do printf "('%08x-1111-2222-3333-4444%08x', %d)," $((i * 7919)) "$i" "$i"; done)
hash_case id 'id UNIQUEIDENTIFIER NOT NULL, n INT NULL' "${vals%,}" "n = 17"
grep -qF '"id":"00020DDF-1111-2222-3333-444400000011"' "$T/rec.json" || die "uniqueidentifier key: $(cat "$T/rec.json")"
# every other key text: date, decimal, money, bit, binary, datetime2 and datetimeoffset together
vals=$(for i in $(seq 1 20); do printf "('2026-01-%02d', %d.5, %d.1234, %d, 0x0A%02X, '2026-02-03 04:05:06.%07d', '1969-12-31 23:59:59.5 +0%d:00', %d)," \
  "$i" "$i" "$i" $((i % 2)) "$i" $((i * 123457)) $((i % 9)) "$i"; done)
hash_case d,amt,m,b,bin,ts,tso \
  'd DATE NOT NULL, amt DECIMAL(9,2) NOT NULL, m MONEY NOT NULL, b BIT NOT NULL, bin VARBINARY(4) NOT NULL, ts DATETIME2 NOT NULL, tso DATETIMEOFFSET NOT NULL, n INT NULL' \
  "${vals%,}" "n = 5"
grep -qF '"d":"2026-01-05"' "$T/rec.json" || die "mixed key: $(cat "$T/rec.json")"
echo ok
