/* The kernel-hook recorder: BPF LSM programs (hooks.bpf.c) that see a
 * workload's sends on sockets where the kernel makes them, and PID 1's side
 * (hooks.c) that loads them and turns what they report into EVENT frames.
 *
 * What it records:
 *   - every send on a socket that goes through sock_sendmsg: sendto and
 *     sendmsg on a socket of any family, and write(2), writev(2),
 *     pwritev2(2) on an inet socket, any descriptor (0-2 included); with
 *     the destination as the kernel copied it;
 *   - every connect(2) and bind(2) that reaches a socket, of any family,
 *     with the address the kernel copied; every listen(2), accept(2) and
 *     accept4(2) that reaches one, with the socket's own address;
 *   - the return value of each connect, and of each send call that named
 *     a destination, from the system call's exit.
 * The kernel makes each call with the bytes recorded: no time-of-check/
 * time-of-use gap, so nothing is performed on the workload's behalf.
 * sendmmsg, sendfile and splice stay with the supervisor, which records
 * them: the kernel asks the LSM about a sendmmsg entry only when its
 * destination differs from the previous entry's, and on 6.1 the pages of
 * sendfile and splice reach ->sendpage, past every socket hook
 * (hooks.bpf.c).  Why: a
 * notified write costs every write on every file the workload makes
 * (seccomp cannot tell a file from a socket), and a notified connect or
 * send ~1.3-1.8 ms under TCG (docs/supervisor.md, "The kernel-hook
 * recorder").
 *
 * This header is the record the programs write into the ring buffer: plain
 * C, shared by the BPF side (clang -target bpf) and PID 1 (static C). */
#ifndef AIRLOCK_GUEST_HOOKS_H
#define AIRLOCK_GUEST_HOOKS_H

#ifdef __bpf__
typedef unsigned char hk_u8;
typedef unsigned int hk_u32;
typedef int hk_s32;
typedef unsigned long long hk_u64;
typedef long long hk_s64;
#else
#include <stdint.h>
typedef uint8_t hk_u8;
typedef uint32_t hk_u32;
typedef int32_t hk_s32;
typedef uint64_t hk_u64;
typedef int64_t hk_s64;
#endif

/* What reached the socket. */
enum hook_kind {
  HOOK_SENDMSG = 1,   /* security_socket_sendmsg: sendto, sendmsg, write, writev, pwritev2 */
  HOOK_CONNECT = 2,   /* security_socket_connect: connect(2), any family */
  HOOK_RESULT = 3,    /* an opened call's return value, from the system call's exit */
  HOOK_BIND = 4,      /* security_socket_bind: bind(2), any family */
  HOOK_LISTEN = 5,    /* security_socket_listen: listen(2); addr[] holds the socket's own address */
  HOOK_ACCEPT = 6,    /* security_socket_accept: accept(2), accept4(2); the same */
};

/* The first bytes of a send to port 53 (RECORD_PAYLOAD_MAX); the buffer is
 * twice that so the verifier can bound a copy at any offset below it. */
#define HOOK_PAYLOAD_MAX 4096
#define HOOK_PAYLOAD_ROOM (2 * HOOK_PAYLOAD_MAX)
/* A sockaddr_in6 is the largest peer a record carries. */
#define HOOK_SOCKADDR_MAX 28
/* A connect's or a send's destination as the kernel copied it: at most a sockaddr_storage
 * (move_addr_to_kernel refuses longer). */
#define HOOK_ADDR_MAX 128

struct hook_record {
  hk_u32 kind;            /* enum hook_kind */
  hk_s32 nr;              /* the system call, native ABI (seccomp denies the others) */
  hk_u64 time_ns;         /* bpf_ktime_get_boot_ns: CLOCK_BOOTTIME */
  hk_u64 args[6];         /* the call's raw arguments, from its saved registers */
  hk_u32 tid, tgid, ppid, nspid, uid, gid;
  hk_u32 family, type, protocol;
  hk_u32 peer_len;        /* 0: not connected (getpeername would say ENOTCONN) */
  hk_u64 ino;             /* the socket's inode: one socket across dups */
  hk_u64 exe_ino;         /* the inode of the caller's executable as the kernel holds it
                           * (mm->exe_file), so PID 1 can tell whether the exe it reads
                           * from /proc later is still the one that made the call */
  hk_u64 total;           /* bytes the send asked for (sendmsg's size) */
  hk_u8 peer[HOOK_SOCKADDR_MAX];
  hk_u32 payload_len;     /* bytes of payload[] read (sends to port 53 only) */
  hk_u32 payload_flags;   /* HOOK_PAYLOAD_*, HOOK_ADDR_UNREAD */
  hk_s32 addrlen;         /* the destination's length as passed (-1: a send naming none);
                           * addr[] holds what fits.  HOOK_LISTEN, HOOK_ACCEPT: the
                           * socket's own address instead (-1: a family without one) */
  hk_u32 opens_result;    /* 1: the call's HOOK_RESULT refers to this record */
  hk_s64 result;          /* HOOK_RESULT: the call's return value, or -errno */
  hk_u8 addr[HOOK_ADDR_MAX];
};

#define HOOK_PAYLOAD_CUT 1u        /* more segments than the program walks */
#define HOOK_PAYLOAD_UNREAD 2u     /* a segment could not be read (not resident) */
#define HOOK_PAYLOAD_NOT_USER 4u   /* the bytes are not the caller's memory */
#define HOOK_ADDR_UNREAD 8u        /* the kernel's copy of the address could not be read */
#define HOOK_MAX_SEGMENTS 4

/* The large variant, for a send to port 53: the record, then its bytes. */
struct hook_record_payload {
  struct hook_record r;
  hk_u8 payload[HOOK_PAYLOAD_ROOM];
};

#ifndef __bpf__
#include <stdbool.h>
#include <stddef.h>

#include "protocol.h"

/* Loads and attaches the programs; @ring_min (a test mode) makes the ring
 * one page, too small for any record with a payload.  0, or -errno with @error saying which
 * step failed (the kernel lacks BPF LSM or BTF, the verifier refused, …);
 * the supervisor then keeps notifying writes itself. */
int hooks_start (bool ring_min, char *error, size_t error_size);
bool hooks_active (void);
/* The ring buffer's descriptor, readable when records wait; -1 if none,
 * or when held. */
int hooks_fd (void);
/* The test mode hooks-ring-stall: the supervisor's loop no longer sees
 * the ring (hooks_fd() is -1), so only the drain at a phase's end reads
 * it and the workload can fill it. */
void hooks_hold (void);
/* Sends every waiting record as an EVENT frame.  Returns how many, or
 * -errno. */
int hooks_drain (void);
/* Records sent so far, and sends the programs refused because no record
 * could be reserved (the ring was full: fail closed). */
uint64_t hooks_count (void);
uint64_t hooks_refused (void);
/* Sends the kprobe variant saw but could not record (it cannot refuse). */
uint64_t hooks_lost (void);
/* AIRLOCK_RECORDER_HOOKS (the LSM hook) or AIRLOCK_RECORDER_KPROBE (the
 * kernel cannot attach LSM programs: @ret_lsm_why says why), 0 when not
 * started. */
uint32_t hooks_recorder (const char **ret_lsm_why);
#endif

#endif /* AIRLOCK_GUEST_HOOKS_H */
