/*
 * source/sim/tds/engine.c: the engine the server runs requests with: the simulator's T-SQL
 * sessions (source/sim/session.h). Tests and the fuzzer give tds_conn_serve fakes instead.
 */
#include "source/sim/tds/tds_int.h"

const tds_engine tds_engine_sim = {
    mcdc_sim_login_check, mcdc_sim_session_open, mcdc_sim_session_close, mcdc_sim_session_spid,
    mcdc_sim_session_batch, mcdc_sim_session_rpc, mcdc_sim_session_tm,
};
