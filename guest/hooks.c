/* PID 1's side of the kernel-hook recorder (hooks.h): loads the BPF
 * programs once, before any workload, and turns each ring-buffer record
 * into one EVENT frame with the supervisor's record builders (record.c),
 * so the host reads a hooked write exactly as it read a notified one.
 *
 * Loaded with libbpf (static, from the distribution) and the skeleton
 * bpftool generated from hooks.bpf.c at build time: the object is inside
 * this program, nothing is read from the guest's files but the kernel's
 * BTF.  The links live as long as PID 1: no one else can detach them
 * (bpf(2) is denied to the workload), and PID 1's end ends the machine.
 *
 * The record is written by the kernel when the send is checked; this side
 * reads it later.  What the kernel gave is in the record (who, which
 * socket, its peer, the first bytes of a DNS send); the process's exe and
 * argv are read here from /proc, and when the process is gone by then the
 * record says so in its note. */
#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "hooks.h"
#include HOOKS_SKELETON

#include <linux/audit.h>

#include "guest.h"
#include "clock-hold.h"
#include "proc-info.h"
#include "protocol.h"
#include "record.h"

/* The ABI of every hooked record: the filter denies the others before
 * they reach a socket (filter.c). */
#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

static struct {
  struct hooks *skel;
  /* Held for the boot: PID 1's end is the machine's.  sendmsg, connect,
   * bind, listen, accept (LSM or kprobe), and the returns of connect,
   * sendto and sendmsg. */
  struct bpf_link *links[8];
  uint32_t recorder;       /* AIRLOCK_RECORDER_HOOKS or _KPROBE */
  struct ring_buffer *ring;
  uint64_t count;
  int error;          /* the first failure to send a record */
  char lsm_why[128];  /* why the LSM hook could not attach (the kprobe then runs) */
  bool held;          /* hooks_hold(): read only when a phase ends */
} hk;

static char load_log[512];

/* libbpf's diagnostics: warnings go to the console (a verifier's refusal
 * is many lines), the last one into the error message. */
static int
on_libbpf_print (enum libbpf_print_level level, const char *fmt, va_list ap)
{
  char *text = NULL;
  size_t len;

  if (level != LIBBPF_WARN || vasprintf (&text, fmt, ap) < 0)
    return 0;
  len = strlen (text);
  /* A verifier log's tail says why: keep that on the console. */
  (void) write_all (STDERR_FILENO, len > 8192 ? text + len - 8192 : text, len > 8192 ? 8192 : len);
  memcpy (load_log, text, len < sizeof load_log - 1 ? len : sizeof load_log - 1);
  load_log[len < sizeof load_log - 1 ? len : sizeof load_log - 1] = '\0';
  load_log[strcspn (load_log, "\n")] = '\0';
  free (text);
  return 0;
}

/* Who: the kernel's view when the call was checked; exe and argv now,
 * when the process still runs the binary that made the call (its inode is
 * in the record: exe_ino), else as last read while it did
 * (*ret_recalled), else nothing (*ret_changed: it exec'd another binary,
 * and nothing of the one that made the call was kept).  A record never
 * names a binary the process became after its call (connect-exec in
 * tests/guest).  argv is read before the exe: an exec between the two
 * shows as another inode.  No exec can complete twice meanwhile: this runs
 * in the main loop, which answers no execve while it reads.  The inode
 * alone, not the device: through the workload's overlay, stat names the
 * layer's device and the kernel's inode sits on the overlay's own. */
