# bench/reporting.sh: sourced by bench/lib.sh (engine.sh) and bench/fidelity.sh. Holds back the
# virtual machine's free page reporting while a bench runs.
#
# On a VM whose free memory is reported to its host (virtio-balloon free page reporting,
# /sys/module/page_reporting), a page the guest frees is soon handed to the host, which takes
# it back; the next write into that page then faults on the host, in the guest's system time.
# A bench that frees and allocates gigabytes between runs (a fresh 2 GiB file on a tmpfs, a
# fresh ext4 image) then measures how much of its memory the host had taken back in between:
# fio's 2 GiB write of a fresh tmpfs file, 5 runs, 819 to 2,646 MiB/s, and 2,032 to 2,583 with
# pages freed less than 10 s ago left unreported (this kernel's `min_free_ms`). So, where that
# knob is, pages freed less than REPORT_HOLD_MS (60000) ago stay unreported while the bench
# runs, and the old value comes back when it ends.

REPORTING=/sys/module/page_reporting/parameters/min_free_ms
REPORTING_WAS=""

hold_reporting() {
    if [[ -w $REPORTING ]]; then
        REPORTING_WAS=$(cat "$REPORTING")
        echo "${REPORT_HOLD_MS:-60000}" >"$REPORTING" &&
            echo "  free page reporting held back: pages freed less than ${REPORT_HOLD_MS:-60000} ms ago stay (was $REPORTING_WAS ms)"
    elif [[ -d /sys/module/page_reporting ]]; then
        echo "  note: free page reporting is on and cannot be held back here (no $REPORTING): runs may be slowed by the host"
    fi
}

release_reporting() {
    [[ -n $REPORTING_WAS ]] && echo "$REPORTING_WAS" >"$REPORTING"
    REPORTING_WAS=""
}
