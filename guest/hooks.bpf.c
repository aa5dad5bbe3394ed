/* The kernel-hook recorder's program (hooks.h says what it records and
 * why).  BPF LSM: it runs inside the kernel's own check of a send, on the
 * kernel's copy of its arguments, and only for sends on sockets — a write
 * to a file never gets here, so it costs nothing.  Where the kernel cannot
 * attach LSM programs the same code runs as a kprobe (below).
 *
 * CO-RE: the kernel types below declare only the fields read, marked
 * preserve_access_index, and libbpf relocates every access against the
 * guest kernel's own BTF (/sys/kernel/btf/vmlinux) when PID 1 loads the
 * object.  Hand-declared rather than a generated vmlinux.h: the build has
 * no kernel BTF to generate one from (the guest kernel is a package the
 * cache fetches later), and these few fields are the whole contract.
 *
 * Five hooks: socket_sendmsg, which only sends on sockets reach,
 * socket_connect, socket_bind, socket_listen and socket_accept; and return
 * probes on connect(2), sendto(2) and sendmsg(2) for their outcome.  Fail
 * closed: a call whose record cannot be reserved is refused (EPERM)
 * and counted; PID 1 reports the count (hooks.c).  Only the workload is
 * recorded: tasks in a pid namespace below the guest's first (the reaper's
 * and every namespace under it).  PID 1 and its threads are not.
 *
 * Built twice (-D__TARGET_ARCH_x86, -D__TARGET_ARCH_arm64): the system
 * call's number and arguments come from its saved registers, whose layout
 * is the architecture's. */

#include "hooks.h"

/* The UAPI's types and constants (BPF_MAP_TYPE_RINGBUF, …); the build
 * points clang at the build machine's asm/types.h, which is the same
 * generic one on both guest arches. */
#include <linux/bpf.h>

typedef __u16 hk_u16;

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC ("license") = "GPL";

#define EPERM 1
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define TCP_SYN_SENT 2
#define TCP_CLOSE 7

#if defined(__TARGET_ARCH_x86)
#define NR_CONNECT 42
#define NR_SENDTO 44
#define NR_SENDMSG 46
#define NR_SENDMMSG 307
#define NR_SENDFILE 40
#define NR_SPLICE 275
#elif defined(__TARGET_ARCH_arm64)
#define NR_CONNECT 203
#define NR_SENDTO 206
#define NR_SENDMSG 211
#define NR_SENDMMSG 269
#define NR_SENDFILE 71
#define NR_SPLICE 76
#else
#error "build with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64"
#endif

/* ---- the kernel's types, as far as they are read ------------------------ */

struct in6_addr {
  union {
    hk_u8 u6_addr8[16];
  } in6_u;
} __attribute__ ((preserve_access_index));

struct sock_common {
  __be32 skc_daddr;
  __be32 skc_rcv_saddr;
  __be16 skc_dport;
  hk_u16 skc_num;
  unsigned short skc_family;
  volatile unsigned char skc_state;
  int skc_bound_dev_if;
  struct in6_addr skc_v6_daddr;
  struct in6_addr skc_v6_rcv_saddr;
} __attribute__ ((preserve_access_index));

struct sock {
  struct sock_common __sk_common;
  hk_u16 sk_type;
  hk_u16 sk_protocol;
} __attribute__ ((preserve_access_index));

/* A unix socket's bound name, as getsockname() returns it (unix_getname):
 * len bytes of name, the family included. */
struct sockaddr_un {
  unsigned short sun_family;
  char sun_path[108];
} __attribute__ ((preserve_access_index));

struct unix_address {
  int len;
  struct sockaddr_un name[];
} __attribute__ ((preserve_access_index));

struct unix_sock {
  struct unix_address *addr;
} __attribute__ ((preserve_access_index));

struct inode {
  unsigned long i_ino;
} __attribute__ ((preserve_access_index));

struct file {
  struct inode *f_inode;
} __attribute__ ((preserve_access_index));

