/* Unit tests for the supervisor's records on the host: EVENT frame rules
 * (frame.c), their decoding into AirlockEvents and key lines (event.c), the
 * run spec encoder (spec.c) and the channel's spec handling (channel.c).
 *
 * Fixtures are built with guest/wire.h, the encoder the supervisor uses.
 * Key lines asserted here are the exact format tests/guest expectations
 * are written in. */
#include "config.h"

#include "evidence/channel.h"
#include "evidence/chain-private.h"
#include "evidence/event.h"
#include "evidence/frame-private.h"
#include "evidence/spec.h"

#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#define ARCH_X86_64 0xc000003eu
#define ARCH_I386 0x40000003u
#define ARCH_AARCH64 0xc00000b7u
#define ARCH_ARM 0x40000028u
#define X32_BIT 0x40000000u

/* x86_64 numbers */
#define NR_SOCKET 41
#define NR_CONNECT 42
#define NR_SENDTO 44
#define NR_SENDMSG 46
#define NR_BIND 49
#define NR_EXECVE 59
#define NR_PTRACE 101
#define NR_SENDMMSG 307
#define NR_WRITE 1

/* ---- fixtures ---- */

typedef struct {
  AirlockEventLog *log;
  guint64 seq;
  struct wire_frame f;
} Fixture;

static void
fixture_setup (Fixture *fx, gconstpointer data)
{
  fx->log = airlock_event_log_new ();
  fx->seq = 1;   /* frame 0 is the hello */
}

static void
fixture_teardown (Fixture *fx, gconstpointer data)
{
  airlock_event_log_free (fx->log);
}

static struct wire_frame *
ev_begin (Fixture *fx, guint32 kind)
{
  wire_begin (&fx->f, AIRLOCK_FRAME_EVENT, fx->seq);
  wire_put_u32 (&fx->f, AIRLOCK_TLV_EV_KIND, kind);
  wire_put_u64 (&fx->f, AIRLOCK_TLV_EV_TIME_NS, 1000 + fx->seq);
  return &fx->f;
}

/* A SYSCALL event with its mandatory tags; @args may be NULL (zeros). */
static struct wire_frame *
ev_syscall (Fixture *fx, guint32 audit_arch, guint32 nr, guint32 action, guint32 reason,
            const guint64 *args)
{
  struct wire_frame *f = ev_begin (fx, AIRLOCK_EVENT_SYSCALL);
  guint8 raw[48] = { 0 };

  for (guint i = 0; args && i < 6; i++)
    wire_le64 (raw + 8 * i, args[i]);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ACTION, action);
  if (action == AIRLOCK_ACTION_DENY)
    wire_put_u32 (f, AIRLOCK_TLV_EV_REASON, reason);
  wire_put_u32 (f, AIRLOCK_TLV_EV_SYSCALL, nr);
  wire_put_u32 (f, AIRLOCK_TLV_EV_AUDIT_ARCH, audit_arch);
  wire_put (f, AIRLOCK_TLV_EV_ARGS, raw, sizeof raw);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 200);
  wire_put_u32 (f, AIRLOCK_TLV_EV_TID, 201);
  return f;
}

static void
put_socket (struct wire_frame *f, guint32 family, guint32 type, guint32 protocol, guint64 id)
{
  guint8 v[12];

  wire_le32 (v, family);
  wire_le32 (v + 4, type);
  wire_le32 (v + 8, protocol);
  wire_put (f, AIRLOCK_TLV_EV_SOCKET, v, sizeof v);
  wire_put_u64 (f, AIRLOCK_TLV_EV_SOCK_ID, id);
  wire_put_u32 (f, AIRLOCK_TLV_EV_FD, 3);
}

static void
put_addr (struct wire_frame *f, const void *sa, gsize len)
{
  wire_put (f, AIRLOCK_TLV_EV_ADDR, sa, len);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ADDRLEN, (guint32) len);
}

static gsize
sin_bytes (guint8 out[16], const char *ip, guint16 port)
{
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (port) };

  g_assert_cmpint (inet_pton (AF_INET, ip, &sin.sin_addr), ==, 1);
  memcpy (out, &sin, sizeof sin);
  return sizeof sin;
}

static gsize
sin6_bytes (guint8 out[28], const char *ip, guint16 port, guint32 scope)
{
  struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons (port),
                               .sin6_scope_id = scope };

  g_assert_cmpint (inet_pton (AF_INET6, ip, &sin6.sin6_addr), ==, 1);
  memcpy (out, &sin6, sizeof sin6);
  return sizeof sin6;
}

/* Builds the frame begun last and returns it (free with frame_free). */
static AirlockFrame *
ev_frame (Fixture *fx)
{
  AirlockFrame *frame = g_new0 (AirlockFrame, 1);
  size_t n = wire_end (&fx->f);

  g_assert_cmpuint (n, >, 0);
  frame->seq = fx->seq++;
  frame->type = AIRLOCK_FRAME_EVENT;
  frame->offset = 1000;
  frame->size = n;
  frame->payload = g_bytes_new (fx->f.bytes + AIRLOCK_FRAME_HEADER_SIZE,
                                n - AIRLOCK_FRAME_HEADER_SIZE);
  return frame;
}

static void
frame_free (AirlockFrame *frame)
{
  g_bytes_unref (frame->payload);
  g_free (frame);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockFrame, frame_free)

/* Adds the frame begun last; it must be accepted.  Returns its event. */
static const AirlockEvent *
ev_add (Fixture *fx)
{
  g_autoptr (AirlockFrame) frame = ev_frame (fx);
  g_autoptr (GError) error = NULL;
  GPtrArray *events;

  g_assert_true (airlock_event_log_add_frame (fx->log, frame, &error));
  g_assert_no_error (error);
  events = airlock_event_log_get_events (fx->log);
  return events->pdata[events->len - 1];
}

/* Adds the frame begun last; it must be refused with @code and a message
 * containing @needle. */
static void
ev_refused (Fixture *fx, AirlockEventError code, const char *needle)
{
  g_autoptr (AirlockFrame) frame = ev_frame (fx);
  g_autoptr (GError) error = NULL;
  guint before = airlock_event_log_get_events (fx->log)->len;

  g_assert_false (airlock_event_log_add_frame (fx->log, frame, &error));
  g_assert_error (error, AIRLOCK_EVENT_ERROR, (gint) code);
  if (strstr (error->message, needle) == NULL)
    g_error ("'%s' does not contain '%s'", error->message, needle);
  g_assert_cmpuint (airlock_event_log_get_events (fx->log)->len, ==, before);
}

static void
assert_key (const AirlockEvent *ev, const char *expected)
{
  g_autofree char *line = airlock_event_key_line (ev);

  g_assert_cmpstr (line, ==, expected);
}

static void
assert_outcome (const AirlockEvent *ev, const char *expected)
{
  g_autofree char *outcome = airlock_event_outcome (ev);

  g_assert_cmpstr (outcome, ==, expected);
}

