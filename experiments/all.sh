#!/usr/bin/env bash
# Every experiment script, one after the other, once you have seen what they would cost.
#
#   bash experiments/all.sh [--yes]
#
# First (free): each script runs with its `arcmemo run` lines turned into dry runs in a
# scratch folder; their estimates (calls, tokens, cost as low - high ranges) are printed per
# run and in total, with the paid steps that have no dry run (bootstrap abstraction). Then
# it asks before spending anything (--yes: it does not ask) and runs every script for real.
# Settings come from common.sh (SOLVER, AUX, SPLIT, RUNS, BOOTSTRAP, BARC_DIR, ...). Scripts
# whose inputs are not set are skipped, with the reason: arc/ps-paper-memory.sh without
# ARC_MEMO_DIR, arc/ps-paper-route.sh without ARC_MEMO_DIR or BARC_DIR, aime/*.sh without
# the AIME splits they read (`arcmemo data fetch aime --split 2025` puts one in the user
# data folder; ARCMEMO_DATA_DIR names another folder).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
yes=0
for arg in "$@"; do
  case "$arg" in
    -y|--yes) yes=1 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "all.sh: unknown argument $arg (try --help)" >&2; exit 2 ;;
  esac
done
if [ "${BOOTSTRAP:-seeds}" = seeds ] && [ -z "${BARC_DIR:-}" ]; then
  echo "all.sh: BOOTSTRAP=seeds (the default) needs BARC_DIR, a checkout of BARC" \
    "(xu3kev/BARC); or set BOOTSTRAP=training" >&2
  exit 2
fi

# Where `arcmemo run aime --split YEAR` reads aime_YEAR.jsonl (arcmemo.benchmarks.aime.data).
if [ -n "${ARCMEMO_DATA_DIR:-}" ]; then
  aime_dir="$ARCMEMO_DATA_DIR"
elif [ "$(uname)" = Darwin ]; then
  aime_dir="$HOME/Library/Application Support/arcmemo/aime"
else
  aime_dir="${XDG_DATA_HOME:-$HOME/.local/share}/arcmemo/aime"
fi

scripts=()
for script in "$here"/arc/*.sh "$here"/aime/*.sh; do
  name="${script#"$here"/}"
  splits=()
  case "$name" in
    arc/ps-paper-memory.sh) needs=(ARC_MEMO_DIR) ;;
    arc/ps-paper-route.sh) needs=(ARC_MEMO_DIR BARC_DIR) ;;
    aime/baseline.sh) needs=(); splits=("${AIME_SPLIT:-2025}") ;;
    aime/*) needs=(); splits=(2022 2023 "${AIME_SPLIT:-2025}") ;;
    *) needs=() ;;
  esac
  unset_needs=()
  for need in "${needs[@]}"; do
    [ -n "${!need:-}" ] || unset_needs+=("$need")
  done
  if [ "${#unset_needs[@]}" -gt 0 ]; then
    echo "skipped $name: set ${unset_needs[*]}" >&2
    continue
  fi
  missing=()
  for split in "${splits[@]}"; do
    [ -f "$aime_dir/aime_$split.jsonl" ] || missing+=("$split")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "skipped $name: no AIME ${missing[*]} in $aime_dir (arcmemo data fetch aime" \
      "--split YEAR, --source OWNER/NAME for a year without a default; or set" \
      "ARCMEMO_DATA_DIR)" >&2
    continue
  fi
  scripts+=("$script")
done

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
: > "$scratch/not-estimated.txt"
for script in "${scripts[@]}"; do
  if ! EXPERIMENTS_ESTIMATE="$scratch/not-estimated.txt" RUNS="$scratch/runs" \
      bash "$script" > "$scratch/estimate.log" 2>&1; then
    cat "$scratch/estimate.log" >&2
    echo "all.sh: the dry run of ${script#"$here"/} failed (above); nothing was run" >&2
    exit 1
  fi
done
python3 "$here/estimate_total.py" "$scratch/runs"
if [ -s "$scratch/not-estimated.txt" ]; then
  echo "Not in the estimate (no dry run; see experiments/README.md for their cost):"
  sort -u "$scratch/not-estimated.txt" | grep -v '^arcmemo table ' | sed "s|$scratch/runs|\$RUNS|g; s/^/  /"
fi

if [ "$yes" != 1 ]; then
  printf 'Run these %d scripts for real (this spends the money above)? [y/N] ' "${#scripts[@]}" >&2
  answer=""
  read -r answer || true
  case "$answer" in
    y|Y|yes|YES) ;;
    *) echo "all.sh: nothing run" >&2; exit 1 ;;
  esac
fi
for script in "${scripts[@]}"; do
  echo "== ${script#"$here"/}" >&2
  bash "$script"
done