struct socket {
  struct sock *sk;
  struct file *file;
} __attribute__ ((preserve_access_index));

struct iovec {
  void *iov_base;
  unsigned long iov_len;
};

enum iter_type {
  ITER_IOVEC,
  ITER_UBUF,
};

struct iov_iter {
  hk_u8 iter_type;
  unsigned long iov_offset;
  unsigned long count;
  const struct iovec *iov;
  void *ubuf;
  unsigned long nr_segs;
} __attribute__ ((preserve_access_index));

struct msghdr {
  void *msg_name;   /* the kernel's copy of the destination, or NULL */
  int msg_namelen;
  struct iov_iter msg_iter;
} __attribute__ ((preserve_access_index));

struct sockaddr;   /* read as bytes, never by field */

struct upid {
  int nr;
} __attribute__ ((preserve_access_index));

struct pid {
  unsigned int level;
  struct upid numbers[1];
} __attribute__ ((preserve_access_index));

typedef struct {
  unsigned int val;
} kuid_t;

typedef struct {
  unsigned int val;
} kgid_t;

struct cred {
  kuid_t uid;
  kgid_t gid;
} __attribute__ ((preserve_access_index));

struct mm_struct {
  struct file *exe_file;
} __attribute__ ((preserve_access_index));

struct task_struct {
  int pid;
  int tgid;
  struct task_struct *real_parent;
  const struct cred *real_cred;
  struct pid *thread_pid;
  struct mm_struct *mm;
} __attribute__ ((preserve_access_index));

#if defined(__TARGET_ARCH_x86)
struct pt_regs {
  unsigned long di, si, dx, r10, r8, r9;
  unsigned long ax, orig_ax;
} __attribute__ ((preserve_access_index));
#else
struct pt_regs {
  hk_u64 regs[31];
  hk_u64 orig_x0;
  hk_s32 syscallno;
} __attribute__ ((preserve_access_index));
#endif

/* A probed kernel function's first three arguments and a return probe's
 * value, by the kernel's calling convention (bpf_tracing.h's PT_REGS_*
 * macros want the UAPI's register names; these are the kernel's own,
 * relocated like every type here). */
#if defined(__TARGET_ARCH_x86)
#define KPROBE_ARG0(ctx) ((ctx)->di)
#define KPROBE_ARG1(ctx) ((ctx)->si)
#define KPROBE_ARG2(ctx) ((ctx)->dx)
#define KPROBE_RET(ctx) ((ctx)->ax)
#else
#define KPROBE_ARG0(ctx) ((ctx)->regs[0])
#define KPROBE_ARG1(ctx) ((ctx)->regs[1])
#define KPROBE_ARG2(ctx) ((ctx)->regs[2])
#define KPROBE_RET(ctx) ((ctx)->regs[0])
#endif

/* ---- maps ----------------------------------------------------------------- */

/* Sized for bursts: PID 1 drains it as records arrive.  A full ring refuses
 * the send (fail closed); the test mode hooks-ring-min makes it one page,
 * which no record with a payload fits (tests/vm/test-supervisor.c). */
struct {
  __uint (type, BPF_MAP_TYPE_RINGBUF);
  __uint (max_entries, 4 * 1024 * 1024);
} records SEC (".maps");

/* The threads inside a recorded call whose outcome is asked for (a
 * connect, a send naming a destination), until its system call returns
 * (call_exit).  A thread is in at most one call; an entry a missed return
 * left behind is overwritten by the thread's next recorded call. */
struct {
  __uint (type, BPF_MAP_TYPE_HASH);
  __uint (max_entries, 4096);
  __type (key, hk_u32);
  __type (value, hk_u8);
} opened SEC (".maps");

/* Calls refused because no record could be reserved.  Only PID 1 reads it
 * (bpf(2) is denied to the workload by its filter). */
