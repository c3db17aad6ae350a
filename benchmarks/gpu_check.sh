#!/usr/bin/env bash
# One GPU check of torch_foo on a lent machine, results in DIR (issue 23):
#
#   ./run gpu-check DIR                      # = bash benchmarks/gpu_check.sh DIR
#   GPU_CHECK_REHEARSAL=1 PYTHON=.venv/bin/python GPU_CHECK_BUDGET=150 ./run gpu-check /tmp/gc   # no GPU
#
# Meant for a machine with an NVIDIA GPU, nvcc, torch (CUDA build), cmake, ninja,
# scikit-build-core, pybind11, pyyaml, jinja2, pytest and no network: nothing is downloaded and
# ./run's setup step (pip from PyPI) is not run. Steps, most valuable first, each under
# `timeout` and within an overall budget, so an interrupted run still leaves the best results:
#
#   machine       nvidia-smi, nvcc, python/torch versions, git HEAD, tools -> facts.txt
#   build         the cuda target for the visible GPU's architecture with all cores    -> build.log
#   smoke         a few ops on foo against torch.cuda and the CPU: a broken driver in seconds -> smoke.log
#   suite         pytest with TORCH_FOO_DRIVER=cuda (slow C++-building tests left out)  -> junit-cuda.xml, suite.log
#   benchmarks    bench_gpu.py (JSON), bench_overhead.py, bench_ops.py: foo vs torch.cuda -> bench_*.json/log
#   sanitizers    compute-sanitizer memcheck, racecheck, synccheck over kernel-family tests -> sanitizer-*.log
#   distributed   fooccl with the NCCL engine, world size 1 and 2                         -> dist-*.json, dist-*.log
#   extra         tests/device_generic and tests/test_extensions.py, if time is left      -> junit-cuda-extra.xml
#
# DIR/summary.md is rewritten after every step: a table of the steps (status, seconds; the one
# running when the run was cut off says so), then each step's findings.
#
# Settings (environment):
#   PYTHON                 interpreter (default python3; in a rehearsal .venv/bin/python when there)
#   GPU_CHECK_BUDGET       seconds for the whole run (default 480); each step's timeout is cut to fit
#   GPU_CHECK_REHEARSAL=1  no GPU needed: sim driver, no build when torch_foo imports, a tiny test
#                          selection, small benchmarks against the CPU, tools that are missing skipped
#   GPU_CHECK_BUILD        auto (default: build; a rehearsal never builds, and stops when torch_foo
#                          does not import) | 1 (build) | 0 (use the installed torch_foo)
#   GPU_CHECK_TESTS        the suite's pytest arguments instead of the default selection
#   GPU_CHECK_WORKERS      pytest-xdist workers of the suite when xdist is installed (default 8; 1: none)
#   GPU_CHECK_GIT_HEAD     commit to report where DIR's tree has no .git (the device tool copies none)
#   GPU_CHECK_COPY_TO      a folder that gets summary.md and gpu-check.tar.gz (all of DIR) after every
#                          step: for the device tool, whose $OUT returns at most 8 files
#   GPU_CHECK_SKIP         space-separated step names to skip (e.g. "sanitizers extra")
set -uo pipefail  # no -e: a failing step is recorded and the next one runs
shopt -s lastpipe  # `... | detail_block` appends to DETAILS in this shell, not in a subshell
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 2
fi
mkdir -p "$1" || exit 2
DIR=$(cd "$1" && pwd)  # relative to where the script was called from
case "${PYTHON:-}" in  # likewise PYTHON; the steps run in other folders
  */*) d=$(cd "$(dirname "$PYTHON")" 2> /dev/null && pwd) && PYTHON=$d/$(basename "$PYTHON") ;;
esac
cd "$(dirname "$0")/.."
ROOT=$PWD

REHEARSAL=${GPU_CHECK_REHEARSAL:-0}
BUDGET=${GPU_CHECK_BUDGET:-480}
if [ -z "${PYTHON:-}" ] && [ "$REHEARSAL" = 1 ] && [ -x "$ROOT/.venv/bin/python" ]; then
  PYTHON=$ROOT/.venv/bin/python
fi
PY=${PYTHON:-python3}
COPY_TO=${GPU_CHECK_COPY_TO:-}
NPROC=$(nproc)
START=$SECONDS

if [ "$REHEARSAL" = 1 ]; then
  export TORCH_FOO_DRIVER=sim
  # A shared machine: one host thread for the emulator and for torch's CPU side.
  export TORCH_FOO_SIM_THREADS=${TORCH_FOO_SIM_THREADS:-1} OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
  MODE="rehearsal (sim driver, no GPU needed)"
else
  export TORCH_FOO_DRIVER=cuda
  MODE="GPU (cuda driver)"
fi
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=$PATH:/usr/local/cuda/bin
fi

# ---------------------------------------------------------------------------------------------
# The summary: a header, the table of steps, the findings; rewritten whole after every change.
STEP_NAMES=() STEP_STATUS=() STEP_SECONDS=() STEP_NOTES=()
DETAILS=""
CURRENT=""  # "name|start|timeout" of the step in progress
FAILED=0

elapsed() { echo $((SECONDS - START)); }
left() { echo $((BUDGET - (SECONDS - START))); }

write_summary() {
  local i n s t tmp=$DIR/.summary.md.tmp
  {
    echo "# torch_foo GPU check"
    echo
    echo "Mode: $MODE. Budget ${BUDGET} s, ${NPROC} cores. Started $(date -d "@$START_EPOCH" '+%Y-%m-%d %H:%M:%S %Z' 2>/dev/null || echo "$START_EPOCH"), $(elapsed) s ago${FINISHED:+; finished}."
    echo "Command: \`$COMMAND_LINE\` (results in $DIR)."
    echo
    echo "| step | status | seconds | notes |"
    echo "|---|---|---:|---|"
    for i in "${!STEP_NAMES[@]}"; do
      echo "| ${STEP_NAMES[$i]} | ${STEP_STATUS[$i]} | ${STEP_SECONDS[$i]} | ${STEP_NOTES[$i]} |"
    done
    if [ -n "$CURRENT" ]; then
      IFS='|' read -r n s t <<< "$CURRENT"
      echo "| $n | RUNNING (cut off here if nothing follows) | started at +$s s | timeout $t s |"
    fi
    echo
    printf '%s' "$DETAILS"
  } > "$tmp" && mv "$tmp" "$DIR/summary.md"
  if [ -n "$COPY_TO" ]; then
    mkdir -p "$COPY_TO"
    cp "$DIR/summary.md" "$COPY_TO/summary.md"
    tar czf "$COPY_TO/.gpu-check.tar.gz.tmp" -C "$DIR" --exclude=.summary.md.tmp . 2>/dev/null \
      && mv "$COPY_TO/.gpu-check.tar.gz.tmp" "$COPY_TO/gpu-check.tar.gz"
  fi
}

detail() {  # append findings (markdown) of the current step
  DETAILS+="$*"$'\n'
}

detail_block() {  # a fenced block from stdin, at most $1 lines
  local max=${1:-40} text
  text=$(head -n "$max")
  DETAILS+=$'```\n'"$text"$'\n```\n'
}

STEP_T=0 STEP_START=0
begin_step() {  # name cap min [reserve]: sets STEP_T, the step's timeout: at most cap seconds,
  # leaving reserve seconds of the budget to the steps after it unless that leaves less than min;
  # false (and the step recorded as skipped) when less than min is left at all
  local name=$1 cap=$2 min=${3:-15} reserve=${4:-0} budget_left
  budget_left=$(( $(left) - 5 ))
  detail ""
  detail "## $name"
  detail ""
  if [[ " ${GPU_CHECK_SKIP:-} " == *" $name "* ]]; then
    record "$name" "skipped" 0 "GPU_CHECK_SKIP"
    return 1
  fi
  if [ "$budget_left" -lt "$min" ]; then
    record "$name" "skipped" 0 "budget: ${budget_left} s left, needs ${min}"
    return 1
  fi
  STEP_T=$(( budget_left - reserve > min ? budget_left - reserve : min ))
  STEP_T=$(( STEP_T < cap ? STEP_T : cap ))
  STEP_START=$SECONDS
  CURRENT="$name|$(elapsed)|$STEP_T"
  write_summary
  echo "== gpu-check: $name (timeout ${STEP_T} s, +$(elapsed) s)" >&2
  return 0
}

record() {  # name status seconds notes
  STEP_NAMES+=("$1") STEP_STATUS+=("$2") STEP_SECONDS+=("$3") STEP_NOTES+=("${4//|/\\|}")
  CURRENT=""
  detail ""
  detail "**$2** in $3 s. ${4}"
  write_summary
  echo "== gpu-check: $1: $2 ($3 s) $4" >&2
}

end_step() {  # name status notes
  case "$2" in PASS|skipped|partial*) ;; *) FAILED=1 ;; esac
  record "$1" "$2" $((SECONDS - STEP_START)) "$3"
}

run_timed() {  # seconds log command...: runs under timeout (SIGINT first: pytest then writes its
  # reports), appends stdout+stderr to log, returns the command's status (124: timed out)
  local t=$1 log=$2
  shift 2
  echo "\$ $*" >> "$log"
  timeout -k 15 -s INT "$t" "$@" >> "$log" 2>&1
}

status_of() {  # rc -> status word
  case "$1" in 0) echo PASS ;; 124|137) echo TIMEOUT ;; *) echo "FAIL (exit $1)" ;; esac
}

finish() {
  FINISHED=1
  CURRENT=""
  detail ""
  detail "Total: $(elapsed) s of the ${BUDGET} s budget."
  write_summary
  echo "== gpu-check: done in $(elapsed) s; $DIR/summary.md" >&2
  sed -n '/^| step /,/^$/p' "$DIR/summary.md"  # the table on stdout too (a tool that keeps only the output)
  exit "$1"
}

START_EPOCH=$(date +%s)
COMMAND_LINE="GPU_CHECK_REHEARSAL=$REHEARSAL GPU_CHECK_BUDGET=$BUDGET PYTHON=$PY ./run gpu-check $1"
FINISHED=""
rm -f "$DIR/summary.md"
write_summary

# ---------------------------------------------------------------------------------------------
# machine: facts first, so even a run that fails at once says where it ran.
begin_step machine 60 5
{
  echo "date: $(date -Is)"
  echo "host: $(uname -srm), $NPROC cores, $(free -g 2>/dev/null | awk '/^Mem:/ {print $2 " GiB memory"}')"
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  echo
  echo "--- nvidia-smi"
  timeout 20 nvidia-smi 2>&1 || echo "(nvidia-smi: not available)"
  timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap,clocks.max.sm,power.limit \
    --format=csv 2>&1 || true
  echo
  echo "--- nvcc --version"
  timeout 20 nvcc --version 2>&1 || echo "(nvcc: not found)"
  echo
  echo "--- tools"
  for tool in cmake ninja compute-sanitizer ncu gcc; do
    printf '%s: ' "$tool"
    p=$(command -v "$tool" || true)
    [ -z "$p" ] && [ -x "/usr/local/cuda/bin/$tool" ] && p=/usr/local/cuda/bin/$tool
    if [ -n "$p" ]; then echo "$p $(timeout 20 "$p" --version 2>&1 | grep -m1 -iE 'version|[0-9]+\.[0-9]+')"; else echo "not found"; fi
  done
  echo
  echo "--- git"
  if git -C "$ROOT" rev-parse HEAD > /dev/null 2>&1; then
    echo "HEAD: $(git -C "$ROOT" log -1 --format='%H %cd %s' --date=iso)"
    echo "changed files: $(git -C "$ROOT" status --porcelain | wc -l)"
  else
    echo "HEAD: ${GPU_CHECK_GIT_HEAD:-unknown (no .git here; set GPU_CHECK_GIT_HEAD)}"
  fi
  echo
  echo "--- python"
  TORCH_DEVICE_BACKEND_AUTOLOAD=0 timeout 60 "$PY" - <<'EOF' 2>&1
import importlib.metadata as md, importlib.util, platform, sys
print(f"python {platform.python_version()} at {sys.executable}")
for name in ("torch", "scikit-build-core", "pybind11", "pytest", "pytest-xdist", "pytest-timeout", "pyyaml",
             "jinja2", "numpy", "ninja", "cmake"):
    try:
        print(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name} not installed")
import torch, torch.distributed as dist
cuda = torch.cuda.is_available()
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuda available {cuda}, "
      f"GPUs {torch.cuda.device_count() if cuda else 0}"
      + (f" ({torch.cuda.get_device_name(0)}, capability {torch.cuda.get_device_capability(0)})" if cuda else ""))
nccl = dist.is_available() and dist.is_nccl_available()
print(f"NCCL {'.'.join(map(str, torch.cuda.nccl.version())) if nccl else 'not available'}")
print(f"GPU_COUNT={torch.cuda.device_count() if cuda else 0}")
print(f"NCCL_OK={int(bool(nccl and cuda))}")
print(f"XDIST={int(importlib.util.find_spec('xdist') is not None)}")
print(f"PYTEST_TIMEOUT={int(importlib.util.find_spec('pytest_timeout') is not None)}")
EOF
} > "$DIR/facts.txt" 2>&1
fact() { grep -m1 "^$1=" "$DIR/facts.txt" | cut -d= -f2; }
GPU_COUNT=$(fact GPU_COUNT); GPU_COUNT=${GPU_COUNT:-0}
NCCL_OK=$(fact NCCL_OK); NCCL_OK=${NCCL_OK:-0}
HAVE_XDIST=$(fact XDIST); HAVE_TIMEOUT=$(fact PYTEST_TIMEOUT)
SANITIZER=$(command -v compute-sanitizer || { [ -x /usr/local/cuda/bin/compute-sanitizer ] && echo /usr/local/cuda/bin/compute-sanitizer; } || true)
grep -E '^(host|load average|HEAD|python |torch |NCCL |Cuda compilation|Build cuda|name,|NVIDIA |changed files)|^(cmake|ninja|compute-sanitizer|ncu|gcc|scikit-build-core|pybind11|pytest[a-z-]*):? ' \
  "$DIR/facts.txt" | detail_block 30
if [ "$REHEARSAL" != 1 ] && [ "$GPU_COUNT" -lt 1 ]; then
  end_step machine "FAIL" "torch sees no GPU: this is no GPU machine (GPU_CHECK_REHEARSAL=1 rehearses without one)"
  finish 2
fi
end_step machine PASS "$GPU_COUNT GPU(s), NCCL $([ "$NCCL_OK" = 1 ] && echo yes || echo no), python: $PY"

# ---------------------------------------------------------------------------------------------
# build
# A rehearsal never compiles unless told to (GPU_CHECK_BUILD=1): it runs on shared machines.
build_wanted=${GPU_CHECK_BUILD:-auto}
if [ "$build_wanted" = auto ]; then
  build_wanted=1
  if [ "$REHEARSAL" = 1 ]; then
    build_wanted=0
    if ! (cd /tmp && TORCH_DEVICE_BACKEND_AUTOLOAD=0 "$PY" -c "import torch_foo") > /dev/null 2>&1; then
      detail ""; detail "## build"; detail ""
      record build "FAIL" 0 "torch_foo does not import with $PY and a rehearsal does not build (GPU_CHECK_BUILD=1 builds)"
      finish 1
    fi
  fi
fi
if [ "$build_wanted" != 1 ]; then
  detail ""; detail "## build"; detail ""
  record build skipped 0 "torch_foo already imports with $PY (GPU_CHECK_BUILD=${GPU_CHECK_BUILD:-auto}, rehearsal=$REHEARSAL)"
elif begin_step build 360 60; then
  use_cuda=ON
  [ "$REHEARSAL" = 1 ] && use_cuda=${FOO_USE_CUDA:-AUTO}
  (cd "$ROOT" && run_timed "$STEP_T" "$DIR/build.log" env FOO_USE_CUDA="$use_cuda" CMAKE_BUILD_PARALLEL_LEVEL="$NPROC" \
    PIP_BREAK_SYSTEM_PACKAGES=1 "$PY" -m pip install --no-build-isolation --no-deps --no-index -v -e .)
  rc=$?
  grep -m1 -E "cuda target: " "$DIR/build.log" | sed 's/^.*\(cuda target: \)/\1/' | detail_block 2
  ninja_log=$(ls -t "$ROOT"/build/*/.ninja_log 2>/dev/null | head -1)
  if [ -n "$ninja_log" ]; then
    "$PY" benchmarks/build_profile.py "$(dirname "$ninja_log")" --top 8 >> "$DIR/build.log" 2>&1 \
      && sed -n '/^jobs /,$p' "$DIR/build.log" | head -22 | detail_block 22
  fi
  if [ $rc -ne 0 ]; then
    detail "Last lines of build.log with an error:"
    grep -iE "error|fatal|failed" "$DIR/build.log" | tail -25 | detail_block 25
    end_step build "$(status_of $rc)" "FOO_USE_CUDA=$use_cuda, $NPROC jobs; the build failed: nothing else can run (build.log)"
    finish 1
  fi
  end_step build PASS "FOO_USE_CUDA=$use_cuda, $NPROC jobs (build.log)"
