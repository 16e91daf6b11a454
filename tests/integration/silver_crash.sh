# Silver crash tests: an apply killed (SIGKILL through MCDC_FAILPOINT) before the merge
# commit, between the merge commit and the position, and between the position and the
# verdict, each then run again: silver equals the source, nothing deleted comes back, the
# position and the verdict catch up, and silver's verdict never passes bronze's.
. "$(dirname "$0")/stream_lib.bash"
SCHECK="node $MCDC_SRC/tests/integration/silver_check.mjs"
sstream() { # sstream APP [ARGS...]: stream, then advance bronze's verdict from the checkpoint
  local app=$1
  stream "$@" || return 1
  M finalization advance --control ops.control --table "bronze.$app" --checkpoint "$T/ck/$app" >/dev/null 2>&1 || true
}
sim_setup

S=silver.c
apply() {
  M silver apply --bronze bronze.c --silver "$S" --capture-instance dbo_orders --keys order_id \
    --control ops.control --facts ops.facts --format json "$@" > "$T/apply.json"
}
field() { $SCHECK json "$T/apply.json" "$1"; }
control_field() { # control_field TABLE FIELD
  M finalization show --control ops.control --table "$1" --format json > "$T/v.json" 2>/dev/null || { echo null; return; }
  $SCHECK json "$T/v.json" "$2"
}

sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL), (2, 'b', 2.00, NULL), (3, 'c', 3.00, NULL)"
sim_capture 2026-10-01T14:00:30
sstream c --bootstrap >/dev/null
apply
silver_vs_source "$S" bootstrap

minute=1
for fp in silver.before_merge_commit silver.after_merge silver.after_position; do
  for kind in rebuild incremental; do
    minute=$((minute + 1))
    t="2026-10-01T14:$(printf %02d $minute)"
    # a key inserted, then deleted: it must not come back on the rerun
    k=$((100 + minute))
    sim_exec "$t:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($k, 'doomed', 9.00, NULL); UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = 1"
    sim_exec "$t:10" "DELETE FROM dbo.orders WHERE order_id = $k; UPDATE dbo.orders SET customer = 'x$minute' WHERE order_id = 2"
    sim_capture "$t:30"
    sstream c >/dev/null
    # rebuild: the first apply of a new silver table (the snapshot plus every change)
    if [ $kind = rebuild ]; then S=silver.r$minute; else S=silver.c; fi
    before=$(control_field "$S" applied_lsn)
    set +e
    MCDC_FAILPOINT="$fp" apply >/dev/null 2>&1
    rc=$?
    set -e
    [ $rc = 137 ] || die "$fp ($kind): exit $rc, want 137"
    after=$(control_field "$S" applied_lsn)
    case $fp in
      silver.after_position) [ "$after" != "$before" ] || die "$fp: the position was not recorded" ;;
      *) [ "$after" = "$before" ] || die "$fp: the position moved before the crash point" ;;
    esac
    apply || die "$fp ($kind): the rerun failed"
    [ $fp = silver.after_position ] || [ $kind = incremental ] || [ "$(field rebuilt)" = true ] || die "$fp: no rebuild on the rerun"
    silver_vs_source "$S" "$fp ($kind)"
    grep -q "\"order_id\":$k," "$T/silver.jsonl" && die "$fp: key $k came back"
    b=$(control_field bronze.c finalized_until); s=$(control_field "$S" finalized_until)
    [ "$s" != null ] || die "$fp: no silver verdict after the rerun"
    [[ ! "$s" > "$b" ]] || die "$fp: silver's verdict $s is past bronze's $b"
    # once more: nothing to do
    apply
    [ "$(field changed_keys)" = 0 ] || die "$fp: the second rerun found changes"
  done
done
echo ok