hk_u64 refused = 0;
/* Calls the kprobe variant saw but could not record (it cannot refuse),
 * and connect results no record could be reserved for. */
hk_u64 lost = 0;

/* ---- helpers -------------------------------------------------------------- */

static __always_inline int
in_workload (struct task_struct *task)
{
  return BPF_CORE_READ (task, thread_pid, level) > 0;
}

static __always_inline void
fill_call (struct hook_record *r, struct task_struct *task, long nr)
{
  struct pt_regs *regs = (struct pt_regs *) bpf_task_pt_regs (task);
  struct pid *pid = BPF_CORE_READ (task, thread_pid);
  unsigned int level = BPF_CORE_READ (pid, level);

  r->nr = (hk_s32) nr;
  r->time_ns = bpf_ktime_get_boot_ns ();
#if defined(__TARGET_ARCH_x86)
  r->args[0] = BPF_CORE_READ (regs, di);
  r->args[1] = BPF_CORE_READ (regs, si);
  r->args[2] = BPF_CORE_READ (regs, dx);
  r->args[3] = BPF_CORE_READ (regs, r10);
  r->args[4] = BPF_CORE_READ (regs, r8);
  r->args[5] = BPF_CORE_READ (regs, r9);
#else
  /* x0 is overwritten by the return value; the kernel keeps the first
   * argument in orig_x0. */
  r->args[0] = BPF_CORE_READ (regs, orig_x0);
  r->args[1] = BPF_CORE_READ (regs, regs[1]);
  r->args[2] = BPF_CORE_READ (regs, regs[2]);
  r->args[3] = BPF_CORE_READ (regs, regs[3]);
  r->args[4] = BPF_CORE_READ (regs, regs[4]);
  r->args[5] = BPF_CORE_READ (regs, regs[5]);
#endif
  r->tid = (hk_u32) BPF_CORE_READ (task, pid);
  r->tgid = (hk_u32) BPF_CORE_READ (task, tgid);
  r->ppid = (hk_u32) BPF_CORE_READ (task, real_parent, tgid);
  r->uid = BPF_CORE_READ (task, real_cred, uid.val);
  r->gid = BPF_CORE_READ (task, real_cred, gid.val);
  /* Which binary made the call, as the kernel knows it now: PID 1 names
   * the exe later, from /proc, and must not name one the process exec'd
   * in between (hooks.c, hooked_proc). */
  r->exe_ino = BPF_CORE_READ (task, mm, exe_file, f_inode, i_ino);
  /* The pid in the task's own namespace, as /proc's NSpid ends with. */
  level &= 31;
  bpf_core_read (&r->nspid, sizeof r->nspid,
                 (char *) pid + bpf_core_field_offset (struct pid, numbers)
                 + level * bpf_core_type_size (struct upid));
}

static __always_inline long
current_nr (struct task_struct *task)
{
  struct pt_regs *regs = (struct pt_regs *) bpf_task_pt_regs (task);

#if defined(__TARGET_ARCH_x86)
  return (long) BPF_CORE_READ (regs, orig_ax);
#else
  return (long) BPF_CORE_READ (regs, syscallno);
#endif
}

/* The socket as getpeername() would name its peer (inet_getname,
 * inet6_getname): nothing when it has no destination port, or is closed
 * or still connecting. */
