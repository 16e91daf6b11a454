/*
 * source/sim/sim_int.h: the simulator's internals shared by its files: SQL Server types and
 * values, the statement parser's tree, the database handle and its state.
 *
 * Storage (one SQLite file, WAL, one writer and many readers; docs/guides/simulator.md):
 *   sim_state        one row: clock, LSN allocator, capture progress, time zone
 *   sim_tables       source tables; sim_columns their columns (column_id never reused)
 *   sim_src_<id>     rows of a source table: __key (order-preserving key) + c<column_id>
 *   sim_instances    capture instances; sim_captured their captured columns
 *   sim_ct_<id>      change rows of an instance (cdc.<ci>_CT), inserted in read order
 *   sim_tx           the log of commits (transactions, enables, DDL) and idle entries
 *   sim_ddl          DDL history per instance; sim_retro LSN slots of late-begun transactions
 * Views carry SQL Server's names ("dbo.orders", "cdc.dbo_orders_CT", "cdc.lsn_time_mapping",
 * "cdc.change_tables", "cdc.captured_columns", "cdc.index_columns", "cdc.ddl_history") and show
 * only what capture has processed, as SQL Server does.
 *
 * Invariants:
 * (S1) Change rows of an instance are inserted in (start_lsn, command_id, seqval, operation)
 *      order, so rowid order is read order (commits are serialised by the write lock).
 * (S2) An LSN is (µs since 0001-01-01 : 8 bytes, slot : 2 bytes). Forward allocations take
 *      slots 1..0x7FFF at the clock's time; records of a transaction begun in the past take
 *      slots 0x8000.. at its begin time (sim_retro), so LSNs are unique and ordered by time.
 * (S3) The clock never goes backwards; every write command moves it in the same SQLite
 *      transaction as its changes, and a failure rolls back both.
 */
#ifndef MCDC_SIM_INT_H
#define MCDC_SIM_INT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "mcdc/lsn.h"
#include "mcdc/sim.h"
#include "mcdc/source.h"
#include "mcdc/tz.h"
#include "mcdc/value.h"

/* ---- types ---------------------------------------------------------------------------- */

typedef enum {
    ST_BIT = 1, ST_TINYINT, ST_SMALLINT, ST_INT, ST_BIGINT, ST_DECIMAL, ST_NUMERIC, ST_MONEY,
    ST_SMALLMONEY, ST_REAL, ST_FLOAT, ST_DATE, ST_TIME, ST_DATETIME, ST_DATETIME2,
    ST_SMALLDATETIME, ST_DATETIMEOFFSET, ST_CHAR, ST_VARCHAR, ST_NCHAR, ST_NVARCHAR, ST_TEXT,
    ST_NTEXT, ST_BINARY, ST_VARBINARY, ST_UNIQUEIDENTIFIER, ST_XML,
    ST_IMAGE,      /* legacy LOB of bytes, like varbinary(max); not comparable */
    ST_ROWVERSION  /* timestamp: 8 bytes the database generates on every insert and update */
} sim_tkind;

typedef struct sim_type {
    sim_tkind k;
    int len;   /* char/binary length in characters or bytes; -1 for (max); 0 when not used */
    int prec;  /* decimal precision */
    int scale; /* decimal scale; fraction digits of time, datetime2, datetimeoffset */
} sim_type;

typedef enum { V_NULL = 0, V_INT, V_DEC, V_FLT, V_STR, V_BIN, V_DATE, V_TIME, V_DT, V_DTO } sim_vkind;

/* A value. Temporal values count 100 ns ticks (datetime2(7)'s unit). Strings and binaries
 * point into an arena or the statement text and are not NUL-terminated. */
typedef struct sim_val {
    sim_vkind k;
    bool      lit;   /* an untyped literal: takes the type of the column it meets */
    bool      big;   /* V_INT: typed bigint (else int) */
    int16_t   off;   /* V_DTO: offset from UTC in minutes */
    int       prec, scale; /* V_DEC */
    union {
        int64_t     i;   /* V_INT; V_DATE days since 1970; V_TIME ticks since midnight;
                            V_DT wall-clock ticks since 1970; V_DTO UTC ticks since 1970 */
        mcdc_int128 dec; /* V_DEC unscaled */
        double      d;   /* V_FLT */
        struct {
            const char *p;
            size_t      n;
        } s;             /* V_STR (UTF-8), V_BIN */
    } u;
} sim_val;

#define TICKS_PER_US  INT64_C(10)
#define TICKS_PER_SEC INT64_C(10000000)
#define TICKS_PER_DAY (INT64_C(86400) * TICKS_PER_SEC)