fi

# ---------------------------------------------------------------------------------------------
# smoke: a few ops on foo against torch.cuda (when there) and the CPU, in seconds.
if begin_step smoke 90 10; then
  (cd /tmp && run_timed "$STEP_T" "$DIR/smoke.log" "$PY" - <<'EOF')
import os, sys, time
t0 = time.perf_counter()
try:
    import torch
    import torch_foo
except Exception as e:  # noqa: BLE001
    print(f"IMPORT FAILED: {type(e).__name__}: {e}")
    sys.exit(3)
want, driver = os.environ.get("TORCH_FOO_DRIVER", "auto"), torch_foo.driver()
print(f"torch {torch.__version__}, torch_foo driver {driver}, foo devices {torch.foo.device_count()} "
      f"({torch.foo.get_device_properties(0).name}), torch.cuda available {torch.cuda.is_available()}, "
      f"imports {time.perf_counter() - t0:.1f} s")
if want != "auto" and driver != want:
    print(f"DRIVER MISMATCH: TORCH_FOO_DRIVER={want} but torch_foo.driver() is {driver}")
    sys.exit(2)
torch_foo.set_fallback_policy("error")  # the smoke tests foo's own kernels
refs = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
g = torch.Generator().manual_seed(0)
a, b = torch.randn(1000, 1000, generator=g), torch.randn(1000, 1000, generator=g)
idx = torch.randint(0, 1000, (300,), generator=g)
cases = [
    ("add", 1e-6, lambda d: a.to(d) + b.to(d)),
    ("mul, exp", 1e-6, lambda d: (a.to(d) * 0.5).exp()),
    ("sum", 1e-5, lambda d: a.to(d).sum()),
    ("sum over a transposed view", 1e-5, lambda d: a.to(d).t().sum(1)),
    ("strided copy", 0, lambda d: a.to(d)[:, ::3].contiguous()),
    ("softmax", 1e-5, lambda d: torch.softmax(a.to(d), -1)),
    ("mm float32", 1e-5, lambda d: a.to(d) @ b.to(d)),
    ("mm bfloat16", 2e-2, lambda d: a.to(d).bfloat16() @ b.to(d).bfloat16()),
    ("index_select", 0, lambda d: a.to(d).index_select(0, idx.to(d))),
    ("max over dim", 0, lambda d: a.to(d).max(dim=1).values),
]
failed = 0
for name, tol, fn in cases:
    try:
        start = time.perf_counter()
        out = fn("foo")
        got = out.cpu().double()
        first = time.perf_counter() - start
        errs = []
        for ref in refs:
            exp = fn(ref).cpu().double()
            err = ((got - exp).norm() / exp.norm().clamp_min(1e-30)).item() if got.shape == exp.shape else float("inf")
            errs.append((ref, err))
        ok = out.device.type == "foo" and all(e <= tol for _, e in errs)
    except Exception as e:  # noqa: BLE001
        print(f"FAIL {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        failed += 1
        continue
    failed += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}: relative error " + ", ".join(f"vs {r} {e:.1e}" for r, e in errs)
          + f" (bound {tol:g}; first call {first * 1e3:.1f} ms)")