static void
hooked_proc (const struct hook_record *hr, struct proc_info *pi, bool *ret_recalled,
             bool *ret_changed)
{
  char path[64];
  ssize_t n;
  bool same;

  memset (pi, 0, sizeof *pi);
  pi->ok = true;
  pi->tgid = hr->tgid;
  pi->ppid = hr->ppid;
  pi->nspid = hr->nspid;
  pi->uid = hr->uid;
  pi->gid = hr->gid;
  snprintf (path, sizeof path, "/proc/%u/cmdline", hr->tgid);
  n = read_prefix (path, pi->argv, sizeof pi->argv);
  pi->argv_len = n > 0 ? (size_t) n : 0;
  read_proc_exe (hr->tgid, pi);
  same = pi->exe_len > 0 && hr->exe_ino != 0 && pi->exe_ino == hr->exe_ino;
  *ret_recalled = *ret_changed = false;
  /* Either missing: the process was exiting between the reads (its mm
   * goes before it is reaped), so neither is trusted alone. */
  if (same && pi->argv_len > 0)
    return;
  *ret_recalled = proc_memo_recall (hr->tgid, hr->exe_ino, pi);
  if (!*ret_recalled && (pi->exe_len > 0 || pi->argv_len > 0))
    {
      /* Another binary's, or half of one: not this call's. */
      *ret_changed = !same && pi->exe_len > 0;
      pi->exe_len = pi->argv_len = 0;
      pi->exe_ino = 0;
    }
}

/* The socket as the kernel resolved it; the peer as getpeername names it. */
static void
hooked_sock (const struct hook_record *hr, struct sock_info *si)
{
  memset (si, 0, sizeof *si);
  si->fd = -1;
  si->is_socket = true;
  si->family = (int) hr->family;
  si->type = (int) hr->type;
  si->protocol = (int) hr->protocol;
  si->ino = hr->ino;
  if (hr->peer_len > 0 && hr->peer_len <= sizeof si->peer)
    {
      memcpy (si->peer, hr->peer, hr->peer_len);
      si->peer_len = hr->peer_len;
    }
}

/* How a hooked record's exe and argv were come by (hooked_proc). */
struct proc_read {
  bool recalled, changed;
};

/* A hooked record's start, alike for every kind: the call as the hook saw
 * it, its process and socket, and a record begun with action "continue"
 * (the kernel makes the call on its own copy of the arguments). */
static void
hooked_begin (const struct hook_record *hr, struct record *rec, struct proc_info *pi,
              struct sock_info *si, struct proc_read *how)
{
  struct seccomp_data call = { .nr = hr->nr, .arch = NATIVE_AUDIT_ARCH };

  memcpy (call.args, hr->args, sizeof call.args);
  hooked_proc (hr, pi, &how->recalled, &how->changed);
  hooked_sock (hr, si);
  record_begin (rec, &call, hr->tid, hr->time_ns, AIRLOCK_ACTION_CONTINUE);
}

static void
note_proc (struct record *rec, const struct proc_info *pi, bool recalled, bool changed)
{
  if (recalled)
    record_note (rec, "exe and argv as read at its last notified call (the process exited, "
                 "or ran another binary, when this record was read)");
  else if (changed)
    record_note (rec, "exe and argv unknown (the process ran another binary when this record "
                 "was read, and none of the one that made the call was kept)");
  else if (pi->exe_len == 0 && pi->argv_len == 0)
    record_note (rec, "exe and argv unreadable (the process exited before its record was read)");
}

/* The calls whose record asked for their outcome (a connect, a send naming
 * a destination: opens_result) and whose return is still to come, by
 * thread, with the SYSCALL frame the RESULT refers to: a thread is in one
 * call at a time, so few are open at once; the oldest slot is reused when
 * all are taken (its outcome is then not reported: the record stands
 * without it). */
#define OPEN_CALLS_MAX 256
static struct {
  uint32_t tid;
  uint64_t seq;
} open_calls[OPEN_CALLS_MAX];
static unsigned open_calls_next;

static void
call_opened (uint32_t tid, uint64_t seq)
{
  unsigned slot = open_calls_next;

  for (unsigned i = 0; i < OPEN_CALLS_MAX; i++)
    if (open_calls[i].tid == tid)
      {
        slot = i;
        break;
      }
  if (slot == open_calls_next)
    open_calls_next = (open_calls_next + 1) % OPEN_CALLS_MAX;
  open_calls[slot].tid = tid;
  open_calls[slot].seq = seq;
}

static bool
call_closed (uint32_t tid, uint64_t *ret_seq)
{
  for (unsigned i = 0; tid && i < OPEN_CALLS_MAX; i++)
    if (open_calls[i].tid == tid)
      {
        *ret_seq = open_calls[i].seq;
        open_calls[i].tid = 0;
        return true;
      }
  return false;
}

