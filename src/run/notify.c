/*
 * run/notify.c: systemd's notify protocol for `mssql-cdc run` (libsystemd's sd_notify):
 * READY=1 once the workers run, RELOADING=1 and READY=1 around a reload, STOPPING=1 at
 * the drain, WATCHDOG=1 pings.
 *
 * Guarantees: without NOTIFY_SOCKET (not under systemd) every call is a no-op; a failure
 * to send is ignored (the service runs on; systemd's own timeouts report it).
 */
#include <stdint.h>
#include <systemd/sd-daemon.h>

#include "run_int.h"

void mcdc_run__notify(const char *state)
{
    (void)sd_notify(0, state);
}

void mcdc_run__notify_ready(void)
{
    (void)sd_notify(0, "READY=1\nSTATUS=running the tables of the config");
}

int64_t mcdc_run__notify_watchdog_us(void)
{
    uint64_t us = 0;
    return sd_watchdog_enabled(0, &us) > 0 ? (int64_t)us : 0;
}
