#!/usr/bin/python3
# tests/interop/tds_pytds.py: run SELECTs through python-tds (Debian's python3-tds, a pure-
# Python TDS client) against `sim serve` and print each result's rows as JSON lines in the
# encoding of `sim query --format jsonl` (architecture §7): exact decimals as strings,
# timestamps to the microsecond, datetimeoffset in UTC with Z, binary as 0x + uppercase hex.
#   tds_pytds.py PORT USER PASSWORD DATABASE [--cafile F] [--params JSON] SQL...
# --params gives the next SQL's parameters (a JSON object; "@name" in the SQL): they travel
# as sp_executesql's typed parameters (ints, exact decimals, strings, datetimes).
import datetime, decimal, json, sys, uuid
import pytds

def enc(v):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v
    if isinstance(v, decimal.Decimal):
        return format(v, 'f')
    if isinstance(v, (bytes, bytearray)):
        return '0x' + v.hex().upper()
    if isinstance(v, uuid.UUID):
        return str(v).upper()
    if isinstance(v, datetime.datetime):
        z = ''
        if v.tzinfo is not None:
            v, z = v.astimezone(datetime.timezone.utc).replace(tzinfo=None), 'Z'
        return '%04d-%02d-%02dT%02d:%02d:%02d.%06d%s' % (v.year, v.month, v.day, v.hour, v.minute, v.second,
                                                        v.microsecond, z)
    if isinstance(v, datetime.date):
        return '%04d-%02d-%02d' % (v.year, v.month, v.day)
    if isinstance(v, datetime.time):
        return '%02d:%02d:%02d.%06d' % (v.hour, v.minute, v.second, v.microsecond)
    return str(v)

def main():
    port, user, password, database = sys.argv[1:5]
    args = sys.argv[5:]
    cafile = None
    if args[:1] == ['--cafile']:
        cafile, args = args[1], args[2:]
    kw = dict(server='127.0.0.1', port=int(port), user=user, password=password, database=database,
              autocommit=True, login_timeout=10, timeout=20)
    if cafile:
        kw.update(cafile=cafile, validate_host=False)
    with pytds.connect(**kw) as conn:
        with conn.cursor() as cur:
            params = None
            it = iter(args)
            for sql in it:
                if sql == '--params':
                    params = json.loads(next(it))
                    continue
                if params is not None:
                    conv = {}
                    for k, v in params.items():
                        if isinstance(v, str) and v.startswith('dec:'):
                            v = decimal.Decimal(v[4:])
                        elif isinstance(v, str) and v.startswith('ts:'):
                            v = datetime.datetime.fromisoformat(v[3:])
                        conv[k] = v
                    import re
                    cur.execute(re.sub(r'@(\w+)', r'%(\1)s', sql), conv)
                    params = None
                else:
                    cur.execute(sql)
                names = [d[0] for d in cur.description]
                for row in cur.fetchall():
                    print(json.dumps({n: enc(v) for n, v in zip(names, row)}, ensure_ascii=False,
                                     separators=(',', ':')))

main()
