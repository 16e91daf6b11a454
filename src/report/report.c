/*
 * report/report.c: render the monitoring report as one self-contained HTML page.
 *
 * Guarantees: the page holds no script, no external reference and no font file; every
 * text that comes from data is HTML-escaped (reconcile's keys included); a table without data gets a line saying so
 * instead of an empty chart. Charts are inline SVG drawn here: stacked bars for rows per
 * batch by operation, lines for lags, steps for the verdict against the newest commit.
 * Loading the data is report/load.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/report.h"
#include "mcdc/time.h"

#define W 720          /* chart width, px */
#define H 220          /* chart height, px */
#define ML 96          /* left margin: y labels (times need the room) */
#define MR 16
#define MT 16
#define MB 36          /* bottom margin: x labels */

/* ---- data --------------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

#define ADD(arr, n, item)                                                                   \
    do {                                                                                    \
        void *p_ = realloc((arr), ((n) + 1) * sizeof *(arr));                               \
        if (!p_)                                                                            \
            return mcdc_error_set(MCDC_ENOMEM, "report: out of memory");                    \
        (arr) = p_;                                                                         \
        (arr)[(n)++] = (item);                                                              \
    } while (0)

int mcdc_report_add_batch(mcdc_report_data *d, const mcdc_report_batch *b)
{
    mcdc_report_batch c = *b;
    c.target = dup_or_null(b->target);
    c.event = dup_or_null(b->event);
    ADD(d->batches, d->n_batches, c);
    return 0;
}

int mcdc_report_add_point(mcdc_report_data *d, const mcdc_report_point *p)
{
    mcdc_report_point c = *p;
    c.table = dup_or_null(p->table);
    ADD(d->points, d->n_points, c);
    return 0;
}

int mcdc_report_add_verdict(mcdc_report_data *d, const mcdc_report_verdict *v)
{
    mcdc_report_verdict c = *v;
    c.table = dup_or_null(v->table);
    ADD(d->verdicts, d->n_verdicts, c);
    return 0;
}

int mcdc_report_add_reconcile(mcdc_report_data *d, const mcdc_report_reconcile *r)
{
    mcdc_report_reconcile c = *r;
    c.silver = dup_or_null(r->silver);
    c.named = dup_or_null(r->named);
    if ((r->silver && !c.silver) || (r->named && !c.named)) {
        free(c.silver);
        free(c.named);
        return mcdc_error_set(MCDC_ENOMEM, "report: out of memory");
    }
    ADD(d->reconciles, d->n_reconciles, c);
    return 0;
}

void mcdc_report_data_free(mcdc_report_data *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_reconciles; i++) {
        free(d->reconciles[i].silver);
        free(d->reconciles[i].named);
    }
    free(d->reconciles);
    for (size_t i = 0; i < d->n_batches; i++) {
        free(d->batches[i].target);
        free(d->batches[i].event);
    }
    for (size_t i = 0; i < d->n_points; i++)
        free(d->points[i].table);
    for (size_t i = 0; i < d->n_verdicts; i++)
        free(d->verdicts[i].table);
    free(d->batches);
    free(d->points);
    free(d->verdicts);
    free(d->title);
    memset(d, 0, sizeof *d);
}

/* ---- HTML helpers ------------------------------------------------------------------- */

static void esc(mcdc_buf *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': mcdc_buf_puts(o, "&lt;"); break;
        case '>': mcdc_buf_puts(o, "&gt;"); break;
        case '&': mcdc_buf_puts(o, "&amp;"); break;
        case '"': mcdc_buf_puts(o, "&quot;"); break;
        case '\'': mcdc_buf_puts(o, "&#39;"); break;
        default: mcdc_buf_putc(o, *s);
        }
    }
}

static const char *ts(char out[MCDC_TIME_STRLEN], int64_t us)
{
    if (us == MCDC_REPORT_NONE)
        return "—";
    mcdc_time_format(out, us, 0, false);
    out[10] = ' ';
    return out;
}

