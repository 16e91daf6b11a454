#!/usr/bin/env bash
# tests/s3/radosgw_ops.sh: what the real S3 gateway (Debian's radosgw) answers for the
# operations the storage seam's S3 implementation will rely on (docs/decisions/0017), by
# curl's --aws-sigv4 against a scratch gateway started by tests/s3/start-radosgw:
# put / get / head / delete, range reads, create-if-absent (PUT with If-None-Match: *)
# alone and five racing at once (one 200, four 412, the winner's bytes stored), If-Match,
# ordered prefix listing with continuation right after the puts, and a multipart upload.
# Also checks that start-radosgw is idempotent and stop-radosgw stops every daemon.
# Never prints the keys. Label s3 in ctest.
set -euo pipefail
# shellcheck source=tests/s3/radosgw_lib.bash
. "$(dirname "$0")/radosgw_lib.bash"
s3_gateway_up

pids_of() { for n in mon.a osd.0 client.rgw; do cat "$G/run/$n.pid"; done | tr '\n' ' '; }
pids1=$(pids_of)
"$S3_HERE/start-radosgw" "$G" >"$W/env2" || fail "second start-radosgw failed"
cmp -s "$W/env1" "$W/env2" || fail "second start printed other assignments"
[ "$(pids_of)" = "$pids1" ] || fail "second start started new daemons"

# Put, get, head, range, replace, delete.
printf '{"commitInfo":{}}\n' >"$W/c0"
expect 200 "$(put "$W/c0" log/00000.json)" "plain PUT"
etag=$(header ETag)
[ -n "$etag" ] || fail "PUT gave no ETag"
expect 200 "$(req GET log/00000.json)" "GET"
cmp -s "$W/out" "$W/c0" || fail "GET returned other bytes"
expect 200 "$(req HEAD log/00000.json -I)" "HEAD"
[ "$(header Content-Length)" = "$(stat -c %s "$W/c0")" ] || fail "HEAD Content-Length is not the size"
[ "$(header ETag)" = "$etag" ] || fail "HEAD ETag differs from PUT's"
expect 404 "$(req HEAD log/missing.json -I)" "HEAD of a missing key"
expect 404 "$(req GET log/missing.json)" "GET of a missing key"
grep -q '<Code>NoSuchKey</Code>' "$W/out" || fail "GET of a missing key: no NoSuchKey"
expect 206 "$(req GET log/00000.json -H 'Range: bytes=2-11')" "range GET"
[ "$(cat "$W/out")" = "commitInfo" ] || fail "range GET returned '$(cat "$W/out")'"
[ "$(header Content-Range)" = "bytes 2-11/$(stat -c %s "$W/c0")" ] || fail "range GET Content-Range: $(header Content-Range)"
expect 206 "$(req GET log/00000.json -H 'Range: bytes=-4')" "suffix range GET"
[ "$(cat "$W/out")" = "{}}" ] || fail "suffix range GET returned '$(cat "$W/out")'"
expect 416 "$(req GET log/00000.json -H 'Range: bytes=100-200')" "range past the end"
printf 'replaced\n' >"$W/r"
expect 200 "$(put "$W/r" log/replace.txt)" "PUT"
printf 'replaced again\n' >"$W/r2"
expect 200 "$(put "$W/r2" log/replace.txt)" "PUT over an existing key (put-replace)"
expect 200 "$(req GET log/replace.txt)" "GET after replace"
cmp -s "$W/out" "$W/r2" || fail "replace did not replace"
expect 204 "$(req DELETE log/replace.txt)" "DELETE"
expect 404 "$(req GET log/replace.txt)" "GET after DELETE"
expect 204 "$(req DELETE log/replace.txt)" "DELETE of a missing key"

