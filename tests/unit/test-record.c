/* The supervisor's record encoder (guest/record.c, compiled here as it is
 * in the guest) against the host's decoder (frame.c, event.c): the records
 * the odd calls of issue 19 make, and the limits of the one-NOTE rule.
 *
 * A record the host rejects makes the run inconclusive and loses every
 * later call, so each test adds the record to an event log and then one
 * ordinary record after it, which must be there too.  tests/fuzz/
 * fuzz-record.c checks the same over arbitrary observations. */
#include "config.h"

#include "evidence/channel.h"
#include "evidence/event.h"
#include "evidence/frame-private.h"

#include "record.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#define ARCH_X86_64 0xc000003eu
#define NR_CONNECT 42
#define NR_SENDMSG 46
#define NR_BIND 49
#define NR_EXECVE 59
#define NR_SENDMMSG 307

typedef struct {
  AirlockEventLog *log;
  guint64 seq;
  struct record rec;
  struct proc_info pi;
  struct sock_info si;
} Fixture;

static void
fixture_setup (Fixture *fx, gconstpointer data)
{
  fx->log = airlock_event_log_new ();
  fx->seq = 1;
  memset (&fx->pi, 0, sizeof fx->pi);
  fx->pi.ok = TRUE;
  fx->pi.tgid = 80;
  fx->pi.ppid = 79;
  memcpy (fx->pi.exe, "/bin/bad-args", 13);
  fx->pi.exe_len = 13;
  memset (&fx->si, 0, sizeof fx->si);
  fx->si.fd = -1;
  fx->si.dup_errno = EBADF;
}

static void
fixture_teardown (Fixture *fx, gconstpointer data)
{
  airlock_event_log_free (fx->log);
}

static void
begin (Fixture *fx, int nr, guint32 action, guint64 a0, guint64 a1, guint64 a2)
{
  struct seccomp_data d = { .nr = nr, .arch = ARCH_X86_64, .args = { a0, a1, a2 } };

  record_begin (&fx->rec, &d, 80, 1000 + fx->seq, action);
}

/* Ends the record begun last and adds it; it must be accepted.  Returns
 * its event. */
static const AirlockEvent *
add (Fixture *fx)
{
  size_t n = record_end (&fx->rec);
  AirlockFrame frame = { 0 };
  AirlockFrameHeader header;
  g_autoptr (GError) error = NULL;
  GPtrArray *events;
  gboolean ok;

  g_assert_cmpuint (n, >, AIRLOCK_FRAME_HEADER_SIZE);
  g_assert_cmpint (airlock_frame_parse_header (fx->rec.f.bytes, n, &header, NULL), ==,
                   AIRLOCK_HEADER_COMPLETE);
  g_assert_cmpuint (header.length, ==, n - AIRLOCK_FRAME_HEADER_SIZE);
  frame.seq = fx->seq++;
  frame.type = AIRLOCK_FRAME_EVENT;
  frame.size = n;
  frame.payload = g_bytes_new (fx->rec.f.bytes + AIRLOCK_FRAME_HEADER_SIZE, header.length);
  ok = airlock_event_log_add_frame (fx->log, &frame, &error);
  g_bytes_unref (frame.payload);
  g_assert_no_error (error);
  g_assert_true (ok);
  events = airlock_event_log_get_events (fx->log);
  return events->pdata[events->len - 1];
}

/* An ordinary bind after the odd record: still recorded. */
static void
assert_next_recorded (Fixture *fx)
{
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (9) };
  struct sock_info udp = { .fd = 5, .is_socket = TRUE, .family = AF_INET, .type = SOCK_DGRAM,
                           .protocol = IPPROTO_UDP, .ino = 77 };
  struct proc_info pi = { .ok = TRUE, .tgid = 80, .ppid = 79 };
  const AirlockEvent *ev;
  g_autofree char *line = NULL;

  begin (fx, NR_BIND, AIRLOCK_ACTION_CONTINUE, 3, 0x1000, sizeof sin);
  record_connect_bind (&fx->rec, &pi, 3, &udp, sizeof sin, (const uint8_t *) &sin,
                       sizeof sin, TRUE);
  ev = add (fx);
  line = airlock_event_key_line (ev);
  g_assert_cmpstr (line, ==, "bind continue inet/dgram/udp 0.0.0.0:9");
  g_assert_null (ev->note);
}

/* The finding itself: connect on fd -1 with an unreadable address, made by
 * a process that exited before we looked — three reasons, one NOTE. */
static void
test_connect_three_reasons (Fixture *fx, gconstpointer data)
{
  const AirlockEvent *ev;

  fx->pi.ok = FALSE;
  begin (fx, NR_CONNECT, AIRLOCK_ACTION_CONTINUE, (guint64) -1, 0x1000, 16);
  record_connect_bind (&fx->rec, &fx->pi, -1, &fx->si, 16, NULL, 16, FALSE);
  ev = add (fx);
  g_assert_cmpstr (ev->note, ==, "process details unreadable (it exited); fd -1 is not a socket "
                                 "(Bad file descriptor); address unreadable (EFAULT)");
  g_assert_true (ev->has_fd);
  g_assert_cmpuint (ev->fd, ==, (guint32) -1);
  g_assert_true (ev->has_addrlen);
  g_assert_null (ev->addr);
  assert_next_recorded (fx);
}

/* sendmmsg on /dev/null (a descriptor, not a socket) with an unreadable
 * vector: the descriptor's note and the message's. */