static __always_inline void
fill_socket (struct hook_record *r, struct socket *sock)
{
  struct sock *sk = BPF_CORE_READ (sock, sk);
  unsigned short family = BPF_CORE_READ (sk, __sk_common.skc_family);
  __be16 dport = BPF_CORE_READ (sk, __sk_common.skc_dport);
  unsigned char state = BPF_CORE_READ (sk, __sk_common.skc_state);

  /* Ring memory is not zeroed: sin_zero, sin6_flowinfo and the rest are
   * ours to clear, or earlier records' bytes would be in this one. */
  __builtin_memset (r->peer, 0, sizeof r->peer);
  r->family = family;
  r->type = BPF_CORE_READ (sk, sk_type);
  r->protocol = BPF_CORE_READ (sk, sk_protocol);
  r->ino = BPF_CORE_READ (sock, file, f_inode, i_ino);
  r->peer_len = 0;
  if (dport == 0 || state == TCP_CLOSE || state == TCP_SYN_SENT)
    return;
  /* sockaddr_in / sockaddr_in6, little-endian family, port and address in
   * network order as the kernel keeps them. */
  r->peer[0] = (hk_u8) family;
  r->peer[1] = (hk_u8) (family >> 8);
  __builtin_memcpy (&r->peer[2], &dport, 2);
  if (family == AF_INET)
    {
      __be32 a = BPF_CORE_READ (sk, __sk_common.skc_daddr);

      __builtin_memcpy (&r->peer[4], &a, 4);
      r->peer_len = 16;
    }
  else
    {
      int ifindex = 0;

      bpf_core_read (&r->peer[8], 16, &sk->__sk_common.skc_v6_daddr);
      /* A link-local peer's scope is the bound interface (ipv6_iface_scope_id). */
      if (r->peer[8] == 0xfe && (r->peer[9] & 0xc0) == 0x80)
        ifindex = BPF_CORE_READ (sk, __sk_common.skc_bound_dev_if);
      __builtin_memcpy (&r->peer[24], &ifindex, 4);
      r->peer_len = 28;
    }
}

/* The socket's own address as getsockname() would name it (inet_getname,
 * inet6_getname, unix_getname), into addr[] with its length in addrlen: a
 * listener's or an accepting socket's.  Other families: none (-1). */
static __always_inline void
fill_local (struct hook_record *r, struct socket *sock)
{
  struct sock *sk = BPF_CORE_READ (sock, sk);
  unsigned short family = BPF_CORE_READ (sk, __sk_common.skc_family);
  __be16 port = bpf_htons (BPF_CORE_READ (sk, __sk_common.skc_num));

  __builtin_memset (r->addr, 0, 28);
  r->addrlen = -1;
  if (family == AF_INET || family == AF_INET6)
    {
      r->addr[0] = (hk_u8) family;
      r->addr[1] = (hk_u8) (family >> 8);
      __builtin_memcpy (&r->addr[2], &port, 2);
    }
  if (family == AF_INET)
    {
      __be32 a = BPF_CORE_READ (sk, __sk_common.skc_rcv_saddr);

      __builtin_memcpy (&r->addr[4], &a, 4);
      r->addrlen = 16;
    }
  else if (family == AF_INET6)
    {
      int ifindex = 0;

      bpf_core_read (&r->addr[8], 16, &sk->__sk_common.skc_v6_rcv_saddr);
      if (r->addr[8] == 0xfe && (r->addr[9] & 0xc0) == 0x80)
        ifindex = BPF_CORE_READ (sk, __sk_common.skc_bound_dev_if);
      __builtin_memcpy (&r->addr[24], &ifindex, 4);
      r->addrlen = 28;
    }
  else if (family == AF_UNIX)
    {
      struct unix_address *ua = BPF_CORE_READ ((struct unix_sock *) sk, addr);
      unsigned long len;

      /* Unbound: the family alone. */
      r->addr[0] = (hk_u8) family;
      r->addr[1] = (hk_u8) (family >> 8);
      r->addrlen = 2;
      if (!ua)
        return;
      len = (unsigned long) BPF_CORE_READ (ua, len);
      if (len > HOOK_ADDR_MAX)
        len = HOOK_ADDR_MAX;
      asm volatile ("" : "+r"(len));
      if (len > HOOK_ADDR_MAX)
        len = HOOK_ADDR_MAX;
      r->addrlen = (hk_s32) len;
      if (bpf_probe_read_kernel (r->addr, len, (char *) ua
                                 + bpf_core_field_offset (struct unix_address, name)) < 0)
        r->payload_flags |= HOOK_ADDR_UNREAD;
    }
}

