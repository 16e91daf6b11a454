#!/usr/bin/env bash
# tests/integration/heartbeat_lag.sh: how far a quiet table's verdict trails the source's
# clock, with and without the heartbeat (sql/heartbeat.sql; on the simulator `sim
# heartbeat`, a captured update every 10 s). Twenty minutes of simulated time, sampled
# every 10 s: the capture job scans (and writes an idle entry after 5 quiet minutes), the
# stream runs (available-now) and advances a minute-granularity verdict; the lag of the
# end offset (clock - the commit time of the last batch's end) and of the verdict (clock -
# finalized_until) is recorded just before the next run, when it is largest. Without the heartbeat the end offset trails by up to 5 minutes, with it by at
# most 10 s. Also: the simulator's heartbeat table is the script's, and setting it up
# twice changes nothing. Prints the table that docs/guides/finalization.md shows.
set -euo pipefail
BIN=${MCDC_BIN:?}
SRC=${MCDC_SRC:?}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
epoch() { date -u -d "$1" +%s; }

# the script's table is the simulator's: same columns, types, key and instance name
grep -q "CREATE TABLE dbo.cdc_heartbeat (id TINYINT NOT NULL CONSTRAINT PK_cdc_heartbeat PRIMARY KEY, beat_at DATETIME2(3) NOT NULL)" \
  "$SRC/sql/heartbeat.sql" || die "sql/heartbeat.sql does not create the table the simulator uses"
grep -q "@capture_instance = N'dbo_cdc_heartbeat'" "$SRC/sql/heartbeat.sql" || die "capture instance name"
grep -q "@freq_subday_type = 2, @freq_subday_interval = 10" "$SRC/sql/heartbeat.sql" || die "every 10 s"

# sim workload --heartbeat: beats every 10 s of commit time among the transactions, the
# heartbeat set up first; its instance's change rows are the beats' (2 each, +1 insert)
"$BIN" sim init "$T/w.db" --table dbo.orders --keys id --schema 'id INT NOT NULL, v INT NULL' \
  --at 2026-10-01T13:59:00 > /dev/null
out=$("$BIN" sim workload "$T/w.db" --table dbo.orders --transactions 10 --interval 7s \
  --start 2026-10-01T14:00:00 --heartbeat 10s)
grep -qx "7 heartbeat beats (dbo.cdc_heartbeat)" <<<"$out" || die "workload beats: $out"
ct=$("$BIN" sim query "$T/w.db" "SELECT count(*) AS n FROM cdc.dbo_cdc_heartbeat_CT" --format jsonl)
[ "$ct" = '{"n":15}' ] || die "heartbeat change rows after the workload: $ct"
"$BIN" sim workload "$T/w.db" --table dbo.orders --transactions 1 --heartbeat 0s > /dev/null 2>&1 && die "--heartbeat 0s accepted"

# measure SCENARIO (none|heartbeat): prints "max_end p50_end max_verdict"
measure() {
  local s=$1 db=$T/$1.db lake=$T/$1-lake cp=$T/$1-cp
  "$BIN" sim init "$db" --table dbo.orders --keys id --schema 'id INT NOT NULL, v INT NULL' \
    --at 2026-10-01T13:59:00 > /dev/null
  "$BIN" sim exec "$db" "INSERT INTO dbo.orders (id, v) VALUES (1, 1)" --at 2026-10-01T14:00:00 > /dev/null
  "$BIN" sim capture "$db" --at 2026-10-01T14:00:00 > /dev/null
  if [ "$s" = heartbeat ]; then
    out=$("$BIN" sim heartbeat "$db" --start 2026-10-01T14:00:00 --beats 1)
    grep -q "created dbo.cdc_heartbeat" <<<"$out" || die "heartbeat not set up: $out"
    again=$("$BIN" sim heartbeat "$db" --start 2026-10-01T14:00:01 --beats 1)
    grep -q "created" <<<"$again" && die "a second set-up created something: $again"
    n=$("$BIN" sim status "$db" | grep -c "instance     dbo_cdc_heartbeat") || true
    [ "$n" = 1 ] || die "heartbeat instances: $n"
  fi
  local start; start=$(epoch 2026-10-01T14:00:10)
  : > "$T/$s.lags"
  for i in $(seq 0 119); do
    local now=$((start + i * 10)) at
    at=$(date -u -d "@$now" +%Y-%m-%dT%H:%M:%S)
    if [ "$s" = heartbeat ]; then
      "$BIN" sim heartbeat "$db" --start "$at" --beats 1 > /dev/null
    else
      "$BIN" sim capture "$db" --at "$at" --max-scans 10 > /dev/null
    fi
    local out
    out=$("$BIN" --warehouse "$lake" stream --source "sim:$db" --capture-instance dbo_orders --target bronze.orders \
      --app-id orders --checkpoint "$cp" --trigger available-now 2>&1) || die "stream at $at: $out"
    "$BIN" --warehouse "$lake" finalization advance --control ops.fin --table bronze.orders \
      --checkpoint "$cp" --granularity minute > /dev/null
    local row end fin
    row=$("$BIN" --warehouse "$lake" finalization show --control ops.fin --table bronze.orders --format jsonl)
    # the end offset of the stream's last batch ("complete up to LSN (TIME)")
    end=$(sed -nE 's/.*complete up to 0x[0-9A-F]+ \(([^.)]*).*/\1/p' <<<"$out" | tail -1)
    [ -n "$end" ] || die "no end offset at $at: $out"
    fin=$(sed -E 's/.*"finalized_until":"([^".]*).*/\1/' <<<"$row")
    # the verdict stands until the next run, 10 s later: that is when it trails most
    echo "$((now + 10 - $(epoch "$end"))) $((now + 10 - $(epoch "$fin")))" >> "$T/$s.lags"
  done
  local max_end p50_end max_fin
  max_end=$(cut -d' ' -f1 "$T/$s.lags" | sort -n | tail -1)
  p50_end=$(cut -d' ' -f1 "$T/$s.lags" | sort -n | sed -n 60p)
  max_fin=$(cut -d' ' -f2 "$T/$s.lags" | sort -n | tail -1)
  echo "$max_end $p50_end $max_fin"
}

read -r none_max none_p50 none_fin < <(measure none)
read -r hb_max hb_p50 hb_fin < <(measure heartbeat)
printf '%-22s %-22s %-22s %s\n' "scenario" "end offset lag, max" "end offset lag, p50" "verdict lag, max (minute)"
printf '%-22s %-22s %-22s %s\n' "quiet, no heartbeat" "${none_max} s" "${none_p50} s" "${none_fin} s"
printf '%-22s %-22s %-22s %s\n' "heartbeat every 10 s" "${hb_max} s" "${hb_p50} s" "${hb_fin} s"
[ "$none_max" -ge 290 ] || die "without the heartbeat the end offset should trail by about 5 minutes, got $none_max s"
[ "$hb_max" -le 10 ] || die "with the heartbeat the end offset should trail by at most 10 s, got $hb_max s"
[ "$hb_fin" -le 70 ] || die "with the heartbeat a minute's verdict should trail by at most 70 s, got $hb_fin s"
echo "ok"
