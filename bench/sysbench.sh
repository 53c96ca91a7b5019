#!/usr/bin/env bash
# bench/sysbench.sh: `fslab sysbench fileio` against the real sysbench 1.0.20, with the same
# arguments, for each of the six test modes, on a tmpfs and on an ext4 loop image, in one go.
#
#   sudo bench/sysbench.sh                      # TIME=10: about 5 minutes
#   TIME=5 TOTAL=512M THREADS=2 bench/sysbench.sh
#
# For every mode and filesystem it prints each operation's share of all operations (reads,
# writes, fsyncs) for both tools, their difference in percentage points (goal: <= 1 pp each), and
# the headline ratio fslab/sysbench: read + written MiB/s (goal: >= 1.00 on tmpfs, 0.95 to 1.05
# on ext4).
#
# Environment: TIME (10, seconds of each run), TOTAL (256M, --file-total-size), FILES (128,
# --file-num), THREADS (1), ROUNDS (1; with more, each figure is the median over the rounds),
# EXTRA (more sysbench options for both tools, e.g. "--file-block-size=4096"), MODES (all six),
# FILESYSTEMS ("tmpfs ext4"), IMG_SIZE (2G, the sparse ext4 image), IMG_IN_RAM (0; 1: keep the
# image on a tmpfs of its own, so that fsync costs ext4's work and not the machine's disk, which
# on a VM varies several-fold from run to run), DROP_CACHES (1: drop the page cache before each
# run on ext4), FSLAB (binary, default target/release/fslab, built when missing), KEEP (a directory to
# copy every raw output to).
# Exit: 0 when everything ran (PASS or MISS), 1 when a run failed, 2 on a bad setting, 3 when
# something is missing (root, sysbench, mkfs.ext4, python3, the binary and cargo to build it).

set -uo pipefail

TIME=${TIME:-10}
TOTAL=${TOTAL:-256M}
FILES=${FILES:-128}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-1}
EXTRA=${EXTRA:-}
MODES=${MODES:-seqwr seqrewr seqrd rndrd rndwr rndrw}
FILESYSTEMS=${FILESYSTEMS:-tmpfs ext4}
IMG_SIZE=${IMG_SIZE:-2G}
IMG_IN_RAM=${IMG_IN_RAM:-0}
DROP_CACHES=${DROP_CACHES:-1}
KEEP=${KEEP:-}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FSLAB=${FSLAB:-$REPO/target/release/fslab}

bad() { echo "sysbench.sh: $*" >&2; exit 2; }
[[ $TIME =~ ^[1-9][0-9]*$ ]] || bad "TIME must be a positive number of seconds, not '$TIME'"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || bad "ROUNDS must be a positive integer, not '$ROUNDS'"
[[ $THREADS =~ ^[1-9][0-9]*$ ]] || bad "THREADS must be a positive integer, not '$THREADS'"
[[ $FILES =~ ^[1-9][0-9]*$ ]] || bad "FILES must be a positive integer, not '$FILES'"
[[ $IMG_IN_RAM =~ ^[01]$ ]] || bad "IMG_IN_RAM must be 0 or 1, not '$IMG_IN_RAM'"
[[ $DROP_CACHES =~ ^[01]$ ]] || bad "DROP_CACHES must be 0 or 1, not '$DROP_CACHES'"
for f in $FILESYSTEMS; do
    [[ $f =~ ^(tmpfs|ext4)$ ]] || bad "FILESYSTEMS: '$f' is neither tmpfs nor ext4"
done
for m in $MODES; do
    [[ $m =~ ^(seqwr|seqrewr|seqrd|rndrd|rndwr|rndrw)$ ]] || bad "MODES: '$m' is not a sysbench test mode"
done

# ---- what this needs -------------------------------------------------------------------------
missing=()
[[ $(id -u) == 0 ]] || missing+=("root (mounting a tmpfs and a loop image needs it: run with sudo)")
command -v sysbench >/dev/null || missing+=("sysbench (apt-get install sysbench)")
command -v mkfs.ext4 >/dev/null || missing+=("mkfs.ext4 (apt-get install e2fsprogs)")
command -v python3 >/dev/null || missing+=("python3 (for the figures)")
command -v mount >/dev/null && command -v umount >/dev/null || missing+=("mount/umount (util-linux)")
if [[ ! -x $FSLAB ]] && ! command -v cargo >/dev/null; then
    missing+=("$FSLAB, and cargo to build it (cargo build --release)")
