#!/usr/bin/env bash
# lucid on a GPU, in one command of under 8 minutes: MLX's CUDA backend installed from wheels brought to the machine,
# then the test suite with the GPU as MLX's default device, the zoo's mlp, lenet5 and gpt for a few hundred steps,
# and the benchmark's quick run (lucid and MLX on the GPU, PyTorch on CUDA, the same workloads in one process).
# Writes OUTDIR/report.md (each stage's status, time and the lines that matter) and OUTDIR/logs/*.log.
#
#   tools/gpu_check.sh OUTDIR [WHEELS]     # WHEELS: a folder of *.whl and/or *.whl.part* files (default .gpu_wheels)
#
# The wheels (docs/gpu.md says how to fetch them): mlx-0.32.4 (cp312, manylinux_2_35) and mlx_cuda_13-0.32.4; a
# wheel may come split into parts (name.whl.part1, name.whl.part2 ... or name.whl.partaa ...: joined in name order
# with cat). They are installed with `pip install --no-deps --target OUTDIR/site`, which goes first on PYTHONPATH,
# with lucid's src/. mlx-cuda-13 needs CUDA 13's libraries (cuBLAS, cuFFT, cuSOLVER, NVRTC, cuDNN 9, NCCL): they
# are taken from the pip-installed `nvidia` packages already on the machine (PyTorch's), else from the system.
#
# Environment:
#   PYTHON                  the interpreter (default python3)
#   GPU_CHECK_DEVICE        gpu (default) or cpu: a dry run on MLX's CPU device, with the MLX already installed
#   GPU_CHECK_INSTALL       1: in the dry run, install the wheels all the same (into OUTDIR/site, not used)
#   GPU_CHECK_STEPS         training steps per zoo model (default 300)
#   GPU_CHECK_TESTS         pytest targets (default: tests)
#   GPU_CHECK_BENCH         arguments for `python -m bench` (default: --quick on six workloads; see BENCH below)
#   GPU_CHECK_T_<STAGE>     a stage's time limit in seconds (STAGE: INSTALL ENV TESTS MLP LENET5 GPT BENCH)
set -u

OUT=${1:?usage: tools/gpu_check.sh OUTDIR [WHEELS]}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WHEELS=${2:-$ROOT/.gpu_wheels}
PY=${PYTHON:-python3}
DEVICE=${GPU_CHECK_DEVICE:-gpu}
STEPS=${GPU_CHECK_STEPS:-300}
TESTS=${GPU_CHECK_TESTS:-tests}
if [ "$DEVICE" = gpu ]; then TORCH_DEVICE=cuda; else TORCH_DEVICE=cpu; fi
BENCH=${GPU_CHECK_BENCH:-"--quick --only mlp --only tiny_mlp --only cnn --only transformer --only gpt --only hvp"}
# The limits add up to 470 s: one hanging stage costs its own limit, not the run.
T_INSTALL=${GPU_CHECK_T_INSTALL:-45}
T_ENV=${GPU_CHECK_T_ENV:-20}
T_TESTS=${GPU_CHECK_T_TESTS:-200}
T_MLP=${GPU_CHECK_T_MLP:-30}
T_LENET5=${GPU_CHECK_T_LENET5:-35}
T_GPT=${GPU_CHECK_T_GPT:-40}
T_BENCH=${GPU_CHECK_T_BENCH:-100}

mkdir -p "$OUT/logs" || exit 2
OUT=$(cd "$OUT" && pwd)
LOGS=$OUT/logs
STATUS=$OUT/status.tsv
: > "$STATUS"
cd "$ROOT" || exit 2
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg

# stage NAME LIMIT COMMAND...: run with a time limit, output to logs/NAME.log; one status line per stage
stage() {
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    echo "gpu_check: $name (limit ${limit}s) ..." >&2
    timeout -k 5 "$limit" "$@" > "$LOGS/$name.log" 2>&1
    local rc=$? status=ok
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then status="timeout (${limit} s)"; elif [ $rc -ne 0 ]; then status="failed (exit $rc)"; fi
    printf '%s\t%s\t%s\n' "$name" "$status" "$((SECONDS - t0))" >> "$STATUS"
    echo "gpu_check: $name: $status in $((SECONDS - t0)) s" >&2
    return $rc
}

