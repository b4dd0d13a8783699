# Shared settings of the experiment scripts; every value can be overridden from the
# environment, e.g. `SOLVER=openai:o4-mini RUNS=runs/exp bash experiments/arc/baseline.sh`.
# Defaults follow the paper (docs/method.md, section 1): o4-mini
# (medium) solves and selects, GPT-4.1 abstracts; 3 attempts per puzzle, up to 2 feedback rounds.
set -euo pipefail
SOLVER="${SOLVER:-openai:o4-mini}"
AUX="${AUX:-openai:gpt-4.1}"
SPLIT="${SPLIT:-val100}"
RUNS="${RUNS:-runs/experiments}"
ATTEMPTS="${ATTEMPTS:-3}"
FEEDBACK_ROUNDS="${FEEDBACK_ROUNDS:-${RETRIES:-2}}"
EFFORT="${EFFORT:-medium}"
# The paper's generation settings: the solver may write up to 32,000 tokens; the abstraction
# model (GPT-4.1) runs at temperature 0.3 with up to 1,024 tokens. Selection by the solver
# (a reasoning model) keeps its own defaults: a 1,024-token cap would cut its reasoning.
MAX_TOKENS="${MAX_TOKENS:-32000}"
AUX_TEMPERATURE="${AUX_TEMPERATURE:-0.3}"
AUX_MAX_TOKENS="${AUX_MAX_TOKENS:-1024}"
AUX_SAMPLING=(--temperature "$AUX_TEMPERATURE" --max-tokens "$AUX_MAX_TOKENS")
# The cheatsheet bootstrap rewrites the whole sheet each time, and the paper's sheet is meant
# to reach ~2,000 words: the paper gave its curator 4,096 tokens (1,024 would cut the sheet
# and its closing tag, and the cut answer would be asked again).
CHEATSHEET_MAX_TOKENS="${CHEATSHEET_MAX_TOKENS:-4096}"
# How memories are bootstrapped: `seeds` (the paper's route: the 160 hand-written BARC seed
# solutions, BARC_DIR = a checkout of xu3kev/BARC) or `training` (solve the 400 ARC-AGI-1
# training tasks without memory and abstract the train-verified programs; far dearer).
BOOTSTRAP="${BOOTSTRAP:-seeds}"
BARC_DIR="${BARC_DIR:-}"
mkdir -p "$RUNS"
# all.sh's estimate pass (EXPERIMENTS_ESTIMATE=FILE, with a scratch $RUNS): every `arcmemo
# run` becomes a dry run (prompts rendered, nothing called, estimate.json written), `arcmemo
# memory` (free) runs so the dry runs find their memories, and every other command (seed
# import, abstraction, tables) is only listed in FILE: nothing is paid.
if [ -n "${EXPERIMENTS_ESTIMATE:-}" ]; then
  arcmemo() {
    case "$1" in
      run) command arcmemo "$@" --dry-run > /dev/null ;;
      memory) command arcmemo "$@" > /dev/null ;;
      *) echo "arcmemo $*" >> "$EXPERIMENTS_ESTIMATE" ;;
    esac
  }
fi
# Common arguments of every solve run.
SOLVE_ARGS=(--model "$SOLVER" --reasoning-effort "$EFFORT" --attempts "$ATTEMPTS" --feedback-rounds "$FEEDBACK_ROUNDS"
  --max-tokens "$MAX_TOKENS")

# The verified seed programs (once): BARC's seeds converted and checked on their train pairs.
seed_programs() {
  if [ -z "$BARC_DIR" ]; then
    echo "BOOTSTRAP=seeds needs BARC_DIR, a checkout of BARC (xu3kev/BARC on GitHub);" \
      "or set BOOTSTRAP=training" >&2
    exit 2
  fi
  if [ ! -f "$RUNS/barc-seeds/import-report.json" ]; then
    arcmemo seeds import-barc "$BARC_DIR" --out "$RUNS/barc-seeds"
  fi
}

# Build (once; resumable) a memory of format $1 (ps | oe | cheatsheet) by the $BOOTSTRAP
# route. PS memories start from the seed ontology; lesson and cheatsheet memories start
# bare (no concepts, no type vocabulary), so the baselines carry nothing of PS.
bootstrap_memory() {
  local format="$1" memory="$RUNS/memory-$1.json"
  local sampling=("${AUX_SAMPLING[@]}")
  if [ "$format" = cheatsheet ]; then
    sampling=(--temperature "$AUX_TEMPERATURE" --max-tokens "$CHEATSHEET_MAX_TOKENS")
  fi
  if [ ! -f "$memory" ]; then
    if [ "$format" = ps ]; then
      arcmemo memory init --domain arc --out "$memory"
    else
      printf '{"schema_version": 1, "domain": "arc"}\n' > "$memory"
    fi
  fi
  if [ "$BOOTSTRAP" = seeds ]; then
    seed_programs
    arcmemo abstract --from-programs "$RUNS/barc-seeds" --memory "$memory" --memory-format "$format" \
      --model "$AUX" "${sampling[@]}"
  else
    arcmemo run arc-agi-1 --split training --select none "${SOLVE_ARGS[@]}" --out "$RUNS/train-solve"
    arcmemo abstract --from "$RUNS/train-solve" --memory "$memory" --memory-format "$format" \
      --model "$AUX" "${sampling[@]}"
  fi
  BOOTSTRAPPED_MEMORY="$memory"
}
