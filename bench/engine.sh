#!/usr/bin/env bash
# bench/engine.sh: fslab's engine against fio, on the same file, on a private tmpfs.
#
#   sudo bench/engine.sh            # ROUNDS=3 SECS=10: about 5 minutes
#   ROUNDS=5 SECS=20 bench/engine.sh
#
# Cases (the goal is fslab/fio unless said otherwise):
#   1  4 KiB random reads of a cached 1 GiB file, 1 thread, sync  vs fio psync       IOPS  >= 1.10
#   2  the same, 4 threads                           vs fio numjobs=4, same file      IOPS  >= 1.10
#   3  the same, io_uring iodepth 32, 1 thread       vs fio io_uring iodepth=32       IOPS  >= 1.10
#   4  1 MiB sequential writes of a fresh 2 GiB file vs fio rw=write bs=1m size=2g    MiB/s >= 1.00
#   5  peak RSS (VmHWM) of fslab setting up 1,000,000 empty files                     MiB   <= 200
#   6  what latency timing costs: case 1 with and without --no-latency                %     <= 3
#
# fslab and fio alternate within every round; each figure is the median over the rounds.
# Environment: ROUNDS (3), SECS (10, time of each run of cases 1-3), LAT_ROUNDS (3 x ROUNDS) and
# LAT_SECS (SECS/3, at least 2) for case 6, FSLAB (binary,
# default target/release/fslab, built when missing), TMPFS_SIZE (6G), FIO_FALLOCATE (none: see
# case 4), FIO_EXTRA (more fio options for cases 1-3, e.g. --norandommap), KEEP (a directory to
# copy every raw JSON output to).
# Exit: 0 when everything ran (PASS or MISS), 1 when a run failed, 2 on a bad setting, 3 when
# something is missing (root, fio, python3, the binary and cargo to build it).

set -uo pipefail

ROUNDS=${ROUNDS:-3}
SECS=${SECS:-10}
TMPFS_SIZE=${TMPFS_SIZE:-6G}
FIO_FALLOCATE=${FIO_FALLOCATE:-none}
FIO_EXTRA=${FIO_EXTRA:-}
KEEP=${KEEP:-}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FSLAB=${FSLAB:-$REPO/target/release/fslab}