x = torch.randn(1 << 20, device="foo")
mean, std = x.mean().item(), x.std().item()
ok = abs(mean) < 0.01 and abs(std - 1) < 0.01
failed += not ok
print(f"{'ok  ' if ok else 'FAIL'} randn on foo: mean {mean:.4f}, std {std:.4f}")
torch.foo.synchronize()
print(f"{len(cases) + 1 - failed} of {len(cases) + 1} smoke checks passed in {time.perf_counter() - t0:.1f} s")
sys.exit(1 if failed else 0)
EOF
  rc=$?
  detail_block 20 < "$DIR/smoke.log"
  if [ $rc -eq 2 ] || [ $rc -eq 3 ]; then
    end_step smoke "FAIL (exit $rc)" "torch_foo does not import or the driver is not $TORCH_FOO_DRIVER: nothing else can run (smoke.log)"
    finish 1
  fi
  end_step smoke "$(status_of $rc)" "$(tail -1 "$DIR/smoke.log")"
fi

# ---------------------------------------------------------------------------------------------
# suite
junit_summary() {  # junit.xml -> a line of counts and the failures
  "$PY" - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
n = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
t = sum(float(s.get("time", 0)) for s in suites)
print(f"COUNTS {n['tests']} tests: {n['tests'] - n['failures'] - n['errors'] - n['skipped']} passed, "
      f"{n['failures']} failed, {n['errors']} errors, {n['skipped']} skipped ({t:.0f} s)")
bad = []
for case in root.iter("testcase"):
    for kind in ("failure", "error"):
        el = case.find(kind)
        if el is not None:
            msg = (el.get("message") or el.text or "").strip().splitlines()
            bad.append(f"- {kind}: `{case.get('classname')}::{case.get('name')}`: {(msg[0] if msg else '')[:160]}")
for line in bad[:40]:
    print(line)
if len(bad) > 40:
    print(f"- ... and {len(bad) - 40} more (junit XML)")
EOF
}