/* A DNS query for @name (dotted, no trailing dot), type A. */
static GByteArray *
dns_query (const char *name, guint16 id)
{
  GByteArray *msg = g_byte_array_new ();
  guint8 header[12] = { id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
  g_auto (GStrv) labels = g_strsplit (name, ".", -1);
  guint8 tail[5] = { 0, 0, 1, 0, 1 };

  g_byte_array_append (msg, header, sizeof header);
  for (guint i = 0; labels[i]; i++)
    {
      guint8 len = (guint8) strlen (labels[i]);

      g_byte_array_append (msg, &len, 1);
      g_byte_array_append (msg, (const guint8 *) labels[i], len);
    }
  g_byte_array_append (msg, tail, sizeof tail);
  return msg;
}

/* ---- kinds ---- */

static void
test_kind_syscall (Fixture *fx, gconstpointer data)
{
  guint64 args[6] = { 3, 0x7ffc0000, 16, 0, 0, 0 };
  struct wire_frame *f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, args);
  guint8 sa[16];
  static const char cmdline[] = "curl\0-s\0http://192.0.2.1/\0";
  const AirlockEvent *ev;

  wire_put_u32 (f, AIRLOCK_TLV_EV_PPID, 150);
  wire_put_u32 (f, AIRLOCK_TLV_EV_NSPID, 7);
  wire_put_u32 (f, AIRLOCK_TLV_EV_UID, 1000);
  wire_put_u32 (f, AIRLOCK_TLV_EV_GID, 1001);
  wire_put_str (f, AIRLOCK_TLV_EV_EXE, "/usr/bin/curl");
  wire_put (f, AIRLOCK_TLV_EV_ARGV, cmdline, sizeof cmdline - 1);
  put_socket (f, AF_INET, SOCK_STREAM, 0, 777);
  put_addr (f, sa, sin_bytes (sa, "192.0.2.1", 80));
  wire_put_str (f, AIRLOCK_TLV_EV_NOTE, "line\nbreak");
  ev = ev_add (fx);

  g_assert_cmpuint (ev->seq, ==, 1);
  g_assert_cmpuint (ev->kind, ==, AIRLOCK_EVENT_SYSCALL);
  g_assert_cmpuint (ev->time_ns, ==, 1001);
  g_assert_cmpuint (ev->action, ==, AIRLOCK_ACTION_CONTINUE);
  g_assert_true (ev->has_syscall);
  g_assert_cmpstr (ev->syscall_name, ==, "connect");
  g_assert_cmpstr (ev->abi, ==, "x86_64");
  g_assert_false (ev->foreign_abi);
  g_assert_cmpuint (ev->args[1], ==, 0x7ffc0000);
  g_assert_cmpuint (ev->args[2], ==, 16);
  g_assert_true (ev->has_pid && ev->has_tid && ev->has_ppid && ev->has_nspid);
  g_assert_cmpuint (ev->pid, ==, 200);
  g_assert_cmpuint (ev->tid, ==, 201);
  g_assert_cmpuint (ev->ppid, ==, 150);
  g_assert_cmpuint (ev->nspid, ==, 7);
  g_assert_true (ev->has_uid && ev->has_gid);
  g_assert_cmpuint (ev->uid, ==, 1000);
  g_assert_cmpuint (ev->gid, ==, 1001);
  g_assert_cmpstr (ev->exe, ==, "/usr/bin/curl");
  g_assert_cmpuint (g_strv_length (ev->argv), ==, 3);
  g_assert_cmpstr (ev->argv[0], ==, "curl");
  g_assert_cmpstr (ev->argv[2], ==, "http://192.0.2.1/");
  g_assert_true (ev->has_fd);
  g_assert_true (ev->has_socket && !ev->socket_from_args);
  g_assert_cmpuint (ev->sock_id, ==, 777);
  g_assert_true (ev->addr_decoded);
  g_assert_cmpuint (ev->addr_sa->inet.port, ==, 80);
  g_assert_cmpstr (ev->note, ==, "line\\nbreak");
  g_assert_false (ev->has_result);
  assert_key (ev, "connect continue inet/stream/tcp 192.0.2.1:80");
  assert_outcome (ev, "allowed");
  g_assert_true (airlock_event_log_lookup (fx->log, 1) == ev);
}

static void
test_kind_result (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_EMULATE, 0, NULL);
  guint8 sa[16];
  const AirlockEvent *call, *result;

  put_socket (f, AF_INET, SOCK_STREAM, IPPROTO_TCP, 5);
  put_addr (f, sa, sin_bytes (sa, "192.0.2.7", 9));
  call = ev_add (fx);
  assert_outcome (call, "no result");

  f = ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, call->seq);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, (guint64) -ECONNREFUSED);
  result = ev_add (fx);

  g_assert_cmpuint (result->kind, ==, AIRLOCK_EVENT_RESULT);
  g_assert_true (result->has_ref);
  g_assert_cmpuint (result->ref, ==, 1);
  g_assert_true (result->has_result);
  g_assert_cmpint (result->result, ==, -ECONNREFUSED);
  g_assert_null (airlock_event_key_line (result));
  /* attached to the call */
  g_assert_true (call->has_result);
  g_assert_cmpint (call->result, ==, -ECONNREFUSED);
  g_assert_cmpuint (call->result_seq, ==, 2);
  assert_outcome (call, "ECONNREFUSED");
  assert_key (call, "connect emulate inet/stream/tcp 192.0.2.7:9");
}

static void
test_kind_workload (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f = ev_begin (fx, AIRLOCK_EVENT_WORKLOAD_START);
  const AirlockEvent *ev;
  g_autofree char *status = NULL;

  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 42);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_CONTROLS);
  ev = ev_add (fx);
  g_assert_cmpuint (ev->kind, ==, AIRLOCK_EVENT_WORKLOAD_START);
  g_assert_true (ev->has_pid);
  g_assert_cmpuint (ev->pid, ==, 42);
  g_assert_cmpuint (ev->phase, ==, AIRLOCK_PHASE_CONTROLS);
  g_assert_null (airlock_event_key_line (ev));

  /* A call after the start belongs to its phase. */
  ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  ev = ev_add (fx);
  g_assert_cmpuint (ev->phase, ==, AIRLOCK_PHASE_CONTROLS);

  f = ev_begin (fx, AIRLOCK_EVENT_WORKLOAD_EXIT);
  wire_put_u32 (f, AIRLOCK_TLV_EV_EXIT_STATUS, 3 << 8);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_CONTROLS);
  ev = ev_add (fx);
  g_assert_cmpuint (ev->kind, ==, AIRLOCK_EVENT_WORKLOAD_EXIT);
  g_assert_true (ev->has_exit_status);
  g_assert_cmpuint (ev->exit_status, ==, 3 << 8);
  status = airlock_wait_status_to_string (ev->exit_status);
  g_assert_cmpstr (status, ==, "exited 3");
  g_clear_pointer (&status, g_free);
  status = airlock_wait_status_to_string (9);
  g_assert_cmpstr (status, ==, "killed by SIGKILL");
}

/* ---- frame rules ---- */

typedef struct {
  guint16 tag;
  guint16 size;     /* exact size, or 0 */
  guint16 max;      /* bound of a byte string, or 0 */
} TagSize;

