/* The supervisor's records, built from observations (see record.h).
 * Static C, no GLib, no system calls: compiled into the guest's init and,
 * for the fuzzer, on the host. */
#define _GNU_SOURCE

#include "record.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Room kept free while a long value (EXE, ARGV, PATH, EXEC_ARGV, PAYLOAD)
 * is put: the NOTE written last, and every other tag a record can carry
 * after it.  Those are short and fixed — the call's fields, ids, three
 * sockaddrs of at most 128 bytes — 624 bytes at most today; 1024 leaves
 * slack for a new one.  A long value is cut to what is left, never the
 * record dropped. */
#define RECORD_SHORT_TAGS_MAX 1024
#define RECORD_RESERVE (AIRLOCK_TLV_HEADER_SIZE + AIRLOCK_EV_NOTE_MAX + RECORD_SHORT_TAGS_MAX)

_Static_assert (AIRLOCK_FRAME_MAX_PAYLOAD > RECORD_RESERVE + 4 * (AIRLOCK_TLV_HEADER_SIZE + 1024),
                "a record keeps room for its long values");

static void
put_args (struct wire_frame *f, const struct seccomp_data *d)
{
  uint8_t args[48];

  for (int i = 0; i < 6; i++)
    wire_le64 (args + 8 * i, d->args[i]);
  wire_put (f, AIRLOCK_TLV_EV_ARGS, args, sizeof args);
}

/* The tags every SYSCALL record must carry (frame.c's mandatory set). */
static void
put_call (struct record *r)
{
  wire_begin (&r->f, AIRLOCK_FRAME_EVENT, 0);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_SYSCALL);
  wire_put_u64 (&r->f, AIRLOCK_TLV_EV_TIME_NS, r->time_ns);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_ACTION, r->action);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_SYSCALL, (uint32_t) r->data.nr);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_AUDIT_ARCH, r->data.arch);
  put_args (&r->f, &r->data);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_TID, r->tid);
}

void
record_begin (struct record *r, const struct seccomp_data *data, uint32_t tid, uint64_t time_ns,
              uint32_t action)
{
  r->data = *data;
  r->tid = tid;
  r->time_ns = time_ns;
  r->action = action;
  r->reason = 0;
  r->pid = tid;
  r->note_len = 0;
  put_call (r);
}

/* Joined rather than repeated: one tag, one value is a rule the host keeps
 * for every tag (a repeated tag is how a forged or confused record would
 * look), its event holds one note, and the bundle's JSON and verify's
 * re-derivation read it as one string.  The reasons are short; the bound
 * only matters to a bug. */
void
record_note (struct record *r, const char *fmt, ...)
{
  char text[AIRLOCK_EV_NOTE_MAX];
  size_t len, room;
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (text, sizeof text, fmt, ap);
  va_end (ap);
  if (n <= 0)
    return;
  len = (size_t) n < sizeof text ? (size_t) n : sizeof text - 1;
  if (r->note_len > 0 && r->note_len + 2 <= sizeof r->note)
    {
      memcpy (r->note + r->note_len, "; ", 2);
      r->note_len += 2;
    }
  room = sizeof r->note - r->note_len;
  if (len > room)
    len = room;
  memcpy (r->note + r->note_len, text, len);
  r->note_len += len;
}

/* Puts a long value, cut to the room the record has left (keeping
 * RECORD_RESERVE) and to @max; a cut is noted with both lengths. */
static void
put_long (struct record *r, uint16_t tag, const char *what, const void *value, size_t len,
          size_t max)
{
  size_t used = r->f.len + AIRLOCK_TLV_HEADER_SIZE + RECORD_RESERVE;
  size_t room = used < sizeof r->f.bytes ? sizeof r->f.bytes - used : 0;
  size_t put = len;

  if (put > max)
    put = max;
  if (put > room)
    put = room;
  if (put < len)
    record_note (r, "%s cut to %zu of %zu bytes", what, put, len);
  wire_put (&r->f, tag, value, put);
}

size_t
record_end (struct record *r)
{
  size_t len;

  if (r->note_len > 0)
    wire_put (&r->f, AIRLOCK_TLV_EV_NOTE, r->note, r->note_len);
  len = wire_end (&r->f);
  if (len > 0)
    return len;
  /* Never a silent loss: the call, who made it, and that the rest is
   * missing (the host then flags the record, not the run). */
  put_call (r);
  if (r->action == AIRLOCK_ACTION_DENY)
    wire_put_u32 (&r->f, AIRLOCK_TLV_EV_REASON, r->reason);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_PID, r->pid);
  wire_put_str (&r->f, AIRLOCK_TLV_EV_NOTE, "record did not fit its frame (a supervisor bug)");
  return wire_end (&r->f);
}