/* An arena: many small allocations freed at once. */
typedef struct sim_arena_block sim_arena_block;
typedef struct sim_arena {
    sim_arena_block *head;
} sim_arena;

void *sim_arena_alloc(sim_arena *a, size_t n);
char *sim_arena_strndup(sim_arena *a, const char *s, size_t n);
void  sim_arena_free(sim_arena *a);
/** Forget every allocation but keep one block for reuse. */
void  sim_arena_reset(sim_arena *a);

/* Where a conversion happens, for SQL Server's messages. */
typedef struct sim_conv_ctx {
    const char *db;     /* database name */
    const char *table;  /* "dbo.orders" */
    const char *column; /* column name */
} sim_conv_ctx;

/** Parse a type ("decimal(12,2)", "nvarchar(max)", "datetime2(3)"). */
int  sim_type_parse(sim_type *out, const char *text, size_t len);
/** Format a type as SQL Server names it ("decimal(12,2)", "nvarchar(40)"). */
void sim_type_format(char *out, size_t cap, const sim_type *t);
/** The Delta/value-model column for a type (anchor-features §8). */
void sim_type_to_column(mcdc_column *col, const sim_type *t);
bool sim_type_is_string(const sim_type *t);
bool sim_type_is_numeric(const sim_type *t);

/** Convert @p in to type @p t with SQL Server's rules (rounding to the type's precision,
 *  length checks, char padding). Strings land in @p a. */
int sim_convert(sim_arena *a, const sim_type *t, const sim_val *in, sim_val *out, const sim_conv_ctx *cx);
/** Bind a value of type @p t (already converted) at @p idx. */
int sim_bind(sqlite3_stmt *st, int idx, const sim_type *t, const sim_val *v);
/** Return a value of type @p t from a SQLite function, in the storage form sim_bind uses. */
void sim_result(sqlite3_context *cx, const sim_type *t, const sim_val *v);
/** Read a SQLite value in the storage form of type @p t. */
int sim_read_value(sqlite3_value *v, const sim_type *t, sim_arena *a, sim_val *out);
/** Read column @p idx of type @p t. */
int sim_read_col(sqlite3_stmt *st, int idx, const sim_type *t, sim_arena *a, sim_val *out);
/** sim_read_value without a copy, for a result column's value (sqlite3_column_value): a
 *  string or binary points into SQLite's own copy, valid until the statement's next
 *  sqlite3_step, reset or finalize (a result row handed to a sink, which may not keep it). */
int sim_read_value_ref(sqlite3_value *v, const sim_type *t, sim_val *out);
/** Compare two non-NULL values (strings case-insensitively, trailing spaces ignored).
 *  @return 0 with *out <0, 0, >0; MCDC_EINVAL when they cannot be compared. */
int sim_compare(sim_arena *a, const sim_val *x, const sim_val *y, int *out);
/** SQL Server's default collation: case-insensitive, trailing spaces ignored. */
int sim_collate(const char *a, size_t na, const char *b, size_t nb);
/** True when two values of one column are stored identically (change detection). */
bool sim_same(const sim_val *x, const sim_val *y);
/** Append the order-preserving key encoding of a value of type @p t. */
int sim_key_append(mcdc_buf *out, const sim_type *t, const sim_val *v);
/** Append a value as SQL Server prints it in messages ("1", "abc", "2025-01-01 10:00:00.000"). */
int sim_val_text(mcdc_buf *out, const sim_type *t, const sim_val *v);
/** The value-model cell for a value of type @p t (strings formatted into @p a). */
int sim_to_value(sim_arena *a, const sim_type *t, const sim_val *v, mcdc_value *out);
/** The value of type @p t for a value-model cell (for key ranges). */
int sim_from_value(sim_arena *a, const sim_type *t, const mcdc_value *in, sim_val *out);
/** Count UTF-16 code units of UTF-8 text; -1 when the text is not valid UTF-8. */
long sim_utf16_len(const char *s, size_t n);
/** Datetime ticks rounded to datetime's 1/300 s. */
int64_t sim_round_datetime(int64_t ticks);
/** Format wall-clock ticks as "YYYY-MM-DD HH:MM:SS" + @p digits fraction digits. */
void sim_format_dt(char *out, size_t cap, int64_t ticks, int digits);
/** Format datetime ticks as SQL Server shows them (milliseconds .000, .003, .007). */
void sim_format_datetime(char *out, size_t cap, int64_t ticks);
/** Parse "YYYY-MM-DD[( |T)HH:MM[:SS[.f]]]" into wall-clock ticks (no rounding: 7 digits kept);
 *  @p off gets the offset (minutes) when the text has one, else *has_off false. */
