# bench/lib.sh: what bench/engine.sh and the case scripts it sources share: a private tmpfs (and
# an ext4 loop image on it), running a tool with its CPU time recorded, JSON and arithmetic
# through python3, medians, spreads and paired ratios, and the summary table.
# Sourced, not run. Needs root, python3, /usr/bin/time, mount/umount (and losetup, mkfs.ext4 for
# the O_DIRECT cases).

# shellcheck source=bench/reporting.sh
source "$(dirname "${BASH_SOURCE[0]}")/reporting.sh"

die() { echo "engine.sh: $*" >&2; exit 1; }
log() { printf '%s\n' "$*"; }

T=""
MOUNTED=0
EXT4_MNT=""
EXT4_DEV=""
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
    if [[ -n $EXT4_MNT ]]; then
        umount "$EXT4_MNT" 2>/dev/null || { sleep 1; umount "$EXT4_MNT" 2>/dev/null; } || umount -l "$EXT4_MNT"
    fi
    [[ -n $EXT4_DEV ]] && losetup -d "$EXT4_DEV" 2>/dev/null
    if ((MOUNTED)); then
        umount "$T" 2>/dev/null || { sleep 1; umount "$T" 2>/dev/null; } || umount -l "$T" ||
            echo "engine.sh: could not unmount $T" >&2
    fi
    [[ -n $T && -d $T ]] && rmdir "$T" 2>/dev/null
    release_reporting
    exit "$rc"
}

# Mounts the private tmpfs at $T and makes $OUTD for the raw outputs.
mount_tmpfs() {
    trap cleanup EXIT
    trap 'echo "engine.sh: interrupted" >&2; exit 130' INT TERM
    T=$(mktemp -d "${TMPDIR:-/tmp}/fslab-engine.XXXXXX") || die "mktemp -d failed"
    mount -t tmpfs -o "size=$TMPFS_SIZE,mode=0755" fslab-engine "$T" || { echo "engine.sh: cannot mount a tmpfs on $T" >&2; exit 3; }
    MOUNTED=1
    mount --make-private "$T" 2>/dev/null || true
    OUTD=$T/out
    mkdir -p "$OUTD"
}

# An ext4 image of $1 on the tmpfs, on a loop device, mounted at $T/ext4 (EXT4_MNT): the O_DIRECT
# cases read through the block layer, from memory.
mount_ext4() {
    [[ -n $EXT4_MNT ]] && return 0
    local img=$T/ext4.img
    truncate -s "$1" "$img" && mkfs.ext4 -q -F "$img" || die "cannot make an ext4 image"
    EXT4_DEV=$(losetup --find --show "$img") || die "losetup failed"
    mkdir -p "$T/ext4"
    mount "$EXT4_DEV" "$T/ext4" || die "cannot mount $EXT4_DEV"
    EXT4_MNT=$T/ext4
}

# Runs a command with its own stdout/stderr files, in the background so that a signal reaches the
# trap at once; CPU seconds (user + system, its threads included) go to $CPU_S and its peak RSS in
# KiB to $RSS_KIB (GNU time's figures).
# Usage: run OUT ERR cmd...
run() {
    local out=$1 err=$2 prio=()
    shift 2
    [[ -n ${NICE:-} ]] && prio=(nice -n "$NICE")
    /usr/bin/time -f '%U %S %M' -o "$out.time" "${prio[@]}" "$@" >"$out" 2>"$err" &
    CHILD=$!
    wait "$CHILD"
    local rc=$?
    CHILD=""
    CPU_S=$(awk 'END {print $1 + $2}' "$out.time" 2>/dev/null)
    RSS_KIB=$(awk 'END {print $3}' "$out.time" 2>/dev/null)
    return $rc
}

# python3 on a JSON file: jq FILE 'expression on d' (fio's notes before the JSON are skipped; j is
# fio's first job; r is fslab's first phase result).
jq() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
s = open(sys.argv[1]).read()
d = json.loads(s[s.index('{'):])
j = d["jobs"][0] if "jobs" in d else None
r = d["phases"][0]["result"] if "phases" in d else None
v = eval(sys.argv[2], {"d": d, "j": j, "r": r})
print(v if not isinstance(v, float) else repr(v))
EOF
}

# True when a run's figure $1 beats the best of its round so far, $2 (or there is none yet).
beats() { [[ -z $2 ]] || (($(calc 'int(a[0] > a[1])' "$1" "$2"))); }

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

# fslab checks: status ok, no errors, stopped as expected, and (when asked) the fileset reused.
check_fslab() { # json stopped_by want_reused
    local j=$1 problems
    problems=$(python3 - "$j" "$2" "$3" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))["phases"][0]["result"]
