#!/usr/bin/env bash
# The flashtune command as a user runs it: --version, options as --name=VALUE and
# --name VALUE, missing values and repeated options named, one integer syntax, --format csv|json
# parsed back with python3, lost output (/dev/full) failing, write errors with their reason,
# tune --device N (no GPU; a stand-in driver with two GPUs), and the compile-only run's report.
# Usage: test_cli.sh FLASHTUNE FAKE_CUDA_DRIVER SOURCE_DIR
set -u
ft=$1 fake=$2 src=$3
tmp=$(mktemp -d /tmp/test_cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset FLASHTUNE_DB FAKE_CUDA_LOG FAKE_CUDA_DEVICES
export FLASHTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1   # no GPU, whatever this machine has
failures=0

fail() {
    echo "FAIL: $*"
    echo "  stdout: $(head -c 600 out)"
    echo "  stderr: $(head -c 600 err)"
    failures=$((failures + 1))
}

# expect STATUS NEEDLE -- COMMAND...: COMMAND exits with STATUS ("nonzero": any but 0) and its
# stdout or stderr holds NEEDLE (a fixed string; empty: anything).
expect() {
    local want=$1 needle=$2
    shift 3
    "$@" > out 2> err
    local got=$?
    if [ "$want" = nonzero ]; then
        [ "$got" -ne 0 ] || { fail "'$*' exited 0, expected non-zero"; return; }
    elif [ "$got" -ne "$want" ]; then
        fail "'$*' exited $got, expected $want"
        return
    fi
    if [ -n "$needle" ] && ! grep -qF -- "$needle" out err; then
        fail "'$*' did not say '$needle'"
    fi
}

# A small database of real winners: what 'best' and 'results' read.
export FLASHTUNE_DB=$tmp/tuned.db
expect 0 "" -- "$ft" db import "$src/db/tuned/h100-sm90.txt"
[ -s "$tmp/tuned.db" ] || fail "db import made no database"
# Declaring again: imported lines are no timings of this machine, so nothing is judged again.
expect 0 "flashtune db declare: 0 workloads (a tie: within 2.5 % of the fastest, or the spreads): 0 the fastest" -- "$ft" db declare --margin 2.5
expect 2 "--margin='-1' must be a percentage from 0 to 100" -- "$ft" db declare --margin=-1
expect 2 "--margin='2%' must be a percentage" -- "$ft" db declare --margin 2%
expect 2 "--margin is an option of 'db declare', not of 'db export'" -- "$ft" db export --margin 2
expect 2 "'db declare' takes no operand, got 1" -- "$ft" db declare x.txt
expect 1 "does not exist" -- "$ft" db declare --db "$tmp/none.db"

cat > tiny.lua <<'EOF'
return { space{ template = 'fwd_mma', fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 2, BLOCK_N = 64, NUM_WARPS = 4 },
  params = { BLOCK_M = {64} },
  workloads = { { dtype = 'bf16', head_dim = 64, causal = 0, batch = 1, heads = 2, seqlen = 256 } } } }
EOF
sed 's/NUM_STAGES = 2/NUM_STAGES = " 2"/' tiny.lua > blank.lua

# ---- conventions the lead made: --version, operands and empty paths named ----
expect 0 "flashtune " -- "$ft" --version
# 'help COMMAND' is that command's own help (it printed the global help); an unknown one is named.
expect 0 "usage: flashtune tune [--db FILE]" -- "$ft" help tune
expect 0 "usage: flashtune db export" -- "$ft" help db
expect 2 "unknown command 'nope'" -- "$ft" help nope
expect 0 "'flashtune help <command>'" -- "$ft" help
expect 2 "'foo'" -- "$ft" best foo
expect 2 "option --db needs a value" -- "$ft" results --db
expect 2 "option --db needs a value" -- "$ft" best --db
expect 2 "FLASHTUNE_DB" -- env FLASHTUNE_DB= "$ft" best

# ---- --name=VALUE everywhere; missing values and repeats named ----
expect 0 "compile-only run" -- "$ft" tune --threads=1 tiny.lua
expect 0 "compile-only run" -- "$ft" tune --threads 1 --db="$tmp/x.db" --arch=sm_80 tiny.lua
expect 2 "option --threads needs a value" -- "$ft" tune tiny.lua --threads
expect 2 "option --db needs a value" -- "$ft" tune tiny.lua --db
expect 2 "option --threads given twice ('1', then '2')" -- "$ft" tune --threads 1 --threads=2 tiny.lua
expect 2 "one SPACE.lua expected, got 'tiny.lua' and 'blank.lua'" -- "$ft" tune tiny.lua blank.lua

