/* libFuzzer harness over the supervisor's record encoder and the host's
 * decoder together: arbitrary observations of one traced call (what /proc,
 * the caller's memory and its descriptor gave, fuzz-record.h) → the
 * builders of guest/record.c, compiled here as in the guest → the host's
 * frame header parser, TLV rules and event log.
 *
 * The property (issue 19): any call yields exactly one record the host
 * accepts, so no workload can make its own run inconclusive by the
 * arguments it passes.  Besides the sanitizers' findings, it aborts when:
 *   - the frame is empty, over AIRLOCK_FRAME_MAX_PAYLOAD, or its header
 *     does not parse or disagrees with its length;
 *   - the event log refuses it (a repeated tag, an over-long value, a
 *     missing mandatory tag, a tag of another kind), or an ordinary record
 *     after it;
 *   - the event is not the call: kind, syscall, arch, action, tid and
 *     (on a denial) reason must be the ones observed;
 *   - a reason observed is missing from the note (the caller gone, a
 *     descriptor that is no socket, an unreadable address or path);
 *   - a long value (exe, argv, path, exec argv) was cut without the cut
 *     noted, or the record fell back to its minimal form (a bug). */
#include "config.h"

#include "evidence/channel.h"
#include "evidence/event.h"
#include "evidence/frame-private.h"

#include "record.h"

#include "fuzz-record.h"
#include "fuzz-util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static guint32
le32_at (const guint8 *p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16) | ((guint32) p[3] << 24);
}

static guint64
le64_at (const guint8 *p)
{
  return (guint64) le32_at (p) | ((guint64) le32_at (p + 4) << 32);
}

