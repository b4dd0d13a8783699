#!/usr/bin/env bash
# The exact GPU recipe for the JetSpec hook (run from the repository root on a CUDA machine
# whose image has torch + triton but transformers 5: the pinned wheels go first on the path).
#
# Prepare here (the machine itself reaches no registry):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl transformers==4.57.6 tokenizers==0.22.2 huggingface_hub==0.36.2 \
#     pydantic==2.13.4 pydantic_core==2.46.4 annotated-types==0.7.0 typing-inspection==0.4.2
#   mkdir -p .external/jetspec_pkg && cp -r <JetSpec checkout at 2c7b3fa>/jetspec .external/jetspec_pkg/
# Then, on the device machine (carry .whl and .external/jetspec_pkg):
#   bash experiments/jetspec_gpu.sh        # writes logs and results.json under $OUT
set -o pipefail
OUT=${OUT:-/tmp/jetspec_gpu_out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD:$PWD/.external/jetspec_pkg HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch, transformers, triton; print('torch', torch.__version__, \
'transformers', transformers.__version__, 'triton', triton.__version__)"
MODELS=/tmp/jetspec_models

echo "== 1. tests: fake-JetSpec contract, real CPU opt-in, GPU (fp32, triton_paged_tree)"
timeout 170 python3 -m pytest tests/models/test_jetspec.py tests/cli/test_bench.py \
  -q -rs -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log"

echo "== 2. plain vs speculative and hook overhead, triton_paged_tree, fp32"
timeout 210 python3 experiments/jetspec_gpu.py --out "$OUT" --models-dir $MODELS \
  --models small,qwen3-0.6b-shape --backends triton_paged_tree --drafts echo,head \
  --prompts 3 --max-tokens 48 2>&1 | tee "$OUT/experiment.log"

echo "== 3. the CLI as a user runs it"
timeout 50 python3 -m arcmemo.cli.bench generation --model jetspec:$MODELS/small \
  --model-arg draft=echo --model-arg dtype=fp32 --model-arg attn_backend=triton_paged_tree \
  --model-arg tree_depth=7 --model-arg budget=32 --model-arg width=3 \
  --prompts 4 --max-tokens 64 --json "$OUT/cli.json" 2>&1 | tee "$OUT/cli.log"

echo "== 4. sdpa reference backend (small model, echo drafter)"
mkdir -p "$OUT/sdpa"
timeout 80 python3 experiments/jetspec_gpu.py --out "$OUT/sdpa" --models-dir $MODELS \
  --models small --backends sdpa --drafts echo --prompts 3 --max-tokens 48 2>&1 | tail -n 12

echo "== 5. try the CUDA-graph backend (compile + capture may not finish in time)"
mkdir -p "$OUT/cudagraph"
timeout "${CUDAGRAPH_TIMEOUT:-90}" python3 experiments/jetspec_gpu.py --out "$OUT/cudagraph" \
  --models-dir $MODELS --models small --backends triton_paged_tree_cudagraph --drafts echo \
  --prompts 2 --max-tokens 32 2>&1 | tail -n 12
echo "exit of step 5: $?"