# ---- --from-capture: an application's problems in place of the spaces' own ----
cat > capture.txt <<'EOF'
flashtune capture format 1
op=fwd dtype=bf16 head_dim=64 head_dim_v=64 causal=1 batch=3 heads=2 seqlen_q=300 seqlen_k=300 calls=12 served=default
op=fwd dtype=f16 head_dim=64 head_dim_v=64 causal=0 batch=1 heads=2 seqlen_q=256 seqlen_k=256 calls=2 served=tuned
EOF
expect 0 "capture.txt: 2 problems, 14 calls; 1 served without a winner tuned for them" -- \
    "$ft" tune --threads=1 --from-capture capture.txt tiny.lua
grep -qF "dtype=f16 head_dim=64" out || fail "tune --from-capture did not list the problem no space takes"
grep -qF "1 spaces, 1 workloads" out || fail "tune --from-capture: tiny.lua's space did not take the bf16 problem"
sed -n 1,2p capture.txt > bad-capture.txt
echo "op=fwd dtype=bf16 head_dim=64 calls=1 served=tuned" >> bad-capture.txt
expect 2 "bad-capture.txt:3: workload: missing field 'batch'" -- "$ft" tune --from-capture bad-capture.txt tiny.lua
sed -n 1p capture.txt > f16-capture.txt
sed -n 3p capture.txt >> f16-capture.txt
expect 2 "no space takes any of the 1 captured problems" -- "$ft" tune --from-capture f16-capture.txt tiny.lua
expect 2 "cannot read capture file missing.txt" -- "$ft" tune --from-capture missing.txt tiny.lua
expect 2 "--budget='1d' must be a duration" -- "$ft" tune --budget=1d tiny.lua
expect 0 "--budget bounds this compile-only run too: it stops compiling after 600 s" -- \
    "$ft" tune --threads=1 --budget 10m tiny.lua
expect 0 "compile-only run" -- "$ft" tune --threads=1 --unseeded tiny.lua
expect 2 "unseeded" -- "$ft" tune --unseeded=1 tiny.lua
expect 2 "option --template given twice ('fwd_mma', then 'bwd_mma')" -- \
    "$ft" emit --template=fwd_mma --template bwd_mma
expect 2 "option --arch given twice" -- "$ft" compile --template fwd_mma --arch=sm_80 --arch=sm_90
expect 2 "parameter BLOCK_M given twice ('64', then '128')" -- "$ft" emit --template fwd_mma BLOCK_M=64 block_m=128
expect 0 "#define BLOCK_M 64" -- "$ft" emit --template=fwd_mma --arch=sm_80 BLOCK_M=64 NUM_WARPS=4
# emit --hash: the source_hash a winners line carries (the first shipped line's, recomputed);
# --hash and --log each belong to one command.
line=$(grep -m1 '^device=' "$src"/db/tuned/h100-sm90.txt)
params=$(printf '%s\n' $line | grep -E '^[A-Z_]+=' | tr '\n' ' ')
family=$(printf '%s\n' $line | sed -n 's/^family=//p')
shipped=$(printf '%s\n' $line | sed -n 's/^source_hash=//p')
expect 0 "$shipped" -- "$ft" emit --hash --template "$family" $params
expect 2 "--hash belongs to 'flashtune emit'" -- "$ft" compile --hash --template fwd_mma
expect 2 "--log belongs to 'flashtune compile'" -- "$ft" emit --log --template fwd_mma

# ---- a database in a folder that takes no new file names the folder. An immutable folder is
# read-only even for root (chmod is not); where chattr cannot make one, the case is said not run.
mkdir -p "$tmp/ro"
if chattr +i "$tmp/ro" 2> /dev/null; then
    expect 1 "(its folder $tmp/ro takes no new file" -- "$ft" db import --db "$tmp/ro/new.db" "$src/db/tuned/h100-sm90.txt"
    chattr -i "$tmp/ro"
else
    echo "test_cli: chattr +i failed here: the read-only folder's case did not run"
fi

