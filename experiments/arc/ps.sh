#!/usr/bin/env bash
# Table 1/4 "ArcMemo-PS": typed concepts, reasoning-guided selection by the solver model.
source "$(dirname "$0")/../common.sh"
bootstrap_memory ps
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$BOOTSTRAPPED_MEMORY" \
  --select llm --aux-model "$SOLVER" --out "$RUNS/arc-ps"