static void age(mcdc_buf *o, int64_t us)
{
    if (us < 0) {
        mcdc_buf_puts(o, "—");
        return;
    }
    int64_t s = us / MCDC_US_PER_SEC;
    if (s < 120) mcdc_buf_printf(o, "%llds", (long long)s);
    else if (s < 7200) mcdc_buf_printf(o, "%lldm", (long long)(s / 60));
    else if (s < 172800) mcdc_buf_printf(o, "%lldh %lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
    else mcdc_buf_printf(o, "%lldd %lldh", (long long)(s / 86400), (long long)(s / 3600 % 24));
}

/* ---- charts ------------------------------------------------------------------------- */

typedef struct series {
    const char *name;
    const char *color;
    const double *x, *y; /* n points; NAN y is a gap */
    size_t n;
    bool step;           /* draw as a step function (hold each value until the next x) */
} series;

typedef enum { AXIS_NUMBER, AXIS_TIME, AXIS_SECONDS } axis_kind;

static void axis_label(char *out, size_t cap, double v, axis_kind k)
{
    char t[MCDC_TIME_STRLEN];
    if (k == AXIS_TIME) {
        mcdc_time_format(t, (int64_t)v, 0, false);
        snprintf(out, cap, "%.5s %.5s", t + 5, t + 11); /* MM-DD HH:MM */
    } else if (k == AXIS_SECONDS) {
        if (fabs(v) >= 3600) snprintf(out, cap, "%.1fh", v / 3600);
        else if (fabs(v) >= 60) snprintf(out, cap, "%.1fm", v / 60);
        else snprintf(out, cap, "%.3gs", v);
    } else {
        snprintf(out, cap, "%.6g", v);
    }
}

static double sx(double v, double lo, double hi)
{
    return ML + (hi > lo ? (v - lo) / (hi - lo) : 0.5) * (W - ML - MR);
}

static double sy(double v, double lo, double hi)
{
    return H - MB - (hi > lo ? (v - lo) / (hi - lo) : 0.5) * (H - MT - MB);
}

/* Frame, grid and tick labels for [xlo,xhi] x [ylo,yhi]. */
static void frame(mcdc_buf *o, double xlo, double xhi, axis_kind xk, double ylo, double yhi, axis_kind yk)
{
    char l[64];
    mcdc_buf_printf(o, "<rect x='%d' y='%d' width='%d' height='%d' class='plot'/>\n", ML, MT, W - ML - MR, H - MT - MB);
    for (int i = 0; i <= 4; i++) {
        double yv = ylo + (yhi - ylo) * i / 4, xv = xlo + (xhi - xlo) * i / 4;
        double py = sy(yv, ylo, yhi), px = sx(xv, xlo, xhi);
        axis_label(l, sizeof l, yv, yk);
        mcdc_buf_printf(o, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' class='grid'/>"
                           "<text x='%d' y='%.1f' class='yl'>%s</text>\n",
                        ML, W - MR, py, py, ML - 6, py + 4, l);
        axis_label(l, sizeof l, xv, xk);
        mcdc_buf_printf(o, "<text x='%.1f' y='%d' class='xl'>%s</text>\n", px, H - MB + 16, l);
    }
}

static void legend(mcdc_buf *o, const series *s, size_t n)
{
    mcdc_buf_puts(o, "<div class='legend'>");
    for (size_t i = 0; i < n; i++)
        mcdc_buf_printf(o, "<span><i style='background:%s'></i>%s</span>", s[i].color, s[i].name);
    mcdc_buf_puts(o, "</div>\n");
}

/* A line (or step) chart of several series sharing the axes. */
static void line_chart(mcdc_buf *o, const char *title, const series *s, size_t n, axis_kind xk, axis_kind yk)
{
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    size_t pts = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            if (isnan(s[k].y[i]))
                continue;
            pts++;
            xlo = fmin(xlo, s[k].x[i]); xhi = fmax(xhi, s[k].x[i]);
            ylo = fmin(ylo, s[k].y[i]); yhi = fmax(yhi, s[k].y[i]);
        }
    mcdc_buf_printf(o, "<figure><figcaption>%s</figcaption>\n", title);
    if (pts == 0) {
        mcdc_buf_puts(o, "<p class='empty'>no data yet</p></figure>\n");
        return;
    }
    if (yk != AXIS_TIME && ylo > 0)
        ylo = 0;
    if (yhi <= ylo)
        yhi = ylo + 1;
    mcdc_buf_printf(o, "<svg viewBox='0 0 %d %d' width='%d' height='%d' role='img' data-points='%zu'>\n", W, H, W, H, pts);
    frame(o, xlo, xhi, xk, ylo, yhi, yk);
    for (size_t k = 0; k < n; k++) {
        bool pen = false;
        mcdc_buf_printf(o, "<path class='series' stroke='%s' d='", s[k].color);
        double prev_y = 0;
        for (size_t i = 0; i < s[k].n; i++) {
            if (isnan(s[k].y[i])) {
                pen = false;
                continue;
            }
            double px = sx(s[k].x[i], xlo, xhi), py = sy(s[k].y[i], ylo, yhi);
            if (!pen)
                mcdc_buf_printf(o, "M%.1f %.1f", px, py);
            else if (s[k].step)
                mcdc_buf_printf(o, "H%.1fV%.1f", px, py);
            else
                mcdc_buf_printf(o, "L%.1f %.1f", px, py);
            pen = true;
            prev_y = py;
        }
        (void)prev_y;
        mcdc_buf_puts(o, "'/>\n");
        for (size_t i = 0; i < s[k].n && s[k].n <= 400; i++) {
            char lx[64], ly[64];
            if (isnan(s[k].y[i]))
                continue;
            axis_label(lx, sizeof lx, s[k].x[i], xk);
            axis_label(ly, sizeof ly, s[k].y[i], yk);
            mcdc_buf_printf(o, "<circle cx='%.1f' cy='%.1f' r='2.5' fill='%s'><title>%s: %s at %s</title></circle>\n",
                            sx(s[k].x[i], xlo, xhi), sy(s[k].y[i], ylo, yhi), s[k].color, s[k].name, ly, lx);
        }
    }
    mcdc_buf_puts(o, "</svg>\n");
    legend(o, s, n);
    mcdc_buf_puts(o, "</figure>\n");
}