static const TagSize tag_sizes[] = {
  { AIRLOCK_TLV_EV_KIND, 4, 0 }, { AIRLOCK_TLV_EV_TIME_NS, 8, 0 },
  { AIRLOCK_TLV_EV_ACTION, 4, 0 }, { AIRLOCK_TLV_EV_SYSCALL, 4, 0 },
  { AIRLOCK_TLV_EV_AUDIT_ARCH, 4, 0 }, { AIRLOCK_TLV_EV_ARGS, 48, 0 },
  { AIRLOCK_TLV_EV_PID, 4, 0 }, { AIRLOCK_TLV_EV_TID, 4, 0 }, { AIRLOCK_TLV_EV_PPID, 4, 0 },
  { AIRLOCK_TLV_EV_NSPID, 4, 0 }, { AIRLOCK_TLV_EV_UID, 4, 0 }, { AIRLOCK_TLV_EV_GID, 4, 0 },
  { AIRLOCK_TLV_EV_FD, 4, 0 }, { AIRLOCK_TLV_EV_SOCKET, 12, 0 },
  { AIRLOCK_TLV_EV_SOCK_ID, 8, 0 }, { AIRLOCK_TLV_EV_ADDRLEN, 4, 0 },
  { AIRLOCK_TLV_EV_MSG_FLAGS, 4, 0 }, { AIRLOCK_TLV_EV_MSG_INDEX, 8, 0 },
  { AIRLOCK_TLV_EV_PAYLOAD_LEN, 8, 0 },
  { AIRLOCK_TLV_EV_ADDR, 0, 128 }, { AIRLOCK_TLV_EV_PEER, 0, 128 },
  { AIRLOCK_TLV_EV_LOCAL, 0, 128 }, { AIRLOCK_TLV_EV_EXE, 0, 4096 },
  { AIRLOCK_TLV_EV_ARGV, 0, 4096 }, { AIRLOCK_TLV_EV_PATH, 0, 4096 },
  { AIRLOCK_TLV_EV_PAYLOAD, 0, 4096 }, { AIRLOCK_TLV_EV_NOTE, 0, 1024 },
};

/* A SYSCALL frame whose @tag is @len bytes long (replacing the fixture's
 * own value of that tag).  Returns whether the rules accept it. */
static gboolean
syscall_with_tag (guint16 tag, gsize len, char **ret_problem)
{
  struct wire_frame f;
  g_autofree guint8 *value = g_malloc0 (MAX (len, 1));
  static const struct { guint16 tag; guint16 len; guint32 value; } base[] = {
    { AIRLOCK_TLV_EV_KIND, 4, AIRLOCK_EVENT_SYSCALL }, { AIRLOCK_TLV_EV_TIME_NS, 8, 1 },
    { AIRLOCK_TLV_EV_ACTION, 4, AIRLOCK_ACTION_CONTINUE }, { AIRLOCK_TLV_EV_SYSCALL, 4, 42 },
    { AIRLOCK_TLV_EV_AUDIT_ARCH, 4, ARCH_X86_64 }, { AIRLOCK_TLV_EV_ARGS, 48, 0 },
    { AIRLOCK_TLV_EV_PID, 4, 1 }, { AIRLOCK_TLV_EV_TID, 4, 1 },
  };
  AirlockFrameTlvs tlvs;
  size_t n;

  /* values the kind rules accept, so only the size decides */
  if (tag == AIRLOCK_TLV_EV_KIND && len >= 4)
    wire_le32 (value, AIRLOCK_EVENT_SYSCALL);
  if (tag == AIRLOCK_TLV_EV_ACTION && len >= 4)
    wire_le32 (value, AIRLOCK_ACTION_CONTINUE);

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 1);
  for (guint i = 0; i < G_N_ELEMENTS (base); i++)
    {
      guint8 v[48] = { 0 };

      if (base[i].tag == tag)
        continue;
      wire_le32 (v, base[i].value);
      wire_put (&f, base[i].tag, v, base[i].len);
    }
  wire_put (&f, tag, value, len);
  n = wire_end (&f);
  g_assert_cmpuint (n, >, 0);
  return airlock_frame_check_tlvs (AIRLOCK_FRAME_EVENT, f.bytes + AIRLOCK_FRAME_HEADER_SIZE,
                                   n - AIRLOCK_FRAME_HEADER_SIZE, 0, &tlvs, ret_problem);
}

static void
test_tag_bounds (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (tag_sizes); i++)
    {
      const TagSize *t = &tag_sizes[i];
      g_autofree char *problem = NULL;

      g_test_message ("tag %u", t->tag);
      if (t->size)
        {
          g_assert_true (syscall_with_tag (t->tag, t->size, &problem));
          g_assert_false (syscall_with_tag (t->tag, t->size - 1, &problem));
          g_assert_nonnull (strstr (problem, "must be exactly"));
          g_clear_pointer (&problem, g_free);
          g_assert_false (syscall_with_tag (t->tag, t->size + 1, &problem));
          g_assert_nonnull (strstr (problem, "must be exactly"));
        }
      else
        {
          g_assert_true (syscall_with_tag (t->tag, 0, &problem));
          g_assert_true (syscall_with_tag (t->tag, t->max, &problem));
          g_assert_false (syscall_with_tag (t->tag, t->max + 1, &problem));
          g_assert_nonnull (strstr (problem, "at most"));
        }
    }
}