# ---- NVRTC is opened at run time: a file that is not there is named, with the variable ----
expect nonzero "FLASHTUNE_NVRTC=/nonexistent/libnvrtc.so.13: cannot open it" -- \
    env FLASHTUNE_NVRTC=/nonexistent/libnvrtc.so.13 "$ft" compile --template fwd_mma --arch=sm_80 BLOCK_M=64 NUM_WARPS=4
expect nonzero "lacks nvrtcVersion (not an NVRTC library?)" -- \
    env FLASHTUNE_NVRTC=libm.so.6 "$ft" compile --template fwd_mma --arch=sm_80 BLOCK_M=64 NUM_WARPS=4
expect 0 "compiled in" -- "$ft" compile --template fwd_mma --arch=sm_80 BLOCK_M=64 NUM_WARPS=4
expect 0 "NVRTC: none (FLASHTUNE_NVRTC=/nonexistent/libnvrtc.so.13: cannot open it" -- \
    env FLASHTUNE_NVRTC=/nonexistent/libnvrtc.so.13 "$ft" doctor

# ---- one integer syntax: no blanks, no '+' ----
expect 2 "--threads='+1' must be an integer" -- "$ft" tune --threads=+1 tiny.lua
expect 2 "--threads=' 1' must be an integer" -- "$ft" tune --threads=' 1' tiny.lua
expect 2 "HEAD_DIM=+64 is not an integer" -- "$ft" emit --template fwd_mma HEAD_DIM=+64
expect 2 "NUM_STAGES= 2 is not an integer" -- "$ft" tune --threads 1 blank.lua
expect 2 "'+4' is not an integer" -- "$ft" results "op=fwd dtype=bf16 d=128 causal=0 b=+4 h=16 sq=4096 sk=4096"

# ---- --format csv|json, parsed back ----
expect 0 "" -- "$ft" best --format=json
cp out best.json
expect 0 "" -- "$ft" best --format csv
cp out best.csv
expect 0 "" -- "$ft" results --format json
cp out workloads.json
python3 - best.json best.csv workloads.json > py.out 2>&1 <<'EOF' || { cat py.out; fail "--format output did not parse back"; }
import csv, json, sys
best = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
workloads = json.load(open(sys.argv[3]))
assert len(best) > 10 and len(best) == len(rows), (len(best), len(rows))
for b, r in zip(best, rows):
    assert set(b) == set(r), (sorted(b), sorted(r))
    # JSON numbers: Python reads 481 as an int and 481.5 as a float; either is a number
    assert isinstance(b["median_ms"], (int, float)) and b["median_ms"] > 0, b
    assert isinstance(b["head_dim"], int) and isinstance(b["ok"], int) and isinstance(b["total"], int), b
    assert b["family"] == r["family"] and str(b["head_dim"]) == r["head_dim"], (b, r)
    # a tunable the op does not use: null in JSON, empty in CSV
    for k, v in b.items():
        assert v is not None or r[k] == "", (k, b, r)
    assert b["tflops"] is None or isinstance(b["tflops"], (int, float)), b
assert any(v is None for b in best for v in b.values()), "no null at all"
# every shipped line is declared as imported, with no figure of how far behind
assert all(b["declared"] == "imported" and b["behind"] is None for b in best), best[0]
assert {"id", "op", "dtype", "batch", "results", "ok", "best_ms"} <= set(workloads[0]), workloads[0]
w = workloads[0]
print("op=%s dtype=%s d=%d dv=%d causal=%d b=%d h=%d sq=%d sk=%d" % (w["op"], w["dtype"], w["head_dim"],
      w["head_dim_v"], w["causal"], w["batch"], w["heads"], w["seqlen_q"], w["seqlen_k"]))
EOF
workload=$(tail -1 py.out)
expect 0 "" -- "$ft" results --format json "$workload"
cp out results.json
expect 0 "" -- "$ft" results --format=csv --sort=-median_ms "$workload"
cp out results.csv
python3 - results.json results.csv > py.out 2>&1 <<'EOF' || { cat py.out; fail "results --format did not parse back"; }
import csv, json, sys
js = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert len(js) >= 1 and len(js) == len(rows), (len(js), len(rows))
for r in js:
    assert isinstance(r["kernel"], int) and isinstance(r["winner"], bool) and r["device"], r
    assert r["status"] == "ok" and isinstance(r["median_ms"], (int, float)), r
    assert r["min_ms"] is None or isinstance(r["min_ms"], (int, float)), r
