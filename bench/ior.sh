#!/usr/bin/env bash
# bench/ior.sh: do `fslab ior` and `fslab mdtest` put IOR 4.0's and mdtest's load on the
# filesystem, at their speed? Two parts:
#
#  1. System calls. An IOR write phase and an mdtest file-creation phase, the original's and
#     fslab's, each under `strace -f` on one tmpfs; the calls on the test files and directories
#     (paths beneath the mount, and the descriptors opened there: MPI's own pipes and sockets
#     are left out) are counted by class side by side, per 100 reads+writes for IOR and per 100
#     files for mdtest.
#  2. Rates. The same jobs, larger, on a tmpfs and on a fresh sparse ext4 loop image (made again
#     before every run), the original and fslab alternating, ROUNDS rounds: per phase the medians,
#     the spreads (min-max) and the median of the paired ratios fslab/original. 1 rank; 4 ranks
#     under mpirun too when the fslab binary runs as one job under mpirun (its mpi feature):
#     detected by running it so, else skipped with a message.
#
#   sudo bench/ior.sh
#   sudo IOR_SRC=/tmp/ior-src ROUNDS=5 bench/ior.sh
#   sudo PART=syscalls bench/ior.sh
#
# hpc/ior (IOR 4.0.0 and its mdtest) is built from source in a scratch directory outside this
# repository: a `git clone https://github.com/hpc/ior`, or the source tree IOR_SRC names. It needs
# MPI (apt-get install openmpi-bin libopenmpi-dev) and autotools.
#
# Environment: PART (syscalls, rates or both [both]), ROUNDS (3), IOR_ARGS (the rate runs' IOR
# options [-w -r -e -t 1m -b 256m]), MDTEST_ARGS ([-n 5000 -w 4096 -e 4096]), IMAGE_SIZE (4G: the
# sparse ext4 image and the tmpfs), FILESYSTEMS ([tmpfs ext4]), RANKS ([1 4]), FSLAB (the binary;
# default target/release/fslab, built when missing), KEEP (a directory to copy raw outputs to).
# Exit: 0 when everything ran, 1 when a run failed, 3 when something is missing.
set -uo pipefail

PART=${PART:-both}
ROUNDS=${ROUNDS:-3}
IOR_ARGS=${IOR_ARGS:-"-w -r -e -t 1m -b 256m"}
MDTEST_ARGS=${MDTEST_ARGS:-"-n 5000 -w 4096 -e 4096"}
IMAGE_SIZE=${IMAGE_SIZE:-4G}
FILESYSTEMS=${FILESYSTEMS:-"tmpfs ext4"}
RANKS=${RANKS:-"1 4"}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

die() { echo "bench/ior.sh: $*" >&2; exit "${2:-3}"; }
[[ $(id -u) -eq 0 ]] || die "needs root (mount, loop devices)"
for t in strace python3 mkfs.ext4 losetup mpirun mpicc git make autoreconf; do
    command -v "$t" >/dev/null || die "needs $t (apt-get install strace e2fsprogs openmpi-bin libopenmpi-dev git make autoconf automake)"
done
if [[ -z ${FSLAB:-} ]]; then
    FSLAB=$root/target/release/fslab
    (cd "$root" && cargo build --release -q -p fslab) || die "cannot build fslab"
fi
[[ -x $FSLAB ]] || die "no fslab binary at $FSLAB"
# mpirun as root (the loop devices need it).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

