#!/usr/bin/env bash
# bench/engine.sh: fslab's engine against fio (and a bare C loop), on the same files on a private
# tmpfs (and an ext4 image on a loop device, on that tmpfs), alternating within every round.
#
#   sudo bench/engine.sh                          # everything, ROUNDS=5: about 40 minutes
#   CASES="read uring" ROUNDS=5 SECS=3 sudo bench/engine.sh
#   T_IO_URING=/tmp/t-io_uring sudo bench/engine.sh          # with t/io_uring's limit
#   FIO_SRC=/tmp/scratch/fio sudo bench/engine.sh           # the same, built there when missing
#
# Cases (CASES, a list of these names; the goal is fslab/fio unless said otherwise):
#   read     1  4 KiB random reads of a cached 1 GiB file, 1 thread, sync vs fio psync     IOPS  >= 1.10
#            2  the same, 4 threads                        vs fio numjobs=4, same file    IOPS  >= 1.10
#            3  the same, io_uring iodepth 32, 1 thread    vs fio io_uring iodepth=32     IOPS  >= 1.10
#               (with T_IO_URING or FIO_SRC, t/io_uring's per-core peak beside it as the limit)
#   latency  6  what latency timing costs: case 1 with and without --no-latency           %     <= 3
#   seqwrite 4  1 MiB sequential writes of a fresh 2 GiB file, fio fallocate=none          MiB/s >= 1.00
#               (bench/seqwrite.sh: the method, and its spread; bench/seq_loop.c, a bare loop, as the limit)
#   rss      5  peak RSS (VmHWM) of fslab setting up 1,000,000 empty files                 MiB   <= 200
#   uring    7  io_uring at iodepth 1/8/32/128 x 1/2/4 threads, tmpfs and ext4 O_DIRECT    IOPS  >= 1.10
#               (bench/uring.sh; with T_IO_URING or FIO_SRC, t/io_uring's per-core peak as the limit)
#   meta     8  create, stat, unlink of empty files, a directory per thread, 1 and 4 threads:
#               vs fio filecreate/filestat/filedelete >= 1.10, vs bench/meta_loop.c >= 0.95
#               (bench/meta.sh; with valgrind, first each tool's user-space instructions per op)
#   scaling  9  IOPS against threads 1-16, psync and io_uring, fslab and fio (bench/scaling.sh)
#
# Every figure is the median over the rounds; spreads are (max-min)/median; ratios are the ratio
# of the medians and, beside it, the median [min-max] of the rounds' own ratios (each round runs
# the tools back to back, so its ratio sees the same state of a shared machine).
# A ratio goal is PASS or MISS only when a 90% confidence interval of the median of the rounds'
# own ratios lies wholly above or below it, and UNSETTLED when the interval straddles it or the
# rounds are fewer than 5 (bench/settle.py): on a noisy machine, more rounds settle it.
# Environment: CASES (all), ROUNDS (5), SECS (3, time of each timed run), R_BEST (1; with 3, each
# tool's best of three runs a round counts in cases 1-3, at three times their time), LAT_ROUNDS
# (3 x ROUNDS) and LAT_SECS (SECS/3, at least 2) for case 6, FSLAB (binary, default
# target/release/fslab, built when missing), TMPFS_SIZE (6G), FIO_EXTRA (more fio options for
# cases 1-3), KEEP (a directory to copy every raw output to), T_IO_URING (the path of fio's
# t/io_uring, built from fio's source outside this repository: the limit of cases 3 and 7; TIO,
# its older name, works) or FIO_SRC (a fio source tree outside this repository, where t/io_uring
# is built when missing; tio_setup and tio_peak in bench/lib.sh say how it is built and run), and
# each case script's own (see their headers).
# Exit: 0 when everything ran (PASS, MISS or UNSETTLED), 1 when a run failed, 2 on a bad setting,
# 3 when something is missing (root, fio, python3, /usr/bin/time, the binary and cargo to build
# it).