static __always_inline hk_u16
peer_port (const struct hook_record *r)
{
  return r->peer_len ? (hk_u16) ((r->peer[2] << 8) | r->peer[3]) : 0;
}

/* The first bytes of the send: user memory behind the iterator.  A copy
 * of at most HOOK_PAYLOAD_MAX at an offset below HOOK_PAYLOAD_MAX stays in
 * the HOOK_PAYLOAD_ROOM buffer, which is what the verifier checks. */
static __always_inline void
copy_payload (struct hook_record_payload *p, struct msghdr *msg)
{
  hk_u8 type = BPF_CORE_READ (msg, msg_iter.iter_type);
  unsigned long skip = BPF_CORE_READ (msg, msg_iter.iov_offset);
  unsigned long count = BPF_CORE_READ (msg, msg_iter.count);
  unsigned long off = 0;

  p->r.payload_len = 0;
  if (bpf_core_enum_value_exists (enum iter_type, ITER_UBUF)
      && type == bpf_core_enum_value (enum iter_type, ITER_UBUF))
    {
      char *base = BPF_CORE_READ (msg, msg_iter.ubuf);
      unsigned long len = count;

      if (len > HOOK_PAYLOAD_MAX)
        len = HOOK_PAYLOAD_MAX;
      if (bpf_probe_read_user (p->payload, len, base + skip) < 0)
        p->r.payload_flags |= HOOK_PAYLOAD_UNREAD;
      else
        p->r.payload_len = (hk_u32) len;
      return;
    }
  if (type != bpf_core_enum_value (enum iter_type, ITER_IOVEC))
    {
      p->r.payload_flags |= HOOK_PAYLOAD_NOT_USER;
      return;
    }
  {
    const struct iovec *iov = BPF_CORE_READ (msg, msg_iter.iov);
    unsigned long nsegs = BPF_CORE_READ (msg, msg_iter.nr_segs);

    for (int i = 0; i < HOOK_MAX_SEGMENTS; i++)
      {
        struct iovec v;
        unsigned long len;

        if (i >= nsegs || off >= HOOK_PAYLOAD_MAX || off >= count)
          break;
        if (bpf_probe_read_kernel (&v, sizeof v, &iov[i]) < 0)
          {
            p->r.payload_flags |= HOOK_PAYLOAD_UNREAD;
            break;
          }
        if (v.iov_len <= skip)
          {
            skip -= v.iov_len;
            continue;
          }
        len = v.iov_len - skip;
        if (len > HOOK_PAYLOAD_MAX - off)
          len = HOOK_PAYLOAD_MAX - off;
        /* The verifier bounds a register only against constants: hide the
         * clamp above from the compiler, which would drop this one. */
        asm volatile ("" : "+r"(len));
        if (len > HOOK_PAYLOAD_MAX)
          len = HOOK_PAYLOAD_MAX;
        if (bpf_probe_read_user (p->payload + (off & (HOOK_PAYLOAD_MAX - 1)), len,
                                 (char *) v.iov_base + skip) < 0)
          {
            p->r.payload_flags |= HOOK_PAYLOAD_UNREAD;
            break;
          }
        off += len;
        skip = 0;
      }
    if (nsegs > HOOK_MAX_SEGMENTS && off < HOOK_PAYLOAD_MAX && off < count)
      p->r.payload_flags |= HOOK_PAYLOAD_CUT;
  }
  p->r.payload_len = (hk_u32) (off > HOOK_PAYLOAD_MAX ? HOOK_PAYLOAD_MAX : off);
}

/* No record could be reserved: the LSM hook refuses the call; the kprobe
 * cannot, and counts it lost. */
static __always_inline int
unrecorded (int can_refuse)
{
  if (!can_refuse)
    {
      __sync_fetch_and_add (&lost, 1);
      return 0;
    }
  __sync_fetch_and_add (&refused, 1);
  return -EPERM;
}

