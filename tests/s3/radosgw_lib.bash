# tests/s3/radosgw_lib.bash: shared set-up of the S3 tests (sourced, not a test itself).
# s3_gateway_up starts a scratch radosgw (tests/s3/start-radosgw) in $G under the temp dir
# $W and loads its endpoint and keys; the gateway is stopped and $W removed when the test
# exits, and also when the test is killed (SIGKILL, a ctest timeout): a watchdog in its own
# session waits for the test's pid to go and stops the daemons, which start-radosgw
# detached. Helpers sign with curl's --aws-sigv4 and never print the keys.
set -euo pipefail
S3_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
W=$(mktemp -d "$tmp/mcdc-s3-XXXXXX")
G=$W/gw
cleanup() { "$S3_HERE/stop-radosgw" "$G" >/dev/null 2>&1 || true; rm -rf "$W"; }
trap cleanup EXIT
# shellcheck disable=SC2016
setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 2; done
  "$2/stop-radosgw" "$3/gw" >/dev/null 2>&1; rm -rf "$3"' s3-watchdog "$$" "$S3_HERE" "$W" \
  </dev/null >/dev/null 2>&1 &
fail() {
  echo "FAIL: $*" >&2
  for f in "$G"/log/client.rgw.log "$G"/log/osd.0.log; do
    [ -f "$f" ] && { echo "--- tail of $f" >&2; tail -n 15 "$f" >&2; }
  done
  exit 1
}

# s3_gateway_up: start the gateway, load S3_ENDPOINT, S3_BUCKET, S3_REGION and the keys,
# set B to the bucket's URL
s3_gateway_up() {
  "$S3_HERE/start-radosgw" "$G" >"$W/env1" || fail "start-radosgw failed"
  # shellcheck disable=SC1091
  . "$W/env1"
  B=$S3_ENDPOINT/$S3_BUCKET
  echo "radosgw started in ${S3_START_SECONDS}s at $S3_ENDPOINT"
}

EMPTY=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
# curl 7.88 signs with --aws-sigv4 but neither sends x-amz-content-sha256 (radosgw
# answers 403 SignatureDoesNotMatch without it) nor encodes the query for the canonical
# request: callers pass the hash and encode query values themselves (%2F for /, urlenc).
s3() { curl -s --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" "$@"; }
urlenc() { python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
# req METHOD KEY_AND_QUERY [curl args...]: prints the HTTP status; body in $W/out, headers in $W/hdr
req() {
  local m=$1 k=$2; shift 2
  s3 -X "$m" -H "x-amz-content-sha256: $EMPTY" -o "$W/out" -D "$W/hdr" -w '%{http_code}' "$@" "$B/$k"
}
# put FILE KEY [curl args...]: PUT with the body's sha256; prints the status
put() {
  local f=$1 k=$2; shift 2
  s3 -H "x-amz-content-sha256: $(sha256sum <"$f" | cut -d' ' -f1)" -T "$f" \
    -o "$W/out" -D "$W/hdr" -w '%{http_code}' "$@" "$B/$k"
}
expect() { # expect WANT GOT WHAT
  [ "$2" = "$1" ] || fail "$3: HTTP $2, expected $1 ($(head -c 300 "$W/out" 2>/dev/null))"
}
# s3_stream_test: for a test that sourced stream_lib.bash: the gateway up, its keys, region
# and endpoint exported for mssql-cdc, HOME in $T; the gateway stopped and $T removed at exit
s3_stream_test() {
  trap 'cleanup; rm -rf "$T"' EXIT
  s3_gateway_up
  export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION=$S3_REGION AWS_ENDPOINT_URL=$S3_ENDPOINT
  export HOME=$T/home
}
# fetch PREFIX DIR: every object under PREFIX/ of the bucket into DIR (emptied first), by
# ListObjectsV2 pages and GETs
fetch() {
  local token="" q keys
  rm -rf "$2"
  while :; do
    q="list-type=2&prefix=$(urlenc "$1/")"
    [ -n "$token" ] && q="continuation-token=$(urlenc "$token")&$q"
    expect 200 "$(req GET "?$q")" "list $1"
    keys=$(grep -oE '<Key>[^<]*</Key>' "$W/out" | sed -E 's:</?Key>::g')
    for k in $keys; do
      mkdir -p "$2/$(dirname "${k#"$1"/}")"
      expect 200 "$(req GET "$k")" "GET $k"
      cp "$W/out" "$2/${k#"$1"/}"
    done
    grep -q '<IsTruncated>true</IsTruncated>' "$W/out" || break
    token=$(grep -oE '<NextContinuationToken>[^<]*' "$W/out" | sed 's/.*>//')
  done
}
# header NAME: the value of header NAME in the last req/put answer
header() { tr -d '\r' <"$W/hdr" | awk -v h="$1" 'BEGIN{IGNORECASE=1} $0 ~ "^"h":" {sub("^[^:]*: *",""); print}'; }
