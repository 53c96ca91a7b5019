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
# instead of writing 4 KiB into each first). Files to unlink are made before the timed run: by
# fslab's own untimed setup for fslab, by meta_loop create for fio and meta_loop. Files to stat
# are the same for all three: made once a round by fslab's setup (meta_stat_files), so that
# how and when the files were made (which sets where their dentries and inodes lie in memory)
# weighs on no tool more than another.
# The three tools take turns in every round, the order rotating.
#
# Environment: M_FILES (100000), M_THREADS ("1 4"), M_OPS ("create stat unlink"), M_ROUNDS (ROUNDS).

M_FILES=${M_FILES:-100000}
M_THREADS=${M_THREADS:-1 4}
M_OPS=${M_OPS:-create stat unlink}
M_ROUNDS=${M_ROUNDS:-$ROUNDS}

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
        # stat's files are made once a round for every tool (meta_stat_files), and kept.
        [[ $op == stat ]] && echo 'reuse = true'
    done
    for ((k = 0; k < th; k++)); do
        printf '[[group]]\nname = "g%d"\nfileset = "t%d"\n[[group.op]]\nop = "%s"\n' "$k" "$k" "$fop"
        [[ $op == create ]] || echo 'order = "sequential"'
    done
}

# A fresh directory for one run of one tool: $T/meta/<tool>; for stat and unlink, the files are
# made there first (untimed) for fio and meta_loop. Args: tool op threads
meta_fresh() {
    local base=$T/meta/$1
    if [[ $2 == stat ]]; then
        MBASE=$T/meta/stat
        return
    fi
    rm -rf "$base"
    mkdir -p "$base"
    if [[ $1 != fslab && $2 != create ]]; then
        "$META_LOOP" create "$base" "$3" "$M_FILES" >/dev/null || die "meta_loop create (setup) failed"
    fi
    MBASE=$base
}

# The files every tool stats in one round: fslab's own setup makes them (a run of one stat per
# thread), so that no tool stats files made in its own way or closer to its run than the others'.
# Args: threads
meta_stat_files() {
    local base=$T/meta/stat o e
    rm -rf "$base"
    mkdir -p "$base"
    meta_toml stat "$1" "$1" >"$T/meta-stat-setup.toml"
    next
    o=$NEXT.meta-setup.json e=$NEXT.meta-setup.err
    run "$o" "$e" "$FSLAB" run "$T/meta-stat-setup.toml" --dir "$base" --json || fail_run "fslab (stat setup)" "$o" "$e"
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
    local op=$1 th=$2 r f i c fv="" iv="" cv="" order
    for ((r = 1; r <= M_ROUNDS; r++)); do
        case $((r % 3)) in
        1) order="fslab fio c" ;;
        2) order="fio c fslab" ;;
        0) order="c fslab fio" ;;
        esac
        [[ $op == stat ]] && meta_stat_files "$th"
        for tool in $order; do
            meta_run "$tool" "$op" "$th"
            case $tool in fslab) f=$VAL ;; fio) i=$VAL ;; c) c=$VAL ;; esac
        done
        fv+=" $f" iv+=" $i" cv+=" $c"
        log "  $op, $th thread(s), round $r: fslab $(fmt_int "$f")  fio $(fmt_int "$i")  C $(fmt_int "$c") ops/s   (fslab/fio $(calc '"%.3f" % (a[0]/a[1])' "$f" "$i"), fslab/C $(calc '"%.3f" % (a[0]/a[1])' "$f" "$c"))"
    done
    GOAL=1.10 compare 8 "$op, $th thread(s), vs fio $([[ $op == create ]] && echo filecreate || ([[ $op == stat ]] && echo filestat || echo filedelete))" ops/s "$fv" "$iv"
    REF_NAME=C GOAL=0.95 compare 8 "$op, $th thread(s), vs bench/meta_loop.c" ops/s "$fv" "$cv"
    rm -rf "$T/meta"
}

meta_cases() {
    log ""
    log "case 8: metadata on empty files, a directory per thread, $M_FILES files per thread: fslab vs fio vs C (bench/meta_loop.c)"
    meta_build
    for op in $M_OPS; do
        for th in $M_THREADS; do
            meta_case "$op" "$th"
        done
    done
}