run_pytest_step() {  # name junit log pytest-args...
  local name=$1 junit=$2 log=$3 rc line
  shift 3
  local extra=()
  if [ "$REHEARSAL" != 1 ] && [ "${HAVE_XDIST:-0}" = 1 ] && [ "${GPU_CHECK_WORKERS:-8}" != 1 ]; then
    extra+=(-n "${GPU_CHECK_WORKERS:-8}")
  fi
  [ "${HAVE_TIMEOUT:-0}" = 1 ] && extra+=(--timeout "${GPU_CHECK_TEST_TIMEOUT:-120}")
  (cd "$ROOT" && OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} run_timed "$STEP_T" "$log" "$PY" -m pytest -q -rfE \
    -p no:cacheprovider --durations=10 --junitxml="$junit" "${extra[@]}" "$@")
  rc=$?
  if [ -f "$junit" ] && line=$(junit_summary "$junit" 2> /dev/null); then
    detail "$(sed -n 's/^COUNTS //p' <<< "$line")"
    detail ""
    detail "$(grep -v '^COUNTS' <<< "$line")"
    notes=$(sed -n 's/^COUNTS //p' <<< "$line")
  else
    notes="no junit XML: $(grep -E '(passed|failed|error)' "$log" | tail -1)"
    detail "$notes"
  fi
  detail ""
  detail "Slowest tests (from $(basename "$log")):"
  sed -n '/slowest .*durations/,/^$/p' "$log" | head -12 | detail_block 12
  case $rc in
    0) end_step "$name" PASS "$notes" ;;
    5) end_step "$name" PASS "no tests ran (pytest exit 5): $notes" ;;
    124|137) end_step "$name" "TIMEOUT" "cut at ${STEP_T} s: $notes" ;;
    *) end_step "$name" "FAIL (exit $rc)" "$notes" ;;
  esac
}

