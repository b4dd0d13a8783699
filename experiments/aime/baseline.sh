#!/usr/bin/env bash
# AIME 2025 without memory (pass@1 = mean over samples, unbiased pass@k for k <= n, maj@n).
# Reads AIME 2025: `arcmemo data fetch aime --split 2025` first (or aime_2025.jsonl under
# ARCMEMO_DATA_DIR).
source "$(dirname "$0")/../common.sh"
arcmemo run aime --split "${AIME_SPLIT:-2025}" --model "$SOLVER" --reasoning-effort "$EFFORT" \
  --attempts "$ATTEMPTS" --out "$RUNS/aime-baseline"
