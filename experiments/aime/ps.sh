#!/usr/bin/env bash
# AIME 2025 with a memory of typed PS concepts written from self-consistent solutions of
# AIME 2022-2023 (no labels: an answer given by a majority of attempts is taken as
# confirmed). aime/oe.sh is the other option: the AIME pilot's OE lessons.
source "$(dirname "$0")/../common.sh"
memory="$RUNS/memory-aime.json"
[ -f "$memory" ] || arcmemo memory init --domain aime --out "$memory"
for year in 2022 2023; do
  arcmemo run aime --split "$year" --model "$SOLVER" --reasoning-effort "$EFFORT" \
    --attempts "$ATTEMPTS" --out "$RUNS/aime-train-$year"
  arcmemo abstract --from "$RUNS/aime-train-$year" --memory "$memory" --signal consistency \
    --model "$AUX"
done
arcmemo run aime --split "${AIME_SPLIT:-2025}" --model "$SOLVER" --reasoning-effort "$EFFORT" \
  --attempts "$ATTEMPTS" --memory "$memory" --select llm --out "$RUNS/aime-ps"
if [ -d "$RUNS/aime-baseline" ]; then
  arcmemo table "$RUNS/aime-baseline" "$RUNS/aime-ps" --label "no memory" --label "PS concepts"
else
  arcmemo table "$RUNS/aime-ps" --label "PS concepts"  # aime/baseline.sh adds the other row
fi
