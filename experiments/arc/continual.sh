#!/usr/bin/env bash
# Table 3 "+ continual update" (ArcMemo-OE, as in the paper): the lesson memory grows every
# 10 puzzles from train-verified programs (never test labels; add --update-signal oracle only
# to reproduce the paper's leaking setting), and retries reselect from the grown memory.
# Compare with oe.sh, which keeps the memory fixed. The copy keeps the bootstrapped memory
# untouched; --order-seed fixes the task order.
source "$(dirname "$0")/../common.sh"
bootstrap_memory oe
cp "$BOOTSTRAPPED_MEMORY" "$RUNS/memory-continual.json"
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$RUNS/memory-continual.json" \
  --select describe --aux-model "$AUX" --aux-temperature "$AUX_TEMPERATURE" \
  --aux-max-tokens "$AUX_MAX_TOKENS" --format oe --update online --update-every 10 \
  --schedule passes --reselect \
  --order-seed "${SEED:-0}" --out "$RUNS/arc-continual"
