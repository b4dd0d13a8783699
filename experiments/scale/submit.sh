#!/bin/bash
# Submit the shards of one run as a SLURM array job, then the merge, which starts only once
# every shard ended well (afterok):
#   RUN=runs/ps-val100-o4mini-r0 MEMORY=runs/memory-ps.json ./submit.sh [SBATCH OPTION...]
# The options go to the shards' sbatch and override the script's #SBATCH lines (e.g.
# --array=0-3 for 4 shards, --cpus-per-task, --mem); SBATCH_PARTITION and SBATCH_ACCOUNT in
# the environment apply to both jobs. The shards' variables (MODEL, TASKS, BASE_URL, VENV)
# are passed on from this environment.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export RUN=${RUN:-runs/ps-val100-o4mini-r0}
export MEMORY=${MEMORY:?set MEMORY to the memory file}
export VENV=${VENV:-.venv}
mkdir -p logs "$RUN"
jid=$(sbatch --parsable --export=ALL "$@" "$here/shards.sbatch")
# Single quotes: the merge job's shell expands RUN and VENV (exported to it).
mid=$(sbatch --parsable --export=ALL --dependency=afterok:"$jid" --job-name=arcmemo-merge \
    --output=logs/%x-%j.out \
    --wrap '. "$VENV/bin/activate" && arcmemo merge "$RUN"/shard-* --out "$RUN/merged"')
echo "shards: job $jid; merge: job $mid, into $RUN/merged"