static void
test_missing_mandatory (Fixture *fx, gconstpointer data)
{
  static const guint16 syscall_mandatory[] = {
    AIRLOCK_TLV_EV_TIME_NS, AIRLOCK_TLV_EV_ACTION, AIRLOCK_TLV_EV_SYSCALL,
    AIRLOCK_TLV_EV_AUDIT_ARCH, AIRLOCK_TLV_EV_ARGS, AIRLOCK_TLV_EV_PID, AIRLOCK_TLV_EV_TID,
  };
  struct wire_frame *f;

  /* each mandatory tag of a SYSCALL, left out in turn */
  for (guint i = 0; i < G_N_ELEMENTS (syscall_mandatory); i++)
    {
      g_autofree char *problem = NULL;
      g_autofree char *needle = NULL;

      /* built without the tag (a zero-length value would be a size error) */
      {
        struct wire_frame w;
        guint8 z[48] = { 0 };
        AirlockFrameTlvs tlvs;
        size_t n;

        wire_begin (&w, AIRLOCK_FRAME_EVENT, 1);
        wire_put_u32 (&w, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_SYSCALL);
        if (syscall_mandatory[i] != AIRLOCK_TLV_EV_TIME_NS)
          wire_put_u64 (&w, AIRLOCK_TLV_EV_TIME_NS, 1);
        if (syscall_mandatory[i] != AIRLOCK_TLV_EV_ACTION)
          wire_put_u32 (&w, AIRLOCK_TLV_EV_ACTION, AIRLOCK_ACTION_CONTINUE);
        if (syscall_mandatory[i] != AIRLOCK_TLV_EV_SYSCALL)
          wire_put_u32 (&w, AIRLOCK_TLV_EV_SYSCALL, 42);
        if (syscall_mandatory[i] != AIRLOCK_TLV_EV_AUDIT_ARCH)
          wire_put_u32 (&w, AIRLOCK_TLV_EV_AUDIT_ARCH, ARCH_X86_64);
        if (syscall_mandatory[i] != AIRLOCK_TLV_EV_ARGS)
          wire_put (&w, AIRLOCK_TLV_EV_ARGS, z, sizeof z);
        if (syscall_mandatory[i] != AIRLOCK_TLV_EV_PID)
          wire_put_u32 (&w, AIRLOCK_TLV_EV_PID, 1);
        if (syscall_mandatory[i] != AIRLOCK_TLV_EV_TID)
          wire_put_u32 (&w, AIRLOCK_TLV_EV_TID, 1);
        n = wire_end (&w);
        g_assert_false (airlock_frame_check_tlvs (AIRLOCK_FRAME_EVENT,
                                                  w.bytes + AIRLOCK_FRAME_HEADER_SIZE,
                                                  n - AIRLOCK_FRAME_HEADER_SIZE, 0, &tlvs,
                                                  &problem));
        needle = g_strdup_printf ("mandatory TLV %s (tag %u) is missing",
                                  airlock_tlv_tag_to_string (syscall_mandatory[i]),
                                  syscall_mandatory[i]);
        g_assert_nonnull (strstr (problem, needle));
      }
    }

  /* per kind, through the log */
  ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (&fx->f, AIRLOCK_TLV_EV_RESULT, 0);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "mandatory TLV ref (tag 58) is missing in a result event");
  f = ev_begin (fx, AIRLOCK_EVENT_WORKLOAD_START);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "mandatory TLV pid (tag 39) is missing in a workload-start event");
  f = ev_begin (fx, AIRLOCK_EVENT_WORKLOAD_START);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 1);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "mandatory TLV phase (tag 13) is missing in a workload-start event");
  f = ev_begin (fx, AIRLOCK_EVENT_WORKLOAD_EXIT);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "mandatory TLV event-exit-status (tag 60) is missing");
  /* no kind at all */
  wire_begin (&fx->f, AIRLOCK_FRAME_EVENT, fx->seq);
  wire_put_u64 (&fx->f, AIRLOCK_TLV_EV_TIME_NS, 1);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "mandatory TLV kind (tag 32) is missing");
  /* a denial without its reason, a reason without a denial */
  ev_syscall (fx, ARCH_X86_64, NR_PTRACE, AIRLOCK_ACTION_DENY, 0, NULL);
  /* ev_syscall put REASON 0: not a deny reason */
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "reason at byte");
  f = ev_syscall (fx, ARCH_X86_64, NR_PTRACE, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  wire_put_u32 (f, AIRLOCK_TLV_EV_REASON, AIRLOCK_DENY_PTRACE);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "tag 35 (reason)");
  {
    guint8 z[48] = { 0 };

    f = ev_begin (fx, AIRLOCK_EVENT_SYSCALL);
    wire_put_u32 (f, AIRLOCK_TLV_EV_ACTION, AIRLOCK_ACTION_DENY);
    wire_put_u32 (f, AIRLOCK_TLV_EV_SYSCALL, NR_PTRACE);
    wire_put_u32 (f, AIRLOCK_TLV_EV_AUDIT_ARCH, ARCH_X86_64);
    wire_put (f, AIRLOCK_TLV_EV_ARGS, z, sizeof z);
    wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 1);
    wire_put_u32 (f, AIRLOCK_TLV_EV_TID, 1);
    ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "reason (tag 35) is missing in a denied");
  }
  /* an unknown kind, an unknown action */
  ev_begin (fx, 9);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "is 9, not an event kind");
  ev_syscall (fx, ARCH_X86_64, NR_CONNECT, 4, 0, NULL);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "is 4, not an action");
  g_assert_cmpuint (airlock_event_log_get_events (fx->log)->len, ==, 0);
}

static void
test_duplicate_and_foreign_tags (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f;

  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 201);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "TLV pid (tag 39) appears twice");

  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  wire_put_str (f, AIRLOCK_TLV_EV_EXE, "/a");
  wire_put_str (f, AIRLOCK_TLV_EV_EXE, "/b");
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "appears twice");

  /* the run spec's tags never come from the guest */
  for (guint16 tag = AIRLOCK_SPEC_ARG; tag <= AIRLOCK_SPEC_HOSTNAME; tag++)
    {
      f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
      wire_put_u32 (f, tag, 0);
      ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "is not allowed in a event frame");
    }
  /* unknown tags: between the ranges, past them, and frame tags of other types */
  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  wire_put_u32 (f, 64, 0);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "tag 64 (unknown)");
  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  wire_put_u32 (f, 0xffff, 0);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "tag 65535 (unknown)");
  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  wire_put (f, AIRLOCK_TLV_NONCE, "", 0);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "tag 1 (nonce)");
  /* a tag of another kind */
  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, 0);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "tag 58 (ref) at byte");
  f = ev_begin (fx, AIRLOCK_EVENT_WORKLOAD_EXIT);
  wire_put_u32 (f, AIRLOCK_TLV_EV_EXIT_STATUS, 0);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ACTION, AIRLOCK_ACTION_CONTINUE);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_MALFORMED, "is not allowed in a workload-exit event");
  /* other frame types keep their own rules: no event tag in a log frame */
  {
    struct wire_frame w;
    AirlockFrameTlvs tlvs;
    g_autofree char *problem = NULL;
    size_t n;

    wire_begin (&w, AIRLOCK_FRAME_LOG, 1);
    wire_put_str (&w, AIRLOCK_TLV_MESSAGE, "x");
    wire_put_u32 (&w, AIRLOCK_TLV_EV_KIND, 1);
    n = wire_end (&w);
    g_assert_false (airlock_frame_check_tlvs (AIRLOCK_FRAME_LOG,
                                              w.bytes + AIRLOCK_FRAME_HEADER_SIZE,
                                              n - AIRLOCK_FRAME_HEADER_SIZE, 0, &tlvs, &problem));
    g_assert_nonnull (strstr (problem, "tag 32 (kind)"));
  }
}

/* ---- results ---- */

static void
test_result_refs (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f;
  const AirlockEvent *call;

  /* to nothing */
  f = ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, 0);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, 0);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_BAD_REF, "is not an earlier syscall event");

  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_EMULATE, 0, NULL);
  put_socket (f, AF_INET, SOCK_STREAM, 0, 1);
  call = ev_add (fx);
  /* to a later frame */
  f = ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, fx->seq + 5);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, 0);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_BAD_REF, "not an earlier syscall event");

  f = ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, call->seq);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, 0);
  ev_add (fx);
  g_assert_true (call->has_result);
  g_assert_cmpint (call->result, ==, 0);
  assert_outcome (call, "ok");

  /* a second result for the same call */
  f = ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, call->seq);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, (guint64) -EPERM);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_BAD_REF, "already reported");
  g_assert_cmpint (call->result, ==, 0);

  /* to a RESULT event, which is no call */
  f = ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, fx->seq - 1);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, 0);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_BAD_REF, "not an earlier syscall event");
}