void
record_proc (struct record *r, const struct proc_info *pi)
{
  if (!pi->ok)
    {
      wire_put_u32 (&r->f, AIRLOCK_TLV_EV_PID, r->tid);
      record_note (r, "process details unreadable (it exited)");
      return;
    }
  r->pid = pi->tgid;
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_PID, pi->tgid);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_PPID, pi->ppid);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_NSPID, pi->nspid);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_UID, pi->uid);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_GID, pi->gid);
  put_long (r, AIRLOCK_TLV_EV_EXE, "exe", pi->exe, pi->exe_len, RECORD_EXE_MAX);
  put_long (r, AIRLOCK_TLV_EV_ARGV, "argv", pi->argv, pi->argv_len, RECORD_ARGV_MAX);
}

void
record_socket_triple (struct record *r, uint32_t family, uint32_t type, uint32_t protocol)
{
  uint8_t b[12];

  wire_le32 (b, family);
  wire_le32 (b + 4, type);
  wire_le32 (b + 8, protocol);
  wire_put (&r->f, AIRLOCK_TLV_EV_SOCKET, b, sizeof b);
}

void
record_sock (struct record *r, int target_fd, const struct sock_info *si)
{
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_FD, (uint32_t) target_fd);
  if (!si->is_socket)
    {
      record_note (r, "fd %d is not a socket (%s)", target_fd,
                   si->fd < 0 ? strerror (si->dup_errno) : "ENOTSOCK");
      return;
    }
  record_socket_triple (r, (uint32_t) si->family, (uint32_t) si->type & 0xf,
                        (uint32_t) si->protocol);
  wire_put_u64 (&r->f, AIRLOCK_TLV_EV_SOCK_ID, si->ino);
}

/* At most a sockaddr_storage: what the host allows for ADDR, PEER, LOCAL. */
static void
put_sockaddr (struct record *r, uint16_t tag, const uint8_t *sa, size_t len)
{
  wire_put (&r->f, tag, sa, len < MSG_SOCKADDR_MAX ? len : MSG_SOCKADDR_MAX);
}

static void
put_payload_if_dns (struct record *r, const uint8_t *dest, size_t dest_len, const uint8_t *data,
                    size_t len, uint64_t total)
{
  wire_put_u64 (&r->f, AIRLOCK_TLV_EV_PAYLOAD_LEN, total);
  if (msg_sockaddr_port (dest, dest_len) == 53)
    put_long (r, AIRLOCK_TLV_EV_PAYLOAD, "payload", data, len, RECORD_PAYLOAD_MAX);
}

bool
record_send_uses_address (const struct sock_info *si, int flags)
{
  return si->type == SOCK_DGRAM || (si->type == SOCK_STREAM && (flags & MSG_FASTOPEN));
}

void
record_deny (struct record *r, uint32_t reason, const struct proc_info *pi,
             bool native_socket_call)
{
  r->reason = reason;
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_REASON, reason);
  record_proc (r, pi);
  if (native_socket_call)
    record_socket_triple (r, (uint32_t) r->data.args[0], (uint32_t) r->data.args[1] & 0xf,
                          (uint32_t) r->data.args[2]);
}

void
record_socket_call (struct record *r, const struct proc_info *pi, uint32_t family, uint32_t type,
                    uint32_t protocol)
{
  record_proc (r, pi);
  record_socket_triple (r, family, type, protocol);
}

void
record_result (struct wire_frame *f, uint64_t time_ns, uint64_t ref, int64_t result)
{
  wire_begin (f, AIRLOCK_FRAME_EVENT, 0);
  wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, time_ns);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, ref);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, (uint64_t) result);
}

void
record_connect_bind (struct record *r, const struct proc_info *pi, int fd,
                     const struct sock_info *si, int32_t addrlen, const uint8_t *sa, size_t sa_len,
                     bool readable)
{
  record_proc (r, pi);
  record_sock (r, fd, si);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_ADDRLEN, (uint32_t) addrlen);
  if (readable && sa_len > 0)
    put_sockaddr (r, AIRLOCK_TLV_EV_ADDR, sa, sa_len);
  else if (!readable)
    record_note (r, "address unreadable (EFAULT)");
}