p = []
if d["status"] != "ok": p.append(f"status {d['status']}")
if d["totals"]["errors"]: p.append(f"{d['totals']['errors']} errors")
if d["stopped_by"] != sys.argv[2]: p.append(f"stopped_by {d['stopped_by']}, expected {sys.argv[2]}")
if sys.argv[3] == "yes" and not all(s["reused"] for s in d["setup"]): p.append("the fileset was laid out again (setup.reused false)")
print("; ".join(p))
EOF
)
    [[ -z $problems ]] || echo "    ! fslab: $problems" >&2
}

spread() { calc '"%.1f%%" % (100 * (max(a) - min(a)) / median(a))' "$@"; }
fmt_int() { calc '"{:,.0f}".format(a[0])' "$1"; }
# Paired ratios of two lists of the same length: "median [min-max]".
ratios() { # "a values" "b values"
    python3 - "$1" "$2" <<'EOF'
import sys, statistics
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
r = [x / y for x, y in zip(a, b)]
print("%.3f [%.3f-%.3f]" % (statistics.median(r), min(r), max(r)))
EOF
}

# Whether the rounds settle the goal "fslab/reference >= GOAL" (bench/settle.py says how): PASS or
# MISS when a 90% confidence interval of the median of the rounds' own ratios lies wholly above or
# below it, UNSETTLED when it straddles it or the rounds are fewer than 5. Prints "VERDICT lo hi
# coverage%" (0 0 0 with too few rounds). Args: "a values" "b values" goal
settle() { python3 "$BENCH/settle.py" "$1" "$2" "$3"; }

# The interval settle() found, in words. Args: lo hi coverage
settle_line() {
    if [[ $3 == 0 ]]; then
        echo "too few rounds for a 90% interval of the paired ratios' median (5 at least): UNSETTLED"
    else
        echo "the paired ratios' median is in [$1, $2] with $3% confidence"
    fi
}

RESULTS=()   # lines: id|what|fslab|fio|ratio (paired: median [min-max])|goal|verdict

# The ratio of medians, the paired ratios and the verdict (settle), logged and added to RESULTS.
# Args: id label unit fslab_values fio_values (GOAL in the environment: the goal is ratio >= GOAL)
compare() {
    local id=$1 label=$2 unit=$3 fv=$4 iv=$5 fm im ratio verdict lo hi cover
    fm=$(calc 'median(a)' $fv)
    im=$(calc 'median(a)' $iv)
    ratio=$(calc '"%.3f" % (a[0] / a[1])' "$fm" "$im")
    read -r verdict lo hi cover < <(settle "$fv" "$iv" "$GOAL")
    log "  => median fslab $(fmt_int "$fm") $unit, ${REF_NAME:-fio} $(fmt_int "$im") $unit, ratio $ratio (paired $(ratios "$fv" "$iv"))   goal >= $GOAL   $verdict"
    log "     $(settle_line "$lo" "$hi" "$cover")"
    log "     spread (max-min)/median: fslab $(spread $fv), ${REF_NAME:-fio} $(spread $iv)"
    RESULTS+=("$id|$label|$(fmt_int "$fm") $unit ±$(spread $fv)|$(fmt_int "$im") $unit ±$(spread $iv)|$ratio ($(ratios "$fv" "$iv"))|>= $GOAL|$verdict")
}

