# The per-batch clock check of the SQL Server source: each batch's max_lsn comes with the
# server's clock and UTC offset (SYSDATETIMEOFFSET), compared with the offset the server's
# zone gives at that instant in core's tzdata. `sim serve --utc-offset +01:00` reports an
# offset its zone (UTC) does not have, as a server whose Windows rules differ from tzdata:
# every batch then carries the warning in its facts row (detail {"warnings": [...]}) and in
# the log, and its commit times are converted with the server's offset (an hour earlier
# than through sim:, which has no such server). Without the difference there is no warning
# and no detail. A bad --utc-offset exits 2.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-31T13:59:00 \
  --schema 'order_id INT NOT NULL, amount DECIMAL(12,2) NULL' >/dev/null
M sim capture "$DB" --at 2026-10-31T13:59:30 >/dev/null
sim_exec 2026-10-31T14:00:00 "INSERT INTO dbo.orders VALUES (1, 1.00)"
sim_exec 2026-10-31T14:00:01 "INSERT INTO dbo.orders VALUES (2, 2.00)"
sim_capture 2026-10-31T14:00:05

rc=0; M sim serve "$DB" --listen 127.0.0.1:0 --utc-offset 1:00 >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] || die "--utc-offset 1:00: exit $rc, not 2"
grep -q "bad --utc-offset '1:00': expected +HH:MM or -HH:MM" "$T/err" || die "message: $(cat "$T/err")"

stream_into() { # stream_into SOURCE WAREHOUSE
  M --warehouse "$2" stream --source "$1" --capture-instance dbo_orders --target bronze.b --app-id b \
    --checkpoint "$2.ck" --facts ops.facts --max-commits-per-batch 1 >"$T/out" 2>"$T/err" ||
    die "stream through ${1%%:*}: $(cat "$T/err")"
}
commit_times() { M --warehouse "$1" table cat bronze.b --format jsonl | node -e '
    for (const l of require("fs").readFileSync(0, "utf8").split("\n")) if (l) console.log(JSON.parse(l)._commit_ts);
  ' | sort | tr '\n' ' '; }
details() { M --warehouse "$1" table cat ops.facts --format jsonl | node -e '
    for (const l of require("fs").readFileSync(0, "utf8").split("\n")) if (l) { const r = JSON.parse(l); if (r.event === null) console.log(r.batch_id, r.detail); }
  ' | sort; }

# a server whose offset is its zone's: no warning
serve_start
stream_into "$SRC" "$T/lake_plain"
! grep -q "UTC offset" "$T/err" || die "a warning without a difference: $(cat "$T/err")"
[ "$(details "$T/lake_plain" | cut -d' ' -f2- | sort -u)" = null ] || die "facts detail without a difference: $(details "$T/lake_plain")"
[ "$(commit_times "$T/lake_plain")" = "2026-10-31T14:00:00.000000 2026-10-31T14:00:01.000000 " ] ||
  die "commit times: $(commit_times "$T/lake_plain")"
serve_stop

# the server says +01:00, its zone (UTC, Etc/UTC in tzdata) says +00:00
serve_start --utc-offset +01:00
stream_into "$SRC" "$T/lake_skew"
grep -q "WARN  source: the server's UTC offset is +60 min at .*Z but zone Etc/UTC gives +0 min (Windows and IANA rules differ): commit times are converted with the server's offset" "$T/err" ||
  die "no warning in the log: $(cat "$T/err")"
details "$T/lake_skew" > "$T/details"
[ "$(wc -l < "$T/details")" = 3 ] || die "facts batch rows: $(cat "$T/details")"
while read -r batch detail; do
  node -e '
    const d = JSON.parse(process.argv[1]);
    /* one warning per clock reading of the batch that differs (two when its readings
     * straddle a second: the text carries the instant) */
    if (!Array.isArray(d.warnings) || d.warnings.length < 1 || d.warnings.length > 2 ||
        !d.warnings.every((w) => /^the server.s UTC offset is \+60 min at .*Z but zone Etc\/UTC gives \+0 min/.test(w)))
      { console.error("batch " + process.argv[2] + ": detail " + process.argv[1]); process.exit(1); }
  ' "$detail" "$batch" || die "batch $batch: the facts detail does not carry the warning"
done < "$T/details"
[ "$(commit_times "$T/lake_skew")" = "2026-10-31T13:00:00.000000 2026-10-31T13:00:01.000000 " ] ||
  die "commit times were not converted with the server's offset: $(commit_times "$T/lake_skew")"
serve_stop

# the simulator itself has one clock: the zone's
stream_into "sim:$DB" "$T/lake_sim"
[ "$(commit_times "$T/lake_sim")" = "2026-10-31T14:00:00.000000 2026-10-31T14:00:01.000000 " ] ||
  die "sim: commit times: $(commit_times "$T/lake_sim")"
[ "$(details "$T/lake_sim" | cut -d' ' -f2- | sort -u)" = null ] || die "sim: facts detail: $(details "$T/lake_sim")"
echo "ok: a server offset that differs from its zone's warns in the log and in each batch's facts, and converts with the server's offset"