static void
sent (int r)
{
  if (r < 0 && hk.error == 0)
    hk.error = r;
  hk.count++;
}

/* Sends the record @rec and opens its call when the kernel asked for the
 * call's outcome. */
static void
send_hooked (struct record *rec, const struct hook_record *hr)
{
  uint64_t seq;
  int r;

  record_end (rec);
  r = channel_send (&rec->f, &seq);
  sent (r);
  if (r >= 0 && hr->opens_result)
    call_opened (hr->tid, seq);
}

/* A send the kernel is about to make, with the destination it copied: the
 * same record the supervisor made of a notified call, answered "continue"
 * (the kernel sends to exactly these bytes, so nothing is emulated). */
static void
on_sendmsg (const struct hook_record *hr, size_t size)
{
  const struct hook_record_payload *hp = (const void *) hr;
  int fd = (int) (uint32_t) hr->args[0];
  struct proc_info pi;
  struct sock_info si;
  struct msg_data md = { 0 };
  struct record rec;
  struct proc_read how;
  bool named = hr->addrlen >= 0;
  bool addr_ok = !(hr->payload_flags & HOOK_ADDR_UNREAD);
  size_t addr_len = named ? (size_t) hr->addrlen : 0;

  hooked_begin (hr, &rec, &pi, &si, &how);
  if (addr_len > HOOK_ADDR_MAX)
    addr_len = HOOK_ADDR_MAX;
  md.total = hr->total;
  if (hr->payload_len > 0 && size >= sizeof *hp)
    {
      md.bytes = (uint8_t *) hp->payload;
      md.len = hr->payload_len <= HOOK_PAYLOAD_MAX ? hr->payload_len : HOOK_PAYLOAD_MAX;
    }
  switch (hr->nr)
    {
    case SYS_sendto:
      /* The kernel names a destination exactly when the call passed one. */
      record_sendto (&rec, &pi, fd, &si, (int) hr->args[3], named ? hr->args[4] : 0,
                     hr->addrlen, hr->addr, addr_len, addr_ok, md.bytes, md.len, true, md.total);
      break;
    case SYS_sendmsg:
      {
        struct msg_copy mc = { 0 };

        mc.named = named;
        mc.namelen = hr->addrlen;
        if (named && addr_ok)
          {
            memcpy (mc.name, hr->addr, addr_len);
            mc.name_len = addr_len;
          }
        mc.data = md;
        record_message (&rec, &pi, fd, &si, (int) hr->args[2], &mc, 0, 0, 0, false);
        if (named && !addr_ok)
          record_note (&rec, "address unreadable (the kernel's copy)");
        break;
      }
    default:
      record_write (&rec, &pi, fd, &si, &md);
      break;
    }
  note_proc (&rec, &pi, how.recalled, how.changed);
  if (hr->payload_flags & HOOK_PAYLOAD_UNREAD)
    record_note (&rec, "payload partly unreadable (not resident when sent)");
  if (hr->payload_flags & HOOK_PAYLOAD_CUT)
    record_note (&rec, "payload: only the first %d segments read", HOOK_MAX_SEGMENTS);
  if (hr->payload_flags & HOOK_PAYLOAD_NOT_USER)
    record_note (&rec, "payload not read (the bytes are not the caller's memory)");
  send_hooked (&rec, hr);
}

/* A connect or bind the kernel is about to make, with the address it
 * copied: the same record the supervisor made of a notified call,
 * answered "continue" (the kernel connects or binds to exactly these
 * bytes). */
static void
on_address (const struct hook_record *hr)
{
  struct proc_info pi;
  struct sock_info si;
  struct record rec;
  size_t len = hr->addrlen < 0 ? 0 : (size_t) hr->addrlen;
  struct proc_read how;
  bool readable = !(hr->payload_flags & HOOK_ADDR_UNREAD);

  hooked_begin (hr, &rec, &pi, &si, &how);
  if (len > HOOK_ADDR_MAX)
    len = HOOK_ADDR_MAX;
  record_connect_bind (&rec, &pi, (int) (uint32_t) hr->args[0], &si, hr->addrlen, hr->addr, len,
                       readable);
  note_proc (&rec, &pi, how.recalled, how.changed);
  send_hooked (&rec, hr);
}

