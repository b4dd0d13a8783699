#!/usr/bin/env bash
# Table 1/4 "cheatsheet": the Dynamic Cheatsheet (DC-Cu) baseline, one frozen sheet for all.
source "$(dirname "$0")/../common.sh"
bootstrap_memory cheatsheet
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$BOOTSTRAPPED_MEMORY" \
  --select all --out "$RUNS/arc-cheatsheet"