static void
test_mmsg_not_socket_efault (Fixture *fx, gconstpointer data)
{
  struct msg_copy mc;
  const AirlockEvent *ev;

  memset (&mc, 0, sizeof mc);
  fx->si.fd = 9;   /* our duplicate of /dev/null */
  fx->si.dup_errno = 0;
  begin (fx, NR_SENDMMSG, AIRLOCK_ACTION_CONTINUE, 0, 0x1000, 1);
  record_message (&fx->rec, &fx->pi, 0, &fx->si, 0, &mc, -EFAULT, 0, 1, TRUE);
  ev = add (fx);
  g_assert_cmpstr (ev->note, ==, "fd 0 is not a socket (ENOTSOCK); "
                                 "message unreadable or refused: Bad address");
  g_assert_true (ev->has_msg_index);
  assert_next_recorded (fx);
}

/* An execve at every bound at once (exe, cmdline, path, argv: 16 KiB of
 * strings in a 16 KiB frame): one record, the argv cut and the cut noted,
 * nothing silently dropped. */
static void
test_exec_longest (Fixture *fx, gconstpointer data)
{
  static char path[RECORD_PATH_MAX], argv[RECORD_ARGV_MAX];
  const AirlockEvent *ev;
  gsize argv_len;

  memset (fx->pi.exe, 'e', sizeof fx->pi.exe);
  fx->pi.exe_len = sizeof fx->pi.exe;
  memset (fx->pi.argv, 'a', sizeof fx->pi.argv);
  fx->pi.argv_len = sizeof fx->pi.argv;
  memset (path, 'p', sizeof path);
  memset (argv, 'x', sizeof argv);
  begin (fx, NR_EXECVE, AIRLOCK_ACTION_CONTINUE, 0x1000, 0x2000, 0);
  record_exec (&fx->rec, &fx->pi, path, sizeof path - 1, argv, sizeof argv);
  ev = add (fx);
  g_assert_nonnull (ev->path);
  g_assert_cmpuint (strlen (ev->path), ==, sizeof path - 1);
  g_assert_cmpuint (strlen (ev->exe), ==, sizeof fx->pi.exe);
  g_assert_nonnull (ev->note);
  g_assert_true (g_str_has_prefix (ev->note, "exec argv cut to "));
  g_assert_true (g_str_has_suffix (ev->note, " of 4096 bytes"));
  argv_len = g_ascii_strtoull (ev->note + strlen ("exec argv cut to "), NULL, 10);
  g_assert_cmpuint (argv_len, >, 0);
  g_assert_cmpuint (argv_len, <, sizeof argv);
  assert_next_recorded (fx);
}

/* Reasons beyond AIRLOCK_EV_NOTE_MAX are cut there, never a second NOTE. */
static void
test_note_bound (Fixture *fx, gconstpointer data)
{
  const AirlockEvent *ev;

  begin (fx, NR_SENDMSG, AIRLOCK_ACTION_CONTINUE, 0, 0, 0);
  record_proc (&fx->rec, &fx->pi);
  for (int i = 0; i < 40; i++)
    record_note (&fx->rec, "reason %d: %s", i, "a reason long enough to need many of its kind");
  g_assert_cmpuint (fx->rec.note_len, ==, AIRLOCK_EV_NOTE_MAX);
  ev = add (fx);
  g_assert_true (g_str_has_prefix (ev->note, "reason 0: a reason"));
  g_assert_nonnull (strstr (ev->note, "; reason 1: "));
  g_assert_cmpuint (strlen (ev->note), ==, AIRLOCK_EV_NOTE_MAX);
  assert_next_recorded (fx);
}

/* The host's side of the rule: one NOTE of up to AIRLOCK_EV_NOTE_MAX bytes;
 * a longer one, or a second, is not something the supervisor writes. */
static void
test_host_note_rules (void)
{
  static char note[AIRLOCK_EV_NOTE_MAX + 1];
  struct record rec;
  struct seccomp_data d = { .nr = NR_CONNECT, .arch = ARCH_X86_64 };
  AirlockFrameTlvs tlvs;

  memset (note, 'n', sizeof note);
  for (guint len = AIRLOCK_EV_NOTE_MAX; len <= AIRLOCK_EV_NOTE_MAX + 1; len++)
    for (guint count = 1; count <= 2; count++)
      {
        g_autofree char *problem = NULL;
        gboolean ok;

        record_begin (&rec, &d, 80, 1, AIRLOCK_ACTION_CONTINUE);
        wire_put_u32 (&rec.f, AIRLOCK_TLV_EV_PID, 80);
        for (guint i = 0; i < count; i++)
          wire_put (&rec.f, AIRLOCK_TLV_EV_NOTE, note, len);
        g_assert_cmpuint (wire_end (&rec.f), >, 0);
        ok = airlock_frame_check_tlvs (AIRLOCK_FRAME_EVENT, rec.f.bytes + AIRLOCK_FRAME_HEADER_SIZE,
                                       rec.f.len - AIRLOCK_FRAME_HEADER_SIZE, 0, &tlvs, &problem);
        if (len == AIRLOCK_EV_NOTE_MAX && count == 1)
          {
            g_assert_null (problem);
            g_assert_true (ok);
            g_assert_cmpuint (tlvs.tlv[AIRLOCK_TLV_EV_NOTE].len, ==, AIRLOCK_EV_NOTE_MAX);
          }
        else
          {
            g_assert_false (ok);
            g_assert_nonnull (problem);
            g_assert_nonnull (strstr (problem, len > AIRLOCK_EV_NOTE_MAX ? "at most 1024"
                                                                          : "appears twice"));
          }
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("/record/connect/three-reasons-one-note", test_connect_three_reasons);
  ADD ("/record/sendmmsg/not-a-socket-unreadable", test_mmsg_not_socket_efault);
  ADD ("/record/execve/every-string-longest", test_exec_longest);
  ADD ("/record/note/cut-at-bound", test_note_bound);
#undef ADD
  g_test_add_func ("/record/host/one-note-at-most-1024", test_host_note_rules);
  return g_test_run ();
}