if [ -n "${GPU_CHECK_TESTS:-}" ]; then
  read -r -a SUITE_ARGS <<< "$GPU_CHECK_TESTS"
elif [ "$REHEARSAL" = 1 ]; then
  SUITE_ARGS=(tests/test_elementwise.py tests/test_softmax_small.py tests/test_reduce.py tests/test_events.py)
else
  # Left out: tests that build C++ copies of the project (test_rebuild, test_extensions) and
  # PyTorch's OpInfo suites (device_generic) -- step "extra" runs them when time is left -- and
  # the torch.distributed tests, which put rank r on foo:r (one GPU per rank): step
  # "distributed" covers fooccl on this machine.
  SUITE_ARGS=(tests --ignore=tests/test_rebuild.py --ignore=tests/test_extensions.py --ignore=tests/device_generic
              --ignore=tests/test_distributed_collectives.py --ignore=tests/test_distributed_errors.py
              --ignore=tests/test_distributed_training.py)
fi
if begin_step suite 240 30 100; then
  detail "\`pytest ${SUITE_ARGS[*]}\` with TORCH_FOO_DRIVER=$TORCH_FOO_DRIVER$([ "$REHEARSAL" != 1 ] && [ "${HAVE_XDIST:-0}" = 1 ] && [ "${GPU_CHECK_WORKERS:-8}" != 1 ] && echo ", ${GPU_CHECK_WORKERS:-8} xdist workers")"
  detail ""
  run_pytest_step suite "$DIR/junit-$TORCH_FOO_DRIVER.xml" "$DIR/suite.log" "${SUITE_ARGS[@]}"
