# stream --snapshot-on-switch (docs/guides/schema-changes.md): a column added to the source
# and filled there before the DBA enables dbo_orders_v2 with it is in no change row of
# either instance for the rows not changed since. A stream with --snapshot-on-switch reads
# the table again in chunks right after the batch that switched (a partial backfill of
# every key, stamped after S: no bootstrap row, silver not rebuilt), so its silver equals
# the source table, the new column included; the same stream without the flag leaves NULL
# there. A kill -9 inside the snapshot's read is finished by the next run; without --facts
# the flag is refused before anything is written.
. "$(dirname "$0")/stream_lib.bash"
start_source() { STREAM_SRC="sim:$DB"; }
. "$(dirname "$0")/snapshot_on_switch_body.bash"
