#!/usr/bin/env python3
"""tests/s3/fake_s3.py: a small loopback S3 of the project's own, for fault injection in
the S3 client's tests (never instead of the real gateway, which tests/s3/lake_s3.sh uses).

Objects live in memory. It answers what the storage seam's S3 backend sends: PUT (with
If-None-Match: * or If-Match: ETAG, quoted as AWS takes it), GET (with Range), HEAD,
DELETE, ListObjectsV2 (prefix, delimiter, max-keys, continuation-token) and multipart
uploads. Signatures are not checked.

Faults (command-line flags), each counted over the requests of that kind:
  --slowdown-every N     every N-th request gets 503 SlowDown, and is not applied
  --reset-every N        every N-th PUT with a body over 1 KiB: half the body is read, then
                         the connection is closed without an answer (not applied)
  --error-after-store N  every N-th conditional PUT (either condition) is stored, then
                         answered 500; an If-Match PUT's line in the log says "if-match"
  --ignore-if-none-match conditional PUTs replace what is there (a store that ignores it)
Prints "port N" on its first line once it listens on 127.0.0.1 (port 0: any free port).
A request log (method, key, status) goes to --log FILE when given; --page-keys N caps the
keys of one listing answer (default 1000, as S3), so tests page with few keys.
"""
import argparse, hashlib, socket, sys, threading, time, urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from email.utils import formatdate
from xml.sax.saxutils import escape

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--slowdown-every", type=int, default=0)
ap.add_argument("--reset-every", type=int, default=0)
ap.add_argument("--error-after-store", type=int, default=0)
ap.add_argument("--ignore-if-none-match", action="store_true")
ap.add_argument("--page-keys", type=int, default=1000)
ap.add_argument("--log")
args = ap.parse_args()

lock = threading.Lock()
objects = {}   # (bucket, key) -> (bytes, etag, mtime)
uploads = {}   # upload id -> {part number: bytes}
counts = {"all": 0, "bigput": 0, "condput": 0}
logf = open(args.log, "a", buffering=1) if args.log else None