# Create-if-absent: If-None-Match: * on a new key stores it; on an existing one 412 and the
# first bytes stay.
printf '{"add":1}\n' >"$W/c1"
printf '{"add":"other writer"}\n' >"$W/c1b"
expect 200 "$(put "$W/c1" log/00001.json -H 'If-None-Match: *')" "create-if-absent of a new key"
expect 412 "$(put "$W/c1b" log/00001.json -H 'If-None-Match: *')" "create-if-absent of an existing key"
grep -q '<Code>PreconditionFailed</Code>' "$W/out" || fail "412 without PreconditionFailed"
expect 200 "$(req GET log/00001.json)" "GET after the refused create"
cmp -s "$W/out" "$W/c1" || fail "the refused create changed the object"
# If-Match: replace only when the ETag is the one read
etag1=$(s3 -H "x-amz-content-sha256: $EMPTY" -I "$B/log/00001.json" | tr -d '\r' | awk 'tolower($1)=="etag:"{print $2}')
expect 412 "$(put "$W/c1b" log/00001.json -H 'If-Match: "0123456789abcdef0123456789abcdef"')" "If-Match with a stale ETag"
# radosgw 16.2 compares If-Match with the bare ETag: the quoted form that GET and HEAD
# return (and AWS accepts) is refused even when it is current; the unquoted one works.
expect 412 "$(put "$W/c1b" log/00001.json -H "If-Match: $etag1")" "If-Match with the current ETag, quoted"
expect 200 "$(put "$W/c1b" log/00001.json -H "If-Match: ${etag1//\"/}")" "If-Match with the current ETag, unquoted"
# If-Match: * on a missing key is refused (412), so it is no create-if-absent
expect 412 "$(put "$W/c1b" log/never.json -H 'If-Match: *')" "If-Match: * on a missing key"

# Five writers race to create one key: exactly one wins, and its bytes are stored.
racers=()
for i in 1 2 3 4 5; do printf '{"writer":%d}\n' "$i" >"$W/w$i"; done
for i in 1 2 3 4 5; do
  ( s3 -H "x-amz-content-sha256: $(sha256sum <"$W/w$i" | cut -d' ' -f1)" -H 'If-None-Match: *' \
      -T "$W/w$i" -o /dev/null -w '%{http_code}' "$B/log/00002.json" >"$W/race$i" ) &
  racers+=("$!")
done
wait "${racers[@]}"   # not the watchdog
codes=$(cat "$W"/race? | tr -s ' ' | fold -w3 | sort | uniq -c | awk '{print $2"x"$1}' | tr '\n' ' ')
[ "$codes" = "200x1 412x4 " ] || fail "five racing creates answered: $codes (expected one 200, four 412)"
winner=$(grep -l 200 "$W"/race? | sed 's/.*race//')
expect 200 "$(req GET log/00002.json)" "GET the raced key"
cmp -s "$W/out" "$W/w$winner" || fail "the raced key does not hold the winner's bytes"

# Listing: keys in byte order right after their puts, continuation through max-keys=2.
for k in b/3 b/1 b/10 b/2 b/0; do printf '%s' "$k" >"$W/k"; expect 200 "$(put "$W/k" "$k")" "PUT $k"; done
keys() { grep -o '<Key>[^<]*</Key>' "$W/out" | sed 's/<[^>]*>//g' | tr '\n' ' '; }
expect 200 "$(req GET '?list-type=2&prefix=b%2F')" "list"
[ "$(keys)" = "b/0 b/1 b/10 b/2 b/3 " ] || fail "list gave: $(keys)"
all= token=
for _ in 1 2 3 4; do
  q='?list-type=2&max-keys=2&prefix=b%2F'
  [ -n "$token" ] && q="?continuation-token=$(urlenc "$token")&list-type=2&max-keys=2&prefix=b%2F"
  expect 200 "$(req GET "$q")" "list page"
  all="$all$(keys)"
  grep -q '<IsTruncated>true</IsTruncated>' "$W/out" || break
  token=$(grep -o '<NextContinuationToken>[^<]*' "$W/out" | sed 's/.*>//')
done
[ "$all" = "b/0 b/1 b/10 b/2 b/3 " ] || fail "paged list gave: $all"
expect 200 "$(req GET '?list-type=2&prefix=b%2F&start-after=b%2F10')" "list with start-after"
[ "$(keys)" = "b/2 b/3 " ] || fail "start-after list gave: $(keys)"
expect 200 "$(req GET '?delimiter=%2F&list-type=2')" "list with a delimiter"
common=$(grep -o '<CommonPrefixes><Prefix>[^<]*' "$W/out" | sed 's/.*>//' | tr '\n' ' ')
[ "$common" = "b/ log/ " ] || fail "delimiter list gave common prefixes: $common"

# Multipart: two parts (the first at the 5 MiB minimum), completed, read back whole.
head -c $((5 * 1024 * 1024)) /dev/urandom >"$W/p1"
head -c 123457 /dev/urandom >"$W/p2"
cat "$W/p1" "$W/p2" >"$W/whole"
expect 200 "$(req POST 'data/part-0.parquet?uploads=')" "initiate multipart"
upload=$(grep -o '<UploadId>[^<]*' "$W/out" | sed 's/.*>//')
[ -n "$upload" ] || fail "no UploadId"
uq=$(urlenc "$upload")
parts=
for n in 1 2; do
  expect 200 "$(put "$W/p$n" "data/part-0.parquet?partNumber=$n&uploadId=$uq")" "upload part $n"
  parts="$parts<Part><PartNumber>$n</PartNumber><ETag>$(header ETag)</ETag></Part>"
done
expect 404 "$(req GET data/part-0.parquet)" "GET before the multipart upload completes"
printf '<CompleteMultipartUpload>%s</CompleteMultipartUpload>' "$parts" >"$W/complete"
expect 200 "$(s3 -X POST -H "x-amz-content-sha256: $(sha256sum <"$W/complete" | cut -d' ' -f1)" \
  --data-binary "@$W/complete" -o "$W/out" -w '%{http_code}' "$B/data/part-0.parquet?uploadId=$uq")" "complete multipart"
expect 200 "$(req GET data/part-0.parquet)" "GET the multipart object"
cmp -s "$W/out" "$W/whole" || fail "the multipart object differs from its parts"
expect 206 "$(req GET data/part-0.parquet -H "Range: bytes=$((5 * 1024 * 1024 - 2))-$((5 * 1024 * 1024 + 1))")" "range across the part boundary"
[ "$(od -An -tx1 "$W/out")" = "$(tail -c +$((5 * 1024 * 1024 - 1)) "$W/whole" | head -c 4 | od -An -tx1)" ] ||
  fail "range across the part boundary returned other bytes"
# radosgw 16.2 ignores If-None-Match: * on CompleteMultipartUpload and on a copy: both
# replace an existing key. Only a single PUT creates if absent.
expect 200 "$(req POST 'data/part-0.parquet?uploads=')" "initiate a second multipart on the key"
uq=$(urlenc "$(grep -o '<UploadId>[^<]*' "$W/out" | sed 's/.*>//')")
expect 200 "$(put "$W/p2" "data/part-0.parquet?partNumber=1&uploadId=$uq")" "upload the second multipart's part"
printf '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>' "$(header ETag)" >"$W/complete"
expect 200 "$(s3 -X POST -H 'If-None-Match: *' -H "x-amz-content-sha256: $(sha256sum <"$W/complete" | cut -d' ' -f1)" \
  --data-binary "@$W/complete" -o "$W/out" -w '%{http_code}' "$B/data/part-0.parquet?uploadId=$uq")" "complete with If-None-Match: * over an existing key"
expect 200 "$(req GET data/part-0.parquet)" "GET after the conditional complete"
cmp -s "$W/out" "$W/p2" || fail "a conditional complete over an existing key no longer replaces it (radosgw honours the header now: update docs/decisions/0017)"
expect 200 "$(req PUT log/00002.json -H 'If-None-Match: *' -H "x-amz-copy-source: /$S3_BUCKET/log/00000.json")" "copy with If-None-Match: * onto an existing key"
expect 200 "$(req GET log/00002.json)" "GET after the conditional copy"
cmp -s "$W/out" "$W/c0" || fail "a conditional copy onto an existing key no longer replaces it (update docs/decisions/0017)"
# A part under 5 MiB that is not the last is refused at completion (EntityTooSmall).
expect 200 "$(req POST 'data/small.parquet?uploads=')" "initiate multipart (small parts)"
uq=$(urlenc "$(grep -o '<UploadId>[^<]*' "$W/out" | sed 's/.*>//')")
parts=
for n in 1 2; do
  expect 200 "$(put "$W/p2" "data/small.parquet?partNumber=$n&uploadId=$uq")" "upload small part $n"
  parts="$parts<Part><PartNumber>$n</PartNumber><ETag>$(header ETag)</ETag></Part>"
done
printf '<CompleteMultipartUpload>%s</CompleteMultipartUpload>' "$parts" >"$W/complete"
expect 400 "$(s3 -X POST -H "x-amz-content-sha256: $(sha256sum <"$W/complete" | cut -d' ' -f1)" \
  --data-binary "@$W/complete" -o "$W/out" -w '%{http_code}' "$B/data/small.parquet?uploadId=$uq")" "complete with a small first part"
grep -q EntityTooSmall "$W/out" || fail "small part refused without EntityTooSmall: $(head -c 200 "$W/out")"
expect 204 "$(req DELETE "data/small.parquet?uploadId=$uq")" "abort multipart"

# Peak resident memory of each daemon over the run (for docs/decisions/0017).
for n in mon.a osd.0 client.rgw; do
  printf '%s peak RSS %s MiB\n' "$n" "$(awk '/^VmHWM/{print int($2/1024)}' "/proc/$(cat "$G/run/$n.pid")/status")"
done

# Stop: every daemon gone, and a second stop is fine.
"$S3_HERE/stop-radosgw" "$G" || fail "stop-radosgw failed"
for p in $pids1; do kill -0 "$p" 2>/dev/null && fail "pid $p still runs after stop-radosgw"; done
"$S3_HERE/stop-radosgw" "$G" || fail "second stop-radosgw failed"
echo "ok"