print_table() { # header lines on stdin: cells separated by |, first line the header
    python3 -c '
import sys
rows = [l.rstrip("\n").split("|") for l in sys.stdin if l.strip()]
n = max(len(r) for r in rows)
rows = [r + [""] * (n - len(r)) for r in rows]
w = [max(len(r[i]) for r in rows) for i in range(n)]
for k, r in enumerate(rows):
    print("  " + "  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
    if k == 0:
        print("  " + "  ".join("-" * x for x in w))
'
}

# fio's t/io_uring, the limit beside the io_uring cases. T_IO_URING names a built one (TIO, the
# older name, still works); else FIO_SRC, a fio source tree outside this repository, where it is
# built once (./configure && make t/io_uring, the log in $OUTD). Sets TIO_BIN ("" for none).
tio_setup() {
    TIO_BIN=${T_IO_URING:-${TIO:-}}
    if [[ -z $TIO_BIN && -n ${FIO_SRC:-} ]]; then
        local src
        src=$(cd "$FIO_SRC" 2>/dev/null && pwd) || { echo "engine.sh: FIO_SRC=$FIO_SRC is not a directory" >&2; exit 3; }
        [[ $src/ == "$REPO"/* ]] && { echo "engine.sh: FIO_SRC=$src is inside the repository; use a scratch directory" >&2; exit 2; }
        [[ -f $src/t/io_uring.c && -x $src/configure ]] ||
            { echo "engine.sh: FIO_SRC=$src is not fio's source (no t/io_uring.c, configure)" >&2; exit 3; }
        if [[ ! -x $src/t/io_uring ]]; then
            log "  t/io_uring: building it in $src (./configure && make t/io_uring)"
            if ! (cd "$src" && ./configure && make -j"$(nproc)" t/io_uring) >"$OUTD/t-io_uring.build.log" 2>&1; then
                echo "engine.sh: cannot build t/io_uring in $src; the end of its log:" >&2
                tail -n 20 "$OUTD/t-io_uring.build.log" | sed 's/^/    /' >&2
                exit 3
            fi
        fi
        TIO_BIN=$src/t/io_uring
    fi
    [[ -z $TIO_BIN || -x $TIO_BIN ]] || { echo "engine.sh: T_IO_URING=$TIO_BIN is not an executable" >&2; exit 3; }
}

# t/io_uring's per-core peak: one thread reading 4 KiB blocks at random offsets of one file at
# iodepth DEPTH, submitting in batches of min(DEPTH, 32) and reaping whatever has completed, at
# least one (-c 1: with -c DEPTH it waits for the whole batch while the queue drains, and on the
# tmpfs, where io-wq workers complete reads one by one, it then ran at 320k IOPS at iodepth 8
# against 520k with -c 1, below both tools' own rates), with registered files (-F 1)
# and buffers (-B 1), no polling (-p 0; IORING_SETUP_IOPOLL needs O_DIRECT on a polled queue), its
# ring fd registered (-X, default 1), buffered (-O 0) or O_DIRECT (-O 1). It prints IOPS once a
# second; run for SECS + 1 seconds it prints SECS of them. Sets TIO_PEAK (the best second, its
# "Maximum IOPS"), TIO_MEAN (the mean of the seconds) and TIO_PER_CPU (requests per CPU-second,
# user + system of its threads and io-wq workers, counting the unprinted last second at the mean);
# all "" without TIO_BIN. On a tmpfs the kernel punts every buffered read to io-wq workers (the
# census in bench/uring.sh counts them), which run on other cores: there one submitting thread is
# not one core, and the requests per CPU-second are the fairer comparison.
# Args: file depth secs odirect(0|1)
tio_peak() {
    local file=$1 qd=$2 secs=$3 odirect=$4 o e batch
    TIO_PEAK="" TIO_MEAN=""
    [[ -n $TIO_BIN ]] || return 0
    batch=$((qd < 32 ? qd : 32))
    next
    o=$NEXT.tio.txt e=$NEXT.tio.err
    run "$o" "$e" "$TIO_BIN" -d "$qd" -s "$batch" -c 1 -b 4096 -p 0 -B 1 -F 1 -n 1 -O "$odirect" \
        -r $((secs + 1)) "$file" || fail_run "t/io_uring" "$o" "$e"
    read -r TIO_PEAK TIO_MEAN TIO_PER_CPU < <(python3 - "$o" "$CPU_S" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
scale = {"": 1, "K": 1e3, "M": 1e6}
s = [float(v) * scale[u] for v, u in re.findall(r"^IOPS=([0-9.]+)([KM]?),", text, re.M)]
mean = sum(s) / len(s) if s else 0
cpu = float(sys.argv[2] or 0)
print(f"{max(s)} {mean} {mean * (len(s) + 1) / cpu if cpu else 0}" if s and "IO errors" not in text else "")
PY
)
    [[ -n $TIO_PEAK ]] || fail_run "t/io_uring (no IOPS lines, or IO errors)" "$o" "$e"
}

# The limit beside a case: LIMIT, a table cell "peak ±spread (fslab F, fio I)", and LIMIT_LINE, its
# sentence, with F and I the tools' medians over the peaks' median (also LIMIT_PEAK, LIMIT_FSLAB
# and LIMIT_FIO, the three on their own); given the requests per
# CPU-second too (the tools' medians and t/io_uring's list), their shares of it as well.
# Args: fslab_median fio_median "t/io_uring peaks" [fslab_per_cpu fio_per_cpu "t/io_uring per cpu"]
limit_of() {
    local pm fs is cm
    pm=$(calc 'median(a)' $3)
    fs=$(calc '"%.2f" % (a[0] / a[1])' "$1" "$pm")
    is=$(calc '"%.2f" % (a[0] / a[1])' "$2" "$pm")
    LIMIT_PEAK="$(fmt_int "$pm") IOPS ±$(spread $3)" LIMIT_FSLAB=$fs LIMIT_FIO=$is
    LIMIT="$(fmt_int "$pm") ±$(spread $3) (fslab $fs, fio $is)"
    LIMIT_LINE="$(fmt_int "$pm") IOPS ±$(spread $3): fslab reaches $fs of it, fio $is"
    if [[ -n ${6:-} ]]; then
        cm=$(calc 'median(a)' $6)
        fs=$(calc '"%.2f" % (a[0] / a[1])' "$4" "$cm")
        is=$(calc '"%.2f" % (a[0] / a[1])' "$5" "$cm")
        LIMIT+="; per CPU-s $(fmt_int "$cm") (fslab $fs, fio $is)"
        LIMIT_LINE+="; per CPU-second $(fmt_int "$cm") requests: fslab $fs of it, fio $is"
    fi
}