/* Stacked bars: rows per batch by operation, one bar per batch in batch order. */
static void bar_chart(mcdc_buf *o, const mcdc_report_batch *const *b, size_t n)
{
    static const char *names[] = {"inserts", "updates", "deletes"};
    static const char *colors[] = {"#2b8a3e", "#1c7ed6", "#e03131"};
    double ymax = 0;
    for (size_t i = 0; i < n; i++)
        ymax = fmax(ymax, (double)(b[i]->inserts + b[i]->updates + b[i]->deletes));
    mcdc_buf_puts(o, "<figure><figcaption>Rows per batch by operation (x: batch number)</figcaption>\n");
    if (n == 0) {
        mcdc_buf_puts(o, "<p class='empty'>no batches yet</p></figure>\n");
        return;
    }
    ymax = ymax <= 0 ? 4 : ceil(ymax / 4) * 4; /* whole numbers on the four grid lines */
    mcdc_buf_printf(o, "<svg viewBox='0 0 %d %d' width='%d' height='%d' role='img' data-points='%zu'>\n", W, H, W, H, n);
    frame(o, 0, (double)(n > 1 ? n - 1 : 1), AXIS_NUMBER, 0, ymax, AXIS_NUMBER);
    double slot = (double)(W - ML - MR) / (double)n, bw = slot * 0.8 < 1 ? 1 : slot * 0.8;
    for (size_t i = 0; i < n; i++) {
        double base = 0, x = ML + slot * (double)i + (slot - bw) / 2;
        int64_t v[3] = {b[i]->inserts, b[i]->updates, b[i]->deletes};
        for (int k = 0; k < 3; k++) {
            if (v[k] <= 0)
                continue;
            double y0 = sy(base, 0, ymax), y1 = sy(base + (double)v[k], 0, ymax);
            mcdc_buf_printf(o, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>batch %lld: %lld %s</title></rect>\n",
                            x, y1, bw, y0 - y1, colors[k], (long long)b[i]->batch_id, (long long)v[k], names[k]);
            base += (double)v[k];
        }
    }
    mcdc_buf_puts(o, "</svg>\n<div class='legend'>");
    for (int k = 0; k < 3; k++)
        mcdc_buf_printf(o, "<span><i style='background:%s'></i>%s</span>", colors[k], names[k]);
    mcdc_buf_puts(o, "</div></figure>\n");
}

