/* CO-RE probes on the kernel's writeback tracepoints. Each hit becomes one iosig_dirty_event in the
 * `events` ring buffer; full-buffer drops are counted in `lost`.
 * The per-device fields of balance_dirty_pages are wb_setpoint/wb_dirty on current kernels and
 * bdi_setpoint/bdi_dirty on older ones (6.1): both flavours are declared below and the one the
 * running kernel has is picked with bpf_core_field_exists. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "dirty_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 4 << 20);
} events SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} lost SEC(".maps");

/* Only the fields that differ between the flavours; CO-RE matches them by name. */
struct trace_event_raw_balance_dirty_pages___new {
    unsigned long wb_setpoint;
    unsigned long wb_dirty;
} __attribute__((preserve_access_index));

struct trace_event_raw_balance_dirty_pages___old {
    unsigned long bdi_setpoint;
    unsigned long bdi_dirty;
} __attribute__((preserve_access_index));

static __always_inline struct iosig_dirty_event* reserve(__u32 kind) {
    struct iosig_dirty_event* e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        __u32 zero = 0;
        __u64* count = bpf_map_lookup_elem(&lost, &zero);
        if (count) __sync_fetch_and_add(count, 1);
        return 0;
    }
    __u64 id = bpf_get_current_pid_tgid();
    e->kind = kind;
    e->pid = (__u32)id;
    e->tgid = (__u32)(id >> 32);
    e->flags = 0;
    e->time_ns = bpf_ktime_get_ns();
    e->bdi[0] = 0;
    return e;
}

SEC("tracepoint/writeback/global_dirty_state")
int on_global_dirty_state(struct trace_event_raw_global_dirty_state* ctx) {
    struct iosig_dirty_event* e = reserve(IOSIG_EVENT_GLOBAL);
    if (!e) return 0;
    e->global.nr_dirty = BPF_CORE_READ(ctx, nr_dirty);
    e->global.nr_writeback = BPF_CORE_READ(ctx, nr_writeback);
    e->global.background_thresh = BPF_CORE_READ(ctx, background_thresh);
    e->global.dirty_thresh = BPF_CORE_READ(ctx, dirty_thresh);
    e->global.dirty_limit = BPF_CORE_READ(ctx, dirty_limit);
    e->global.nr_dirtied = BPF_CORE_READ(ctx, nr_dirtied);
    e->global.nr_written = BPF_CORE_READ(ctx, nr_written);
    bpf_ringbuf_submit(e, 0);
    return 0;
}

SEC("tracepoint/writeback/balance_dirty_pages")
int on_balance_dirty_pages(struct trace_event_raw_balance_dirty_pages* ctx) {
    struct iosig_dirty_event* e = reserve(IOSIG_EVENT_THROTTLE);
    if (!e) return 0;
    bpf_core_read_str(e->bdi, sizeof(e->bdi), &ctx->bdi);
    e->throttle.limit = BPF_CORE_READ(ctx, limit);
    e->throttle.setpoint = BPF_CORE_READ(ctx, setpoint);
    e->throttle.dirty = BPF_CORE_READ(ctx, dirty);
    struct trace_event_raw_balance_dirty_pages___new* fresh = (void*)ctx;
    struct trace_event_raw_balance_dirty_pages___old* old = (void*)ctx;
    if (bpf_core_field_exists(fresh->wb_dirty)) {
        e->throttle.wb_setpoint = BPF_CORE_READ(fresh, wb_setpoint);
        e->throttle.wb_dirty = BPF_CORE_READ(fresh, wb_dirty);
    } else if (bpf_core_field_exists(old->bdi_dirty)) {
        e->throttle.wb_setpoint = BPF_CORE_READ(old, bdi_setpoint);
        e->throttle.wb_dirty = BPF_CORE_READ(old, bdi_dirty);
        e->flags |= IOSIG_THROTTLE_OLD_FIELDS;
    } else {
        e->throttle.wb_setpoint = 0;
        e->throttle.wb_dirty = 0;
    }
    e->throttle.dirty_ratelimit = BPF_CORE_READ(ctx, dirty_ratelimit);
    e->throttle.task_ratelimit = BPF_CORE_READ(ctx, task_ratelimit);
    e->throttle.dirtied = BPF_CORE_READ(ctx, dirtied);
    e->throttle.dirtied_pause = BPF_CORE_READ(ctx, dirtied_pause);
    e->throttle.paused = BPF_CORE_READ(ctx, paused);
    e->throttle.pause = BPF_CORE_READ(ctx, pause);
    e->throttle.period = BPF_CORE_READ(ctx, period);
    e->throttle.think = BPF_CORE_READ(ctx, think);
    bpf_ringbuf_submit(e, 0);
    return 0;
}

SEC("tracepoint/writeback/bdi_dirty_ratelimit")
int on_bdi_dirty_ratelimit(struct trace_event_raw_bdi_dirty_ratelimit* ctx) {
    struct iosig_dirty_event* e = reserve(IOSIG_EVENT_RATELIMIT);
    if (!e) return 0;
    bpf_core_read_str(e->bdi, sizeof(e->bdi), &ctx->bdi);
    e->ratelimit.write_bw = BPF_CORE_READ(ctx, write_bw);
    e->ratelimit.avg_write_bw = BPF_CORE_READ(ctx, avg_write_bw);
    e->ratelimit.dirty_rate = BPF_CORE_READ(ctx, dirty_rate);
    e->ratelimit.dirty_ratelimit = BPF_CORE_READ(ctx, dirty_ratelimit);
    e->ratelimit.task_ratelimit = BPF_CORE_READ(ctx, task_ratelimit);
    e->ratelimit.balanced_dirty_ratelimit = BPF_CORE_READ(ctx, balanced_dirty_ratelimit);
    bpf_ringbuf_submit(e, 0);
    return 0;
}

SEC("tracepoint/writeback/writeback_pages_written")
int on_writeback_pages_written(struct trace_event_raw_writeback_pages_written* ctx) {
    struct iosig_dirty_event* e = reserve(IOSIG_EVENT_WRITTEN);
    if (!e) return 0;
    e->pages_written = BPF_CORE_READ(ctx, pages);
    bpf_ringbuf_submit(e, 0);
    return 0;
}