int sim_parse_dt(const char *s, size_t n, int64_t *ticks, bool *has_off, int *off_min, int *n_frac);

/* ---- statements ------------------------------------------------------------------------ */

typedef enum {
    E_LIT = 1, E_COL, E_NEG, E_ADD, E_SUB, E_MUL, E_DIV, E_MOD,
    P_EQ, P_NE, P_LT, P_LE, P_GT, P_GE, P_AND, P_OR, P_NOT, P_IN, P_ISNULL, P_NOTNULL, P_BETWEEN
} sim_op;

typedef struct sim_expr sim_expr;
struct sim_expr {
    sim_op     op;
    sim_expr  *a, *b, *c; /* operands (BETWEEN: a between b and c) */
    sim_expr **list;      /* IN (...) */
    int        n_list;
    sim_val    lit;       /* E_LIT */
    const char *name;     /* E_COL: as written */
    int        col;       /* E_COL: index into the table's live columns, resolved later */
};

typedef enum { S_INSERT = 1, S_UPDATE, S_DELETE } sim_stmt_kind;

typedef struct sim_stmt {
    sim_stmt_kind kind;
    char        schema[129], table[129];
    const char **cols;     /* INSERT column list or UPDATE SET targets */
    int          n_cols;
    sim_expr  ***rows;     /* INSERT rows, each n_vals expressions */
    int         *n_vals;
    int          n_rows;
    sim_expr   **set;      /* UPDATE values, one per cols[] */
    sim_expr    *where;
    const char  *text;     /* the statement's text (for messages) */
    size_t       text_len;
} sim_stmt;

typedef struct sim_coldef {
    const char *name;
    sim_type    type;
    bool        nullable;
    bool        null_given; /* NULL or NOT NULL was written */
} sim_coldef;

typedef enum { D_ADD = 1, D_DROP, D_ALTER } sim_ddl_kind;

typedef struct sim_ddl_stmt {
    sim_ddl_kind kind;
    char        schema[129], table[129];
    sim_coldef  col;
} sim_ddl_stmt;

/** Split @p sql on ';' and parse each statement into the arena. */
int sim_parse_statements(sim_arena *a, const char *sql, sim_stmt ***out, int *n_out);
/** Parse "name TYPE [NULL|NOT NULL], ...". */
int sim_parse_coldefs(sim_arena *a, const char *text, sim_coldef **out, int *n_out);
/** Parse one ALTER TABLE statement. */
int sim_parse_ddl(sim_arena *a, const char *sql, sim_ddl_stmt *out);
/** Split "schema.table" (brackets allowed; schema defaults to dbo). */
int sim_parse_table_name(const char *text, char schema[129], char table[129]);

/* ---- expression evaluation -------------------------------------------------------------- */

typedef struct sim_row_view {
    const sim_val  *vals;  /* the row, one per live column */
    const sim_type *types;
    int             n;
} sim_row_view;

/** Evaluate an expression against a row (NULL row for VALUES). */
int sim_eval(sim_arena *a, const sim_expr *e, const sim_row_view *row, sim_val *out);
/** Evaluate a predicate: *out 1 true, 0 false, -1 unknown. */
int sim_eval_pred(sim_arena *a, const sim_expr *e, const sim_row_view *row, int *out);

/* ---- the database ---------------------------------------------------------------------- */

typedef struct sim_column {
    int      column_id;
    char    *name;
    sim_type type;
    bool     nullable;
    int      key_ordinal; /* 1-based position in the primary key, 0 when not a key column */
    bool     dropped;
} sim_column;

typedef struct sim_captured {
    int      ordinal;   /* 1-based: the update-mask bit */
    int      column_id; /* the source column it captures */
    char    *name;
    sim_type type;      /* the change table's type (follows ALTER COLUMN) */
} sim_captured;

typedef struct sim_instance {
    int64_t       id;
    char         *name;
    int64_t       table_id;
    int64_t       object_id;
    mcdc_lsn      start_lsn;
    int64_t       create_us;
    sim_captured *cols;
    int           n_cols;
    sqlite3_stmt *ins; /* INSERT into sim_ct_<id>, prepared on first use */
} sim_instance;

