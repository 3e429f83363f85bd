#!/usr/bin/env bash
# One short lease of an H200: a timing grid (opmodel measure; $GRID, default h200_8min) and a
# grid under Nsight Compute (scripts/ncu_cases.py; $NCU_GRID, default h200_ncu). Run from the
# repository root on the GPU machine, with PyTorch, nvidia-ml-py and PyYAML importable; results
# go to $OUT (default ./lease_out): log.txt, $GRID/{gemm.csv,ops.csv,run.json,SOURCE.md},
# ncu.csv, ncu_labels.csv (GRID=h200_kernels: kernel-scope times and kernel names, about 38 s,
# docs/measure.md). GRID=none skips the timing grid; CHASE=1 runs scripts/pointer_chase.py
# after it (L2 and DRAM load latency and the L2 survival sweep, CuPy) into pointer_chase.json,
# which scripts/l2_survival_report.py reads.
# LOCK_MHZ=1830 locks the SM clock for the timing grid (opmodel measure --lock-sm-clock-mhz;
# GRID=energaizer_gemms LOCK_MHZ=1830 NCU_GRID=none: the GEMMs of EnergAIzer's passes at the
# H100 set's clock, about 26 s by the dry run). NCU_GRID=none skips Nsight Compute.
# GRID=h200_backward NCU_GRID=none: SDPA and ATen norm/softmax backward passes beside their
# forwards, kernel-scope times, about 38 s by the dry run (docs/measure.md, "Backward cases").
# GRID=h200_moe: grouped GEMMs of three MoE models (torch._grouped_mm), about 29 s.
# GRID=h200_energy: board energy per kernel over 1.5 s NVML loops, about 40 s.
# GRID=h200_fp8: FP8 (torch._scaled_mm) and bf16 GEMMs of Llama-3 projections, about 30 s.
# Several grids in one lease: GRID="energaizer_gemms@1830 h200_backward h200_kernels" (a
# grid@MHZ entry locks the SM clock for that grid alone; GRID_S caps each grid).
# Each step has a wall-clock cap; the grid is stopped with SIGTERM, which writes what was
# measured (docs/measure.md).
set -u
OUT=${OUT:-lease_out}
GRID=${GRID:-h200_8min}
NCU_GRID=${NCU_GRID:-h200_ncu}
GRID_S=${GRID_S:-330}      # cap for the timing grid (its dry-run estimate is 216 s)
NCU_S=${NCU_S:-80}         # ncu_cases stops launching new cases after this
NCU_START=${NCU_START:-0}  # first case of the ncu grid (to finish an earlier, capped run)
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
date -u
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,temperature.gpu --format=csv || true
python3 -c "import sys, torch, pynvml, yaml; print(sys.version.split()[0], torch.__version__, torch.version.cuda)" || exit 1

if [ "$GRID" = none ]; then GRID_S=0; fi
# GRID may list several grids, each run in turn with its own cap; GRID_NAME@MHZ locks the SM
# clock for that grid alone (LOCK_MHZ: for every grid that names none)
for ENTRY in $GRID; do
    [ "$GRID_S" -gt 0 ] || break
    NAME=${ENTRY%@*}
    MHZ=${LOCK_MHZ:-}
    if [ "$ENTRY" != "$NAME" ]; then MHZ=${ENTRY#*@}; fi
    LOCK=()
    if [ -n "$MHZ" ]; then LOCK=(--lock-sm-clock-mhz "$MHZ"); fi
    timeout -k 30 -s TERM "$GRID_S" python3 -m opmodel measure --grid "$NAME" --hardware h200_sxm \
        --output-dir "$OUT/$NAME" --no-progress ${LOCK[@]+"${LOCK[@]}"}
    echo "grid $NAME exit status $?"
done
if [ "${CHASE:-0}" = 1 ]; then
    timeout -k 10 120 python3 scripts/pointer_chase.py --output "$OUT/pointer_chase.json"
    echo "pointer chase exit status $?"
fi
date -u

if [ "$NCU_GRID" = none ]; then date -u; sleep 1; exit 0; fi
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$NCU" ]; then echo "no ncu found"; exit 0; fi
"$NCU" --version | tail -1
FULL=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static,launch__waves_per_multiprocessor,sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed
MINIMAL=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size
for metrics in "$FULL" "$MINIMAL"; do
    timeout -k 10 -s TERM $((NCU_S + 60)) "$NCU" --profile-from-start off --cache-control all \
        --clock-control none --csv --log-file "$OUT/ncu.csv" --metrics "$metrics" \
        python3 scripts/ncu_cases.py launch --grid "$NCU_GRID" --hardware h200_sxm \
        --labels "$OUT/ncu_labels.csv" --max-seconds "$NCU_S" --start-index "$NCU_START"
    echo "ncu exit status $?"
    if grep -q spin_kernel "$OUT/ncu.csv"; then break; fi
    head -5 "$OUT/ncu.csv"
done
date -u
sleep 1
