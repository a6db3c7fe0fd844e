/* Records the writeback probes (dirty_probes.bpf.c) send to user space through the ring buffer.
 * Shared by the BPF program and the collector (src/bpf_collector.cpp). Units are the tracepoints'
 * own: pages, KB/s, milliseconds; the collector converts. */
#ifndef IOSIG_CACHESIM_DIRTY_EVENTS_H
#define IOSIG_CACHESIM_DIRTY_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum iosig_dirty_event_kind {
    IOSIG_EVENT_GLOBAL = 1,    /* writeback:global_dirty_state */
    IOSIG_EVENT_THROTTLE = 2,  /* writeback:balance_dirty_pages */
    IOSIG_EVENT_RATELIMIT = 3, /* writeback:bdi_dirty_ratelimit */
    IOSIG_EVENT_WRITTEN = 4,   /* writeback:writeback_pages_written */
};

struct iosig_global_dirty {
    __u64 nr_dirty, nr_writeback, background_thresh, dirty_thresh, dirty_limit, nr_dirtied,
        nr_written;
};

struct iosig_throttle {
    __u64 limit, setpoint, dirty, wb_setpoint, wb_dirty; /* pages */
    __u64 dirty_ratelimit, task_ratelimit;               /* KB/s */
    __u64 dirtied, dirtied_pause;                        /* pages */
    __s64 paused, pause, period, think;                  /* ms */
};

struct iosig_ratelimit {
    __u64 write_bw, avg_write_bw, dirty_rate, dirty_ratelimit, task_ratelimit,
        balanced_dirty_ratelimit;
};

struct iosig_dirty_event {
    __u32 kind;
    __u32 pid;  /* thread */
    __u32 tgid; /* process */
    __u32 flags;
    __u64 time_ns; /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
    char bdi[32];
    union {
        struct iosig_global_dirty global;
        struct iosig_throttle throttle;
        struct iosig_ratelimit ratelimit;
        __s64 pages_written;
    };
};

/* flags */
/* The kernel names the per-device fields bdi_* (before 6.x). */
#define IOSIG_THROTTLE_OLD_FIELDS 1u

#endif
