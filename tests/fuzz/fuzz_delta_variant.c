/*
 * fuzz_delta_variant: the Variant decoder (delta/variant.c) on hostile bytes. The input is
 * split into metadata and value at its first byte (a length); beyond "no crash, no
 * sanitizer report, no read past either buffer", whatever decodes is valid JSON text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "delta/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t nm = data[0] < size - 1 ? data[0] : size - 1;
    /* copies, so the sanitizer sees any read past each buffer */
    uint8_t *m = malloc(nm ? nm : 1), *v = malloc(size - 1 - nm ? size - 1 - nm : 1);
    if (!m || !v) {
        free(m);
        free(v);
        return 0;
    }
    memcpy(m, data + 1, nm);
    memcpy(v, data + 1 + nm, size - 1 - nm);
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    if (mcdc_delta__variant_to_json(&b, m, nm, v, size - 1 - nm) == 0) {
        json_error_t err;
        json_t *j = json_loadb(b.ptr ? b.ptr : "", b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
                              &err);
        /* jansson takes no NUL in an object key, which JSON (and the encoding) allow */
        if (!j && !strstr(err.text, "NUL"))
            abort(); /* the decoder wrote text that is not JSON */
        json_decref(j);
    }
    mcdc_error_clear();
    mcdc_buf_dispose(&b);
    free(m);
    free(v);
    return 0;
}
