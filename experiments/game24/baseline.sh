#!/usr/bin/env bash
# Game of 24 without memory (Dynamic Cheatsheet's baseline row).
source "$(dirname "$0")/common.sh"
arcmemo run game24 "${GAME24_ARGS[@]}" --out "$RUNS/game24-baseline"
game24_table