assert sum(r["winner"] for r in js) == 1, js
assert rows[0]["winner"] in ("true", "false"), rows[0]
EOF
expect 2 "--format=xml is not text, csv or json" -- "$ft" best --format xml
expect 2 "option --format needs a value" -- "$ft" results --format

# ---- lost output fails, with the reason ----
expect nonzero "No space left on device" -- sh -c '"$0" best > /dev/full' "$ft"
expect nonzero "No space left on device" -- sh -c '"$0" best --format json > /dev/full' "$ft"
expect nonzero "No space left on device" -- sh -c '"$0" results > /dev/full' "$ft"
expect nonzero "No space left on device" -- sh -c '"$0" results "$1" > /dev/full' "$ft" "$workload"
expect 1 "writing standard output failed: No space left on device" -- \
    sh -c '"$0" emit --template fwd_mma > /dev/full' "$ft"
mkdir adir
expect 1 "writing adir failed: Is a directory" -- "$ft" emit --template fwd_mma -o adir
expect 1 "writing adir failed: Is a directory" -- "$ft" compile --template fwd_mma HEAD_DIM=64 --output=adir

# ---- tune --device N ----
expect 2 "--device 0: no GPU here" -- "$ft" tune --device 0 tiny.lua
expect 2 "--device='-1' must be an integer" -- "$ft" tune --device=-1 tiny.lua
export FLASHTUNE_CUDA_DRIVER=$fake FAKE_CUDA_DEVICES=2 FAKE_CUDA_LOG=$tmp/driver.log
expect 2 "--device 2: this machine has 2 GPUs (0..1)" -- "$ft" tune --device=2 tiny.lua
expect 0 "GPU 1, Fake GPU 1" -- "$ft" tune --device=1 --compile-only --threads 1 tiny.lua
# doctor: each GPU and whose winners would serve it (the stand-in's model has none of its own; the
# shipped tables' sm_90 models serve it, and the database's, imported above from the H100's table).
expect 0 "GPU 1: Fake GPU 1, sm_90, 132 SMs" -- "$ft" doctor
for needle in "CUDA driver 13.0" "database: $tmp/tuned.db (" "shipped: " \
              "winners of NVIDIA H100 80GB HBM3 (forward " "same arch: for what this model lacks"; do
    grep -qF -- "$needle" out || fail "doctor did not say '$needle'"
done
# The sweep on GPU 1: its worker opens device 1 (the stand-in then refuses a context).
: > driver.log
expect 1 "device 1: cuDevicePrimaryCtxRetain failed" -- "$ft" tune --device 1 --threads 1 --db "$tmp/s.db" tiny.lua
grep -qx "cuDevicePrimaryCtxRetain 1" driver.log || { cat driver.log; fail "the worker did not open device 1"; }
grep -q "cuDeviceGet 0\|Retain 0" driver.log && fail "device 0 was opened: $(cat driver.log)"
export FLASHTUNE_CUDA_DRIVER=/nonexistent/libcuda.so.1
unset FAKE_CUDA_DEVICES FAKE_CUDA_LOG

# doctor without a GPU says why, and the rest still; an operand is a usage error.
expect 0 "GPUs: none (no GPU here: no CUDA driver" -- "$ft" doctor
for needle in "flashtune " "shipped tables: " "CUBIN cache: " "default search space: "; do
    grep -qF -- "$needle" out || fail "doctor did not say '$needle'"
done
expect 2 "no operand expected, got 'now'" -- "$ft" doctor now
# doctor names the capture file and what it holds (the one --from-capture read above).
expect 0 "capture: capture.txt (2 problems, 1 served without a winner tuned for them" -- \
    env FLASHTUNE_CAPTURE=capture.txt "$ft" doctor
expect 0 "capture: bad-capture.txt:3: workload: missing field 'batch'" -- \
    env FLASHTUNE_CAPTURE=bad-capture.txt "$ft" doctor

# ---- the compile-only run says what it does, shows progress, counts spilling kernels ----
expect 0 "" -- "$ft" tune --threads 1 tiny.lua
for needle in "no GPU here: no CUDA driver" \
              "so this is a compile-only run: every distinct kernel of tiny.lua is compiled for sm_90" \
              "compiling for sm_90: 1/1 kernels done" \
              "1 of 1 kernels compiled for sm_90" \
              "no kernel spills registers to local memory" \
              "nothing was timed or stored"; do
    grep -qF -- "$needle" out || fail "tune (compile only) did not say '$needle'"