void
record_fd_call (struct record *r, const struct proc_info *pi, int fd, const struct sock_info *si)
{
  record_proc (r, pi);
  record_sock (r, fd, si);
  if (si->is_socket && si->local_len > 0)
    put_sockaddr (r, AIRLOCK_TLV_EV_LOCAL, si->local, si->local_len);
}

/* PEER only for a socket: the host decodes it by the socket's family. */
static void
put_peer (struct record *r, const struct sock_info *si)
{
  if (si->is_socket && si->peer_len > 0)
    put_sockaddr (r, AIRLOCK_TLV_EV_PEER, si->peer, si->peer_len);
}

void
record_sendto (struct record *r, const struct proc_info *pi, int fd, const struct sock_info *si,
               int flags, uint64_t addr, int32_t addrlen, const uint8_t *sa, size_t sa_len,
               bool sa_ok, const uint8_t *data, size_t data_len, bool data_ok, uint64_t total)
{
  record_proc (r, pi);
  record_sock (r, fd, si);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_MSG_FLAGS, (uint32_t) flags);
  if (addr != 0)
    {
      wire_put_u32 (&r->f, AIRLOCK_TLV_EV_ADDRLEN, (uint32_t) addrlen);
      if (sa_ok && sa_len > 0)
        put_sockaddr (r, AIRLOCK_TLV_EV_ADDR, sa, sa_len);
      else if (!sa_ok)
        record_note (r, "address unreadable (EFAULT)");
    }
  put_peer (r, si);
  if (!data_ok)
    {
      record_note (r, "data unreadable (EFAULT)");
      return;
    }
  if (addr != 0 && sa_ok && record_send_uses_address (si, flags))
    put_payload_if_dns (r, sa, sa_len, data, data_len, total);
  else
    put_payload_if_dns (r, si->peer, si->peer_len, data, data_len, total);
}

void
record_message (struct record *r, const struct proc_info *pi, int fd, const struct sock_info *si,
                int flags, const struct msg_copy *mc, int copy_err, uint32_t index, uint32_t count,
                bool indexed)
{
  record_proc (r, pi);
  record_sock (r, fd, si);
  wire_put_u32 (&r->f, AIRLOCK_TLV_EV_MSG_FLAGS, (uint32_t) flags);
  if (indexed)
    {
      uint8_t b[8];

      wire_le32 (b, index);
      wire_le32 (b + 4, count);
      wire_put (&r->f, AIRLOCK_TLV_EV_MSG_INDEX, b, sizeof b);
    }
  if (mc->named)
    {
      wire_put_u32 (&r->f, AIRLOCK_TLV_EV_ADDRLEN, (uint32_t) mc->namelen);
      /* msg_copy_read() reads the name first: after an EFAULT with bytes
       * copied, those bytes are not the name the kernel would read. */
      if (copy_err != -EFAULT || mc->name_len == 0)
        put_sockaddr (r, AIRLOCK_TLV_EV_ADDR, mc->name, mc->name_len);
    }
  put_peer (r, si);
  if (copy_err < 0)
    record_note (r, "message unreadable or refused: %s", strerror (-copy_err));
  else if (mc->named && record_send_uses_address (si, flags))
    put_payload_if_dns (r, mc->name, mc->name_len, mc->data.bytes, mc->data.len, mc->data.total);
  else
    put_payload_if_dns (r, si->peer, si->peer_len, mc->data.bytes, mc->data.len, mc->data.total);
}

void
record_mmsg_empty (struct record *r, const struct proc_info *pi, int fd, const struct sock_info *si)
{
  record_proc (r, pi);
  record_sock (r, fd, si);
}

void
record_write (struct record *r, const struct proc_info *pi, int fd, const struct sock_info *si,
              const struct msg_data *data)
{
  record_proc (r, pi);
  record_sock (r, fd, si);
  put_peer (r, si);
  put_payload_if_dns (r, si->peer, si->peer_len, data->bytes, data->len, data->total);
}

void
record_exec (struct record *r, const struct proc_info *pi, const char *path, ssize_t path_len,
             const char *argv, size_t argv_len)
{
  record_proc (r, pi);
  if (path_len >= 0)
    put_long (r, AIRLOCK_TLV_EV_PATH, "path", path, (size_t) path_len, RECORD_PATH_MAX);
  else
    record_note (r, "path unreadable (EFAULT)");
  put_long (r, AIRLOCK_TLV_EV_EXEC_ARGV, "exec argv", argv, argv_len, RECORD_ARGV_MAX);
}
