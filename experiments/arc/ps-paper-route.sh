#!/usr/bin/env bash
# ArcMemo-PS by the paper's whole route, beside ps.sh's (which starts from arcmemo's seed
# ontology and its bundled few-shot examples): the starting memory is the paper's own
# (prelim2.yaml's preliminary concepts + op3a.yaml's 14 hand-annotated puzzles, from a
# checkout of matt-seb-ho/arc_memo in ARC_MEMO_DIR), the abstraction few-shot examples are
# those same op3a annotations with their BARC seed programs (experiments/paper_examples.py),
# the 160 BARC seeds are abstracted into that memory by the aux model (the example of the
# seed being abstracted is never shown), and the solver selects and solves val100.
source "$(dirname "$0")/../common.sh"
: "${ARC_MEMO_DIR:?set ARC_MEMO_DIR to a checkout of matt-seb-ho/arc_memo}"
if [ -z "$BARC_DIR" ]; then
  echo "ps-paper-route.sh abstracts the BARC seeds: set BARC_DIR to a checkout of BARC" \
    "(xu3kev/BARC)" >&2
  exit 2
fi
seed_programs
memory="$RUNS/memory-paper-route.json"
examples="$RUNS/paper-route-examples.yaml"
if [ ! -f "$memory" ]; then
  arcmemo memory import arc-memo "$ARC_MEMO_DIR" --part annotations --out "$memory" \
    --report "$RUNS/memory-paper-route.report.json"
fi
# Free and local, but it reads the seed programs, which an estimate pass only lists.
if [ ! -f "$examples" ] && [ -z "${EXPERIMENTS_ESTIMATE:-}" ]; then
  python3 "$(dirname "$0")/../paper_examples.py" "$ARC_MEMO_DIR" --programs "$RUNS/barc-seeds" \
    --out "$examples"
fi
arcmemo abstract --from-programs "$RUNS/barc-seeds" --memory "$memory" --memory-format ps \
  --memory-format-arg "examples=$examples" --model "$AUX" "${AUX_SAMPLING[@]}"
arcmemo run arc-agi-1 --split "$SPLIT" "${SOLVE_ARGS[@]}" --memory "$memory" \
  --select llm --aux-model "$SOLVER" --out "$RUNS/arc-ps-paper-route"