set -uo pipefail

ROUNDS=${ROUNDS:-5}
SECS=${SECS:-3}
R_BEST=${R_BEST:-1}
CASES=${CASES:-read latency seqwrite rss uring meta scaling}
TMPFS_SIZE=${TMPFS_SIZE:-6G}
FIO_EXTRA=${FIO_EXTRA:-}
KEEP=${KEEP:-}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$REPO/bench
FSLAB=${FSLAB:-$REPO/target/release/fslab}
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
for c in $CASES; do
    case $c in
    read | latency | seqwrite | rss | uring | meta | scaling) ;;
    *) echo "engine.sh: unknown case '$c' in CASES (read latency seqwrite rss uring meta scaling)" >&2; exit 2 ;;
    esac
done
want() { [[ " $CASES " == *" $1 "* ]]; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "engine.sh: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2; }
[[ $SECS =~ ^[1-9][0-9]*$ ]] || { echo "engine.sh: SECS must be a positive integer (seconds), not '$SECS'" >&2; exit 2; }
[[ $R_BEST =~ ^[1-9][0-9]*$ ]] || { echo "engine.sh: R_BEST must be a positive integer, not '$R_BEST'" >&2; exit 2; }
# Case 6 looks for a difference of a few percent, below the drift of this kind of machine from one
# run to the next: it alternates more and shorter runs (by default 3x the rounds, SECS/3 each).
LAT_ROUNDS=${LAT_ROUNDS:-$((3 * ROUNDS))}
LAT_SECS=${LAT_SECS:-$(( SECS / 3 > 2 ? SECS / 3 : 2 ))}
[[ $LAT_ROUNDS =~ ^[1-9][0-9]*$ && $LAT_SECS =~ ^[1-9][0-9]*$ ]] ||
    { echo "engine.sh: LAT_ROUNDS and LAT_SECS must be positive integers" >&2; exit 2; }

# ---- what this needs -------------------------------------------------------------------------
missing=()
[[ $(id -u) == 0 ]] || missing+=("root (mounting a tmpfs needs it: run with sudo)")
FIO=$(command -v fio || true)
[[ -n $FIO ]] || missing+=("fio (apt-get install fio)")
command -v python3 >/dev/null || missing+=("python3 (for JSON parsing)")
[[ -x /usr/bin/time ]] || missing+=("/usr/bin/time (apt-get install time)")
if want meta; then command -v cc >/dev/null || missing+=("cc, for bench/meta_loop.c (apt-get install gcc)"); fi
if want uring; then command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null ||
    missing+=("losetup and mkfs.ext4, for the O_DIRECT cases"); fi
command -v mount >/dev/null && command -v umount >/dev/null || missing+=("mount/umount (util-linux)")
if [[ ! -x $FSLAB ]] && ! command -v cargo >/dev/null; then
    missing+=("$FSLAB, and cargo to build it (cargo build --release)")
fi
if ((${#missing[@]})); then
    echo "engine.sh: cannot run; missing:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 3
fi
if [[ ! -x $FSLAB ]]; then
    log "fslab: $FSLAB is missing; building it (cargo build --release)..."
    if ! (cd "$REPO" && cargo build --release) >&2; then
        echo "engine.sh: cannot run; missing: $FSLAB (cargo build --release failed)" >&2
        exit 3
    fi
    [[ -x $FSLAB ]] || { echo "engine.sh: cannot run; missing: $FSLAB (not there after the build)" >&2; exit 3; }
fi

# ---- the tmpfs ---------------------------------------------------------------------------------
mount_tmpfs
RD=$T/read           # run directory of the read cases: the file is $RD/adhoc/f0
WD=$T/write          # run directory of the write case
MD=$T/many           # run directory of the million files
mkdir -p "$RD" "$WD" "$MD"
FILE=$RD/adhoc/f0

# fslab randread; sets VAL to ops/s (no command substitution, so that a signal stops the run at
# once). Args: threads engine iodepth [more fslab flags]
fslab_rr() {
    local th=$1 eng=$2 qd=$3
    shift 3
    local o e
    next
    o=$NEXT.fslab.json e=$NEXT.fslab.err
    run "$o" "$e" "$FSLAB" run --op randread --bs 4k --size 1g --threads "$th" --engine "$eng" \
        --iodepth "$qd" --time "${RUNSECS:-$SECS}s" --dir "$RD" --json "$@" || fail_run fslab "$o" "$e"
    check_fslab "$o" time yes
    VAL=$(jq "$o" 'r["totals"]["ops_per_sec"]')
}

# fio randread on the same file; sets VAL to read IOPS. Args: threads ioengine iodepth
fio_rr() {
    local th=$1 eng=$2 qd=$3 o e
    next
    o=$NEXT.fio.json e=$NEXT.fio.err
    # shellcheck disable=SC2086
    run "$o.stdout" "$e" "$FIO" --name=case --filename="$FILE" --rw=randread --bs=4k --size=1g \
        --ioengine="$eng" --iodepth="$qd" --numjobs="$th" --thread --group_reporting \
        --time_based --runtime="${RUNSECS:-$SECS}" --output-format=json --output="$o" $FIO_EXTRA ||
        fail_run fio "$o" "$e"
    [[ $(jq "$o" 'j["error"]') == 0 ]] || fail_run fio "$o" "$e"
    VAL=$(jq "$o" 'j["read"]["iops"]')
}

fileid() { stat -c '%i %s %Y' "$FILE"; }

# ---- the header --------------------------------------------------------------------------------
log "fslab engine vs fio: ROUNDS=$ROUNDS SECS=$SECS on a ${TMPFS_SIZE} tmpfs at $T"
log "  fslab: $FSLAB ($("$FSLAB" --version 2>/dev/null), built $(date -r "$FSLAB" '+%F %T'))"
newer=$(find "$REPO/crates" -name '*.rs' -newer "$FSLAB" 2>/dev/null | head -n 3)
[[ -n $newer ]] && log "  note: sources with a later mtime than the binary (not rebuilt): $(echo $newer | sed "s|$REPO/||g")"
log "  fio: $("$FIO" --version)   kernel: $(uname -r)   cpus: $(nproc)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
hold_reporting
if want read || want uring; then tio_setup; else TIO_BIN=""; fi
[[ -n $TIO_BIN ]] && log "  limit: fio's t/io_uring at $TIO_BIN (built $(date -r "$TIO_BIN" '+%F %T'))"
START=$(date +%s)

# ---- the file, laid out once -------------------------------------------------------------------
next
o=$NEXT.layout.json
run "$o" "${o%.json}.err" "$FSLAB" run --op randread --bs 4k --size 1g --threads 1 --time 1s --dir "$RD" --json ||
    fail_run "fslab (layout)" "$o" "${o%.json}.err"
[[ -f $FILE && $(stat -c %s "$FILE") == 1073741824 ]] || die "fslab did not lay out $FILE at 1 GiB"
log "  laid out $FILE (1 GiB) in $(calc '"%.2f" % a[0]' "$(jq "$o" 'r["setup"][0]["duration_s"]')") s; both tools read it from here on"
LAYOUT_ID=$(fileid)

# ---- cases 1-3: random reads -------------------------------------------------------------------
# With a 7th argument "limit" (and t/io_uring at hand), t/io_uring's per-core peak on the same file
# at the same iodepth, in every round after fio, and the tools' shares of it.
rr_case() { # id label threads fslab_engine fio_engine iodepth [limit]
    local id=$1 label=$2 th=$3 feng=$4 ieng=$5 qd=$6 lim=${7:-} r b t f i p fv="" iv="" pv="" order
    log ""
    log "case $id: $label$( ((R_BEST > 1)) && echo ", each tool's best of $R_BEST a round")"
    for ((r = 1; r <= ROUNDS; r++)); do
        # The tools take turns going first; with R_BEST, each runs that many times and its best
        # run counts.
        order="fslab fio"
        ((r % 2 == 0)) && order="fio fslab"
        local -A best=() runs=()
        for ((b = 0; b < R_BEST; b++)); do
            for t in $order; do
                if [[ $t == fslab ]]; then fslab_rr "$th" "$feng" "$qd"; else fio_rr "$th" "$ieng" "$qd"; fi
                runs[$t]+=" $(fmt_int "$VAL")"
                if beats "$VAL" "${best[$t]:-}"; then best[$t]=$VAL; fi
            done
        done
        f=${best[fslab]} i=${best[fio]}
        fv+=" $f" iv+=" $i"
        p=""
        if [[ $lim == limit ]]; then
            tio_peak "$FILE" "$qd" "${RUNSECS:-$SECS}" 0
            [[ -n $TIO_PEAK ]] && pv+=" $TIO_PEAK" p="   t/io_uring peak $(fmt_int "$TIO_PEAK") (mean $(fmt_int "$TIO_MEAN"))"
        fi
        log "  round $r: fslab $(fmt_int "$f") IOPS   fio $(fmt_int "$i") IOPS   ($(calc '"%.3f" % (a[0]/a[1])' "$f" "$i"))$p$( ((R_BEST > 1)) && echo "   runs: fslab [${runs[fslab]# }] fio [${runs[fio]# }]")"
    done
    GOAL=1.10 compare "$id" "$label" IOPS "$fv" "$iv"
    if [[ -n $pv ]]; then
        limit_of "$(calc 'median(a)' $fv)" "$(calc 'median(a)' $iv)" "$pv"
        log "  => limit, t/io_uring's per-core peak: $LIMIT_LINE"
        RESULTS+=("$id|  limit: t/io_uring's per-core peak, $LIMIT_PEAK|$LIMIT_FSLAB of it|$LIMIT_FIO of it|||")
    fi
}
if want read; then
    rr_case 1 "4k randread, 1 GiB cached, 1 thread, sync vs psync" 1 sync psync 1
    rr_case 2 "4k randread, 4 threads, sync vs psync numjobs=4" 4 sync psync 1
    rr_case 3 "4k randread, 1 thread, io_uring iodepth 32" 1 io_uring io_uring 32 limit
fi

# ---- case 6: latency timing (case 1 with and without --no-latency) ----------------------------
if want latency; then
    log ""
    log "case 6: cost of latency timing (case 1, fslab with vs without --no-latency; $LAT_ROUNDS rounds of ${LAT_SECS}s)"
    lv="" nv=""
    for ((r = 1; r <= LAT_ROUNDS; r++)); do
        if ((r % 2)); then
            RUNSECS=$LAT_SECS fslab_rr 1 sync 1 && l=$VAL && RUNSECS=$LAT_SECS fslab_rr 1 sync 1 --no-latency && n=$VAL
        else
            RUNSECS=$LAT_SECS fslab_rr 1 sync 1 --no-latency && n=$VAL && RUNSECS=$LAT_SECS fslab_rr 1 sync 1 && l=$VAL
        fi
        lv+=" $l" nv+=" $n"
        log "  round $r: timed $(fmt_int "$l") IOPS   --no-latency $(fmt_int "$n") IOPS   cost $(calc '"%.2f" % (100 * (a[1] - a[0]) / a[1])' "$l" "$n")%"
    done
    lm=$(calc 'median(a)' $lv)
    nm=$(calc 'median(a)' $nv)
    cost=$(calc '"%.2f" % (100 * (a[1] - a[0]) / a[1])' "$lm" "$nm")
    verdict6=$(calc '"PASS" if a[0] <= 3 else "MISS"' "$cost")
    log "  => median timed $(fmt_int "$lm") IOPS, untimed $(fmt_int "$nm") IOPS: latency timing costs $cost%   goal <= 3%   $verdict6"
    log "     spread (max-min)/median: timed $(spread $lv), untimed $(spread $nv); median of the rounds' own costs $(calc '"%.2f%%" % median([100 * (n - l) / n for l, n in zip(a[:len(a)//2], a[len(a)//2:])])' $lv $nv)"
    [[ $(fileid) == "$LAYOUT_ID" ]] || log "  ! $FILE changed during the read cases (inode/size/mtime: $LAYOUT_ID -> $(fileid))"
    RESULTS+=("6|latency timing cost (case 1)|$(fmt_int "$lm") IOPS timed|$(fmt_int "$nm") IOPS untimed|$cost%|<= 3%|$verdict6")
fi

# ---- case 4: sequential writes of a fresh 2 GiB file (bench/seqwrite.sh) -----------------------
if want seqwrite; then
    # shellcheck source=bench/seqwrite.sh
    source "$BENCH/seqwrite.sh"
    seqwrite_case
fi

# ---- case 5: memory of a million empty files ---------------------------------------------------
if want rss; then
    log ""
    log "case 5: peak RSS of fslab setting up 1,000,000 empty files in 1,000 directories"
    cat >"$T/million.toml" <<'TOML'
name = "million-empty"
description = "bench/engine.sh: the memory of a fileset of a million empty files"

[stop]
time = "1s"

[[fileset]]
name = "million"
files = 1000000
dirs = 1000
size = 0

[[group]]
name = "stat"
threads = 1
fileset = "million"

[[group.op]]
op = "stat"
TOML
    next
    o=$NEXT.fslab.json
    run "$o" "${o%.json}.err" "$FSLAB" run "$T/million.toml" --dir "$MD" --json || fail_run fslab "$o" "${o%.json}.err"
    check_fslab "$o" time no
    rss=$(calc '"%.1f" % (a[0] / 1024)' "$RSS_KIB")
    setup_s=$(calc '"%.2f" % a[0]' "$(jq "$o" 'r["setup"][0]["duration_s"]')")
    nfiles=$(jq "$o" 'r["setup"][0]["files"]')
    nreal=$(find "$MD/million" -type f -name 'f*' | wc -l)
    verdict=$(calc '"PASS" if a[0] <= 200 else "MISS"' "$rss")
    log "  peak RSS $rss MiB (/usr/bin/time %M), setup of $nfiles files took $setup_s s ($nreal files on disk)   goal <= 200 MiB   $verdict"
    RESULTS+=("5|peak RSS, 1e6 empty files|$rss MiB|setup $setup_s s|$rss MiB|<= 200 MiB|$verdict")
    rm -rf "${MD:?}/million"
fi

# ---- case 7: io_uring, iodepth x threads x filesystem (bench/uring.sh) -------------------------
if want uring; then
    # shellcheck source=bench/uring.sh
    source "$BENCH/uring.sh"
    uring_cases
fi

# ---- case 8: metadata (bench/meta.sh) ----------------------------------------------------------
if want meta; then
    # shellcheck source=bench/meta.sh
    source "$BENCH/meta.sh"
    meta_cases
fi

# ---- case 9: scaling with threads (bench/scaling.sh) -------------------------------------------
if want scaling; then
    # shellcheck source=bench/scaling.sh
    source "$BENCH/scaling.sh"
    scaling_table
fi

# ---- the table ---------------------------------------------------------------------------------
log ""
log "summary: CASES \"$CASES\", medians of $ROUNDS rounds, ${SECS}s runs; took $(($(date +%s) - START)) s; load now $(cut -d' ' -f1-3 /proc/loadavg)"
{
    echo "case|what|fslab|fio / reference|ratio (paired: median [min-max])|goal|"
    printf '%s\n' "${RESULTS[@]}"
} | print_table