fi

# ---------------------------------------------------------------------------------------------
# benchmarks: foo against torch.cuda in one process (rehearsal: against the CPU, small sizes).
if begin_step benchmarks 120 20 60; then
  base=cuda
  gpu_args=(--json "$DIR/bench_gpu.json")
  overhead_args=(--baseline cuda --calls 1000 --repeats 5)
  ops_args=(--baseline cuda --seconds 0.2)
  if [ "$REHEARSAL" = 1 ]; then
    base=cpu
    gpu_args+=(--baseline cpu --quick)
    overhead_args=(--baseline cpu --calls 200 --repeats 3 --only add,sum,softmax,matmul)
    ops_args=(--baseline cpu --seconds 0.05 --scale 65536 --only add,exp,sum,softmax,mm)
  fi
  results=""
  # bench_gpu.py first (the JSON), half the step's time; then the two tables of the sim-era scripts.
  t=$(( STEP_T / 2 ))
  (cd "$ROOT/benchmarks" && run_timed "$t" "$DIR/bench_gpu.log" "$PY" bench_gpu.py "${gpu_args[@]}" --budget $((t * 3 / 4)))
  rc=$?; results+="bench_gpu $(status_of $rc); "
  [ $rc -ne 0 ] && FAILED=1
  detail "### bench_gpu.py (bench_gpu.json): foo vs $base"
  detail ""
  detail "$(grep -E '^(\||foo driver)' "$DIR/bench_gpu.log" | head -40 | sed 's/^foo driver.*/&\n/')"
  for script in bench_overhead bench_ops bench_ops_bf16; do
    t=$(( STEP_T - (SECONDS - STEP_START) - 2 ))
    [ "$t" -lt 8 ] && { results+="$script skipped (time); "; continue; }
    case $script in
      bench_overhead) cmd=(bench_overhead.py "${overhead_args[@]}"); t=$(( t < 40 ? t : 40 )) ;;
      bench_ops) cmd=(bench_ops.py "${ops_args[@]}"); t=$(( t < 40 ? t : 40 )) ;;
      bench_ops_bf16) cmd=(bench_ops.py "${ops_args[@]}" --dtype bfloat16) ;;
    esac
    log=$DIR/$script.log
    (cd "$ROOT/benchmarks" && run_timed "$t" "$log" "$PY" "${cmd[@]}")
    rc=$?; results+="$script $(status_of $rc); "
    detail ""
    detail "### ${cmd[*]}"
    detail ""
    detail "$(grep -E '^(\||foo driver|load)' "$log" | head -n 45 | sed 's/^foo driver.*/&\n/')"
  done
  status=PASS
  [[ "$results" == *FAIL* ]] && status=FAIL
  [[ "$results" == *TIMEOUT* ]] && status="partial (a timeout)"
  end_step benchmarks "$status" "$results"
