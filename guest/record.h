/* The supervisor's records: one EVENT frame (protocol.h) per traced call,
 * built from what notify.c observed about the call.
 *
 * Pure code: no system calls, no clock, no channel.  notify.c gathers the
 * observations (/proc, the caller's memory, its socket) and sends the
 * frame; the host compiles this file too and feeds its frames, built from
 * arbitrary observations, to its own decoder (tests/fuzz/fuzz-record.c).
 *
 * The promise: whatever the observations — a descriptor that is no socket,
 * an address that cannot be read, a process that exited, every string at
 * its longest — a record is exactly one frame the host accepts.  A record
 * the host rejected would make the run inconclusive and lose every later
 * call (protocol.h: a malformed frame ends the decoding), so any image
 * could blind its own gate with one odd call.  Hence:
 *   - at most one NOTE: every reason is added with record_note() and they
 *     are joined, "; "-separated, into one TLV of at most
 *     AIRLOCK_EV_NOTE_MAX bytes written last (see record_note() for why
 *     joined rather than repeated);
 *   - every tag at most once, by construction of the builders below;
 *   - every value within its protocol bound, and the whole frame within
 *     AIRLOCK_FRAME_MAX_PAYLOAD: long values are cut to the room left, and
 *     the cut is noted. */
#ifndef AIRLOCK_RECORD_H
#define AIRLOCK_RECORD_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "msg.h"
#include "wire.h"

#define RECORD_EXE_MAX 4096      /* /proc/PID/exe */
#define RECORD_ARGV_MAX 4096     /* /proc/PID/cmdline, an execve's argv */
#define RECORD_PATH_MAX 4096     /* an execve's path */
#define RECORD_PAYLOAD_MAX 4096  /* the first bytes of a DNS send */

/* Who made the call (/proc/TID/status, exe, cmdline). */
struct proc_info {
  bool ok;                 /* false: the process was gone before we looked */
  uint32_t tgid, ppid, nspid, uid, gid;
  char exe[RECORD_EXE_MAX];
  size_t exe_len;
  char argv[RECORD_ARGV_MAX];
  size_t argv_len;
  /* The exe's inode, read with its name (proc-info.c); 0 when unread.
   * Not encoded. */
  uint64_t exe_ino;
};

/* The descriptor a call names, through our pidfd_getfd duplicate. */
struct sock_info {
  int fd;              /* our duplicate, -1 when there is none */
  int dup_errno;       /* why there is none (EBADF, …) */
  bool is_socket;
  int family, type, protocol;
  uint64_t ino;
  bool nonblock;
  uint8_t peer[MSG_SOCKADDR_MAX];
  socklen_t peer_len;
  uint8_t local[MSG_SOCKADDR_MAX];
  socklen_t local_len;
};

struct record {
  struct wire_frame f;
  /* Kept to rebuild a minimal record should the full one not fit (a bug:
   * the bounds below make it impossible, and the fuzzer checks). */
  struct seccomp_data data;
  uint32_t tid;
  uint64_t time_ns;
  uint32_t action;
  uint32_t reason;           /* a DENY's */
  uint32_t pid;
  char note[AIRLOCK_EV_NOTE_MAX];
  size_t note_len;
};

/* Starts a SYSCALL record of the call @data made by thread @tid, seen at
 * @time_ns (CLOCK_BOOTTIME), answered with @action. */
void record_begin (struct record *r, const struct seccomp_data *data, uint32_t tid,
                   uint64_t time_ns, uint32_t action);
/* Adds one reason to the record's single NOTE ("; "-joined, cut at
 * AIRLOCK_EV_NOTE_MAX bytes). */
void record_note (struct record *r, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* Finishes the record: writes the NOTE, then the frame's length.  Returns
 * the bytes to send (never 0: a record that did not fit is replaced by the
 * call's mandatory fields and a note saying so). */
size_t record_end (struct record *r);

/* The parts, in the order the builders use them. */
void record_proc (struct record *r, const struct proc_info *pi);
void record_sock (struct record *r, int target_fd, const struct sock_info *si);
void record_socket_triple (struct record *r, uint32_t family, uint32_t type, uint32_t protocol);

/* Whether a send on @si with @flags uses the address it carries: every
 * datagram does, a stream only for TCP Fast Open (tcp_sendmsg_fastopen). */
bool record_send_uses_address (const struct sock_info *si, int flags);

/* ---- one builder per traced call: begin .. end is the caller's ---------- */

/* A denial; socket()'s own arguments are the socket it asked for. */
void record_deny (struct record *r, uint32_t reason, const struct proc_info *pi,
                  bool native_socket_call);
/* socket(), socketpair(): the triple from the arguments. */
void record_socket_call (struct record *r, const struct proc_info *pi, uint32_t family,
                         uint32_t type, uint32_t protocol);
/* The RESULT frame of the call whose SYSCALL frame was @ref: its return
 * value, or -errno (a call the supervisor made, or a hooked connect's
 * exit). */
void record_result (struct wire_frame *f, uint64_t time_ns, uint64_t ref, int64_t result);

/* connect(), bind(): @addrlen as passed; @sa_len bytes read at the address
 * when @readable (0 when the length alone fails the call). */
void record_connect_bind (struct record *r, const struct proc_info *pi, int fd,
                          const struct sock_info *si, int32_t addrlen, const uint8_t *sa,
                          size_t sa_len, bool readable);
/* listen(), accept(), accept4(). */
void record_fd_call (struct record *r, const struct proc_info *pi, int fd,
                     const struct sock_info *si);
/* sendto(): @addr the address pointer (0: none), @sa_ok whether its
 * @sa_len bytes could be read, @data/@data_len the bytes read of the
 * buffer when @data_ok, @total the length the call asked to send. */
void record_sendto (struct record *r, const struct proc_info *pi, int fd,
                    const struct sock_info *si, int flags, uint64_t addr, int32_t addrlen,
                    const uint8_t *sa, size_t sa_len, bool sa_ok, const uint8_t *data,
                    size_t data_len, bool data_ok, uint64_t total);
/* sendmsg(), or entry @index of @count of sendmmsg() (@indexed): @mc as
 * msg_copy_read() left it, @copy_err what it returned. */
void record_message (struct record *r, const struct proc_info *pi, int fd,
                     const struct sock_info *si, int flags, const struct msg_copy *mc,
                     int copy_err, uint32_t index, uint32_t count, bool indexed);
/* sendmmsg() whose vector is not read (vlen 0, or a descriptor the kernel
 * refuses before it reads anything). */
void record_mmsg_empty (struct record *r, const struct proc_info *pi, int fd,
                        const struct sock_info *si);
/* write(), writev() on an inet socket: @data as gathered. */
void record_write (struct record *r, const struct proc_info *pi, int fd,
                   const struct sock_info *si, const struct msg_data *data);
/* execve(), execveat(): @path_len < 0 when the path could not be read. */
void record_exec (struct record *r, const struct proc_info *pi, const char *path,
                  ssize_t path_len, const char *argv, size_t argv_len);

#endif /* AIRLOCK_RECORD_H */
