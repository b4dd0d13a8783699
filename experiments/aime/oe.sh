#!/usr/bin/env bash
# AIME 2025 with open-ended lessons, the authors' AIME pilot adaptation (docs/method.md,
# section 3): lessons written by the aux model from the solution
# traces of AIME 2022-2023 (the OE format: a reconstruction of how each was solved, then two
# to five situation/suggestion lessons, each situation opening with its domain in brackets,
# "[Number theory] ..."), from self-consistent solutions only (no labels: an answer given by
# a majority of attempts is taken as confirmed); at solve time the aux model describes each
# problem and picks the top 5 lessons (--select describe). aime/ps.sh is the other option:
# typed PS concepts. Reads AIME 2022, 2023 and 2025 (`arcmemo data fetch aime --split YEAR`;
# 2022 and 2023 need --source OWNER/NAME) or aime_YYYY.jsonl under ARCMEMO_DATA_DIR.
source "$(dirname "$0")/../common.sh"
memory="$RUNS/memory-aime-oe.json"
[ -f "$memory" ] || printf '{"schema_version": 1, "domain": "aime"}\n' > "$memory"
for year in 2022 2023; do
  arcmemo run aime --split "$year" --model "$SOLVER" --reasoning-effort "$EFFORT" \
    --attempts "$ATTEMPTS" --out "$RUNS/aime-train-$year"
  arcmemo abstract --from "$RUNS/aime-train-$year" --memory "$memory" --signal consistency \
    --memory-format oe --memory-format-arg domain_prefix=true --model "$AUX" "${AUX_SAMPLING[@]}"
done
arcmemo run aime --split "${AIME_SPLIT:-2025}" --model "$SOLVER" --reasoning-effort "$EFFORT" \
  --attempts "$ATTEMPTS" --memory "$memory" --select describe --aux-model "$AUX" \
  --aux-temperature "$AUX_TEMPERATURE" --aux-max-tokens "$AUX_MAX_TOKENS" --out "$RUNS/aime-oe"
if [ -d "$RUNS/aime-baseline" ]; then
  arcmemo table "$RUNS/aime-baseline" "$RUNS/aime-oe" --label "no memory" --label "OE lessons"
else
  arcmemo table "$RUNS/aime-oe" --label "OE lessons"  # aime/baseline.sh adds the other row
fi