skip() {  # skip NAME WHY
    printf '%s\t%s\t0\n' "$1" "skipped: $2" >> "$STATUS"
    echo "$2" > "$LOGS/$1.log"
}

# ---------------------------------------------------------------------------------------------------- install
install_wheels() {
    local site=$OUT/site parts=$OUT/joined
    rm -rf "$site" "$parts"
    mkdir -p "$site" "$parts"
    local wheels=()
    for w in "$WHEELS"/*.whl; do [ -e "$w" ] && wheels+=("$w"); done
    # name.whl.part* -> name.whl, the parts in name order (part1 part2 ..., or partaa partab ... from split)
    for base in $(ls "$WHEELS" | sed -n 's/\(\.whl\)\.part.*$/\1/p' | sort -u); do
        echo "joining $(ls "$WHEELS/$base".part* | sort -V | tr '\n' ' ')-> $base"
        cat $(ls "$WHEELS/$base".part* | sort -V) > "$parts/$base" || return 1
        wheels+=("$parts/$base")
    done
    [ ${#wheels[@]} -gt 0 ] || { echo "no *.whl or *.whl.part* in $WHEELS"; return 1; }
    for w in "${wheels[@]}"; do
        "$PY" -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).testzip()" "$w" || { echo "broken wheel: $w"; return 1; }
    done
    # one pip call: wheels that share the mlx/ folder (mlx and mlx-cuda-13) are merged, not skipped
    "$PY" -m pip install --no-deps --no-index --target "$site" "${wheels[@]}" || return 1
    # libmlx.so looks for CUDA's libraries under <its site-packages>/nvidia/...: point that at the machine's own
    local nv
    nv=$("$PY" -c "import nvidia, os; print(next(p for p in nvidia.__path__ if os.path.isdir(p)))" 2>/dev/null)
    if [ -n "$nv" ] && [ ! -e "$site/nvidia" ]; then
        ln -s "$nv" "$site/nvidia" && echo "CUDA libraries: $nv"
    fi
    echo "missing libraries of libmlx.so:"
    LD_LIBRARY_PATH=$(ls -d "$site"/nvidia/*/lib 2>/dev/null | tr '\n' ':')${LD_LIBRARY_PATH:-} \
        ldd "$site/mlx/lib/libmlx.so" | grep "not found" || echo "  none"
}

if [ "$DEVICE" = gpu ] || [ "${GPU_CHECK_INSTALL:-}" = 1 ]; then
    export OUT WHEELS PY
    export -f install_wheels
    if stage install "$T_INSTALL" bash -c install_wheels && [ "$DEVICE" = gpu ]; then
        export PYTHONPATH="$OUT/site:$PYTHONPATH"
        export LD_LIBRARY_PATH=$(ls -d "$OUT"/site/nvidia/*/lib 2>/dev/null | tr '\n' ':')${LD_LIBRARY_PATH:-}
    fi
else
    skip install "GPU_CHECK_DEVICE=$DEVICE: the dry run uses the MLX already installed"
fi

# ---------------------------------------------------------------------------------------------------- the checks
stage env "$T_ENV" bash -c "'$PY' -c 'import lucid, mlx.core as mx; lucid.show_config(); print(\"gpu available:\", mx.is_available(mx.gpu))';
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv;
    '$PY' -c 'import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, torch.cuda.is_available())' || true"

if [ "$DEVICE" = gpu ]; then TEST_DEVICE=gpu; else TEST_DEVICE=cpu; fi
# -v: a run cut off by its limit still shows every test it finished
stage tests "$T_TESTS" env LUCID_TEST_DEVICE=$TEST_DEVICE "$PY" -m pytest $TESTS -v -m "not slow" -p no:cacheprovider \
    --durations=15 -W ignore::DeprecationWarning

for model in mlp lenet5 gpt; do
    limit_var=T_$(echo $model | tr a-z A-Z)
    stage "train_$model" "${!limit_var}" "$PY" -m lucid train $model --steps "$STEPS" --device "$DEVICE" --quiet \
        --out "$OUT/runs/$model"
done

stage bench "$T_BENCH" "$PY" -m bench $BENCH --device "$DEVICE" --torch-device "$TORCH_DEVICE" \
    --output "$OUT/bench.md"

# ---------------------------------------------------------------------------------------------------- the report
"$PY" "$ROOT/tools/gpu_report.py" "$OUT" "$DEVICE"
echo "gpu_check: wrote $OUT/report.md" >&2
