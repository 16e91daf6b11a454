#!/usr/bin/env bash
# sim serve's faults as a client sees them (python-tds): error:1205@N and error:1222@N answer
# the N-th request with SQL Server's error, once, or on every N-th with --fault-repeat;
# drop-after-rows:N breaks the connection after N rows; stall:DURATION holds one response;
# --latency delays every answer by one round trip: each request, and PRELOGIN and LOGIN7 at
# connect (two round trips), but not each packet of a long result. (FreeTDS's ODBC view of
# the same: test_source_tds_odbc.)
source "$(dirname "$0")/sim_serve_lib.bash"
/usr/bin/python3 -c 'import pytds' 2>/dev/null || die "python3-tds is missing: run scripts/install-deps"
serve_db
client() { # client N: run N queries on one connection; print one line per query
  /usr/bin/python3 - "$PORT" "$PW" "$1" <<'PY'
import sys, time, pytds
port, pw, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
conn = pytds.connect(server='127.0.0.1', port=port, user='u', password=pw, database='shop', autocommit=True, timeout=20)
cur = conn.cursor()
for i in range(n):
    t = time.monotonic()
    try:
        cur.execute('SELECT order_id FROM dbo.orders ORDER BY order_id')
        rows = cur.fetchall()
        print('ok %d %.3f' % (len(rows), time.monotonic() - t))
    except pytds.ProgrammingError as e:
        print('error %d' % e.msg_no if hasattr(e, 'msg_no') else 'error ?')
    except pytds.OperationalError as e:
        print('error %s' % getattr(e, 'msg_no', '?'))
    except (pytds.ClosedConnectionError, ConnectionError, OSError, pytds.Error) as e:
        print('broken %s' % type(e).__name__)
        break
PY
}
serve_start --fault error:1205@2 --fault error:1222@3
out=$(client 4 | cut -d' ' -f1,2)
[ "$out" = $'ok 3\nerror 1205\nerror 1222\nok 3' ] || die "errors once: got
$out"
out=$(client 2 | cut -d' ' -f1,2)
[ "$out" = $'ok 3\nok 3' ] || die "the faults fired twice: $out"
serve_stop

serve_start --fault error:1205@2 --fault-repeat
out=$(client 4 | cut -d' ' -f1,2)
[ "$out" = $'ok 3\nerror 1205\nok 3\nerror 1205' ] || die "error:1205@2 with --fault-repeat: got
$out"
serve_stop

serve_start --fault drop-after-rows:2
out=$(client 2 | cut -d' ' -f1)
[ "$out" = "broken" ] || die "drop-after-rows:2: got $out"
out=$(client 1 | cut -d' ' -f1,2)
[ "$out" = "ok 3" ] || die "drop-after-rows fired twice: $out"
serve_stop

serve_start --fault stall:1s --latency 200ms
out=$(client 3)
first=$(sed -n 1p <<<"$out" | cut -d' ' -f3) second=$(sed -n 2p <<<"$out" | cut -d' ' -f3)
awk -v a="$first" -v b="$second" 'BEGIN { exit !(a >= 1.15 && b >= 0.19 && b < 1.0) }' \
  || die "stall:1s with --latency 200ms: the responses took $first s then $second s"
serve_stop

# a round trip per answer, not per packet: connecting is PRELOGIN and LOGIN7, two round trips;
# 2,000 rows in one result (many packets) take one round trip more, not one per packet
for k in 1 2 3 4; do
  values=$(seq $((k * 500 - 399)) $((k * 500 + 100)) | sed "s/.*/(&, N'customer &, thirty-odd characters', 1.00, NULL)/" | paste -sd,)
  M sim exec "$DB" --at "2026-10-01T14:00:0$((k + 1))" "INSERT INTO dbo.orders VALUES $values" >/dev/null
done
serve_start --latency 300ms
out=$(/usr/bin/python3 - "$PORT" "$PW" <<'PY'
import sys, time, pytds
port, pw = int(sys.argv[1]), sys.argv[2]
t = time.monotonic()
conn = pytds.connect(server='127.0.0.1', port=port, user='u', password=pw, database='shop', autocommit=True, timeout=20)
t1 = time.monotonic()
cur = conn.cursor()
cur.execute("SELECT order_id, customer FROM dbo.orders")
rows = cur.fetchall()
print('%.3f %d %.3f' % (t1 - t, len(rows), time.monotonic() - t1))
PY
)
read -r login n query <<<"$out"
[ "$n" -ge 2000 ] || die "--latency 300ms: the query read $n rows, want at least 2000"
awk -v a="$login" -v b="$query" 'BEGIN { exit !(a >= 0.58 && a < 1.5 && b >= 0.29 && b < 0.9) }' \
  || die "--latency 300ms: connecting took $login s (want two round trips, about 0.6 s), a $n-row result $query s (want one, about 0.3 s)"
serve_stop
echo ok