/* A listen or an accept on a socket: the socket and its own address, the
 * same record the supervisor made of a notified one (record_fd_call). */
static void
on_socket_call (const struct hook_record *hr)
{
  struct proc_info pi;
  struct sock_info si;
  struct record rec;
  struct proc_read how;

  hooked_begin (hr, &rec, &pi, &si, &how);
  if (hr->addrlen > 0 && (size_t) hr->addrlen <= sizeof si.local
      && !(hr->payload_flags & HOOK_ADDR_UNREAD))
    {
      memcpy (si.local, hr->addr, (size_t) hr->addrlen);
      si.local_len = (socklen_t) hr->addrlen;
    }
  record_fd_call (&rec, &pi, (int) (uint32_t) hr->args[0], &si);
  note_proc (&rec, &pi, how.recalled, how.changed);
  if (hr->payload_flags & HOOK_ADDR_UNREAD)
    record_note (&rec, "local address unreadable (the kernel's copy)");
  send_hooked (&rec, hr);
}

static void
on_result (const struct hook_record *hr)
{
  struct wire_frame f;
  uint64_t ref;

  if (!call_closed (hr->tid, &ref))
    return;
  record_result (&f, hr->time_ns, ref, hr->result);
  sent (channel_send (&f, NULL));
}

static int
on_record (void *ctx, void *data, size_t size)
{
  const struct hook_record *hr = data;

  (void) ctx;
  if (size < sizeof *hr)
    return 0;
  clock_hold_after_network ();
  switch (hr->kind)
    {
    case HOOK_SENDMSG:
      on_sendmsg (hr, size);
      break;
    case HOOK_CONNECT:
    case HOOK_BIND:
      on_address (hr);
      break;
    case HOOK_LISTEN:
    case HOOK_ACCEPT:
      on_socket_call (hr);
      break;
    case HOOK_RESULT:
      on_result (hr);
      break;
    default:
      break;
    }
  return 0;
}