done
grep -q "needed for this" out && fail "tune (compile only) still says the GPU is needed"
# A kernel that spilled with NVRTC 13.0: the summary counts kernels, as the table's spills column.
cat > spill.lua <<'EOF'
return { space{ template = 'fwd_wgmma', fixed = { CAUSAL_SKIP = 1, NUM_STAGES = 1, BLOCK_N = 128, NUM_WARPS = 4 },
  params = { BLOCK_M = {64} },
  workloads = { { dtype = 'bf16', head_dim = 64, causal = 0, batch = 1, heads = 2, seqlen = 256 } } } }
EOF
expect 0 "" -- "$ft" tune --threads 1 spill.lua
spills=$(awk '/^fwd_wgmma / && $(NF-1) > 0' out | wc -l)
if [ "$spills" -gt 0 ]; then
    grep -qF "$spills of 1 kernels spill registers to local memory" out || fail "the spill summary is wrong"
else
    grep -qF "no kernel spills registers to local memory" out || fail "the spill summary is wrong"
fi

# A budget stops a compile-only run too (make tune's BUDGET where there is no GPU): one thread
# takes about a third of a second or more a kernel, so a budget of one second leaves most of 32
# kernels unreached.
cat > many.lua <<'EOF'
return { space{ template = 'bwd_wgmma', fixed = { CAUSAL_SKIP = 1, BLOCK_M = 64, BLOCK_N = 128, NUM_WARPS = 12 },
  params = { NUM_STAGES = {1, 2}, DQ_FIRST = {0, 1}, DV_EARLY = {0, 1}, DK_SS = {0, 1}, DQ_INIT = {0, 1} },
  workloads = { { dtype = 'bf16', head_dim = 128, causal = 0, batch = 1, heads = 2, seqlen = 256 } } } }
EOF
expect 0 "kernels not reached: the budget was spent (--budget)" -- \
    env FLASHTUNE_CACHE_DIR= "$ft" tune --threads 1 --budget 1 many.lua
grep -qF "compile-only run done" out || fail "a compile-only run cut by its budget did not end as done"

# ---- cache warm: the winners' kernels into the CUBIN cache on disk ----
# sm_80 has no shipped winners; a database of one sm_80 winner gives its kernel in the forms the
# library compiles (tiles dividing the lengths or not); a second run finds them all.
sed -e 's/arch=sm_90/arch=sm_80/' -e 's/cc=9.0/cc=8.0/' "$src/db/tuned/h100-sm90.txt" |
    grep -m1 'op=fwd dtype=bf16 .*family=fwd_mma ' > one80.txt
if [ -s one80.txt ]; then
    { head -3 "$src/db/tuned/h100-sm90.txt"; cat one80.txt; } > winners80.txt
    expect 0 "winners added" -- env FLASHTUNE_DB="$tmp/w80.db" "$ft" db import winners80.txt
    expect 0 "0 winners on sm_80" -- env FLASHTUNE_CACHE_DIR="$tmp/cubins" "$ft" cache warm --arch sm_80 --threads 2
    expect 0 "1 winners on sm_80" -- env FLASHTUNE_CACHE_DIR="$tmp/cubins" "$ft" cache warm --arch sm_80 --threads 2 \
        --db "$tmp/w80.db"
    grep -qE "[1-9][0-9]* compiled and stored" out || fail "cache warm stored nothing"
    ls "$tmp"/cubins/*-sm_80.cubin > /dev/null 2>&1 || fail "no CUBIN file in the cache folder"
    expect 0 "0 to compile" -- env FLASHTUNE_CACHE_DIR="$tmp/cubins" "$ft" cache warm --arch sm_80 --db "$tmp/w80.db"
else
    fail "no bf16 fwd_mma winner in the shipped table to make an sm_80 database of"
fi
expect 1 "the cache is off" -- env FLASHTUNE_CACHE_DIR= "$ft" cache warm
expect 2 "--arch=sm_99 is not a target" -- "$ft" cache warm --arch sm_99
expect 2 "expected 'warm', got cool" -- "$ft" cache cool

if [ "$failures" -ne 0 ]; then
    echo "$failures failures"
    exit 1
fi
echo "all CLI checks passed"