static void
test_sendmmsg_entries (Fixture *fx, gconstpointer data)
{
  const AirlockEvent *entries[3];
  struct wire_frame *f;
  guint8 sa[16];

  for (guint i = 0; i < 3; i++)
    {
      guint8 index[8];
      g_autofree char *ip = g_strdup_printf ("192.0.2.%u", 10 + i);

      f = ev_syscall (fx, ARCH_X86_64, NR_SENDMMSG, AIRLOCK_ACTION_EMULATE, 0, NULL);
      put_socket (f, AF_INET, SOCK_DGRAM, 0, 44);
      put_addr (f, sa, sin_bytes (sa, ip, 9));
      wire_le32 (index, i);
      wire_le32 (index + 4, 3);
      wire_put (f, AIRLOCK_TLV_EV_MSG_INDEX, index, sizeof index);
      wire_put_u64 (f, AIRLOCK_TLV_EV_PAYLOAD_LEN, 10);
      entries[i] = ev_add (fx);
      g_assert_true (entries[i]->has_msg_index);
      g_assert_cmpuint (entries[i]->mmsg_first_seq, ==, entries[0]->seq);
    }
  assert_key (entries[1], "sendmmsg emulate inet/dgram/udp 192.0.2.11:9");

  /* the RESULT names entry 0 and counts the messages sent */
  f = ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, entries[0]->seq);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, 2);
  ev_add (fx);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_true (entries[i]->has_result);
      g_assert_cmpint (entries[i]->result, ==, 2);
    }
  assert_outcome (entries[0], "sent");
  assert_outcome (entries[1], "sent");
  assert_outcome (entries[2], "not sent");

  /* a RESULT for entry 1 is not how sendmmsg reports: it has one already */
  f = ev_begin (fx, AIRLOCK_EVENT_RESULT);
  wire_put_u64 (f, AIRLOCK_TLV_EV_REF, entries[1]->seq);
  wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, 1);
  ev_refused (fx, AIRLOCK_EVENT_ERROR_BAD_REF, "already reported");
}

/* ---- DNS ---- */

static void
test_dns_udp (Fixture *fx, gconstpointer data)
{
  g_autoptr (GByteArray) q = dns_query ("example.com", 0x1234);
  struct wire_frame *f;
  guint8 sa[16];
  const AirlockEvent *ev;

  f = ev_syscall (fx, ARCH_X86_64, NR_SENDTO, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_DGRAM, IPPROTO_UDP, 9);
  put_addr (f, sa, sin_bytes (sa, "192.0.2.53", 53));
  wire_put (f, AIRLOCK_TLV_EV_PAYLOAD, q->data, q->len);
  wire_put_u64 (f, AIRLOCK_TLV_EV_PAYLOAD_LEN, q->len);
  ev = ev_add (fx);
  g_assert_cmpuint (ev->dns->len, ==, 1);
  assert_key (ev, "sendto continue inet/dgram/udp 192.0.2.53:53 dns=example.com.");
}

static void
test_dns_tcp_split (Fixture *fx, gconstpointer data)
{
  g_autoptr (GByteArray) q = dns_query ("split.example", 7);
  g_autoptr (GByteArray) stream = g_byte_array_new ();
  guint8 prefix[2] = { q->len >> 8, q->len & 0xff };
  guint8 peer[16];
  gsize cut;
  struct wire_frame *f;
  const AirlockEvent *first, *second, *other;

  g_byte_array_append (stream, prefix, 2);
  g_byte_array_append (stream, q->data, q->len);
  cut = 9;   /* inside the header */

  f = ev_syscall (fx, ARCH_X86_64, NR_WRITE, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_STREAM, IPPROTO_TCP, 99);
  wire_put (f, AIRLOCK_TLV_EV_PEER, peer, sin_bytes (peer, "192.0.2.53", 53));
  wire_put (f, AIRLOCK_TLV_EV_PAYLOAD, stream->data, cut);
  wire_put_u64 (f, AIRLOCK_TLV_EV_PAYLOAD_LEN, cut);
  first = ev_add (fx);

  /* another connection's bytes in between do not disturb it */
  f = ev_syscall (fx, ARCH_X86_64, NR_WRITE, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_STREAM, IPPROTO_TCP, 100);
  wire_put (f, AIRLOCK_TLV_EV_PEER, peer, sin_bytes (peer, "192.0.2.54", 53));
  wire_put (f, AIRLOCK_TLV_EV_PAYLOAD, "\x00", 1);
  wire_put_u64 (f, AIRLOCK_TLV_EV_PAYLOAD_LEN, 1);
  other = ev_add (fx);

  f = ev_syscall (fx, ARCH_X86_64, NR_WRITE, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_STREAM, IPPROTO_TCP, 99);
  wire_put (f, AIRLOCK_TLV_EV_PEER, peer, sin_bytes (peer, "192.0.2.53", 53));
  wire_put (f, AIRLOCK_TLV_EV_PAYLOAD, stream->data + cut, stream->len - cut);
  wire_put_u64 (f, AIRLOCK_TLV_EV_PAYLOAD_LEN, stream->len - cut);
  second = ev_add (fx);

  assert_key (first, "write continue inet/stream/tcp 192.0.2.53:53");
  assert_key (other, "write continue inet/stream/tcp 192.0.2.54:53");
  assert_key (second, "write continue inet/stream/tcp 192.0.2.53:53 dns=split.example.");
}

/* ---- key lines ---- */

static void
test_key_inet (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f;
  guint8 sa[28];

  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_DGRAM, 0, 1);
  put_addr (f, sa, sin_bytes (sa, "192.0.2.1", 9));
  assert_key (ev_add (fx), "connect continue inet/dgram/udp 192.0.2.1:9");

  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET6, SOCK_STREAM, IPPROTO_TCP, 2);
  put_addr (f, sa, sin6_bytes (sa, "fe80::1", 443, 2));
  assert_key (ev_add (fx), "connect continue inet6/stream/tcp [fe80::1%2]:443");

  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET6, SOCK_DGRAM, 0, 3);
  put_addr (f, sa, sin6_bytes (sa, "::ffff:192.0.2.1", 53, 0));
  assert_key (ev_add (fx), "connect continue inet6/dgram/udp [::ffff:192.0.2.1]:53");

  /* the socket, no destination */
  ev_syscall (fx, ARCH_X86_64, NR_SOCKET, AIRLOCK_ACTION_CONTINUE, 0,
              (guint64[6]) { AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0, 0, 0, 0 });
  assert_key (ev_add (fx), "socket continue inet6/dgram/udp -");

  /* an address that does not decode: too short for sockaddr_in */
  f = ev_syscall (fx, ARCH_X86_64, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_STREAM, 0, 4);
  put_addr (f, sa, 8);
  assert_key (ev_add (fx), "connect continue inet/stream/tcp ?");

  /* a TCP sendto ignores its address: the peer is the destination */
  f = ev_syscall (fx, ARCH_X86_64, NR_SENDTO, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_STREAM, 0, 5);
  put_addr (f, sa, sin_bytes (sa, "192.0.2.99", 1));
  wire_put (f, AIRLOCK_TLV_EV_PEER, sa, sin_bytes (sa, "192.0.2.2", 80));
  assert_key (ev_add (fx), "sendto continue inet/stream/tcp 192.0.2.2:80");

  /* … unless it is a fast open */
  f = ev_syscall (fx, ARCH_X86_64, NR_SENDTO, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_STREAM, 0, 6);
  put_addr (f, sa, sin_bytes (sa, "192.0.2.3", 443));
  wire_put_u32 (f, AIRLOCK_TLV_EV_MSG_FLAGS, 0x20000000);
  assert_key (ev_add (fx), "sendto continue inet/stream/tcp 192.0.2.3:443");

  /* a send on an unconnected socket: the socket, no destination */
  f = ev_syscall (fx, ARCH_X86_64, NR_SENDMSG, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_DGRAM, 0, 7);
  assert_key (ev_add (fx), "sendmsg continue inet/dgram/udp -");

  /* bind: the local address is the key's address */
  f = ev_syscall (fx, ARCH_X86_64, NR_BIND, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_INET, SOCK_DGRAM, 0, 8);
  put_addr (f, sa, sin_bytes (sa, "0.0.0.0", 5353));
  assert_key (ev_add (fx), "bind continue inet/dgram/udp 0.0.0.0:5353");
}

