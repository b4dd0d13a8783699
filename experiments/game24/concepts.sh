#!/usr/bin/env bash
# Game of 24 with arcmemo's typed concepts (PS format), starting empty: each solved puzzle is
# abstracted into concepts, and the selector (the aux model) picks those for the next puzzle.
source "$(dirname "$0")/common.sh"
memory="$RUNS/memory-game24-concepts.json"
game24_memory "$memory"
arcmemo run game24 "${GAME24_ARGS[@]}" --memory "$memory" --memory-format ps \
  --select llm "${GAME24_UPDATE[@]}" --out "$RUNS/game24-concepts"
game24_table