/* An address as the kernel copied it (move_addr_to_kernel): @addrlen as
 * passed, at most HOOK_ADDR_MAX bytes of it (the kernel refuses longer). */
static __always_inline void
fill_addr (struct hook_record *r, const void *address, int addrlen)
{
  unsigned long len = addrlen < 0 ? 0 : (unsigned long) addrlen;

  r->addrlen = addrlen;
  if (len > HOOK_ADDR_MAX)
    len = HOOK_ADDR_MAX;
  asm volatile ("" : "+r"(len));
  if (len > HOOK_ADDR_MAX)
    len = HOOK_ADDR_MAX;
  /* On failure the helper zeroes the buffer: no earlier record's bytes. */
  if (bpf_probe_read_kernel (r->addr, len, address) < 0)
    r->payload_flags |= HOOK_ADDR_UNREAD;
}

/* ---- the hooks -------------------------------------------------------------- */

/* Every send on a socket made through sock_sendmsg, with the socket the
 * kernel resolved and the destination it copied (msg_name: no
 * time-of-check/time-of-use gap, the kernel sends to exactly these bytes):
 *   - sendto and sendmsg on a socket of any family, as the supervisor
 *     recorded them when it was notified of them;
 *   - write, writev and pwritev2 on an inet socket, any descriptor.
 * A send that names a destination opens its call: the call's return
 * records its outcome (call_exit), which the host cross-checks against the
 * sinkhole's records.  The filter keeps three:
 *   - sendmmsg: the kernel asks the LSM about an entry only when its
 *     destination differs from the previous entry's (____sys_sendmsg's
 *     used_address), so no socket hook sees every entry — glibc's resolver
 *     sends its A and AAAA queries to one server in one sendmmsg;
 *   - sendfile and splice: on 6.1 their pages take ->sendpage, which no
 *     socket hook sees, and the only hook they pass, file_permission,
 *     would run on every read and write of every file. */
static __always_inline int
record_send (struct socket *sock, struct msghdr *msg, int size, int can_refuse)
{
  struct task_struct *task = bpf_get_current_task_btf ();
  struct hook_record_payload *p = NULL;
  struct hook_record *r;
  struct sock *sk;
  unsigned short family;
  void *name;
  int namelen = -1, inet, send_call;
  __be16 port = 0;
  hk_u8 one = 1;
  hk_u32 tid;
  long nr;

  if (!in_workload (task))
    return 0;
  nr = current_nr (task);
  if (nr == NR_SENDMMSG || nr == NR_SENDFILE || nr == NR_SPLICE)
    return 0;
  sk = BPF_CORE_READ (sock, sk);
  family = BPF_CORE_READ (sk, __sk_common.skc_family);
  inet = family == AF_INET || family == AF_INET6;
  send_call = nr == NR_SENDTO || nr == NR_SENDMSG;
  if (!inet && !send_call)
    return 0;
  name = BPF_CORE_READ (msg, msg_name);
  if (name)
    namelen = BPF_CORE_READ (msg, msg_namelen);
  /* sockaddr_in and sockaddr_in6 keep the port at the same place. */
  if (inet && name && namelen >= 4)
    bpf_probe_read_kernel (&port, sizeof port, (char *) name + 2);
  if (inet && (port == bpf_htons (53)
               || BPF_CORE_READ (sk, __sk_common.skc_dport) == bpf_htons (53)))
    {
      p = bpf_ringbuf_reserve (&records, sizeof *p, 0);
      r = p ? &p->r : NULL;
    }
  else
    r = bpf_ringbuf_reserve (&records, sizeof *r, 0);
  if (!r)
    return unrecorded (can_refuse);
  r->kind = HOOK_SENDMSG;
  fill_call (r, task, nr);
  fill_socket (r, sock);
  r->total = (hk_u64) size;
  r->payload_len = r->payload_flags = 0;
  r->opens_result = send_call && name;
  r->addrlen = -1;
  if (name)
    fill_addr (r, name, namelen);
  if (p && (port == bpf_htons (53) || peer_port (r) == 53))
    copy_payload (p, msg);
  tid = r->tid;
  if (r->opens_result)
    bpf_map_update_elem (&opened, &tid, &one, BPF_ANY);
  else if (send_call)
    /* What a missed return left: this call's return is not to report. */
    bpf_map_delete_elem (&opened, &tid);
  bpf_ringbuf_submit (r, 0);
  return 0;
}

