#!/usr/bin/env bash
# Table 1/4 "ArcMemo-OE": situation/suggestion lessons written after a reconstruction of
# how each seed was solved; at solve time the aux model (GPT-4.1) describes the puzzle and
# picks the top 5 lessons from that description (--select describe, as in the paper, with a
# text description instead of the paper's image caption). The memory is fixed and retries
# keep the lessons first selected: the paper's Table 1 row (continual.sh's run reselects).
source "$(dirname "$0")/../common.sh"
bootstrap_memory oe
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$BOOTSTRAPPED_MEMORY" \
  --select describe --aux-model "$AUX" --aux-temperature "$AUX_TEMPERATURE" \
  --aux-max-tokens "$AUX_MAX_TOKENS" --order-seed "${SEED:-0}" --schedule passes --no-reselect \
  --out "$RUNS/arc-oe"