die() { echo "engine.sh: $*" >&2; exit 1; }
log() { printf '%s\n' "$*"; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "engine.sh: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2; }
[[ $SECS =~ ^[1-9][0-9]*$ ]] || { echo "engine.sh: SECS must be a positive integer (seconds), not '$SECS'" >&2; exit 2; }
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
T=""
MOUNTED=0
CHILD=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n $CHILD ]] && kill -0 "$CHILD" 2>/dev/null; then
        pkill -TERM -P "$CHILD" 2>/dev/null
        kill -TERM "$CHILD" 2>/dev/null
        wait "$CHILD" 2>/dev/null
    fi
    cd /
    if [[ -n $KEEP && -n $T && -d $T/out ]]; then
        mkdir -p "$KEEP" && cp -f "$T"/out/* "$T"/*.toml "$KEEP"/ 2>/dev/null
    fi
    if ((MOUNTED)); then
        umount "$T" 2>/dev/null || { sleep 1; umount "$T" 2>/dev/null; } || umount -l "$T" ||
            echo "engine.sh: could not unmount $T" >&2
    fi
    [[ -n $T && -d $T ]] && rmdir "$T" 2>/dev/null
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "engine.sh: interrupted" >&2; exit 130' INT TERM

T=$(mktemp -d "${TMPDIR:-/tmp}/fslab-engine.XXXXXX") || die "mktemp -d failed"
mount -t tmpfs -o "size=$TMPFS_SIZE,mode=0755" fslab-engine "$T" || { echo "engine.sh: cannot mount a tmpfs on $T" >&2; exit 3; }
MOUNTED=1
mount --make-private "$T" 2>/dev/null || true
OUTD=$T/out          # raw outputs, on the tmpfs too (gone at exit unless KEEP is set)
RD=$T/read           # run directory of the read cases: the file is $RD/adhoc/f0
WD=$T/write          # run directory of the write case
MD=$T/many           # run directory of the million files
mkdir -p "$OUTD" "$RD" "$WD" "$MD"
FILE=$RD/adhoc/f0

# Runs a command with its own stdout/stderr files, in the background so that a signal reaches the
# trap at once. Usage: run OUT ERR cmd...
run() {
    local out=$1 err=$2
    shift 2
    "$@" >"$out" 2>"$err" &
    CHILD=$!
    wait "$CHILD"
    local rc=$?
    CHILD=""
    return $rc
}

# python3 on a JSON file: jq FILE 'expression on d' (fio's notes before the JSON are skipped).
jq() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
s = open(sys.argv[1]).read()
d = json.loads(s[s.index('{'):])
j = d["jobs"][0] if "jobs" in d else None
v = eval(sys.argv[2], {"d": d, "j": j})
print(v if not isinstance(v, float) else repr(v))
EOF
}

# python3 arithmetic on numbers given as arguments: calc 'expression on a (list)' N...
calc() {
    python3 - "$@" <<'EOF'
import sys, statistics
expr = sys.argv[1]
a = [float(x) for x in sys.argv[2:]]
print(eval(expr, {"a": a, "median": statistics.median, "min": min, "max": max}))
EOF
}

fail_run() { # tool, out, err
    echo "engine.sh: $1 failed; its stderr:" >&2
    sed 's/^/    /' "$3" >&2
    echo "  its stdout (first lines):" >&2
    head -n 20 "$2" | sed 's/^/    /' >&2
    exit 1
}

N=0
next() { N=$((N + 1)); NEXT=$(printf '%s/%03d' "$OUTD" "$N"); }

# fslab checks: status ok, no errors, stopped as expected, and (for the read cases) the file reused.
check_fslab() { # json stopped_by want_reused
    local j=$1 problems
    problems=$(python3 - "$j" "$2" "$3" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
p = []
if d["status"] != "ok": p.append(f"status {d['status']}")
if d["totals"]["errors"]: p.append(f"{d['totals']['errors']} errors")
if d["stopped_by"] != sys.argv[2]: p.append(f"stopped_by {d['stopped_by']}, expected {sys.argv[2]}")
if sys.argv[3] == "yes" and not d["setup"][0]["reused"]: p.append("the fileset was laid out again (setup.reused false)")
print("; ".join(p))
EOF
)
    [[ -z $problems ]] || echo "    ! fslab: $problems" >&2
}

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
    VAL=$(jq "$o" 'd["totals"]["ops_per_sec"]')
}

# fio randread on the same file; sets VAL to read IOPS. Args: threads ioengine iodepth
fio_rr() {
    local th=$1 eng=$2 qd=$3 o e
    next
    o=$NEXT.fio.json e=$NEXT.fio.err
    # shellcheck disable=SC2086
    run "$o.stdout" "$e" "$FIO" --name=case --filename="$FILE" --rw=randread --bs=4k --size=1g \
        --ioengine="$eng" --iodepth="$qd" --numjobs="$th" --group_reporting \
        --time_based --runtime="$SECS" --output-format=json --output="$o" $FIO_EXTRA ||
        fail_run fio "$o" "$e"
    [[ $(jq "$o" 'j["error"]') == 0 ]] || fail_run fio "$o" "$e"
    VAL=$(jq "$o" 'j["read"]["iops"]')
}

fileid() { stat -c '%i %s %Y' "$FILE"; }

spread() { calc '"%.1f%%" % (100 * (max(a) - min(a)) / median(a))' "$@"; }

RESULTS=()   # lines: id|what|fslab|fio|unit|ratio|goal|verdict
fmt_int() { calc '"{:,.0f}".format(a[0])' "$1"; }

# ratio line. Args: id label unit fslab_values fio_values
compare() {
    local id=$1 label=$2 unit=$3 fv=$4 iv=$5 fm im ratio verdict
    fm=$(calc 'median(a)' $fv)
    im=$(calc 'median(a)' $iv)
    ratio=$(calc '"%.3f" % (a[0] / a[1])' "$fm" "$im")
    verdict=$(calc '"PASS" if a[0] >= a[1] - 1e-12 else "MISS"' "$ratio" "$GOAL")
    log "  => median fslab $(fmt_int "$fm") $unit, fio $(fmt_int "$im") $unit, fslab/fio $ratio   goal >= $GOAL   $verdict"
    log "     spread (max-min)/median: fslab $(spread $fv), fio $(spread $iv)"
    RESULTS+=("$id|$label|$(fmt_int "$fm") $unit|$(fmt_int "$im") $unit|$ratio|>= $GOAL|$verdict")
}

# ---- the header --------------------------------------------------------------------------------
log "fslab engine vs fio: ROUNDS=$ROUNDS SECS=$SECS on a ${TMPFS_SIZE} tmpfs at $T"
log "  fslab: $FSLAB ($("$FSLAB" --version 2>/dev/null), built $(date -r "$FSLAB" '+%F %T'))"
newer=$(find "$REPO/crates" -name '*.rs' -newer "$FSLAB" 2>/dev/null | head -n 3)
[[ -n $newer ]] && log "  note: sources with a later mtime than the binary (not rebuilt): $(echo $newer | sed "s|$REPO/||g")"
log "  fio: $("$FIO" --version)   kernel: $(uname -r)   cpus: $(nproc)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
START=$(date +%s)

# ---- the file, laid out once -------------------------------------------------------------------
next
o=$NEXT.layout.json
run "$o" "${o%.json}.err" "$FSLAB" run --op randread --bs 4k --size 1g --threads 1 --time 1s --dir "$RD" --json ||
    fail_run "fslab (layout)" "$o" "${o%.json}.err"
[[ -f $FILE && $(stat -c %s "$FILE") == 1073741824 ]] || die "fslab did not lay out $FILE at 1 GiB"
log "  laid out $FILE (1 GiB) in $(calc '"%.2f" % a[0]' "$(jq "$o" 'd["setup"][0]["duration_s"]')") s; both tools read it from here on"
LAYOUT_ID=$(fileid)

# ---- cases 1-3: random reads -------------------------------------------------------------------
rr_case() { # id label threads fslab_engine fio_engine iodepth
    local id=$1 label=$2 th=$3 feng=$4 ieng=$5 qd=$6 r f i fv="" iv=""
    log ""
    log "case $id: $label"
    for ((r = 1; r <= ROUNDS; r++)); do
        fslab_rr "$th" "$feng" "$qd"
        f=$VAL
        fio_rr "$th" "$ieng" "$qd"
        i=$VAL
        fv+=" $f" iv+=" $i"
        log "  round $r: fslab $(fmt_int "$f") IOPS   fio $(fmt_int "$i") IOPS   ($(calc '"%.3f" % (a[0]/a[1])' "$f" "$i"))"
    done
    GOAL=1.10 compare "$id" "$label" IOPS "$fv" "$iv"
}
rr_case 1 "4k randread, 1 GiB cached, 1 thread, sync vs psync" 1 sync psync 1
rr_case 2 "4k randread, 4 threads, sync vs psync numjobs=4" 4 sync psync 1
rr_case 3 "4k randread, 1 thread, io_uring iodepth 32" 1 io_uring io_uring 32

# ---- case 6: latency timing (case 1 with and without --no-latency) ----------------------------
log ""
log "case 6: cost of latency timing (case 1, fslab with vs without --no-latency; $LAT_ROUNDS rounds of ${LAT_SECS}s)"
lv="" nv=""
for ((r = 1; r <= LAT_ROUNDS; r++)); do
    RUNSECS=$LAT_SECS fslab_rr 1 sync 1
    l=$VAL
    RUNSECS=$LAT_SECS fslab_rr 1 sync 1 --no-latency
    n=$VAL
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

# ---- case 4: sequential writes of a fresh 2 GiB file -------------------------------------------
# Both tools start from no file: the fileset directory is removed before each run (fslab would
# otherwise keep the 2 GiB file from the run before, as "reused", and truncate it inside its
# measured time). fio's fallocate defaults to none here: with fio's own default (native) fio
# allocates the 2 GiB on the tmpfs while laying the file out, outside its timing, and then only
# copies into pages already there; fslab allocates while it writes.
log ""
log "case 4: 1 MiB sequential writes of a fresh 2 GiB file, 1 thread (fio fallocate=$FIO_FALLOCATE)"
WFILE=$WD/adhoc/f0
wf="" wi=""
for ((r = 1; r <= ROUNDS; r++)); do
    rm -rf "$WD/adhoc"
    next
    o=$NEXT.fslab.json
    run "$o" "${o%.json}.err" "$FSLAB" run --op write --bs 1m --size 2g --threads 1 --dir "$WD" --json ||
        fail_run fslab "$o" "${o%.json}.err"
    check_fslab "$o" done no
    [[ $(jq "$o" 'd["totals"]["bytes_written"]') == 2147483648 ]] ||
        log "    ! fslab wrote $(jq "$o" 'd["totals"]["bytes_written"]') bytes, not 2 GiB"
    f=$(jq "$o" 'd["totals"]["write_mib_per_sec"]')

    rm -rf "$WD/adhoc"
    mkdir -p "$WD/adhoc"
    next
    o=$NEXT.fio.json
    run "$o.stdout" "${o%.json}.err" "$FIO" --name=case --filename="$WFILE" --rw=write --bs=1m --size=2g \
        --ioengine=psync --fallocate="$FIO_FALLOCATE" --output-format=json --output="$o" ||
        fail_run fio "$o" "${o%.json}.err"
    [[ $(jq "$o" 'j["error"]') == 0 ]] || fail_run fio "$o" "${o%.json}.err"
    [[ $(jq "$o" 'j["write"]["io_bytes"]') == 2147483648 ]] ||
        log "    ! fio wrote $(jq "$o" 'j["write"]["io_bytes"]') bytes, not 2 GiB"
    i=$(jq "$o" 'j["write"]["bw_bytes"] / 1048576')
    wf+=" $f" wi+=" $i"
    log "  round $r: fslab $(fmt_int "$f") MiB/s   fio $(fmt_int "$i") MiB/s   ($(calc '"%.3f" % (a[0]/a[1])' "$f" "$i"))"
done
rm -rf "$WD/adhoc"
GOAL=1.00 compare 4 "1m seqwrite, fresh 2 GiB file, 1 thread" MiB/s "$wf" "$wi"
# Cases 1-3 first in the table, then 4.
c4=${RESULTS[-1]}
unset 'RESULTS[-1]'

# ---- case 5: memory of a million empty files ---------------------------------------------------
log ""
log "case 5: peak RSS of fslab setting up 1,000,000 empty files in 1,000 directories"
cat >"$T/million.toml" <<'EOF'
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
EOF
next
o=$NEXT.fslab.json
if [[ -x /usr/bin/time ]]; then
    how="/usr/bin/time -f %M"
    run "$o" "${o%.json}.err" /usr/bin/time -f %M -o "$OUTD/rss" "$FSLAB" run "$T/million.toml" --dir "$MD" --json ||
        fail_run fslab "$o" "${o%.json}.err"
    rss_kib=$(tail -n 1 "$OUTD/rss")
else
    how="polling /proc/PID/status VmHWM"
    "$FSLAB" run "$T/million.toml" --dir "$MD" --json >"$o" 2>"${o%.json}.err" &
    CHILD=$!
    rss_kib=0
    while kill -0 "$CHILD" 2>/dev/null; do
        v=$(awk '/^VmHWM:/ {print $2}' "/proc/$CHILD/status" 2>/dev/null)
        [[ -n $v && $v -gt $rss_kib ]] && rss_kib=$v
        sleep 0.05
    done
    wait "$CHILD" || fail_run fslab "$o" "${o%.json}.err"
    CHILD=""
fi
check_fslab "$o" time no
rss=$(calc '"%.1f" % (a[0] / 1024)' "$rss_kib")
setup_s=$(calc '"%.2f" % a[0]' "$(jq "$o" 'd["setup"][0]["duration_s"]')")
nfiles=$(jq "$o" 'd["setup"][0]["files"]')
nreal=$(find "$MD/million" -type f -name 'f*' | wc -l)
verdict=$(calc '"PASS" if a[0] <= 200 else "MISS"' "$rss")
log "  peak RSS $rss MiB ($how), setup of $nfiles files took $setup_s s ($nreal files on disk)   goal <= 200 MiB   $verdict"
c5="5|peak RSS, 1e6 empty files|$rss MiB|setup $setup_s s|$rss MiB|<= 200 MiB|$verdict"
rm -rf "$MD"

# ---- the table ---------------------------------------------------------------------------------
RESULTS+=("$c4" "$c5" "6|latency timing cost (case 1)|$(fmt_int "$lm") IOPS timed|$(fmt_int "$nm") IOPS untimed|$cost%|<= 3%|$verdict6")
log ""
log "summary: medians of $ROUNDS rounds, ${SECS}s runs (case 4: 2 GiB each; case 6: $LAT_ROUNDS rounds of ${LAT_SECS}s); took $(($(date +%s) - START)) s; load now $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s\n' "${RESULTS[@]}" | python3 -c '
import sys
rows = [["case", "what", "fslab", "fio / reference", "fslab/fio or figure", "goal", ""]]
rows += [l.rstrip("\n").split("|") for l in sys.stdin if l.strip()]
w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
right = {2, 3, 4}
for n, r in enumerate(rows):
    print("  " + "  ".join(c.rjust(w[i]) if i in right else c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
    if n == 0:
        print("  " + "  ".join("-" * x for x in w))
'