def log(*a):
    if logf:
        logf.write(" ".join(str(x) for x in a) + "\n")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def parts(self):
        u = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(u.path)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        b, _, k = path.lstrip("/").partition("/")
        return b, k, q

    def answer(self, status, body=b"", headers=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if self.command != "HEAD" or "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        log(self.command, self.path, status)

    def error(self, status, code):
        self.answer(status, ("<?xml version=\"1.0\"?><Error><Code>%s</Code></Error>" % code).encode(),
                    {"Content-Type": "application/xml"})

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def slowdown(self):
        with lock:
            counts["all"] += 1
            n = counts["all"]
        if args.slowdown_every and n % args.slowdown_every == 0:
            n = int(self.headers.get("Content-Length") or 0)
            if n:
                self.rfile.read(n)
            self.error(503, "SlowDown")
            return True
        return False

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.slowdown():
            return
        b, k, q = self.parts()
        if not k and q.get("list-type") == "2":
            return self.list(b, q)
        with lock:
            o = objects.get((b, k))
        if o is None:
            return self.error(404, "NoSuchKey")
        data, etag, mtime = o
        hdrs = {"ETag": etag, "Last-Modified": formatdate(mtime, usegmt=True)}
        rng = self.headers.get("Range")
        if rng and self.command == "GET":
            a, _, z = rng.split("=", 1)[1].partition("-")
            a, z = int(a), min(int(z), len(data) - 1)
            if a >= len(data):
                return self.error(416, "InvalidRange")
            hdrs["Content-Range"] = "bytes %d-%d/%d" % (a, z, len(data))
            return self.answer(206, data[a:z + 1], hdrs)
        if self.command == "HEAD":
            hdrs["Content-Length"] = str(len(data))
        self.answer(200, data, hdrs)

    def list(self, b, q):
        prefix, delim = q.get("prefix", ""), q.get("delimiter", "")
        start = int(q.get("continuation-token") or 0)
        maxk = min(int(q.get("max-keys") or 1000), args.page_keys)
        with lock:
            keys = sorted(k for (bb, k) in objects if bb == b and k.startswith(prefix))
            entries, seen = [], set()
            for k in keys:
                rest = k[len(prefix):]
                if delim and delim in rest:
                    cp = prefix + rest.split(delim)[0] + delim
                    if cp not in seen:
                        seen.add(cp)
                        entries.append(("p", cp, None))
                else:
                    entries.append(("k", k, objects[(b, k)]))
        page = entries[start:start + maxk]
        more = start + maxk < len(entries)
        x = ["<?xml version=\"1.0\"?><ListBucketResult><Name>%s</Name>" % b,
             "<IsTruncated>%s</IsTruncated>" % ("true" if more else "false")]
        if more:
            x.append("<NextContinuationToken>%d</NextContinuationToken>" % (start + maxk))
        for kind, k, o in page:
            if kind == "p":
                x.append("<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>" % escape(k))
            else:
                x.append("<Contents><Key>%s</Key><Size>%d</Size><ETag>%s</ETag>"
                         "<LastModified>%s</LastModified></Contents>" % (
                             escape(k), len(o[0]), escape(o[1]),
                             time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(o[2]))))
        x.append("</ListBucketResult>")
        self.answer(200, "".join(x).encode(), {"Content-Type": "application/xml"})

    def do_PUT(self):
        if self.slowdown():
            return
        b, k, q = self.parts()
        n = int(self.headers.get("Content-Length") or 0)
        if n > 1024 and args.reset_every:
            with lock:
                counts["bigput"] += 1
                hit = counts["bigput"] % args.reset_every == 0
            if hit:
                self.rfile.read(n // 2)
                log("RESET", self.path)
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
        data = self.body()
        if "uploadId" in q:
            with lock:
                up = uploads.get(q["uploadId"])
                if up is None:
                    return self.error(404, "NoSuchUpload")
                up[int(q["partNumber"])] = data
            return self.answer(200, b"", {"ETag": '"%s"' % hashlib.md5(data).hexdigest()})
        cond = self.headers.get("If-None-Match") == "*"
        match = self.headers.get("If-Match")
        fail_after = False
        with lock:
            o = objects.get((b, k))
            if match is not None and o is None:
                refused = 404
            elif match is not None and match != o[1]:
                refused = 412
            elif cond and o is not None and not args.ignore_if_none_match:
                refused = 412
            else:
                refused = 0
                objects[(b, k)] = (data, '"%s"' % hashlib.md5(data).hexdigest(), time.time())
                if cond or match is not None:
                    counts["condput"] += 1
                    fail_after = bool(args.error_after_store) and counts["condput"] % args.error_after_store == 0
        if match is not None:
            log("if-match", self.path)
        if refused:
            return self.error(refused, "NoSuchKey" if refused == 404 else "PreconditionFailed")
        if fail_after:
            return self.error(500, "InternalError")
        self.answer(200, b"", {"ETag": objects[(b, k)][1]})

    def do_POST(self):
        if self.slowdown():
            return
        b, k, q = self.parts()
        data = self.body()
        if "uploads" in q:
            with lock:
                uid = "u%d" % (len(uploads) + 1)
                uploads[uid] = {}
            return self.answer(200, ("<?xml version=\"1.0\"?><InitiateMultipartUploadResult><UploadId>%s"
                                     "</UploadId></InitiateMultipartUploadResult>" % uid).encode())
        if "uploadId" in q:
            with lock:
                up = uploads.pop(q["uploadId"], None)
                if up is None:
                    return self.error(404, "NoSuchUpload")
                whole = b"".join(up[i] for i in sorted(up))
                objects[(b, k)] = (whole, '"%s-%d"' % (hashlib.md5(whole).hexdigest(), len(up)), time.time())
            return self.answer(200, b"<?xml version=\"1.0\"?><CompleteMultipartUploadResult/>")
        self.error(400, "InvalidRequest")

    def do_DELETE(self):
        if self.slowdown():
            return
        b, k, q = self.parts()
        with lock:
            if "uploadId" in q:
                uploads.pop(q["uploadId"], None)
            else:
                objects.pop((b, k), None)
        self.answer(204)


srv = ThreadingHTTPServer(("127.0.0.1", args.port), H)
srv.daemon_threads = True
print("port %d" % srv.server_address[1], flush=True)
srv.serve_forever()
