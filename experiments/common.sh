# Shared settings of the experiment scripts; every value can be overridden from the
# environment, e.g. `SOLVER=openai:o4-mini RUNS=runs/exp bash experiments/arc/baseline.sh`.
# Defaults follow the paper (section 1.1 of shared/reference/arcmemo-method.md): o4-mini
# (medium) solves and selects, GPT-4.1 abstracts; 3 samples per puzzle, up to 2 retries.
set -euo pipefail
SOLVER="${SOLVER:-openai:o4-mini}"
AUX="${AUX:-openai:gpt-4.1}"
SPLIT="${SPLIT:-val100}"
RUNS="${RUNS:-runs/experiments}"
ATTEMPTS="${ATTEMPTS:-3}"
RETRIES="${RETRIES:-2}"
EFFORT="${EFFORT:-medium}"
mkdir -p "$RUNS"
# Common arguments of every solve run.
SOLVE_ARGS=(--model "$SOLVER" --reasoning-effort "$EFFORT" --attempts "$ATTEMPTS" --retries "$RETRIES")
# Build (once) a memory by solving the ARC-AGI-1 training split without memory and
# abstracting its train-verified programs: $1 = format (ps | oe | cheatsheet).
bootstrap_memory() {
  local format="$1" memory="$RUNS/memory-$1.json"
  if [ ! -f "$memory" ]; then
    if [ "$format" = ps ]; then
      arcmemo memory init --domain arc --out "$memory"
    else
      arcmemo memory init --domain arc --no-concepts --out "$memory"
    fi
  fi
  arcmemo run arc-agi-1 --split training --select none "${SOLVE_ARGS[@]}" --out "$RUNS/train-solve"
  arcmemo abstract --from "$RUNS/train-solve" --memory "$memory" --format "$format" --model "$AUX"
  BOOTSTRAPPED_MEMORY="$memory"
}
