# bench/meta.sh: sourced by bench/engine.sh (case 8). Creating, stat-ing and unlinking empty files
# on the tmpfs, each thread in a directory of its own, 1 and 4 threads: fslab against fio's
# filecreate, filestat and filedelete engines (goal >= 1.10) and against bench/meta_loop.c, the same
# system calls in a bare C loop (goal >= 0.95).
#
# Each thread handles M_FILES files (f0, f1, ...) in its own directory, in that order (fslab's
# order = "sequential"). fslab runs one group per thread, each on a fileset of its own (dirs = 0),
# stopping after M_FILES operations per thread;
# fio runs one job per thread (--thread, see bench/uring.sh; directory=<its own>, filename_format=f$filenum, nrfiles=M_FILES,
# file_service_type=sequential, without which fio's filecreate slows down with the number of
# files, create_on_open=1 so that filestat and filedelete find the empty files made for them
# instead of writing 4 KiB into each first). The files to stat and to unlink are made the same way
# for all three, by fslab's untimed setup (meta_made_files): once a round for stat, which leaves
# them, and before every tool's run for unlink; so that how and when the files were made (which
# sets where their dentries and inodes lie in memory) weighs on no tool more than another.
# The three tools take turns in every round, the order rotating, each M_BEST times (3), and a
# tool's figure for the round is its best: a run lasts a fraction of a second, and on this shared
# VM the host takes the processor away now and then, which only ever slows a run. The best of three
# leaves that out, as the sequential-write case does: stat, 1 thread, 9 rounds by hand, fslab/C
# ranged 0.90 to 1.17 run by run (median 0.954) and 0.95 to 1.00 best of three (median 0.976).
#
# First, with valgrind installed, a count that the machine's noise cannot move: the instructions
# each tool runs in user space per operation (callgrind; the kernel's work is not counted), 1
# thread, for fslab and bench/meta_loop.c. Each figure is the difference of two runs on the same
# files, of M_COUNT_OPS operations and twice that, so that start-up and setup cancel out. What is
# left is each tool's own work per operation: the part of a metadata operation fslab can change.
#
# Environment: M_FILES (100000), M_THREADS ("1 4"), M_OPS ("create stat unlink"), M_ROUNDS (ROUNDS),
# M_BEST (3; 1 takes every run as it comes),
# M_COUNT (auto: the count when valgrind is installed; 1 requires it, 0 skips it), M_COUNT_OPS
# (20000).

M_FILES=${M_FILES:-100000}
M_THREADS=${M_THREADS:-1 4}
M_OPS=${M_OPS:-create stat unlink}
M_ROUNDS=${M_ROUNDS:-$ROUNDS}
M_BEST=${M_BEST:-3}
M_COUNT=${M_COUNT:-auto}
M_COUNT_OPS=${M_COUNT_OPS:-20000}

# Builds bench/meta_loop.c into the tmpfs.
meta_build() {
    META_LOOP=$T/meta_loop
    cc -O2 -pthread -o "$META_LOOP" "$BENCH/meta_loop.c" || die "cannot compile bench/meta_loop.c"
}

# fslab's workload for one operation: a group and a fileset per thread. Args: op threads [ops,
# M_FILES per thread when not given]
meta_toml() {
    local op=$1 th=$2 k files=0 fop=$1
    [[ $op == create ]] || files=$M_FILES
    [[ $op == unlink ]] && fop=delete
    echo "name = \"meta-$op\""
    echo "seed = 1"
    echo "[stop]"
    echo "ops = ${3:-$((M_FILES * th))}"
    for ((k = 0; k < th; k++)); do
        printf '[[fileset]]\nname = "t%d"\nfiles = %d\ndirs = 0\nsize = 0\n' "$k" "$files"
        # The files to stat or unlink are made for every tool alike (meta_made_files) and kept.
        [[ $op == create ]] || echo 'reuse = true'
    done
    for ((k = 0; k < th; k++)); do
        printf '[[group]]\nname = "g%d"\nfileset = "t%d"\n[[group.op]]\nop = "%s"\n' "$k" "$k" "$fop"
        [[ $op == create ]] || echo 'order = "sequential"'
    done
}

# A fresh directory for one run of one tool, MBASE: $T/meta/<tool>, with the files to unlink made
# there first; for stat, the round's files. Args: tool op threads
meta_fresh() {
    case $2 in
    stat) MBASE=$T/meta/stat ;;
    unlink) MBASE=$T/meta/$1 && meta_made_files "$MBASE" "$3" ;;
    *) MBASE=$T/meta/$1 && rm -rf "$MBASE" && mkdir -p "$MBASE" ;;
    esac
}

