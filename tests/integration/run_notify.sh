# mssql-cdc run under systemd's notify protocol, with a fake NOTIFY_SOCKET (a unix datagram
# socket this test reads): READY=1 once the workers run, WATCHDOG=1 at half of
# WATCHDOG_USEC, RELOADING=1 then READY=1 around a SIGHUP, STOPPING=1 at SIGTERM, then exit
# 0. Without NOTIFY_SOCKET nothing is sent and the run works as before.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
sim_setup
unset MSSQL_CDC_WAREHOUSE
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'c', 1.00, NULL)"
sim_capture 2026-10-01T14:00:30
cat > run.yaml <<'YAML'
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.orders
    app_id: orders
    checkpoint: ck/orders
    trigger: interval:500ms
YAML
python3 - "$MCDC_BIN" <<'PY' || die "notify protocol"
import os, signal, socket, subprocess, sys, time
path = os.path.join(os.getcwd(), "notify.sock")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(0.1)
env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="400000")
p = subprocess.Popen([sys.argv[1], "run", "--config", "run.yaml"], env=env,
                     stdout=open("run.out", "w"), stderr=subprocess.STDOUT)
got = []  # (seconds since start, message)
t0 = time.time()
def read_for(seconds):
    end = time.time() + seconds
    while time.time() < end:
        try:
            got.append((time.time() - t0, s.recv(4096).decode()))
        except socket.timeout:
            pass
read_for(2.5)
p.send_signal(signal.SIGHUP)
read_for(1.0)
p.send_signal(signal.SIGTERM)
rc = p.wait(timeout=30)
read_for(0.3)
msgs = [m for _, m in got]
def fail(why):
    print("FAIL:", why, msgs, open("run.out").read(), file=sys.stderr)
    sys.exit(1)
if rc != 0: fail(f"exit {rc}")
if not msgs or not msgs[0].startswith("READY=1"): fail("READY=1 is not the first message")
pings = [t for t, m in got if m == "WATCHDOG=1" and t < 2.5]
if len(pings) < 6: fail(f"{len(pings)} watchdog pings in 2.5 s at WATCHDOG_USEC=400000 (want every 0.2 s)")
try:
    i = msgs.index("RELOADING=1")
except ValueError:
    fail("no RELOADING=1 after SIGHUP")
if not any(m.startswith("READY=1") for m in msgs[i + 1:]): fail("no READY=1 after the reload")
if "STOPPING=1" not in msgs[i:]: fail("no STOPPING=1 after SIGTERM")
PY
# without NOTIFY_SOCKET: nothing to send, the run is the same
sed -i 's/interval:500ms/available-now/' run.yaml
M run --config run.yaml > plain.out 2>&1 || die "run without NOTIFY_SOCKET: $(cat plain.out)"
grep -q "^run: 1 table, 0 stopped in error" plain.out || die "plain run: $(cat plain.out)"
echo PASS