static void
test_key_unix (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f;
  guint8 sa[110] = { AF_UNIX, 0 };
  static const char path[] = "/run/x.sock";
  static const char abstract[] = "\0name";

  f = ev_syscall (fx, ARCH_AARCH64, 203, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_UNIX, SOCK_STREAM, 0, 1);
  memcpy (sa + 2, path, sizeof path);
  put_addr (f, sa, 2 + sizeof path);
  assert_key (ev_add (fx), "connect continue unix/stream/0 unix:/run/x.sock");

  f = ev_syscall (fx, ARCH_AARCH64, 203, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  put_socket (f, AF_UNIX, SOCK_DGRAM, 0, 2);
  memcpy (sa + 2, abstract, sizeof abstract - 1);
  put_addr (f, sa, 2 + sizeof abstract - 1);
  assert_key (ev_add (fx), "connect continue unix/dgram/0 unix:@name");
}

static void
test_key_denials (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f;
  const AirlockEvent *ev;

  ev_syscall (fx, ARCH_X86_64, NR_SOCKET, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_RAW_SOCKET,
              (guint64[6]) { AF_INET, SOCK_RAW, IPPROTO_ICMP, 0, 0, 0 });
  ev = ev_add (fx);
  assert_key (ev, "socket deny:raw-socket inet/raw/icmp -");
  assert_outcome (ev, "denied: raw-socket");

  ev_syscall (fx, ARCH_X86_64, NR_PTRACE, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_PTRACE, NULL);
  assert_key (ev_add (fx), "ptrace deny:ptrace -");

  /* foreign ABIs are named with theirs */
  ev_syscall (fx, ARCH_I386, 102, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_FOREIGN_ABI, NULL);
  assert_key (ev_add (fx), "i386:socketcall deny:foreign-abi -");
  ev_syscall (fx, ARCH_I386, 362, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_FOREIGN_ABI, NULL);
  assert_key (ev_add (fx), "i386:connect deny:foreign-abi -");
  ev_syscall (fx, ARCH_ARM, 283, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_FOREIGN_ABI, NULL);
  assert_key (ev_add (fx), "arm:connect deny:foreign-abi -");
  ev_syscall (fx, ARCH_X86_64, X32_BIT | 42, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_X32, NULL);
  assert_key (ev_add (fx), "x32:connect deny:x32 -");
  ev_syscall (fx, ARCH_X86_64, 425, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_IO_URING, NULL);
  assert_key (ev_add (fx), "io_uring_setup deny:io-uring -");
  ev_syscall (fx, ARCH_AARCH64, 435, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_CLONE3, NULL);
  assert_key (ev_add (fx), "clone3 deny:clone3 -");
  ev_syscall (fx, ARCH_X86_64, 9999, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_KERNEL, NULL);
  assert_key (ev_add (fx), "syscall-9999 deny:kernel -");

  /* a denied AF_PACKET socket */
  f = ev_syscall (fx, ARCH_AARCH64, 198, AIRLOCK_ACTION_DENY, AIRLOCK_DENY_PACKET_SOCKET, NULL);
  put_socket (f, AF_PACKET, SOCK_RAW, 0x0300, 0);
  assert_key (ev_add (fx), "socket deny:packet-socket packet/raw/768 -");
}

static void
test_key_execve (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f;
  const AirlockEvent *ev;
  static const char cmdline[] = "/bin/sh\0-c\0echo hi\0";

  f = ev_syscall (fx, ARCH_X86_64, NR_EXECVE, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  wire_put_str (f, AIRLOCK_TLV_EV_PATH, "/bin/sh");
  wire_put (f, AIRLOCK_TLV_EV_ARGV, cmdline, sizeof cmdline - 1);
  ev = ev_add (fx);
  assert_key (ev, "execve continue -");
  g_assert_cmpstr (ev->path, ==, "/bin/sh");
  g_assert_cmpuint (g_strv_length (ev->argv), ==, 3);
  g_assert_cmpstr (ev->argv[2], ==, "echo hi");

  ev_syscall (fx, ARCH_AARCH64, 281, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  assert_key (ev_add (fx), "execveat continue -");
}

static void
test_syscall_names (void)
{
  static const struct { guint32 arch; guint32 nr; const char *name; } cases[] = {
    { ARCH_X86_64, 41, "socket" }, { ARCH_X86_64, 307, "sendmmsg" },
    { ARCH_X86_64, 311, "process_vm_writev" }, { ARCH_X86_64, 323, "userfaultfd" },
    { ARCH_X86_64, X32_BIT | 518, "sendmsg" }, { ARCH_X86_64, X32_BIT | 46, "syscall-46" },
    { ARCH_I386, 102, "socketcall" }, { ARCH_I386, 370, "sendmsg" },
    { ARCH_AARCH64, 198, "socket" }, { ARCH_AARCH64, 269, "sendmmsg" },
    { ARCH_AARCH64, 294, "kexec_file_load" }, { ARCH_ARM, 102, "socketcall" },
    { ARCH_ARM, 374, "sendmmsg" }, { 0x1234, 1, "syscall-1" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = airlock_syscall_name (cases[i].arch, cases[i].nr);

      g_assert_cmpstr (name, ==, cases[i].name);
    }
  g_assert_cmpstr (airlock_syscall_abi (ARCH_X86_64, X32_BIT | 1), ==, "x32");
  g_assert_cmpstr (airlock_syscall_abi (0x1234, 1), ==, "unknown");
}

static void
test_argv_escaped (Fixture *fx, gconstpointer data)
{
  struct wire_frame *f = ev_syscall (fx, ARCH_X86_64, NR_EXECVE, AIRLOCK_ACTION_CONTINUE, 0, NULL);
  static const char cmdline[] = "a\tb\0\xff\0\0last-cut";
  const AirlockEvent *ev;

  wire_put (f, AIRLOCK_TLV_EV_ARGV, cmdline, sizeof cmdline - 1);
  wire_put_str (f, AIRLOCK_TLV_EV_EXE, "/x\x1b[31m");
  ev = ev_add (fx);
  g_assert_cmpuint (g_strv_length (ev->argv), ==, 4);
  g_assert_cmpstr (ev->argv[0], ==, "a\\tb");
  g_assert_cmpstr (ev->argv[1], ==, "\\xff");
  g_assert_cmpstr (ev->argv[2], ==, "");
  g_assert_cmpstr (ev->argv[3], ==, "last-cut");
  g_assert_cmpstr (ev->exe, ==, "/x\\x1b[31m");
}

/* ---- the run spec ---- */

static void
test_spec_encode (void)
{
  const char *argv[] = { "/bin/connect-v4", "192.0.2.1", NULL };
  const char *envp[] = { "PATH=/bin", "HOME=/root", NULL };
  guint32 groups[] = { 10, 20 };
  AirlockRunSpec spec = {
    .argv = argv, .envp = envp, .cwd = "/", .uid = 1000, .gid = 1001, .groups = groups,
    .n_groups = 2, .root = "/airlock/testroot", .timeout_ms = 30000, .hostname = "airlock",
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = airlock_run_spec_encode (&spec, &error);
  AirlockTlvIter iter;
  AirlockTlv tlv;
  static const guint16 order[] = {
    AIRLOCK_SPEC_ARG, AIRLOCK_SPEC_ARG, AIRLOCK_SPEC_ENV, AIRLOCK_SPEC_ENV, AIRLOCK_SPEC_CWD,
    AIRLOCK_SPEC_UID, AIRLOCK_SPEC_GID, AIRLOCK_SPEC_GROUPS, AIRLOCK_SPEC_ROOT,
    AIRLOCK_SPEC_TIMEOUT_MS, AIRLOCK_SPEC_HOSTNAME,
  };
  guint n = 0;
  gsize len;
  const guint8 *data;

  g_assert_no_error (error);
  g_assert_nonnull (bytes);
  data = g_bytes_get_data (bytes, &len);
  airlock_tlv_iter_init (&iter, data, len);
  while (airlock_tlv_iter_next (&iter, &tlv) == AIRLOCK_TLV_ITER_ITEM)
    {
      g_assert_cmpuint (n, <, G_N_ELEMENTS (order));
      g_assert_cmpuint (tlv.tag, ==, order[n]);
      switch (n)
        {
        case 1:
          g_assert_cmpmem (tlv.value, tlv.len, "192.0.2.1", 9);
          break;
        case 5:
          g_assert_cmpuint (wire_get_le32 (tlv.value), ==, 1000);
          break;
        case 7:
          g_assert_cmpuint (tlv.len, ==, 8);
          g_assert_cmpuint (wire_get_le32 (tlv.value + 4), ==, 20);
          break;
        case 8:
          g_assert_cmpmem (tlv.value, tlv.len, "/airlock/testroot", 17);
          break;
        case 9:
          g_assert_cmpuint (tlv.len, ==, 4);
          g_assert_cmpuint (wire_get_le32 (tlv.value), ==, 30000);
          break;
        default:
          break;
        }
      n++;
    }
  g_assert_cmpuint (n, ==, G_N_ELEMENTS (order));
  g_assert_cmpuint (iter.pos, ==, len);
}

static void
assert_spec_error (const AirlockRunSpec *spec, gint code, const char *needle)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = airlock_run_spec_encode (spec, &error);

  g_assert_null (bytes);
  g_assert_error (error, AIRLOCK_RUN_SPEC_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("'%s' does not contain '%s'", error->message, needle);
}

static void
test_spec_errors (void)
{
  const char *argv[] = { "/bin/x", NULL };
  const char *empty[] = { NULL };
  const char *blank[] = { "", NULL };
  const char *bad_env[] = { "NOEQUALS", NULL };
  g_autofree char *huge = g_malloc (70000);
  const char *huge_argv[] = { "/bin/x", huge, NULL };
  g_autofree char *big = g_malloc (40000);
  const char *big_argv[] = { "/bin/x", big, big, NULL };
  AirlockRunSpec ok = { .argv = argv, .root = "/r", .timeout_ms = 1 };
  AirlockRunSpec s;

  memset (huge, 'a', 69999);
  huge[69999] = '\0';
  memset (big, 'b', 39999);
  big[39999] = '\0';

  s = ok, s.argv = NULL;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "argv is empty");
  s = ok, s.argv = empty;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "argv is empty");
  s = ok, s.argv = blank;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "argv[0] is empty");
  s = ok, s.root = NULL;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "root is not set");
  s = ok, s.root = "relative";
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "root 'relative' is not an absolute");
  s = ok, s.cwd = "tmp";
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "cwd 'tmp'");
  s = ok, s.timeout_ms = 0;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "timeout_ms is 0");
  s = ok, s.envp = bad_env;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "envp[0] 'NOEQUALS' is not NAME=VALUE");
  s = ok, s.argv = huge_argv;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_TOO_LARGE, "argv[1] is 69999 bytes long");
  s = ok, s.argv = big_argv;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_TOO_LARGE, "at most 65536 are allowed");

  {
    g_autoptr (GBytes) bytes = airlock_run_spec_encode (&ok, NULL);

    g_assert_nonnull (bytes);
  }
}