static guint16
le16_at (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

/* Fills @out with @len bytes of the content, cycling from @start. */
static void
fill (void *out, size_t len, const guint8 *content, size_t content_len, size_t start)
{
  guint8 *o = out;

  if (content_len == 0)
    {
      memset (out, 0, len);
      return;
    }
  for (size_t i = 0; i < len; i++)
    o[i] = content[(start + i) % content_len];
}

static size_t
clamp (size_t v, size_t max)
{
  return v < max ? v : max;
}

/* The length of TLV @tag in the checked frame (0 when absent). */
static guint
tlv_len (const AirlockFrameTlvs *tlvs, guint tag)
{
  return tlvs->present[tag] ? tlvs->tlv[tag].len : 0;
}

/* A value of @want bytes went in: it is all there, or its cut is noted. */
static void
check_long (const AirlockFrameTlvs *tlvs, guint tag, size_t want, const char *note,
            const char *what)
{
  g_autofree char *cut = g_strdup_printf ("%s cut to ", what);

  if (tlv_len (tlvs, tag) == want)
    return;
  fuzz_check (tlv_len (tlvs, tag) < want);
  fuzz_check (note != NULL && strstr (note, cut) != NULL);
}

/* Adds @bytes (@n, header included) as frame @seq; returns the event. */
static const AirlockEvent *
add_frame (AirlockEventLog *log, const guint8 *bytes, size_t n, guint64 seq)
{
  AirlockFrame frame = { 0 };
  AirlockFrameHeader header;
  g_autoptr (GError) error = NULL;
  GPtrArray *events;
  gboolean ok;

  fuzz_check (n > AIRLOCK_FRAME_HEADER_SIZE);
  fuzz_check (n <= AIRLOCK_FRAME_HEADER_SIZE + AIRLOCK_FRAME_MAX_PAYLOAD);
  fuzz_check (airlock_frame_parse_header (bytes, n, &header, NULL) == AIRLOCK_HEADER_COMPLETE);
  fuzz_check (header.type == AIRLOCK_FRAME_EVENT);
  fuzz_check ((size_t) header.length == n - AIRLOCK_FRAME_HEADER_SIZE);
  frame.seq = seq;
  frame.type = AIRLOCK_FRAME_EVENT;
  frame.offset = 0;
  frame.size = n;
  frame.payload = g_bytes_new (bytes + AIRLOCK_FRAME_HEADER_SIZE, header.length);
  ok = airlock_event_log_add_frame (log, &frame, &error);
  g_bytes_unref (frame.payload);
  if (!ok)
    fprintf (stderr, "the host refused the record: %s\n", error->message);
  fuzz_check (ok);
  events = airlock_event_log_get_events (log);
  return events->pdata[events->len - 1];
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static struct record rec;
  static struct proc_info pi;
  static struct sock_info si;
  static struct msg_copy mc;
  static char path[RECORD_PATH_MAX], exec_argv[RECORD_ARGV_MAX];
  static guint8 payload[65536];
  static gboolean initialised;
  const guint8 *content = data + FUZZ_RECORD_HEADER;
  size_t content_len;
  guint builder, flags, action, reason;
  int copy_err, fd, send_flags;
  gint32 addrlen;
  struct seccomp_data call = { 0 };
  uint8_t sa[MSG_SOCKADDR_MAX];
  size_t sa_len, data_len, exec_argv_len;
  ssize_t path_len;
  guint64 total, addr;
  guint32 index, count;
  size_t n;
  g_autoptr (AirlockEventLog) log = NULL;
  const AirlockEvent *ev;
  AirlockFrameTlvs tlvs;
  g_autofree char *problem = NULL;
  g_autofree char *note = NULL;

  if (!initialised)
    {
      fuzz_glib_warnings_abort ();
      initialised = TRUE;
    }
  if (size < FUZZ_RECORD_HEADER)
    return 0;
  content_len = size - FUZZ_RECORD_HEADER;

  builder = data[0] % FUZZ_RECORD_N_BUILDERS;
  flags = data[1];
  /* DENY comes with its reason, from record_deny() only (notify.c's deny()). */
  action = builder == FUZZ_RECORD_DENY ? AIRLOCK_ACTION_DENY
           : (data[2] & 1)             ? AIRLOCK_ACTION_EMULATE
                                       : AIRLOCK_ACTION_CONTINUE;
  copy_err = fuzz_record_copy_errs[data[3] % G_N_ELEMENTS (fuzz_record_copy_errs)];
  call.nr = (int) le32_at (data + 4);
  call.arch = 0xc000003eu;
  fd = (int) le32_at (data + 8);
  addrlen = (gint32) le32_at (data + 12);
  send_flags = (int) le32_at (data + 16);
  for (int i = 0; i < 6; i++)
    call.args[i] = le64_at (data + 8 + 8 * (i % 9));

  memset (&pi, 0, sizeof pi);
  pi.ok = (flags & FUZZ_RECORD_F_PROC_OK) != 0;
  pi.tgid = pi.ok ? 80 : 0;
  pi.exe_len = clamp (le16_at (data + 32), sizeof pi.exe);
  fill (pi.exe, pi.exe_len, content, content_len, 0);
  pi.argv_len = clamp (le16_at (data + 34), sizeof pi.argv);
  fill (pi.argv, pi.argv_len, content, content_len, 7);

  memset (&si, 0, sizeof si);
  si.fd = (flags & FUZZ_RECORD_F_NO_DUP) ? -1 : 9;
  si.dup_errno = (int) (le32_at (data + 68) % 134);
  si.is_socket = si.fd >= 0 && (flags & FUZZ_RECORD_F_SOCKET);
  si.family = (int) le32_at (data + 20);
  si.type = (int) le32_at (data + 24);
  si.protocol = (int) le32_at (data + 28);
  si.ino = 77;
  si.peer_len = (socklen_t) clamp (data[41], sizeof si.peer);
  fill (si.peer, si.peer_len, content, content_len, 11);
  si.local_len = (socklen_t) clamp (data[42], sizeof si.local);
  fill (si.local, si.local_len, content, content_len, 13);

  path_len = (gint16) le16_at (data + 36);
  if (path_len >= (ssize_t) sizeof path)
    path_len = sizeof path - 1;   /* mem_read_string's bound */
  if (path_len > 0)
    fill (path, (size_t) path_len, content, content_len, 17);
  exec_argv_len = clamp (le16_at (data + 38), sizeof exec_argv);
  fill (exec_argv, exec_argv_len, content, content_len, 19);
  sa_len = clamp (data[40], sizeof sa);
  fill (sa, sa_len, content, content_len, 0);
  data_len = clamp (le32_at (data + 44), sizeof payload);
  fill (payload, data_len, content, content_len, 23);
  total = le64_at (data + 48);
  index = le32_at (data + 56);
  count = le32_at (data + 60);
  reason = le32_at (data + 64) % 16 + 1;   /* one of enum airlock_deny_reason */
  addr = le64_at (data + 72);

  memset (&mc, 0, sizeof mc);
  mc.named = (flags & FUZZ_RECORD_F_NAMED) != 0;
  mc.namelen = addrlen;
  mc.name_len = clamp (data[43], sizeof mc.name);
  fill (mc.name, mc.name_len, content, content_len, 0);
  mc.data.bytes = payload;
  mc.data.len = data_len;
  mc.data.total = total;

  record_begin (&rec, &call, 81, 1000, action);
  switch (builder)
    {
    case FUZZ_RECORD_DENY:
      record_deny (&rec, reason, &pi, (flags & FUZZ_RECORD_F_NATIVE_SOCKET) != 0);
      break;
    case FUZZ_RECORD_SOCKET:
      record_socket_call (&rec, &pi, (guint32) si.family, (guint32) si.type & 0xf,
                          (guint32) si.protocol);
      break;
    case FUZZ_RECORD_CONNECT_BIND:
      record_connect_bind (&rec, &pi, fd, &si, addrlen, sa, sa_len,
                           (flags & FUZZ_RECORD_F_ADDR_OK) != 0);
      break;
    case FUZZ_RECORD_FD_CALL:
      record_fd_call (&rec, &pi, fd, &si);
      break;
    case FUZZ_RECORD_SENDTO:
      record_sendto (&rec, &pi, fd, &si, send_flags, addr, addrlen, sa, sa_len,
                     (flags & FUZZ_RECORD_F_ADDR_OK) != 0, payload, data_len,
                     (flags & FUZZ_RECORD_F_DATA_OK) != 0, total);
      break;
    case FUZZ_RECORD_MESSAGE:
      record_message (&rec, &pi, fd, &si, send_flags, &mc, copy_err, index, count,
                      (flags & FUZZ_RECORD_F_INDEXED) != 0);
      break;
    case FUZZ_RECORD_MMSG_EMPTY:
      record_mmsg_empty (&rec, &pi, fd, &si);
      break;
    case FUZZ_RECORD_WRITE:
      record_write (&rec, &pi, fd, &si, &mc.data);
      break;
    case FUZZ_RECORD_EXEC:
      record_exec (&rec, &pi, path, path_len, exec_argv, exec_argv_len);
      break;
    default:
      fuzz_check (FALSE);
    }
  n = record_end (&rec);

  /* The frame's own TLVs, for the lengths; then the event log. */
  fuzz_check (n > AIRLOCK_FRAME_HEADER_SIZE);
  if (!airlock_frame_check_tlvs (AIRLOCK_FRAME_EVENT, rec.f.bytes + AIRLOCK_FRAME_HEADER_SIZE,
                                 n - AIRLOCK_FRAME_HEADER_SIZE, 0, &tlvs, &problem))
    {
      fprintf (stderr, "the record breaks a TLV rule: %s\n", problem);
      fuzz_check (FALSE);
    }
  log = airlock_event_log_new ();
  ev = add_frame (log, rec.f.bytes, n, 1);

  fuzz_check (ev->kind == AIRLOCK_EVENT_SYSCALL);
  fuzz_check (ev->has_syscall && ev->syscall_nr == (guint32) call.nr);
  fuzz_check (ev->audit_arch == call.arch);
  fuzz_check (ev->action == action);
  fuzz_check (ev->has_tid && ev->tid == 81);
  fuzz_check (ev->has_pid && ev->pid == (pi.ok ? 80u : 81u));
  fuzz_check (action != AIRLOCK_ACTION_DENY || ev->reason == reason);
  if (tlvs.present[AIRLOCK_TLV_EV_NOTE])
    note = g_strndup ((const char *) tlvs.tlv[AIRLOCK_TLV_EV_NOTE].value,
                      tlvs.tlv[AIRLOCK_TLV_EV_NOTE].len);
  fuzz_check (note == NULL || strstr (note, "did not fit") == NULL);

  /* The reasons observed are all in the one note (while it has room: the
   * reasons of one call come to far less than the bound). */
  if (!pi.ok)
    fuzz_check (note && strstr (note, "process details unreadable"));
  if (builder != FUZZ_RECORD_DENY && builder != FUZZ_RECORD_SOCKET
      && builder != FUZZ_RECORD_EXEC)
    {
      fuzz_check (ev->has_fd && ev->fd == (guint32) fd);
      if (!si.is_socket)
        fuzz_check (note && strstr (note, "is not a socket"));
      else
        fuzz_check (ev->has_socket && ev->has_sock_id);
    }
  if (builder == FUZZ_RECORD_CONNECT_BIND && !(flags & FUZZ_RECORD_F_ADDR_OK))
    fuzz_check (note && strstr (note, "address unreadable"));
  if (builder == FUZZ_RECORD_MESSAGE && copy_err < 0)
    fuzz_check (note && strstr (note, "message unreadable"));
  if (builder == FUZZ_RECORD_EXEC && path_len < 0)
    fuzz_check (note && strstr (note, "path unreadable"));

  /* Nothing cut unnoted. */
  if (pi.ok)
    {
      check_long (&tlvs, AIRLOCK_TLV_EV_EXE, pi.exe_len, note, "exe");
      check_long (&tlvs, AIRLOCK_TLV_EV_ARGV, pi.argv_len, note, "argv");
    }
  if (builder == FUZZ_RECORD_EXEC)
    {
      if (path_len >= 0)
        check_long (&tlvs, AIRLOCK_TLV_EV_PATH, (size_t) path_len, note, "path");
      check_long (&tlvs, AIRLOCK_TLV_EV_EXEC_ARGV, exec_argv_len, note, "exec argv");
    }

  /* And the run goes on: an ordinary record after it is accepted too. */
  {
    struct seccomp_data next = { .nr = 49, .arch = 0xc000003eu };

    pi.ok = TRUE;
    pi.tgid = 80;
    record_begin (&rec, &next, 81, 2000, AIRLOCK_ACTION_CONTINUE);
    record_fd_call (&rec, &pi, 3, &si);
    n = record_end (&rec);
    ev = add_frame (log, rec.f.bytes, n, 2);
    fuzz_check (ev->syscall_nr == 49);
  }
  return 0;
}