/* ---- page --------------------------------------------------------------------------- */

/* MATCH, IN_FLIGHT (differences a later run clears) or MISMATCH, with its CSS class. */
static const char *reconcile_verdict(const mcdc_report_reconcile *r, const char **cls)
{
    if (r->mismatched > 0 || r->chunks > 0) { *cls = "bad"; return "MISMATCH"; }
    if (r->in_flight > 0) { *cls = "flight"; return "IN_FLIGHT"; }
    *cls = "ok";
    return "MATCH";
}

/* The last reconcile of each silver table: one row each, then the keys named. */
static void reconcile_section(mcdc_buf *o, const mcdc_report_data *d)
{
    char t1[MCDC_TIME_STRLEN];
    mcdc_buf_puts(o, "<h2>Last reconcile</h2>\n<table><tr><th>silver</th><th>result</th><th>run at (host)</th>"
                     "<th>silver version</th><th>buckets</th><th>matched</th><th>in flight</th><th>mismatched</th>"
                     "<th>keys named</th></tr>\n");
    for (size_t i = 0; i < d->n_reconciles; i++) {
        const mcdc_report_reconcile *r = &d->reconciles[i];
        const char *cls, *v = reconcile_verdict(r, &cls);
        mcdc_buf_puts(o, "<tr><td>");
        esc(o, r->silver);
        mcdc_buf_printf(o, "</td><td class='%s'>%s</td><td>%s</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td>"
                        "<td>%lld</td><td>", cls, v, ts(t1, r->run_at_us), (long long)r->silver_version,
                        (long long)r->buckets, (long long)r->matched, (long long)r->in_flight, (long long)r->mismatched);
        const struct { const char *name; int64_t n; } k[] = {
            {"missing", r->missing}, {"extra", r->extra}, {"different", r->different}, {"duplicate", r->duplicate},
            {"in flight", r->keys_in_flight}, {"chunks", r->chunks}};
        bool any = false;
        for (size_t j = 0; j < sizeof k / sizeof k[0]; j++)
            if (k[j].n) {
                mcdc_buf_printf(o, "%s%lld %s", any ? ", " : "", (long long)k[j].n, k[j].name);
                any = true;
            }
        mcdc_buf_printf(o, "%s</td></tr>\n", any ? "" : "none");
    }
    mcdc_buf_puts(o, "</table>\n");
    for (size_t i = 0; i < d->n_reconciles; i++) {
        const mcdc_report_reconcile *r = &d->reconciles[i];
        if (!r->named)
            continue;
        mcdc_buf_puts(o, "<p class='meta'>Named by the last reconcile of ");
        esc(o, r->silver);
        mcdc_buf_printf(o, " (run <code>%s</code>):</p>\n<pre>", r->run_id);
        esc(o, r->named);
        mcdc_buf_puts(o, "</pre>\n");
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *CSS =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:800px;color:#1d2125;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:32px 0 8px;border-bottom:1px solid #dee2e6}"
    "figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}"
    "svg{max-width:100%;height:auto}.plot{fill:#f8f9fa;stroke:#ced4da}.grid{stroke:#e9ecef}"
    ".yl{font-size:11px;text-anchor:end;fill:#495057}.xl{font-size:11px;text-anchor:middle;fill:#495057}"
    ".series{fill:none;stroke-width:2}.legend span{margin-right:16px;font-size:12px}"
    ".legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}"
    "table{border-collapse:collapse;width:100%;font-size:13px}td,th{border-bottom:1px solid #dee2e6;padding:4px 6px;text-align:left}"
    ".empty{color:#868e96;font-style:italic}.meta{color:#495057;font-size:12px}"
    ".ok{color:#2b8a3e;font-weight:600}.flight{color:#e67700;font-weight:600}.bad{color:#c92a2a;font-weight:600}"
    "pre{background:#f8f9fa;padding:6px 8px;font-size:12px;overflow-x:auto}";

int mcdc_report_render(mcdc_buf *o, const mcdc_report_data *d)
{
    char t1[MCDC_TIME_STRLEN], t2[MCDC_TIME_STRLEN];
    const char **tables = NULL;
    size_t n_tables = 0;
    int rc = 0;
    /* The set of tables: targets of batches and names of verdicts. */
    for (size_t i = 0; i < d->n_batches + d->n_verdicts + d->n_points; i++) {
        const char *name = i < d->n_batches ? d->batches[i].target
                         : i < d->n_batches + d->n_verdicts ? d->verdicts[i - d->n_batches].table
                         : d->points[i - d->n_batches - d->n_verdicts].table;
        bool seen = false;
        for (size_t k = 0; k < n_tables && !seen; k++)
            seen = !strcmp(tables[k], name);
        if (!seen && name) {
            const char **p = realloc(tables, (n_tables + 1) * sizeof *p);
            if (!p) {
                free(tables);
                return mcdc_error_set(MCDC_ENOMEM, "report: out of memory");
            }
            tables = p;
            tables[n_tables++] = name;
        }
    }
    if (n_tables)
        qsort(tables, n_tables, sizeof *tables, cmp_str);

    mcdc_buf_puts(o, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>\n<title>");
    esc(o, d->title ? d->title : "mssql-cdc report");
    mcdc_buf_printf(o, "</title>\n<style>%s</style></head><body>\n<h1>", CSS);
    esc(o, d->title ? d->title : "mssql-cdc report");
    mcdc_buf_printf(o, "</h1>\n<p class='meta'>Generated %s UTC. Times on the charts are the source's clock (UTC). "
                       "A period [start, end) is complete once finalized_until &ge; end.</p>\n",
                    ts(t1, d->generated_at_us));

    /* Latest verdicts and freshness. */
    mcdc_buf_puts(o, "<h2>Latest verdicts</h2>\n");
    if (d->n_verdicts == 0) {
        mcdc_buf_puts(o, "<p class='empty'>no verdicts yet</p>\n");
    } else {
        mcdc_buf_puts(o, "<table><tr><th>table</th><th>finalized_until</th><th>end commit</th><th>end LSN</th>"
                         "<th>verdict age</th><th>updated at (host)</th></tr>\n");
        for (size_t i = 0; i < d->n_verdicts; i++) {
            const mcdc_report_verdict *v = &d->verdicts[i];
            mcdc_buf_puts(o, "<tr><td>");
            esc(o, v->table);
            mcdc_buf_printf(o, "</td><td>%s</td><td>%s</td><td><code>%s</code></td><td>", ts(t1, v->finalized_until_us),
                            ts(t2, v->end_commit_ts_us), v->end_lsn);
            age(o, v->finalized_until_us == MCDC_REPORT_NONE || d->source_now_us == MCDC_REPORT_NONE
                       ? -1 : d->source_now_us - v->finalized_until_us);
            mcdc_buf_printf(o, "</td><td>%s</td></tr>\n", ts(t1, v->updated_at_us));
        }
        mcdc_buf_puts(o, "</table>\n");
    }
    if (d->n_reconciles)
        reconcile_section(o, d);

    for (size_t t = 0; t < n_tables && rc == 0; t++) {
        const char *name = tables[t];
        size_t nb = 0, np = 0;
        const mcdc_report_batch **bs = calloc(d->n_batches + 1, sizeof *bs);
        double *x = calloc(2 * (d->n_batches + d->n_points) + 2, sizeof *x);
        double *y1 = calloc(d->n_batches + d->n_points + 1, sizeof *y1);
        double *y2 = calloc(d->n_batches + d->n_points + 1, sizeof *y2);
        double *px = calloc(d->n_points + 1, sizeof *px), *py = calloc(d->n_points + 1, sizeof *py);
        if (!bs || !x || !y1 || !y2 || !px || !py) {
            rc = mcdc_error_set(MCDC_ENOMEM, "report: out of memory");
            goto next;
        }
        /* A table the facts name (batches or events) is a stream's target: its change log. */
        size_t n_events = 0;
        int64_t batch_rows = 0, snapshot_rows = -1;
        for (size_t i = 0; i < d->n_batches; i++) {
            const mcdc_report_batch *b = &d->batches[i];
            if (!b->target || strcmp(b->target, name))
                continue;
            if (!b->event) {
                bs[nb++] = b;
                batch_rows += b->rows;
            } else {
                n_events++;
                if (!strcmp(b->event, "bootstrap"))
                    snapshot_rows = (snapshot_rows < 0 ? 0 : snapshot_rows) + b->rows;
            }
        }
        mcdc_buf_puts(o, "<h2>");
        esc(o, name);
        mcdc_buf_puts(o, "</h2>\n<p class='meta'>");
        if (nb == 0 && n_events == 0) {
            mcdc_buf_puts(o, "No facts rows name this table: it is not a stream's change log but a table "
                             "kept from another (silver, for one), with a verdict of its own.");
        } else {
            mcdc_buf_puts(o, "The change log of a stream: ");
            if (nb == 0)
                mcdc_buf_puts(o, "no batches yet");
            else
                mcdc_buf_printf(o, "%zu batch%s, %lld change rows", nb, nb == 1 ? "" : "es", (long long)batch_rows);
            if (snapshot_rows >= 0)
                mcdc_buf_printf(o, "%s a bootstrap snapshot of %lld rows", nb ? ", after" : ", only", (long long)snapshot_rows);
            if (nb == 0)
                mcdc_buf_puts(o, "; the changes after it come as batches");
            mcdc_buf_puts(o, ".");
        }
        mcdc_buf_puts(o, "</p>\n");
        for (size_t i = 0; i < d->n_reconciles; i++)
            if (d->reconciles[i].silver && !strcmp(d->reconciles[i].silver, name)) {
                const char *cls, *v = reconcile_verdict(&d->reconciles[i], &cls);
                mcdc_buf_printf(o, "<p class='meta'>Last reconcile %s UTC: <span class='%s'>%s</span>, %lld of %lld buckets "
                                "matched.</p>\n", ts(t1, d->reconciles[i].run_at_us), cls, v,
                                (long long)d->reconciles[i].matched, (long long)d->reconciles[i].buckets);
            }
        if (nb)
            bar_chart(o, bs, nb);

        /* Lags over time (x: the batch's end commit on the source clock). */
        size_t nl = 0;
        for (size_t i = 0; i < nb; i++) {
            if (bs[i]->end_commit_ts_us == MCDC_REPORT_NONE)
                continue;
            x[nl] = (double)bs[i]->end_commit_ts_us;
            y1[nl] = bs[i]->capture_lag_ms == MCDC_REPORT_NONE ? NAN : (double)bs[i]->capture_lag_ms / 1000.0;
            y2[nl] = bs[i]->ingestion_lag_ms == MCDC_REPORT_NONE ? NAN : (double)bs[i]->ingestion_lag_ms / 1000.0;
            nl++;
        }
        series lags[2] = {{"capture lag", "#f08c00", x, y1, nl, false}, {"ingestion lag", "#7048e8", x, y2, nl, false}};
        if (nb)
            line_chart(o, "Capture and ingestion lag", lags, 2, AXIS_TIME, AXIS_SECONDS);

        /* Verdict against the newest commit over time. */
        for (size_t i = 0; i < d->n_points; i++)
            if (d->points[i].table && !strcmp(d->points[i].table, name)) {
                px[np] = (double)d->points[i].at_us;
                py[np] = (double)d->points[i].finalized_until_us;
                np++;
            }
        series v[2] = {{"newest commit", "#495057", x, y1, 0, false}, {"finalized_until", "#2b8a3e", px, py, np, true}};
        nl = 0;
        for (size_t i = 0; i < nb; i++)
            if (bs[i]->end_commit_ts_us != MCDC_REPORT_NONE) {
                x[nl] = (double)bs[i]->end_commit_ts_us;
                y1[nl] = x[nl];
                nl++;
            }
        v[0].n = nl;
        line_chart(o, "finalized_until against the newest commit", v, 2, AXIS_TIME, AXIS_TIME);
    next:
        free(bs); free(x); free(y1); free(y2); free(px); free(py);
    }
    if (n_tables == 0)
        mcdc_buf_puts(o, "<p class='empty'>The facts and control tables hold no rows yet.</p>\n");
    mcdc_buf_puts(o, "<p class='meta'>mssql-cdc " MCDC_VERSION "</p>\n</body></html>\n");
    free(tables);
    return rc;
}