/* `airlock shell`: a terminal of rows x cols and the static shell's
 * directory, after every older tag; a spec without them is as before. */
static void
test_spec_tty_and_shell (void)
{
  const char *argv[] = { "/bin/sh", NULL };
  const char *relative[] = { "sh", NULL };
  AirlockRunSpec spec = {
    .argv = argv, .root = "/r", .timeout_ms = 1000, .stdio = TRUE, .tty = TRUE,
    .tty_rows = 30, .tty_cols = 100, .shell_dir = "/airlock/shell",
  };
  AirlockRunSpec plain = { .argv = argv, .root = "/r", .timeout_ms = 1000, .stdio = TRUE };
  AirlockRunSpec s;
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = airlock_run_spec_encode (&spec, &error);
  g_autoptr (GBytes) plain_bytes = airlock_run_spec_encode (&plain, NULL);
  AirlockTlvIter iter;
  AirlockTlv tlv;
  guint16 last_tags[3] = { 0 };
  gboolean saw_tty = FALSE, saw_shell = FALSE;
  gsize len;
  const guint8 *data;

  g_assert_no_error (error);
  data = g_bytes_get_data (bytes, &len);
  airlock_tlv_iter_init (&iter, data, len);
  while (airlock_tlv_iter_next (&iter, &tlv) == AIRLOCK_TLV_ITER_ITEM)
    {
      last_tags[0] = last_tags[1];
      last_tags[1] = last_tags[2];
      last_tags[2] = tlv.tag;
      if (tlv.tag == AIRLOCK_SPEC_TTY)
        {
          g_assert_cmpuint (tlv.len, ==, 4);
          g_assert_cmpuint (wire_get_le16 (tlv.value), ==, 30);
          g_assert_cmpuint (wire_get_le16 (tlv.value + 2), ==, 100);
          saw_tty = TRUE;
        }
      if (tlv.tag == AIRLOCK_SPEC_SHELL)
        {
          g_assert_cmpmem (tlv.value, tlv.len, "/airlock/shell", 14);
          saw_shell = TRUE;
        }
    }
  g_assert_true (saw_tty && saw_shell);
  g_assert_cmpuint (last_tags[0], ==, AIRLOCK_SPEC_STDIO);
  g_assert_cmpuint (last_tags[1], ==, AIRLOCK_SPEC_TTY);
  g_assert_cmpuint (last_tags[2], ==, AIRLOCK_SPEC_SHELL);
  /* Without them: the same bytes as before, up to where they begin. */
  g_assert_cmpuint (g_bytes_get_size (plain_bytes), ==, len - 8 - 18);
  g_assert_cmpmem (g_bytes_get_data (plain_bytes, NULL), g_bytes_get_size (plain_bytes), data,
                   len - 8 - 18);

  s = spec;
  s.stdio = FALSE;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "tty needs stdio");
  s = spec;
  s.shell_dir = "airlock/shell";
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "shell_dir 'airlock/shell' is not an absolute");
  s = spec;
  s.argv = relative;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "argv[0] 'sh' is not absolute");
}