work=$(mktemp -d /tmp/fslab-ior.XXXXXX)
mnt=$work/mnt
mkdir -p "$mnt" "$work/out"
cleanup() {
    cd /
    if mountpoint -q "$mnt"; then umount "$mnt" 2>/dev/null || umount -l "$mnt"; fi
    if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp -f "$work"/out/* "$KEEP"/ 2>/dev/null; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "bench/ior.sh: interrupted" >&2; exit 130' INT TERM

# The original, built outside the repository.
src=$work/ior
if [[ -n ${IOR_SRC:-} ]]; then
    cp -a "$IOR_SRC" "$src" || die "cannot copy $IOR_SRC"
else
    git clone -q https://github.com/hpc/ior "$src" || die "cannot clone https://github.com/hpc/ior"
    git -C "$src" checkout -q 4.0.0 || die "no tag 4.0.0 in hpc/ior"
fi
echo "== building hpc/ior ($(git -C "$src" describe --tags 2>/dev/null || echo "from $IOR_SRC"))"
(cd "$src" && { [[ -x configure ]] || ./bootstrap; } && ./configure -q && make -s -j"$(nproc)") \
    >"$work/out/build.log" 2>&1 || die "hpc/ior does not build: $(tail -5 "$work/out/build.log")"
IOR=$src/src/ior
MDTEST=$src/src/mdtest
[[ -x $IOR && -x $MDTEST ]] || die "the build made no src/ior and src/mdtest"

# mount_fresh FS: a new, empty tmpfs or ext4 (on a sparse image made again each time) at $mnt.
mount_fresh() {
    if mountpoint -q "$mnt"; then umount "$mnt" || die "cannot unmount $mnt" 1; fi
    rm -f "$work/ext4.img"
    sync
    echo 3 >/proc/sys/vm/drop_caches
    case $1 in
    tmpfs) mount -t tmpfs -o size="$IMAGE_SIZE" fslab-ior "$mnt" ;;
    ext4)
        truncate -s "$IMAGE_SIZE" "$work/ext4.img"
        mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$work/ext4.img" &&
            mount -o loop "$work/ext4.img" "$mnt"
        ;;
    esac || die "cannot mount a fresh $1 at $mnt" 1
}

# run TOOL KIND RANKS DIR LOG ARGS...: IOR or mdtest (TOOL ior|mdtest), the original (KIND
# original) or fslab's, on RANKS ranks, working in DIR; through $WRAP (strace).
WRAP=()
run() {
    local tool=$1 kind=$2 ranks=$3 dir=$4 log=$5
    shift 5
    local cmd
    if [[ $kind == original ]]; then
        if [[ $tool == ior ]]; then cmd=("$IOR" "$@" -o "$dir/testfile"); else cmd=("$MDTEST" "$@" -d "$dir/out"); fi
    else
        if [[ $tool == ior ]]; then cmd=("$FSLAB" ior "$@" -o testfile --dir "$dir"); else cmd=("$FSLAB" mdtest "$@" -d out --dir "$dir"); fi
    fi
    if ((ranks > 1)); then cmd=(mpirun -np "$ranks" "${cmd[@]}"); fi
    (cd "$dir" && "${WRAP[@]}" "${cmd[@]}") >"$log" 2>&1
}

# Whether this fslab runs as one job of N ranks under mpirun (its mpi feature).
fslab_has_mpi() {
    mkdir -p "$work/probe"
    mpirun -np 2 "$FSLAB" ior -w -t 4k -b 8k -o probe --dir "$work/probe" >"$work/out/probe.log" 2>&1 &&
        grep -q '^tasks  *: 2$' "$work/out/probe.log"
}

# Part 1: the calls on the test's files and directories, by class.
profile() { # tool original_log fslab_log unit
    python3 - "$mnt" "$@" <<'EOF'
import re, sys
mnt, tool, orig, mine, unit = sys.argv[1:6]
CLASSES = [
    ("open", {"open", "openat", "creat"}),
    ("stat", {"stat", "lstat", "newfstatat", "statx", "statfs"}),
    ("access", {"access", "faccessat", "faccessat2"}),
    ("unlink", {"unlink", "unlinkat"}),
    ("rename", {"rename", "renameat", "renameat2"}),
    ("mkdir", {"mkdir", "mkdirat"}),
    ("rmdir", {"rmdir"}),
    ("ftruncate", {"ftruncate"}),
    ("fsync", {"fsync", "fdatasync", "msync"}),
    ("seek", {"lseek"}),
    ("read", {"read", "pread64", "readv"}),
    ("write", {"write", "pwrite64", "writev"}),
    ("close", {"close"}),
]
call = re.compile(r'^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+|\?)')
def counts(path):
    # The calls on paths beneath the mount, and on the descriptors opened there (per process).
    c, fds, pending = {}, set(), {}
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r'^(\d+)\s+(.*)<unfinished \.\.\.>$', line)
        if m:
            pending[m.group(1)] = m.group(2); continue
        m = re.match(r'^(\d+)\s+<\.\.\. \w+ resumed>(.*)$', line)
        if m:
            line = m.group(1) + " " + pending.pop(m.group(1), "") + m.group(2)
        m = call.match(line)
        if not m:
            continue
        pid, name, args, ret = m.groups()
        first = args.split(",")[0].strip()
        on_path = mnt in args
        on_fd = first.isdigit() and (pid, first) in fds
        if name in ("open", "openat", "creat") and on_path and ret.isdigit():
            fds.add((pid, ret))
        if name == "close" and on_fd:
            fds.discard((pid, first))
        if on_path or on_fd:
            c[name] = c.get(name, 0) + 1
    by = {k: sum(c.get(s, 0) for s in v) for k, v in CLASSES}
    return by
o, f = counts(orig), counts(mine)
if unit == "rw":
    no, nf = max(1, o["read"] + o["write"]), max(1, f["read"] + f["write"])
    label = f"per 100 reads+writes (raw: {no} and {nf})"
else:
    no = nf = int(unit)
    label = f"per 100 files ({no} files)"
print(f"  {'class':<10} {'original':>10} {'fslab':>10} {'ratio':>7}   {label}")
for k, _ in CLASSES:
    a, b = 100 * o[k] / no, 100 * f[k] / nf
    if a == 0 and b == 0:
        continue
    r = f"{b / a:7.2f}" if a else "    inf"
    print(f"  {k:<10} {a:10.2f} {b:10.2f} {r}")
EOF
}

syscalls() {
    echo "== system calls on a tmpfs: the original beside fslab, on the test's files and directories"
    mount_fresh tmpfs
    local kind
    for kind in original fslab; do
        mkdir -p "$mnt/$kind"
        WRAP=(strace -f -o "$work/out/ior-$kind.strace")
        run ior "$kind" 1 "$mnt/$kind" "$work/out/ior-syscalls-$kind.log" -w -e -t 64k -b 64m -k ||
            die "$kind ior failed: $(tail -3 "$work/out/ior-syscalls-$kind.log")" 1
        WRAP=(strace -f -o "$work/out/mdtest-$kind.strace")
        run mdtest "$kind" 1 "$mnt/$kind" "$work/out/mdtest-syscalls-$kind.log" -F -C -n 1000 -w 4096 ||
            die "$kind mdtest failed: $(tail -3 "$work/out/mdtest-syscalls-$kind.log")" 1
        WRAP=()
    done
    echo "  IOR write phase (-w -e -t 64k -b 64m: 1024 transfers), 1 rank:"
    profile ior "$work/out/ior-original.strace" "$work/out/ior-fslab.strace" rw
    echo "  mdtest file creation (-F -C -n 1000 -w 4096), 1 rank:"
    profile mdtest "$work/out/mdtest-original.strace" "$work/out/mdtest-fslab.strace" 1000
    echo
}

# Part 2: the rates per phase, alternating, a fresh filesystem per run.
# figures TOOL LOG: "phase value" lines: IOR's Max(MiB) of write and read (its summary table),
# mdtest's Mean of each row of its SUMMARY rate table.
figures() {
    python3 - "$@" <<'EOF'
import sys
tool, log = sys.argv[1:3]
lines = open(log, errors="replace").read().splitlines()
if tool == "ior":
    at = next((i for i, l in enumerate(lines) if l.startswith("Summary of all tests:")), None)
    for l in lines[at + 1:] if at is not None else []:
        f = l.split()
        if f and f[0] in ("write", "read") and len(f) > 3:
            print(f"{f[0]}_MiB/s {f[1]}")
else:
    at = next((i for i, l in enumerate(lines) if l.startswith("SUMMARY rate")), None)
    for l in lines[at + 3:] if at is not None else []:
        if not l.startswith("   "):
            break
        parts = l.split()
        name = "_".join(parts[:-4])
        print(f"{name}_ops/s {parts[-2]}")
EOF
}

rates() {
    local ranks fs round kind tool
    for ranks in $RANKS; do
        if ((ranks > 1)) && ! fslab_has_mpi; then
            echo "== $ranks ranks: skipped: $FSLAB does not run as one job under mpirun (built without its mpi feature)"
            continue
        fi
        for fs in $FILESYSTEMS; do
            for tool in ior mdtest; do
                local args=$IOR_ARGS
                [[ $tool == mdtest ]] && args=$MDTEST_ARGS
                echo "== $tool $args, $ranks rank(s), $fs, $ROUNDS rounds (original and fslab alternating)"
                : >"$work/out/rates"
                for round in $(seq 1 "$ROUNDS"); do
                    for kind in original fslab; do
                        mount_fresh "$fs"
                        local log=$work/out/$tool-$fs-$ranks-$round-$kind.log
                        # shellcheck disable=SC2086
                        run "$tool" "$kind" "$ranks" "$mnt" "$log" $args ||
                            die "$kind $tool failed: $(tail -3 "$log")" 1
                        figures "$tool" "$log" | sed "s/^/$round $kind /" >>"$work/out/rates"
                    done
                done
                python3 - "$work/out/rates" <<'EOF'
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    rnd, kind, phase, x = line.split()
    v.setdefault(phase, {}).setdefault(kind, {})[int(rnd)] = float(x)
print(f"  {'phase':<24} {'original median':>16} {'spread':>21} {'fslab median':>14} {'spread':>21} {'ratio':>6}")
for phase, k in v.items():
    o, f = k.get("original", {}), k.get("fslab", {})
    if not o or not f:
        continue
    ratios = [f[r] / o[r] for r in o if r in f and o[r] > 0]
    sp = lambda d: f"{min(d.values()):.1f}-{max(d.values()):.1f}"
    print(f"  {phase:<24} {statistics.median(o.values()):16.1f} {sp(o):>21} {statistics.median(f.values()):14.1f} {sp(f):>21} {statistics.median(ratios):6.2f}")
EOF
            done
        done
    done
}

[[ $PART != rates ]] && syscalls
[[ $PART != syscalls ]] && rates
exit 0