fi

# ---------------------------------------------------------------------------------------------
# sanitizers: compute-sanitizer over the kernel families' tests.
sanitizer_tests() {
  case $1 in
    memcheck) echo tests/test_elementwise.py tests/test_reduce.py tests/test_softmax.py tests/test_gemm.py \
                   tests/test_indexing.py tests/test_copy.py tests/test_attention.py ;;
    *) echo tests/test_reduce.py tests/test_softmax.py tests/test_gemm.py tests/test_attention.py \
            tests/test_indexing.py ;;
  esac
}
if [ -z "$SANITIZER" ] || [ "$REHEARSAL" = 1 ] || [ "$GPU_COUNT" -lt 1 ]; then
  detail ""; detail "## sanitizers"; detail ""
  record sanitizers skipped 0 "$( [ -z "$SANITIZER" ] && echo "compute-sanitizer not found" || echo "no GPU (rehearsal)" )"
elif begin_step sanitizers 210 30 30; then
  results=""
  tools=(memcheck racecheck synccheck)
  for i in "${!tools[@]}"; do
    tool=${tools[$i]}
    remaining=$(( STEP_T - (SECONDS - STEP_START) ))
    t=$(( remaining / (${#tools[@]} - i) ))  # an equal share of what is left
    if [ "$t" -lt 15 ]; then results+="$tool skipped (time); "; continue; fi
    log=$DIR/sanitizer-$tool.log
    read -r -a files <<< "${GPU_CHECK_SANITIZE_TESTS:-$(sanitizer_tests "$tool")}"
    (cd "$ROOT" && run_timed "$t" "$log" "$SANITIZER" --tool "$tool" --error-exitcode 99 --print-limit 30 \
      "$PY" -m pytest -q -p no:cacheprovider --maxfail=5 "${files[@]}")
    rc=$?
    errors=$(grep -m1 -oE 'ERROR SUMMARY: [0-9]+ errors?' "$log" || true)
    [ -z "$errors" ] && errors="$(grep -cE '^========= (Invalid|Error|Barrier|Uninitialized|Race|Program hit)' "$log") error reports so far"
    tests_line=$(grep -E '[0-9]+ (passed|failed)' "$log" | tail -1)
    case $rc in
      0) verdict=clean ;;
      99) verdict=ERRORS; FAILED=1 ;;
      124|137) verdict="TIMEOUT after $t s (partial)" ;;
      *) verdict="FAIL (exit $rc)"; FAILED=1 ;;
    esac
    results+="$tool: $verdict; "
    detail "### $tool ($(basename "$log")): $verdict, $errors; tests: ${tests_line:-none finished}"
    detail ""
    detail "Files: ${files[*]}"
    if grep -qE '^========= (Invalid|Error|Barrier|Uninitialized|Race|Program hit)' "$log"; then
      detail ""
      detail "Reports (first of each kind) and the kernels they name:"
      grep -E '^========= (Invalid|Error|Barrier|Uninitialized|Race|Program hit)' "$log" | sed 's/ at 0x[0-9a-f]*//' \
        | sort | uniq -c | sort -rn | head -12 | detail_block 12
      grep -oE '^=========     at [^(]+' "$log" | sed 's/^=========     at //' | sort | uniq -c | sort -rn | head -12 \
        | detail_block 12
    fi
    detail ""
  done
  status=PASS
  [[ "$results" == *ERRORS* || "$results" == *FAIL* ]] && status=FAIL
  [[ "$status" == PASS && "$results" == *TIMEOUT* ]] && status="partial (a timeout)"
  end_step sanitizers "$status" "$results"
