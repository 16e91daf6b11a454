#!/usr/bin/env bash
# Every example in README.md, docs/guides/*.md and docs/reference/cli*.md runs in a scratch
# directory against the simulator, and the outputs they show are what the commands print
# (the convention for marking blocks is in doc_examples.mjs). SQL examples run in DuckDB.
set -euo pipefail
: "${MCDC_BIN:?}" "${MCDC_SRC:?}"
[ -d "$MCDC_SRC/tests/node/node_modules/@duckdb" ] ||
  { echo "doc_examples: DuckDB for node is missing: run scripts/install-deps (or cd tests/node && npm ci)" >&2; exit 1; }
exec node "$MCDC_SRC/tests/integration/doc_examples.mjs" "$@"
