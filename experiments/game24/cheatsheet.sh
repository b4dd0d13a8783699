#!/usr/bin/env bash
# Game of 24 with a cumulative cheatsheet (Dynamic Cheatsheet's DC-Cu): one free-text sheet,
# starting empty, shown whole with every puzzle and rewritten after each solved one.
source "$(dirname "$0")/common.sh"
memory="$RUNS/memory-game24-cheatsheet.json"
game24_memory "$memory"
arcmemo run game24 "${GAME24_ARGS[@]}" --memory "$memory" --memory-format cheatsheet \
  --select all "${GAME24_UPDATE[@]}" --out "$RUNS/game24-cheatsheet"
game24_table