fi

# ---------------------------------------------------------------------------------------------
# distributed: fooccl at world size 1 and 2.
if begin_step distributed 120 20; then
  results=""
  runs=()
  if [ "$NCCL_OK" = 1 ]; then
    runs+=("1 nccl")
    if [ "$GPU_COUNT" -ge 2 ]; then
      runs+=("2 nccl")
    else
      # NCCL refuses two ranks on one GPU: world 2 runs through the Gloo engine, both ranks on foo:0.
      runs+=("2 gloo")
      detail "World size 2 with NCCL needs 2 GPUs ($GPU_COUNT visible): world 2 runs the Gloo engine instead."
    fi
  else
    runs+=("1 auto" "2 auto")
    detail "NCCL not usable here (torch without NCCL or no GPU): the engine is the default choice (Gloo)."
  fi
  detail ""
  for i in "${!runs[@]}"; do
    read -r world engine <<< "${runs[$i]}"
    remaining=$(( STEP_T - (SECONDS - STEP_START) ))
    t=$(( remaining / (${#runs[@]} - i) ))
    if [ "$t" -lt 10 ]; then results+="world $world $engine skipped (time); "; continue; fi
    log=$DIR/dist-w$world-$engine.log
    (cd "$ROOT/benchmarks" && TORCH_FOO_DIST_ENGINE=$engine PYTHONWARNINGS=ignore::FutureWarning run_timed "$t" "$log" \
      "$PY" gpu_check_dist.py --world "$world" --timeout $((t - 5)) --json "$DIR/dist-w$world-$engine.json")
    rc=$?
    results+="world $world $engine: $(status_of $rc); "
    grep -vE '^\$ |: ok$' "$log" | grep -vE 'Warning: No backend of type 0' | head -25 | detail_block 25
  done
  status=PASS
  [[ "$results" == *FAIL* ]] && status=FAIL
  [[ "$status" == PASS && "$results" == *TIMEOUT* ]] && status="partial (a timeout)"
  end_step distributed "$status" "$results"
fi

# ---------------------------------------------------------------------------------------------
# extra: the slow suites, only with time to spare.
if [ "$REHEARSAL" = 1 ] && [ -z "${GPU_CHECK_EXTRA:-}" ]; then
  detail ""; detail "## extra"; detail ""
  record extra skipped 0 "rehearsal (GPU_CHECK_EXTRA=1 runs it)"
elif begin_step extra 600 60; then
  extra_args=(tests/device_generic tests/test_extensions.py)
  [ "$GPU_COUNT" -ge 2 ] && extra_args+=(tests/test_distributed_collectives.py tests/test_distributed_training.py)
  detail "\`pytest ${extra_args[*]}\`"
  detail ""
  run_pytest_step extra "$DIR/junit-$TORCH_FOO_DRIVER-extra.xml" "$DIR/extra.log" "${extra_args[@]}"
fi

finish $FAILED