fi
if ((${#missing[@]})); then
    echo "sysbench.sh: cannot run; missing:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 3
fi
if [[ ! -x $FSLAB ]]; then
    echo "fslab: $FSLAB is missing; building it (cargo build --release)..."
    (cd "$REPO" && cargo build --release) >&2 && [[ -x $FSLAB ]] ||
        { echo "sysbench.sh: cannot run; missing: $FSLAB (cargo build --release failed)" >&2; exit 3; }
fi

# ---- a tmpfs and an ext4 loop image, removed at exit -------------------------------------------
W=""
MOUNTS=()
CHILD=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n $CHILD ]] && kill -0 "$CHILD" 2>/dev/null; then
        kill -TERM "$CHILD" 2>/dev/null
        wait "$CHILD" 2>/dev/null
    fi
    cd /
    if [[ -n $KEEP && -n $W && -d $W/out ]]; then
        mkdir -p "$KEEP" && cp -f "$W"/out/* "$KEEP"/ 2>/dev/null
    fi
    local i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTS[i]}" 2>/dev/null || { sleep 1; umount "${MOUNTS[i]}" 2>/dev/null; } ||
            umount -l "${MOUNTS[i]}" || echo "sysbench.sh: could not unmount ${MOUNTS[i]}" >&2
    done
    [[ -n $W && -d $W ]] && rm -rf --one-file-system "$W"
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "sysbench.sh: interrupted" >&2; exit 130' INT TERM

W=$(mktemp -d "${TMPDIR:-/tmp}/fslab-sysbench.XXXXXX") || { echo "sysbench.sh: mktemp -d failed" >&2; exit 3; }
mkdir -p "$W/out" "$W/tmpfs" "$W/ext4"
# Both tools' files fit, twice over.
TOTAL_BYTES=$(numfmt --from=iec "${TOTAL%[bB]}") || bad "TOTAL: '$TOTAL' is not a size"
mount -t tmpfs -o "size=$((3 * TOTAL_BYTES + (64 << 20))),mode=0755" fslab-sysbench "$W/tmpfs" ||
    { echo "sysbench.sh: cannot mount a tmpfs on $W/tmpfs" >&2; exit 3; }
MOUNTS+=("$W/tmpfs")
IMG=$W/ext4.img
if [[ $IMG_IN_RAM == 1 ]]; then
    mkdir -p "$W/ram"
    IMG_BYTES=$(numfmt --from=iec "${IMG_SIZE%[bB]}") || bad "IMG_SIZE: '$IMG_SIZE' is not a size"
    mount -t tmpfs -o "size=$((IMG_BYTES + (64 << 20))),mode=0755" fslab-sysbench-img "$W/ram" ||
        { echo "sysbench.sh: cannot mount a tmpfs on $W/ram" >&2; exit 3; }
    MOUNTS+=("$W/ram")
    IMG=$W/ram/ext4.img
fi
truncate -s "$IMG_SIZE" "$IMG" || { echo "sysbench.sh: cannot make $IMG" >&2; exit 3; }
mkfs.ext4 -q -F "$IMG" >"$W/out/mkfs.txt" 2>&1 || { echo "sysbench.sh: mkfs.ext4 failed" >&2; exit 3; }
mount -o loop "$IMG" "$W/ext4" || { echo "sysbench.sh: cannot mount the ext4 image (loop devices?)" >&2; exit 3; }
MOUNTS+=("$W/ext4")

# Runs a command into OUT (stdout and stderr), in the background so that a signal reaches the
# trap at once. Usage: run OUT cmd...
run() {
    local out=$1
    shift
    "$@" >"$out" 2>&1 &
    CHILD=$!
    wait "$CHILD"
    local rc=$?
    CHILD=""
    if ((rc != 0)); then
        echo "sysbench.sh: failed ($rc): $*" >&2
        sed 's/^/  | /' "$out" >&2
        exit 1
    fi
}

drop_caches() {
    [[ $1 == ext4 && $DROP_CACHES == 1 ]] || return 0
    sync
    echo 3 >/proc/sys/vm/drop_caches
}

# shellcheck disable=SC2206
COMMON=(--file-num="$FILES" --file-total-size="$TOTAL" --threads="$THREADS" $EXTRA)

echo "sysbench.sh: $(sysbench --version) against $("$FSLAB" --version); TOTAL=$TOTAL FILES=$FILES" \
    "THREADS=$THREADS TIME=${TIME}s ROUNDS=$ROUNDS IMG_IN_RAM=$IMG_IN_RAM ${EXTRA:+EXTRA=\"$EXTRA\"}"
for fs in $FILESYSTEMS; do
    SB=$W/$fs/sb     # sysbench's files: $SB/test_file.N
    FL=$W/$fs/fl     # fslab's: $FL/test_file.N
    mkdir -p "$SB" "$FL"
    for mode in $MODES; do
        # Prepared before every mode: a seqwr run leaves its files as far as it got. Both tools
        # keep files already there at the right size.
        run "$W/out/$fs-$mode-prepare-sysbench.txt" bash -c 'cd "$1" && shift && exec sysbench fileio "$@" prepare' _ "$SB" "${COMMON[@]}"
        run "$W/out/$fs-$mode-prepare-fslab.txt" "$FSLAB" sysbench fileio "${COMMON[@]}" --dir "$FL" prepare
        for ((r = 1; r <= ROUNDS; r++)); do
            args=("${COMMON[@]}" --file-test-mode="$mode" --time="$TIME")
            # Alternate which tool goes first from round to round.
            order=(sysbench fslab)
            ((r % 2 == 0)) && order=(fslab sysbench)
            for tool in "${order[@]}"; do
                drop_caches "$fs"
                out=$W/out/$fs-$mode-$tool-$r.txt
                if [[ $tool == sysbench ]]; then
                    run "$out" bash -c 'cd "$1" && shift && exec sysbench fileio "$@" run' _ "$SB" "${args[@]}"
                else
                    run "$out" "$FSLAB" sysbench fileio "${args[@]}" --dir "$FL" run
                fi
            done
        done
    done
    run "$W/out/$fs-cleanup-sysbench.txt" bash -c 'cd "$1" && shift && exec sysbench fileio "$@" cleanup' _ "$SB" "${COMMON[@]}"
    run "$W/out/$fs-cleanup-fslab.txt" "$FSLAB" sysbench fileio --dir "$FL" cleanup
done

# ---- the figures ------------------------------------------------------------------------------
python3 - "$W/out" "$ROUNDS" "$MODES" "$FILESYSTEMS" <<'EOF'
import re, statistics, sys

out, rounds, modes, filesystems = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
FIELDS = {
    "reads": r"reads/s:\s+([\d.]+)",
    "writes": r"writes/s:\s+([\d.]+)",
    "fsyncs": r"fsyncs/s:\s+([\d.]+)",
    "read_mib": r"read, MiB/s:\s+([\d.]+)",
    "written_mib": r"written, MiB/s:\s+([\d.]+)",
    "events": r"total number of events:\s+(\d+)",
    "time": r"total time:\s+([\d.]+)s",
}

def figures(path):
    text = open(path).read()
    f = {}
    for k, rx in FIELDS.items():
        m = re.search(rx, text)
        if not m:
            sys.exit(f"sysbench.sh: no '{k}' in {path}")
        f[k] = float(m.group(1))
    f["mib"] = f["read_mib"] + f["written_mib"]
    f["events_s"] = f["events"] / f["time"]
    ops = f["reads"] + f["writes"] + f["fsyncs"]
    for k in ("reads", "writes", "fsyncs"):
        f[k + "%"] = 100.0 * f[k] / ops if ops else 0.0
    return f

def median(fs, k):
    return statistics.median(f[k] for f in fs)

worst_pp, misses = 0.0, 0
GOALS = {"tmpfs": (1.0, None, ">= 1.00"), "ext4": (0.95, 1.05, "0.95-1.05")}
for fs in filesystems:
    lo, hi, goal = GOALS[fs]
    print(f"\n{fs}: share of operations (%), headline MiB/s (read + written), ratio fslab/sysbench (goal {goal})")
    print(f"{'mode':8} {'tool':9} {'reads%':>8} {'writes%':>8} {'fsyncs%':>8} {'MiB/s':>10} {'events/s':>11} {'spread':>7}")
    for mode in modes:
        row = {}
        for tool in ("sysbench", "fslab"):
            fsr = [figures(f"{out}/{fs}-{mode}-{tool}-{r}.txt") for r in range(1, rounds + 1)]
            row[tool] = {k: median(fsr, k) for k in fsr[0]}
            t = row[tool]
            # How far apart the rounds were: (max - min) / median of MiB/s.
            mibs = [f["mib"] for f in fsr]
            spread = f"{100 * (max(mibs) - min(mibs)) / t['mib']:6.0f}%" if rounds > 1 and t["mib"] else ""
            print(f"{mode if tool == 'sysbench' else '':8} {tool:9} {t['reads%']:8.2f} {t['writes%']:8.2f} "
                  f"{t['fsyncs%']:8.2f} {t['mib']:10.2f} {t['events_s']:11.1f} {spread:>7}")
        s, l = row["sysbench"], row["fslab"]
        pps = [l[k] - s[k] for k in ("reads%", "writes%", "fsyncs%")]
        worst_pp = max([worst_pp] + [abs(p) for p in pps])
        ratio = l["mib"] / s["mib"] if s["mib"] else float("nan")
        ok_pp = all(abs(p) <= 1.0 for p in pps)
        ok_ratio = ratio >= lo and (hi is None or ratio <= hi)
        misses += (not ok_pp) + (not ok_ratio)
        print(f"{'':8} {'diff pp':9} {pps[0]:+8.2f} {pps[1]:+8.2f} {pps[2]:+8.2f} "
              f"{'ratio':>10} {ratio:11.3f}  shares {'PASS' if ok_pp else 'MISS'}, ratio {'PASS' if ok_ratio else 'MISS'}")
print(f"\nlargest share difference: {worst_pp:.2f} pp (goal <= 1); {misses} goal(s) missed")
EOF
