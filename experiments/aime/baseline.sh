#!/usr/bin/env bash
# AIME 2025 without memory (pass@1 averaged over attempts, pass@k, maj@k).
# Needs ARCMEMO_DATA_DIR pointing at a folder with aime_2025.jsonl.
source "$(dirname "$0")/../common.sh"
arcmemo run aime --split "${AIME_SPLIT:-2025}" --model "$SOLVER" --reasoning-effort "$EFFORT" \
  --attempts "$ATTEMPTS" --out "$RUNS/aime-baseline"
