# mssql-cdc run writes each table's state record (run --status) on its main thread: the
# workers that run the rounds pay no fsync for it (counted with strace: every fsync of the
# state directory's files is the main thread's, while the checkpoints' are the workers').
# The records say what the tables did, and --status reads them. A round shorter than a
# second writes its table's record once (its outcome), not twice (running, then stopped).
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
command -v strace >/dev/null || die "strace is needed (scripts/install-deps installs it)"
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL'
sim_tables "$schema" "1, 'a', 1.00, NULL" t1 t2 t3 t4
cat > run.yaml <<YAML
warehouse: lake
state_dir: st
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
tables:
  - source: shop
    include: ["dbo_*"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck/{ci}"
YAML
strace -f -qq -y -e trace=execve,fsync,rename,renameat,renameat2 -o trace.txt "$MCDC_BIN" run --config run.yaml --workers 2 >run.out 2>&1 ||
  die "run: $(tail -5 run.out)"
grep -q "^run: 4 tables, 0 stopped in error" run.out || die "run: $(cat run.out)"
main=$(awk '/execve\(/ {print $1; exit}' trace.txt)
[ -n "$main" ] || die "no execve in the trace: $(head -3 trace.txt)"
st=$(grep -c "fsync([0-9]*</[^>]*/st[/>]" trace.txt || true)
[ "$st" -ge 4 ] || die "$st fsyncs of state records"
off=$(grep "fsync([0-9]*</[^>]*/st[/>]" trace.txt | awk -v m="$main" '$1 != m' | head -3)
[ -z "$off" ] || die "state records fsynced off the main thread: $off"
ck=$(grep "fsync([0-9]*</[^>]*/ck/" trace.txt | awk -v m="$main" '$1 != m' | wc -l)
[ "$ck" -ge 8 ] || die "the checkpoints' fsyncs are not the workers' ($ck)"
# each record written once: one rename into st/ a table (a round slowed past a second by
# the machine writes "running" too, so at most 6 of the 8 that running-then-stopped made)
recs=$(grep -cE 'rename(at2?)?\(.*"[^"]*st/bronze\.t[0-9]\.json"' trace.txt || true)
[ "$recs" -ge 4 ] && [ "$recs" -le 6 ] || die "$recs state records written for 4 tables' rounds (want 4): $(grep -E 'rename' trace.txt | grep 'st/' | head -8)"
M run --config run.yaml --status > status.out
for t in t1 t2 t3 t4; do
  grep -q "^bronze.$t: stopped" status.out || die "--status of $t: $(cat status.out)"
done
echo PASS
