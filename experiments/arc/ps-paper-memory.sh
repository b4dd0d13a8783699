#!/usr/bin/env bash
# ArcMemo-PS from the paper's own published memory instead of a bootstrapped one: the
# rendered selection memory (barc_init_mem.txt, 270 concepts) of a checkout of
# matt-seb-ho/arc_memo in ARC_MEMO_DIR, imported once (`arcmemo memory import` prints every
# quirk of the published data it handled). PART=annotations starts from the paper's
# initial memory instead (17 preliminary concepts + 14 annotated puzzles).
source "$(dirname "$0")/../common.sh"
: "${ARC_MEMO_DIR:?set ARC_MEMO_DIR to a checkout of matt-seb-ho/arc_memo}"
PART="${PART:-selection}"
memory="$RUNS/memory-paper-$PART.json"
if [ ! -f "$memory" ]; then
  arcmemo memory import arc-memo "$ARC_MEMO_DIR" --part "$PART" --out "$memory" \
    --report "$RUNS/memory-paper-$PART.report.json"
fi
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$memory" \
  --select llm --aux-model "$SOLVER" --out "$RUNS/arc-ps-paper-$PART"