typedef struct sim_table {
    int64_t     id;
    char       *schema, *name, *full; /* "dbo", "orders", "dbo.orders" */
    int64_t     object_id;
    sim_column *cols;   /* every column, dropped ones included, by column_id */
    int         n_cols;
    int        *live;   /* indexes into cols of live columns, in order */
    int         n_live;
    int        *keys;   /* indexes into cols of key columns, in key order */
    int         n_keys;
    sim_instance **inst; /* this table's instances (borrowed from sim->inst) */
    int          n_inst;
    sqlite3_stmt *ins, *upd, *del, *get; /* prepared on first use */
} sim_table;

/* @@SERVERNAME and SERVERPROPERTY('ServerName') of the simulator, and its sources' identity */
#define SIM_SERVER_NAME "mssql-cdc-sim"

typedef struct sim_state {
    int64_t  clock_us;       /* the virtual clock, UTC */
    int64_t  lsn_us;         /* time part of the last forward LSN (µs since 0001-01-01) */
    int64_t  lsn_slot;       /* its slot */
    mcdc_lsn processed;      /* the last log record capture processed */
    int64_t  next_xact;      /* next transaction id */
    int64_t  next_object_id;
    char     time_zone[128]; /* IANA or Windows name as given */
    char     db_name[129];
    char     database_guid[37]; /* identity.c: sim_identity's, or derived for older files */
} sim_state;

#define SIM_STMTS 16 /* statements of constant text kept prepared on a connection */

struct mcdc_sim {
    sqlite3    *db;
    char       *path;
    bool        read_only;
    sim_state   st;
    mcdc_tz    *tz;
    sim_table **tables;
    int         n_tables;
    sim_instance **inst;
    int          n_inst;
    bool        in_tx;
    sqlite3_stmt *tx_ins; /* INSERT INTO sim_tx, prepared on first use */
    mcdc_buf    keybuf;   /* scratch for key encodings */
    struct { const char *sql; sqlite3_stmt *st; } stmts[SIM_STMTS]; /* sim__stmt's */
};

/* store.c */
int  sim__exec_sql(mcdc_sim *s, const char *sql);
int  sim__sqlite_error(mcdc_sim *s, int rc, const char *what);
int  sim__begin(mcdc_sim *s);             /* BEGIN IMMEDIATE, reload state and catalog */
int  sim__commit(mcdc_sim *s);            /* write state, COMMIT */
void sim__rollback(mcdc_sim *s);
int  sim__load(mcdc_sim *s);              /* state and catalog */
/* once per process, before its first connection: SQLite without its global memory
 * statistics (every allocation of every connection took one process-wide mutex for them) */
void sim__sqlite_init(void);
/* The statement of constant text @p sql (a string literal, known by its address), kept
 * prepared on the connection between uses (the questions a run asks for each of its
 * tables, prepared once, not once each); give it back with sim__stmt_done, which resets it
 * (so no read transaction stays open). @p what names the error. */
int  sim__stmt(mcdc_sim *s, const char *sql, const char *what, sqlite3_stmt **out);
void sim__stmt_done(mcdc_sim *s, sqlite3_stmt *st);
/* identity.c */
int  sim__identity_load(mcdc_sim *s);     /* st.database_guid: stored, or derived (older files) */
int  sim__identity_store(mcdc_sim *s, bool fresh); /* record it (fresh: a new random one) */
/* reconcile's tier 1 (buckets.c), the key_buckets op of the simulator's source */
int  sim__key_buckets(mcdc_source *src, const char *ci, const mcdc_key_bucket_spec *spec,
                      mcdc_key_bucket **out, size_t *n_out);
int  sim__save_state(mcdc_sim *s);
int  sim__advance_clock(mcdc_sim *s, int64_t at_us, int64_t *out_us);
int  sim__alloc_lsn(mcdc_sim *s, int64_t at_us, mcdc_lsn *out);
int  sim__alloc_retro_lsn(mcdc_sim *s, int64_t at_us, mcdc_lsn *out);
bool sim__lsn_is_past(mcdc_sim *s, int64_t at_us);
int64_t sim__local_ticks(mcdc_sim *s, int64_t utc_us); /* local wall clock, datetime-rounded ticks */
void sim__datetime_text(mcdc_sim *s, int64_t utc_us, char out[32]);
sim_table    *sim__find_table(mcdc_sim *s, const char *schema, const char *name);
sim_instance *sim__find_instance(mcdc_sim *s, const char *name);
int  sim__rebuild_views(mcdc_sim *s);
/* cdc.lsn_time_mapping over sim_tx: the processed commits, as the view and the T-SQL engine
 * read them. The bound on processed_lsn is written +lsn so that SQLite never searches by it: a
 * query's own upper bound on start_lsn must be the end of the range it searches (given both,
 * SQLite took this one, and a page's mapping_range walked every commit from the page's start to
 * processed_lsn). */