/* The LSM hook: its answer is the send's. */
SEC ("lsm/socket_sendmsg")
int BPF_PROG (airlock_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
  if (ret != 0)
    return ret;
  return record_send (sock, msg, size, 1);
}

/* The same where the kernel cannot attach LSM programs (no BPF trampoline
 * for kernel functions: Debian 12's arm64 kernel): a kprobe on the
 * function the LSM hook is called from, at its entry, with the same
 * arguments.  A kprobe cannot change the send's outcome, so a record it
 * cannot reserve is counted lost instead (the trailer's RECORDS_LOST),
 * which makes the run inconclusive.  PID 1 attaches one of the two
 * (hooks.c). */
SEC ("kprobe/security_socket_sendmsg")
int
airlock_socket_sendmsg_kprobe (struct pt_regs *ctx)
{
  record_send ((struct socket *) KPROBE_ARG0 (ctx), (struct msghdr *) KPROBE_ARG1 (ctx),
               (int) KPROBE_ARG2 (ctx), 0);
  return 0;
}

/* Every connect and every bind that reaches a socket, of any family: the
 * address as the kernel copied it (move_addr_to_kernel), which is what it
 * connects or binds to — no time-of-check/time-of-use gap, so the call is
 * the kernel's to make (action "continue").  A call refused before it
 * reaches a socket (a bad descriptor, an unreadable address, a length over
 * 128) is not recorded: it cannot reach the network.  A connect is opened,
 * so its return records the outcome (call_exit); a bind's outcome is not
 * asked for (it sends nothing, and the host reads a result as a call that
 * reached the network). */
static __always_inline int
record_address (hk_u32 kind, struct socket *sock, struct sockaddr *address, int addrlen,
                int can_refuse)
{
  struct task_struct *task = bpf_get_current_task_btf ();
  struct hook_record *r;
  hk_u8 one = 1;
  hk_u32 tid;

  if (!in_workload (task))
    return 0;
  r = bpf_ringbuf_reserve (&records, sizeof *r, 0);
  if (!r)
    return unrecorded (can_refuse);
  r->kind = kind;
  fill_call (r, task, current_nr (task));
  fill_socket (r, sock);
  r->total = 0;
  r->result = 0;
  r->payload_len = r->payload_flags = 0;
  r->opens_result = kind == HOOK_CONNECT;
  /* No address passed (listen, accept): the socket's own. */
  if (address)
    fill_addr (r, address, addrlen);
  else
    fill_local (r, sock);
  tid = r->tid;
  bpf_ringbuf_submit (r, 0);
  if (kind == HOOK_CONNECT)
    bpf_map_update_elem (&opened, &tid, &one, BPF_ANY);
  return 0;
}

SEC ("lsm/socket_connect")
int BPF_PROG (airlock_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen,
              int ret)
{
  if (ret != 0)
    return ret;
  return record_address (HOOK_CONNECT, sock, address, addrlen, 1);
}

/* As airlock_socket_sendmsg_kprobe: where LSM programs cannot attach. */
SEC ("kprobe/security_socket_connect")
int
airlock_socket_connect_kprobe (struct pt_regs *ctx)
{
  record_address (HOOK_CONNECT, (struct socket *) KPROBE_ARG0 (ctx),
                  (struct sockaddr *) KPROBE_ARG1 (ctx), (int) KPROBE_ARG2 (ctx), 0);
  return 0;
}

