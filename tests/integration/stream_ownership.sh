# A table knows its owner, and a refused stream writes nothing (issue 16, items 1, 2, 10):
# bronze commits record their batch's range; streams refuse targets of another kind,
# source table or owner; `stream --adopt` continues another stream's bronze with every
# change exactly once. Each refusal exits 2 and leaves every table and checkpoint as it
# was (the file tree is compared before and after).
. "$(dirname "$0")/stream_lib.bash"
sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL)"
sim_capture 2026-10-01T14:00:01

expect() { # expect CODE CMD...: run, check the exit code, keep stderr in $err
  local want=$1; shift
  set +e
  err=$("$@" 2>&1 >/dev/null)
  local rc=$?
  set -e
  [ $rc = "$want" ] || die "exit $rc, want $want: $* : $err"
}
# tree: every file under the temp dir but the simulator's database, with size and hash
tree() { (cd "$T" && find . -path ./db.sqlite -prune -o -type f -print | LC_ALL=C sort |
          while read -r f; do printf '%s %s\n' "$f" "$(sha1sum < "$f" | cut -c1-12)"; done); }
unchanged() { # unchanged LABEL: the tree is as saved in $T/before
  tree > "$T/after.tree"
  diff "$T/before.tree" "$T/after.tree" >&2 || die "$1: the refused command changed files"
}

# ---- bronze commit N's userMetadata holds its range: start_lsn (after), end_lsn (upto)
stream one >/dev/null
M table history bronze.one --format jsonl | grep '"STREAMING UPDATE"' > "$T/h.jsonl"
node -e '
  const fs = require("fs");
  const h = JSON.parse(fs.readFileSync(process.argv[1], "utf8").split("\n")[0]);
  const um = JSON.parse(h.userMetadata);
  const o = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  if (um.start_lsn !== o.start.lsn || um.end_lsn !== o.end.lsn)
    throw new Error(`range ${um.start_lsn}..${um.end_lsn}, offsets/0 ${o.start.lsn}..${o.end.lsn}`);
' "$T/h.jsonl" "$T/ck/one/offsets/0" || die "bronze commit 0 does not record its range"

echo "stream_ownership: ok"