# Files for every tool to stat or unlink, M_FILES per thread in t<k>/f<n>, made afresh in base
# by fslab's own setup (a run of one stat per thread, which keeps them), so that no tool works on
# files made in its own way or closer to its run than the others'. Args: base threads
meta_made_files() {
    local base=$1 o e
    rm -rf "$base"
    mkdir -p "$base"
    meta_toml stat "$2" "$2" >"$T/meta-setup.toml"
    next
    o=$NEXT.meta-setup.json e=$NEXT.meta-setup.err
    run "$o" "$e" "$FSLAB" run "$T/meta-setup.toml" --dir "$base" --json || fail_run "fslab (setup)" "$o" "$e"
}

# One timed run; sets VAL (operations per second). Args: tool op threads
meta_run() {
    local tool=$1 op=$2 th=$3 o e k
    meta_fresh "$tool" "$op" "$th"
    next
    o=$NEXT.meta-$tool.json e=$NEXT.meta-$tool.err
    case $tool in
    fslab)
        meta_toml "$op" "$th" >"$T/meta-$op-$th.toml"
        run "$o" "$e" "$FSLAB" run "$T/meta-$op-$th.toml" --dir "$MBASE" --json || fail_run fslab "$o" "$e"
        check_fslab "$o" ops "$([[ $op == stat ]] && echo yes || echo no)"
        local ops
        ops=$(jq "$o" 'r["totals"]["ops"]')
        [[ $ops == $((M_FILES * th)) ]] || log "    ! fslab did $ops operations, not $((M_FILES * th))"
        VAL=$(jq "$o" 'r["totals"]["ops_per_sec"]')
        ;;
    fio)
        local engine=filecreate jobs=()
        [[ $op == stat ]] && engine=filestat
        [[ $op == unlink ]] && engine=filedelete
        for ((k = 0; k < th; k++)); do
            mkdir -p "$MBASE/t$k"
            jobs+=(--name="t$k" --directory="$MBASE/t$k")
        done
        run "$o.stdout" "$e" "$FIO" --thread --ioengine="$engine" --nrfiles="$M_FILES" --filesize=4k --openfiles=1 \
            --create_on_open=1 --fallocate=none --file_service_type=sequential --filename_format='f$filenum' \
            --group_reporting --output-format=json --output="$o" "${jobs[@]}" || fail_run fio "$o" "$e"
        [[ $(jq "$o" 'j["error"]') == 0 ]] || fail_run fio "$o" "$e"
        local ios
        ios=$(jq "$o" 'j["read"]["total_ios"] + j["write"]["total_ios"]')
        [[ $ios == $((M_FILES * th)) ]] || log "    ! fio did $ios operations, not $((M_FILES * th))"
        VAL=$(jq "$o" 'j["read"]["iops"] + j["write"]["iops"]')
        ;;
    c)
        run "$o" "$e" "$META_LOOP" "$op" "$MBASE" "$th" "$M_FILES" || fail_run meta_loop "$o" "$e"
        VAL=$(jq "$o" 'd["ops_per_sec"]')
        ;;
    esac
    case $op in
    create) local left; left=$(find "$MBASE" -type f -name 'f[0-9]*' | wc -l)
        [[ $left == $((M_FILES * th)) ]] || log "    ! $tool left $left files, not $((M_FILES * th))" ;;
    unlink) local left; left=$(find "$MBASE" -type f -name 'f[0-9]*' | wc -l)
        [[ $left == 0 ]] || log "    ! $tool left $left files after unlinking" ;;
    esac
}

