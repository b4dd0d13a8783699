#!/usr/bin/env bash
# Table 3 "+ continual update" (ArcMemo-OE, as in the paper): the lesson memory grows every
# 10 puzzles from train-verified programs (never test labels; add --write-signal oracle only
# to reproduce the paper's leaking setting), and retries reselect from the grown memory.
# It runs oe.sh first (the fixed-memory row of Table 1: same schedule and task order, no
# reselection) and ends by printing both rows of Table 3 with a paired comparison; the
# continual row also reselects on retries, which is how its new lessons reach them. The copy keeps the
# bootstrapped memory untouched; --order-seed fixes the task order.
source "$(dirname "$0")/../common.sh"
bash "$(dirname "$0")/oe.sh"
bootstrap_memory oe
# Copied once: a rerun resumes the run with the memory it has grown so far.
[ -f "$RUNS/memory-continual.json" ] || cp "$BOOTSTRAPPED_MEMORY" "$RUNS/memory-continual.json"
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$RUNS/memory-continual.json" \
  --select describe --aux-model "$AUX" --aux-temperature "$AUX_TEMPERATURE" \
  --aux-max-tokens "$AUX_MAX_TOKENS" --memory-format oe --update online --update-every 10 \
  --schedule passes --reselect \
  --order-seed "${SEED:-0}" --out "$RUNS/arc-continual"
arcmemo table "$RUNS/arc-oe" "$RUNS/arc-continual" --label "ArcMemo-OE" \
  --label "+ continual update" --paired
