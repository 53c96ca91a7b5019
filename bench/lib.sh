# bench/lib.sh: what bench/engine.sh and the case scripts it sources share: a private tmpfs (and
# an ext4 loop image on it), running a tool with its CPU time recorded, JSON and arithmetic
# through python3, medians, spreads and paired ratios, and the summary table.
# Sourced, not run. Needs root, python3, /usr/bin/time, mount/umount (and losetup, mkfs.ext4 for
# the O_DIRECT cases).

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

RESULTS=()   # lines: id|what|fslab|fio|ratio (paired: median [min-max])|goal|verdict

# The ratio of medians, the paired ratios and the verdict, logged and added to RESULTS.
# Args: id label unit fslab_values fio_values (GOAL in the environment: ratio >= GOAL passes)
compare() {
    local id=$1 label=$2 unit=$3 fv=$4 iv=$5 fm im ratio verdict
    fm=$(calc 'median(a)' $fv)
    im=$(calc 'median(a)' $iv)
    ratio=$(calc '"%.3f" % (a[0] / a[1])' "$fm" "$im")
    verdict=$(calc '"PASS" if a[0] >= a[1] - 1e-12 else "MISS"' "$ratio" "$GOAL")
    log "  => median fslab $(fmt_int "$fm") $unit, ${REF_NAME:-fio} $(fmt_int "$im") $unit, ratio $ratio (paired $(ratios "$fv" "$iv"))   goal >= $GOAL   $verdict"
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