SEC ("lsm/socket_bind")
int BPF_PROG (airlock_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen,
              int ret)
{
  if (ret != 0)
    return ret;
  return record_address (HOOK_BIND, sock, address, addrlen, 1);
}

SEC ("kprobe/security_socket_bind")
int
airlock_socket_bind_kprobe (struct pt_regs *ctx)
{
  record_address (HOOK_BIND, (struct socket *) KPROBE_ARG0 (ctx),
                  (struct sockaddr *) KPROBE_ARG1 (ctx), (int) KPROBE_ARG2 (ctx), 0);
  return 0;
}

/* listen(2) and accept(2)/accept4(2) on a socket, any family: the socket
 * and its own address (a listener's port), as the supervisor recorded
 * them (record_address with no address).  Neither sends anything; the
 * kernel makes the call (continue). */
SEC ("lsm/socket_listen")
int BPF_PROG (airlock_socket_listen, struct socket *sock, int backlog, int ret)
{
  if (ret != 0)
    return ret;
  return record_address (HOOK_LISTEN, sock, NULL, 0, 1);
}

SEC ("kprobe/security_socket_listen")
int
airlock_socket_listen_kprobe (struct pt_regs *ctx)
{
  record_address (HOOK_LISTEN, (struct socket *) KPROBE_ARG0 (ctx), NULL, 0, 0);
  return 0;
}

SEC ("lsm/socket_accept")
int BPF_PROG (airlock_socket_accept, struct socket *sock, struct socket *newsock, int ret)
{
  if (ret != 0)
    return ret;
  return record_address (HOOK_ACCEPT, sock, NULL, 0, 1);
}

SEC ("kprobe/security_socket_accept")
int
airlock_socket_accept_kprobe (struct pt_regs *ctx)
{
  record_address (HOOK_ACCEPT, (struct socket *) KPROBE_ARG0 (ctx), NULL, 0, 0);
  return 0;
}

/* The return of a system call whose record opened it (a connect, a send
 * naming a destination): its outcome (0, EINPROGRESS, ECONNREFUSED, the
 * bytes sent, …), which the host cross-checks against the
 * sinkhole's records.  Return probes on the system calls' entry points,
 * which the system call table calls (never inlined); kretprobes rather
 * than fexit because Debian 12's arm64 kernel has no BPF trampolines.
 * Only threads with an entry in `opened` are looked at. */
static __always_inline int
call_exit (struct pt_regs *ctx, hk_s32 nr)
{
  hk_u32 tid = (hk_u32) bpf_get_current_pid_tgid ();
  struct hook_record *r;

  if (!bpf_map_lookup_elem (&opened, &tid))
    return 0;
  bpf_map_delete_elem (&opened, &tid);
  r = bpf_ringbuf_reserve (&records, sizeof *r, 0);
  if (!r)
    {
      __sync_fetch_and_add (&lost, 1);
      return 0;
    }
  r->kind = HOOK_RESULT;
  r->nr = nr;
  r->tid = tid;
  r->time_ns = bpf_ktime_get_boot_ns ();
  r->result = (hk_s64) KPROBE_RET (ctx);
  bpf_ringbuf_submit (r, 0);
  return 0;
}

#if defined(__TARGET_ARCH_x86)
#define SYSCALL_EXIT(name) SEC ("kretprobe/__x64_sys_" #name)
#else
#define SYSCALL_EXIT(name) SEC ("kretprobe/__arm64_sys_" #name)
#endif

SYSCALL_EXIT (connect)
int
airlock_connect_exit (struct pt_regs *ctx)
{
  return call_exit (ctx, NR_CONNECT);
}

SYSCALL_EXIT (sendto)
int
airlock_sendto_exit (struct pt_regs *ctx)
{
  return call_exit (ctx, NR_SENDTO);
}

SYSCALL_EXIT (sendmsg)
int
airlock_sendmsg_exit (struct pt_regs *ctx)
{
  return call_exit (ctx, NR_SENDMSG);
}
