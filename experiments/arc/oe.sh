#!/usr/bin/env bash
# Table 1/4 "ArcMemo-OE": situation/suggestion lessons. The paper selected lessons from a
# VLM caption with GPT-4.1 (top 5); here the same llm selector reads the puzzle directly.
source "$(dirname "$0")/../common.sh"
bootstrap_memory oe
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$BOOTSTRAPPED_MEMORY" \
  --select llm --aux-model "$AUX" --out "$RUNS/arc-oe"