meta_case() { # op threads
    local op=$1 th=$2 r b f i c fv="" iv="" cv="" order
    for ((r = 1; r <= M_ROUNDS; r++)); do
        case $((r % 3)) in
        1) order="fslab fio c" ;;
        2) order="fio c fslab" ;;
        0) order="c fslab fio" ;;
        esac
        [[ $op == stat ]] && meta_made_files "$T/meta/stat" "$th"
        local -A best=() runs=()
        for ((b = 0; b < M_BEST; b++)); do
            for tool in $order; do
                meta_run "$tool" "$op" "$th"
                runs[$tool]+=" $(fmt_int "$VAL")"
                if beats "$VAL" "${best[$tool]:-}"; then
                    best[$tool]=$VAL
                fi
            done
        done
        f=${best[fslab]} i=${best[fio]} c=${best[c]}
        fv+=" $f" iv+=" $i" cv+=" $c"
        log "  $op, $th thread(s), round $r: fslab $(fmt_int "$f")  fio $(fmt_int "$i")  C $(fmt_int "$c") ops/s   (fslab/fio $(calc '"%.3f" % (a[0]/a[1])' "$f" "$i"), fslab/C $(calc '"%.3f" % (a[0]/a[1])' "$f" "$c"))$( ((M_BEST > 1)) && echo "   runs: fslab [${runs[fslab]# }] fio [${runs[fio]# }] C [${runs[c]# }]")"
    done
    GOAL=1.10 compare 8 "$op, $th thread(s), vs fio $([[ $op == create ]] && echo filecreate || ([[ $op == stat ]] && echo filestat || echo filedelete))" ops/s "$fv" "$iv"
    REF_NAME=C GOAL=0.95 compare 8 "$op, $th thread(s), vs bench/meta_loop.c" ops/s "$fv" "$cv"
    rm -rf "$T/meta"
}

# The instructions callgrind counted in a run whose output is $1 (its summary line).
meta_instructions() { sed -n 's/^summary: //p' "$1"; }

# One tool's run under callgrind, its instruction count in COUNT. Args: out command...
meta_callgrind() {
    local out=$1
    shift
    run "$out.stdout" "$out.err" valgrind --tool=callgrind --callgrind-out-file="$out" "$@" ||
        fail_run "callgrind: $*" "$out.stdout" "$out.err"
    COUNT=$(meta_instructions "$out")
    [[ -n $COUNT ]] || die "callgrind wrote no summary into $out"
}

# One tool's run of one operation, 1 thread, `ops` operations, under callgrind: COUNT. The files
# it works on are there already (setup below), the same for both runs of a difference.
# Args: tool op ops base
meta_count_run() {
    local tool=$1 op=$2 ops=$3 base=$4 n=$M_COUNT_OPS
    next
    if [[ $tool == fslab ]]; then
        # stat: the files made beforehand and reused; unlink: a fileset of 2n files, made by the
        # setup of both runs alike; create: none.
        M_FILES=$((2 * n)) meta_toml "$op" 1 "$ops" >"$NEXT.toml"
        meta_callgrind "$NEXT.callgrind" "$FSLAB" run "$NEXT.toml" --dir "$base" --json
    else
        meta_callgrind "$NEXT.callgrind" "$META_LOOP" "$op" "$base" 1 "$ops"
    fi
}

# The count for one operation and tool: per operation, (count of 2n) - (count of n), over n.
# Args: tool op
meta_count_op() {
    local tool=$1 op=$2 n=$M_COUNT_OPS k base c=()
    for k in 1 2; do
        base=$T/meta/count
        rm -rf "$base"
        mkdir -p "$base"
        case $op.$tool in
        stat.*) # 2n files, made by fslab (untimed, not counted), stat-ed by both tools
            M_FILES=$((2 * n)) meta_toml stat 1 1 >"$T/meta-count-setup.toml"
            next
            run "$NEXT.json" "$NEXT.err" "$FSLAB" run "$T/meta-count-setup.toml" --dir "$base" --json ||
                fail_run "fslab (count setup)" "$NEXT.json" "$NEXT.err" ;;
        unlink.c) # the files to unlink, made beforehand (not counted)
            run "$T/meta-count-create.out" "$T/meta-count-create.err" "$META_LOOP" create "$base" 1 $((k * n)) ||
                fail_run "meta_loop create (count setup)" "$T/meta-count-create.out" "$T/meta-count-create.err" ;;
        esac
        meta_count_run "$tool" "$op" $((k * n)) "$base"
        c+=("$COUNT")
    done
    rm -rf "$T/meta/count"
    PER_OP=$(calc '"%.0f" % ((a[1] - a[0]) / a[2])' "${c[0]}" "${c[1]}" "$n")
}

# The instruction counts (see the header), when valgrind is installed or M_COUNT=1.
meta_count() {
    [[ $M_COUNT == 0 ]] && return
    if ! command -v valgrind >/dev/null; then
        [[ $M_COUNT == 1 ]] && { echo "engine.sh: M_COUNT=1 needs valgrind (apt-get install valgrind)" >&2; exit 3; }
        log "  (valgrind is not installed: no instruction counts; apt-get install valgrind for them)"
        return
    fi
    local op f c
    log "  user-space instructions per operation, 1 thread (callgrind; runs of $M_COUNT_OPS and $((2 * M_COUNT_OPS)) operations, the difference):"
    log "    $(printf '%-8s %8s %8s %10s' op fslab C 'fslab - C')"
    for op in $M_OPS; do
        meta_count_op fslab "$op"
        f=$PER_OP
        meta_count_op c "$op"
        c=$PER_OP
        log "    $(printf '%-8s %8s %8s %10s' "$op" "$f" "$c" $((f - c)))"
        RESULTS+=("8|$op, 1 thread: user-space instructions per op|$f|$c (C)|+$((f - c))||")
    done
}

meta_cases() {
    log ""
    log "case 8: metadata on empty files, a directory per thread, $M_FILES files per thread: fslab vs fio vs C (bench/meta_loop.c);"
    log "  each tool's best of $M_BEST runs a round, the runs of a round beside it"
    meta_build
    meta_count
    for op in $M_OPS; do
        for th in $M_THREADS; do
            meta_case "$op" "$th"
        done
    done
}
