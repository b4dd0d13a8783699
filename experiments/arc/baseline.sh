#!/usr/bin/env bash
# Table 1/4 "o4-mini (medium)": no memory.
source "$(dirname "$0")/../common.sh"
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --out "$RUNS/arc-baseline"