/* @bytes is @plain's spec with one u32 TLV more, the last: @tag, @value. */
static void
assert_last_u32 (GBytes *plain, GBytes *bytes, guint16 tag, guint32 value)
{
  AirlockTlvIter iter;
  AirlockTlv tlv;
  guint16 last = 0;
  guint32 got = 0;
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);

  g_assert_nonnull (plain);
  airlock_tlv_iter_init (&iter, data, len);
  while (airlock_tlv_iter_next (&iter, &tlv) == AIRLOCK_TLV_ITER_ITEM)
    {
      last = tlv.tag;
      if (tlv.tag == tag)
        {
          g_assert_cmpuint (tlv.len, ==, 4);
          got = wire_get_le32 (tlv.value);
        }
    }
  g_assert_cmpuint (last, ==, tag);
  g_assert_cmpuint (got, ==, value);
  g_assert_cmpuint (g_bytes_get_size (plain), ==, len - 8);
  g_assert_cmpmem (g_bytes_get_data (plain, NULL), g_bytes_get_size (plain), data, len - 8);
}

/* A warped clock is one u32 TLV, the last; a spec without it is as
 * before (the guest then keeps its own heartbeat timer). */
static void
test_spec_warp (void)
{
  const char *argv[] = { "/bin/x", NULL };
  AirlockRunSpec plain = { .argv = argv, .root = "/r", .timeout_ms = 21600000 };
  AirlockRunSpec warped = plain;
  g_autoptr (GBytes) plain_bytes = airlock_run_spec_encode (&plain, NULL);
  g_autoptr (GBytes) warped_bytes = NULL;

  warped.warp = TRUE;
  warped_bytes = airlock_run_spec_encode (&warped, NULL);
  g_assert_nonnull (warped_bytes);
  assert_last_u32 (plain_bytes, warped_bytes, AIRLOCK_SPEC_WARP, 1);
}

/* The image's StopSignal is one u32 TLV, the last; 0 (SIGTERM, the
 * guest's default) sends none, and a number no signal has is refused. */
static void
test_spec_stop_signal (void)
{
  const char *argv[] = { "/bin/x", NULL };
  AirlockRunSpec plain = { .argv = argv, .root = "/r", .timeout_ms = 1000 };
  AirlockRunSpec usr1 = plain, s = plain;
  g_autoptr (GBytes) plain_bytes = airlock_run_spec_encode (&plain, NULL);
  g_autoptr (GBytes) usr1_bytes = NULL;

  usr1.stop_signal = 10;
  usr1_bytes = airlock_run_spec_encode (&usr1, NULL);
  g_assert_nonnull (usr1_bytes);
  assert_last_u32 (plain_bytes, usr1_bytes, AIRLOCK_SPEC_STOP_SIGNAL, 10);
  s.stop_signal = 65;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "stop_signal 65 is not a signal");
  s.stop_signal = -1;
  assert_spec_error (&s, AIRLOCK_RUN_SPEC_ERROR_INVALID, "stop_signal -1 is not a signal");
}

static void
test_channel_spec (void)
{
  static const guint8 nonce[AIRLOCK_NONCE_LEN] = { 1, 2, 3 };
  const char *argv[] = { "/bin/x", NULL };
  AirlockRunSpec spec = { .argv = argv, .root = "/r", .timeout_ms = 5000 };
  g_autoptr (GBytes) bytes = airlock_run_spec_encode (&spec, NULL);
  g_autoptr (AirlockChannel) plain = airlock_channel_new (nonce, 200, 1000);
  g_autoptr (AirlockChannel) with_spec = airlock_channel_new (nonce, 200, 1000);
  g_autoptr (AirlockChannel) with_empty = airlock_channel_new (nonce, 200, 1000);
  g_autoptr (GBytes) empty = g_bytes_new (NULL, 0);
  g_autoptr (GByteArray) seed = g_byte_array_new ();
  AirlockChain expected;
  const guint8 *hello;
  gsize hello_len;
  guint8 plain_head[32];

  memcpy (plain_head, airlock_channel_get_chain_head (plain), 32);
  hello = airlock_channel_get_host_hello (plain, &hello_len);
  g_assert_cmpuint (wire_get_le32 (hello + 12), ==, 0);

  airlock_channel_set_spec (with_spec, bytes);
  hello = airlock_channel_get_host_hello (with_spec, &hello_len);
  g_assert_cmpuint (hello_len, ==, AIRLOCK_HOST_HELLO_SIZE);
  g_assert_cmpuint (wire_get_le32 (hello + 12), ==, g_bytes_get_size (bytes));
  g_assert_true (airlock_channel_get_spec (with_spec) == bytes);
  /* h0 = SHA-256 (seed || hello || spec) */
  g_byte_array_append (seed, hello, (guint) hello_len);
  g_byte_array_append (seed, g_bytes_get_data (bytes, NULL), (guint) g_bytes_get_size (bytes));
  airlock_chain_init (&expected, seed->data, seed->len);
  g_assert_cmpmem (airlock_channel_get_chain_head (with_spec), 32, expected.value, 32);
  g_assert_true (memcmp (plain_head, expected.value, 32) != 0);

  /* an empty spec is the boot check, byte for byte */
  airlock_channel_set_spec (with_empty, empty);
  g_assert_null (airlock_channel_get_spec (with_empty));
  g_assert_cmpmem (airlock_channel_get_host_hello (with_empty, NULL), AIRLOCK_HOST_HELLO_SIZE,
                   airlock_channel_get_host_hello (plain, NULL), AIRLOCK_HOST_HELLO_SIZE);
  g_assert_cmpmem (airlock_channel_get_chain_head (with_empty), 32, plain_head, 32);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add ("/evidence/events/" path, Fixture, NULL, fixture_setup, fn, \
                                  fixture_teardown)
  ADD ("kind/syscall", test_kind_syscall);
  ADD ("kind/result", test_kind_result);
  ADD ("kind/workload-start-and-exit", test_kind_workload);
  g_test_add_func ("/evidence/events/tag-bounds", test_tag_bounds);
  ADD ("missing-mandatory-is-malformed", test_missing_mandatory);
  ADD ("duplicate-unknown-and-spec-tags-are-malformed", test_duplicate_and_foreign_tags);
  ADD ("result/refs", test_result_refs);
  ADD ("result/sendmmsg-entries", test_sendmmsg_entries);
  ADD ("dns/udp", test_dns_udp);
  ADD ("dns/tcp-split-across-events", test_dns_tcp_split);
  ADD ("key/inet", test_key_inet);
  ADD ("key/unix", test_key_unix);
  ADD ("key/denials", test_key_denials);
  ADD ("key/execve", test_key_execve);
  ADD ("argv-escaped", test_argv_escaped);
  g_test_add_func ("/evidence/events/syscall-names", test_syscall_names);
  g_test_add_func ("/evidence/spec/encode", test_spec_encode);
  g_test_add_func ("/evidence/spec/errors-name-the-field", test_spec_errors);
  g_test_add_func ("/evidence/spec/channel-hello-and-chain", test_channel_spec);
  g_test_add_func ("/evidence/spec/tty-and-shell", test_spec_tty_and_shell);
  g_test_add_func ("/evidence/spec/warp", test_spec_warp);
  g_test_add_func ("/evidence/spec/stop-signal", test_spec_stop_signal);
#undef ADD

  return g_test_run ();
}
