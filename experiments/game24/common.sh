# Shared settings of the Game of 24 scripts: Dynamic Cheatsheet's Game of 24 setting (one
# model for every role, GPT-4o by default; one sample per puzzle, no feedback rounds; the
# puzzles in a fixed order, the memory growing after each one). Override any of them, e.g.
# `SOLVER=openai:gpt-4.1 GAME24_SAMPLE=20 bash experiments/game24/cheatsheet.sh`.
SOLVER="${SOLVER:-openai:gpt-4o}"
AUX="${AUX:-$SOLVER}"
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
# A seeded random sample of our 1,362 puzzles (not Dynamic Cheatsheet's own puzzle set),
# kept in the list's order; GAME24_SAMPLE=1362 runs them all.
GAME24_SAMPLE="${GAME24_SAMPLE:-100}"
GAME24_SEED="${GAME24_SEED:-0}"
GAME24_ARGS=(--benchmark-arg "sample=$GAME24_SAMPLE" --benchmark-arg "seed=$GAME24_SEED"
  --model "$SOLVER" --attempts "${GAME24_ATTEMPTS:-1}" --feedback-rounds "${GAME24_ROUNDS:-0}")
# The memory runs write only what the exact checker accepted (the train signal): a Game of 24
# answer checks itself, so this uses no hidden label.
GAME24_UPDATE=(--update online --update-every 1 --aux-model "$AUX")

# A memory file of the game24 domain with nothing in it yet (kept when it exists: a rerun
# resumes with the memory the run has grown so far).
game24_memory() {
  [ -f "$1" ] || printf '{"schema_version": 1, "domain": "game24"}\n' > "$1"
}

# The table of the Game of 24 runs that exist so far.
game24_table() {
  local runs=() labels=() name label
  for name in baseline:"no memory" cheatsheet:"cumulative cheatsheet" concepts:"concepts"; do
    label="${name#*:}"
    name="${name%%:*}"
    if [ -d "$RUNS/game24-$name" ]; then
      runs+=("$RUNS/game24-$name")
      labels+=(--label "$label")
    fi
  done
  arcmemo table "${runs[@]}" "${labels[@]}"
}
