#!/usr/bin/env bash
# Table 2 "- selection": the whole PS memory in every prompt.
source "$(dirname "$0")/../common.sh"
bootstrap_memory ps
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$BOOTSTRAPPED_MEMORY" \
  --select all --out "$RUNS/arc-ps-no-selection"