#define SIM_MAPPING_SELECT                                                                                       \
    "SELECT lsn AS start_lsn, begin_time AS tran_begin_time, end_time AS tran_end_time, tran_id,"                 \
    " begin_lsn AS tran_begin_lsn FROM sim_tx WHERE kind IN (1, 2, 3)"                                            \
    " AND +lsn <= (SELECT processed_lsn FROM sim_state WHERE id = 1)"
int  sim__table_key(const sim_table *t, const sim_val *row, mcdc_buf *out); /* row: by cols index */
int  sim__tx_record(mcdc_sim *s, const mcdc_lsn *lsn, int kind, const mcdc_lsn *begin_lsn, int64_t begin_us,
                    int64_t end_us, int64_t xact);
void sim__free_catalog(mcdc_sim *s);
int  sim__max_lsn(mcdc_sim *s, mcdc_lsn *out, int64_t *end_utc_us);
/* mcdc_sim_exec's transaction inside a SQLite transaction already begun, committing at
 * @p commit_us (the clock already there); the caller commits or rolls back (exec.c). */
int  sim__exec_in_tx(mcdc_sim *s, const char *sql, int64_t begin_us, int64_t commit_us,
                     mcdc_sim_exec_result *out);
/* The heartbeat's UPDATE at @p at_us inside a SQLite transaction already begun (heartbeat.c). */
int  sim__heartbeat_beat_in_tx(mcdc_sim *s, int64_t at_us, mcdc_sim_exec_result *out);
int  sim__capture_in_tx(mcdc_sim *s, int64_t now, const mcdc_sim_capture_options *opts, mcdc_sim_capture_result *out);
int64_t sim__count_pending(mcdc_sim *s); /* committed log entries past the processed LSN */
int  sim__bind_lsn(sqlite3_stmt *st, int idx, const mcdc_lsn *l);
int  sim__column_lsn(sqlite3_stmt *st, int idx, mcdc_lsn *out);

/* query.c: SQL Server names rewritten to the views; the type of a view column read as is;
 * an authorizer that refuses writes. */
int  sim__query_translate(mcdc_sim *s, const char *sql, mcdc_buf *out);
bool sim__origin_type(mcdc_sim *s, sqlite3_stmt *st, int i, sim_type *ty, bool *is_binary);
int  sim__deny_writes(void *payload, int action, const char *a, const char *b, const char *c, const char *d);

enum { TX_TRAN = 1, TX_IDLE = 2, TX_ENABLE = 3, TX_DDL = 4 };

/* txn.c: one transaction's writes */
typedef struct sim_change sim_change;
typedef struct sim_txn {
    mcdc_sim  *s;
    sim_arena *arena;
    int64_t    begin_us, commit_us;
    bool       retro;       /* begun before the clock: LSNs from sim_retro */
    mcdc_lsn   begin_lsn;
    int64_t    xact;
    int        command_id;  /* current statement, 1-based */
    sim_change *changes, *last;
    int64_t    n_changes;
    int64_t    n_rows;      /* source rows touched */
    mcdc_lsn   retro_next;  /* next retro LSN */
} sim_txn;

/** The next value of the database's rowversion counter (@@DBTS + 1), in the current SQLite
 *  transaction. */
int  sim__next_dbts(mcdc_sim *s, uint64_t *out);
int  sim__txn_begin(sim_txn *t, mcdc_sim *s, sim_arena *a, int64_t begin_us, int64_t commit_us);
/* row: values by index into table->cols (dropped columns NULL). */
int  sim__txn_insert(sim_txn *t, sim_table *tb, sim_val *row);
int  sim__txn_update(sim_txn *t, sim_table *tb, int64_t rowid, const sim_val *old_row, sim_val *new_row);
int  sim__txn_delete(sim_txn *t, sim_table *tb, int64_t rowid, const sim_val *old_row);
/* A key-changing update: the old rows are deleted, then the new rows inserted. */
int  sim__txn_update_keys(sim_txn *t, sim_table *tb, int n, const int64_t *rowids, sim_val **old_rows,
                          sim_val **new_rows);
int  sim__txn_commit(sim_txn *t, mcdc_lsn *commit_lsn, bool *logged);
int  sim__check_row(sim_txn *t, sim_table *tb, sim_val *row, bool is_insert);
int  sim__read_row(mcdc_sim *s, sim_table *tb, sqlite3_stmt *st, int first_col, sim_arena *a, sim_val *row);
int  sim__dup_key_error(sim_table *tb, const sim_val *row);

#endif