int
hooks_start (bool ring_min, char *error, size_t error_size)
{
  int r;

  libbpf_set_print (on_libbpf_print);
  hk.skel = hooks__open ();
  if (!hk.skel)
    {
      r = -errno;
      snprintf (error, error_size, "cannot open the BPF object: %s", strerror (-r));
      return r;
    }
  if (ring_min && (r = bpf_map__set_max_entries (hk.skel->maps.records,
                                                 (uint32_t) sysconf (_SC_PAGESIZE))) < 0)
    {
      snprintf (error, error_size, "cannot size the record ring: %s", strerror (-r));
      goto fail;
    }
  r = hooks__load (hk.skel);
  if (r < 0)
    {
      snprintf (error, error_size, "the kernel refused the BPF programs (%s)%s%s", strerror (-r),
                load_log[0] ? ": " : "", load_log);
      goto fail;
    }
  /* The LSM hooks where the kernel can attach them (they can refuse a
   * call they cannot record); else the kprobes (they count one lost).
   * Debian 12's arm64 kernel has no BPF trampoline for kernel functions:
   * ENOTSUPP. */
  hk.links[0] = bpf_program__attach_lsm (hk.skel->progs.airlock_socket_sendmsg);
  if (hk.links[0])
    {
      struct bpf_program *lsm[] = { hk.skel->progs.airlock_socket_connect,
                                    hk.skel->progs.airlock_socket_bind,
                                    hk.skel->progs.airlock_socket_listen,
                                    hk.skel->progs.airlock_socket_accept };

      hk.recorder = AIRLOCK_RECORDER_HOOKS;
      for (size_t i = 0; i < sizeof lsm / sizeof lsm[0]; i++)
        {
          hk.links[1 + i] = bpf_program__attach_lsm (lsm[i]);
          if (!hk.links[1 + i])
            {
              r = -errno;
              snprintf (error, error_size, "cannot attach the BPF LSM program %s: %s",
                        bpf_program__section_name (lsm[i]), strerror (-r));
              goto fail;
            }
        }
    }
  else
    {
      int lsm_errno = errno;

      struct {
        struct bpf_program *prog;
        const char *function;
      } kprobes[] = {
        { hk.skel->progs.airlock_socket_sendmsg_kprobe, "security_socket_sendmsg" },
        { hk.skel->progs.airlock_socket_connect_kprobe, "security_socket_connect" },
        { hk.skel->progs.airlock_socket_bind_kprobe, "security_socket_bind" },
        { hk.skel->progs.airlock_socket_listen_kprobe, "security_socket_listen" },
        { hk.skel->progs.airlock_socket_accept_kprobe, "security_socket_accept" },
      };
      bool attached = true;

      for (size_t i = 0; attached && i < sizeof kprobes / sizeof kprobes[0]; i++)
        {
          hk.links[i] = bpf_program__attach_kprobe (kprobes[i].prog, false, kprobes[i].function);
          attached = hk.links[i] != NULL;
        }
      if (!attached)
        {
          r = -errno;
          snprintf (error, error_size, "cannot attach the BPF LSM programs (%s: is 'bpf' in the "
                    "kernel's lsm= list?) nor their kprobes (%s)",
                    lsm_errno == 524 ? "ENOTSUPP" : strerror (lsm_errno), strerror (-r));
          goto fail;
        }
      hk.recorder = AIRLOCK_RECORDER_KPROBE;
      snprintf (hk.lsm_why, sizeof hk.lsm_why, "%s",
                lsm_errno == 524 ? "ENOTSUPP: no BPF trampoline for kernel functions"
                                 : strerror (lsm_errno));
    }
  /* The names bpf_program__attach() takes from the sections (the system
   * calls' entry points on this arch). */
  {
    struct bpf_program *probes[] = {
      hk.skel->progs.airlock_connect_exit, hk.skel->progs.airlock_sendto_exit,
      hk.skel->progs.airlock_sendmsg_exit,
    };

    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
      {
        hk.links[5 + i] = bpf_program__attach (probes[i]);
        if (!hk.links[5 + i])
          {
            r = -errno;
            snprintf (error, error_size, "cannot attach the probe %s on %s: %s",
                      bpf_program__name (probes[i]), bpf_program__section_name (probes[i]),
                      strerror (-r));
            goto fail;
          }
      }
  }
  hk.ring = ring_buffer__new (bpf_map__fd (hk.skel->maps.records), on_record, NULL, NULL);
  if (!hk.ring)
    {
      r = -errno;
      snprintf (error, error_size, "cannot map the record ring: %s", strerror (-r));
      goto fail;
    }
  return 0;

fail:
  for (size_t i = 0; i < sizeof hk.links / sizeof hk.links[0]; i++)
    {
      if (hk.links[i])
        bpf_link__destroy (hk.links[i]);
      hk.links[i] = NULL;
    }
  hooks__destroy (hk.skel);
  hk.skel = NULL;
  return r;
}

bool
hooks_active (void)
{
  return hk.ring != NULL;
}

void
hooks_hold (void)
{
  hk.held = true;
}

int
hooks_fd (void)
{
  return hk.ring && !hk.held ? ring_buffer__epoll_fd (hk.ring) : -1;
}

int
hooks_drain (void)
{
  uint64_t before = hk.count;
  int r;

  if (!hk.ring)
    return 0;
  r = ring_buffer__consume (hk.ring);
  if (r < 0)
    return r;
  if (hk.error < 0)
    return hk.error;
  return (int) (hk.count - before);
}

uint64_t
hooks_count (void)
{
  return hk.count;
}

uint64_t
hooks_refused (void)
{
  return hk.skel ? __atomic_load_n (&hk.skel->bss->refused, __ATOMIC_RELAXED) : 0;
}

uint64_t
hooks_lost (void)
{
  return hk.skel ? __atomic_load_n (&hk.skel->bss->lost, __ATOMIC_RELAXED) : 0;
}

uint32_t
hooks_recorder (const char **ret_lsm_why)
{
  if (ret_lsm_why)
    *ret_lsm_why = hk.lsm_why;
  return hk.ring ? hk.recorder : 0;
}
