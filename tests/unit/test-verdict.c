/* Unit tests of the verdict as a pure function of a run record: every rule,
 * one row each, over records made from real EVENT frames (decoded by the
 * same event log a run uses), a capture made of real frames and the
 * sinkhole's record file written by its own writer, with no VM.
 *
 * Each row is a run as a person would describe it ("the image's
 * /etc/passwd is too large", "the entrypoint does not exist", "the run
 * ended at its time limit") and what the verdict must say about it. */
#include "config.h"

#include "evidence/channel.h"
#include "evidence/event.h"
#include "evidence/frame-private.h"
#include "gate/verdict.h"
#include "net/guest-net.h"
#include "probe-controls.h"
#include "record/run-record.h"
#include "sinkhole/sinkhole.h"

#include "wire.h"

#include "capture-frames.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define ARCH_X86_64 0xc000003eu
#define NR_CONNECT 42
#define NR_SENDTO 44

#define NO_RESULT G_MININT64

/* ---- a run, built frame by frame ---- */

typedef struct {
  AirlockEventLog *log;
  guint64 seq;
  GByteArray *pcap;
  guint32 pcap_sec;
  gboolean has_pcap;
  GPtrArray *guest_log;
  AirlockTrailer trailer;
  gboolean has_trailer;
  gboolean complete;
  const char *incomplete_reason;
  guint32 timeout_ms;
  /* The sinkhole's record file, one JSON line per record, or NULL when the
   * run had no sinkhole network; its final line unless @sink_cut, with
   * @sink_dropped. */
  GString *sink;
  gboolean sink_cut;
  guint64 sink_dropped;
  guint64 sink_refused;
  /* The sinkhole served the run but its records were lost (@sink NULL). */
  const char *sink_error;
  gint64 sink_time_us;
  gboolean clock_warp;
  guint32 guest_time_ms;
  /* Times: added to the guest's stamp of each later event, and the host's
   * receipt of each later frame.  With @with_channel the record gets an
   * evidence channel fed every frame at its receipt time (the wall time
   * the workload was watched comes from there). */
  guint64 guest_ns;
  gint64 wall_us;
  gboolean with_channel;
  GByteArray *stream;           /* every frame's bytes, from seq 1 */
  GArray *receipts;             /* gint64: each frame's receipt time */
} Run;

static const guint8 *
guest_mac (void)
{
  static guint8 mac[6];
  guint v[6];

  sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
  for (int i = 0; i < 6; i++)
    mac[i] = (guint8) v[i];
  return mac;
}

static void
run_init (Run *r)
{
  memset (r, 0, sizeof *r);
  r->log = airlock_event_log_new ();
  r->seq = 1;
  r->pcap = cf_pcap_new ();
  r->has_pcap = TRUE;
  r->guest_log = g_ptr_array_new_with_free_func (g_free);
  r->complete = TRUE;
  r->has_trailer = TRUE;
  r->trailer.end_reason = AIRLOCK_END_COMPLETED;
  r->timeout_ms = 30000;
  r->wall_us = 1000000;
  r->stream = g_byte_array_new ();
  r->receipts = g_array_new (FALSE, FALSE, sizeof (gint64));
}

static void
run_clear (Run *r)
{
  g_byte_array_unref (r->stream);
  g_array_unref (r->receipts);
  airlock_event_log_free (r->log);
  g_byte_array_unref (r->pcap);
  g_ptr_array_unref (r->guest_log);
  if (r->sink)
    g_string_free (r->sink, TRUE);
}

static void
add_frame (Run *r, struct wire_frame *f)
{
  g_autoptr (GError) error = NULL;
  AirlockFrame frame = { 0 };
  size_t n = wire_end (f);

  g_assert_cmpuint (n, >, 0);
  frame.seq = r->seq++;
  frame.type = AIRLOCK_FRAME_EVENT;
  frame.offset = 1000;
  frame.size = n;
  frame.payload = g_bytes_new (f->bytes + AIRLOCK_FRAME_HEADER_SIZE, n - AIRLOCK_FRAME_HEADER_SIZE);
  g_assert_true (airlock_event_log_add_frame (r->log, &frame, &error));
  g_assert_no_error (error);
  g_bytes_unref (frame.payload);
  g_byte_array_append (r->stream, f->bytes, (guint) n);
  g_array_append_val (r->receipts, r->wall_us);
}

/* The channel a run with these frames would have had: a hello (frame 0),
 * then every frame of @r as received at its time.  Its tolerance is an
 * hour: these runs keep no heartbeats. */
static AirlockChannel *
run_channel (Run *r)
{
  static const guint8 nonce[AIRLOCK_NONCE_LEN] = { 0 };
  static const guint8 build_id[20] = { 1 };
  AirlockChannel *channel = airlock_channel_new (nonce, 200, 3600 * 1000);
  struct wire_frame hello;
  gsize n, off = 0;

  wire_begin (&hello, AIRLOCK_FRAME_HELLO, 0);
  wire_put (&hello, AIRLOCK_TLV_NONCE, nonce, sizeof nonce);
  wire_put_str (&hello, AIRLOCK_TLV_ARCH, "x86_64");
  wire_put_str (&hello, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0");
  wire_put (&hello, AIRLOCK_TLV_BUILD_ID, build_id, sizeof build_id);
  wire_put_u64 (&hello, AIRLOCK_TLV_UPTIME_NS, 1);
  wire_put_u32 (&hello, AIRLOCK_TLV_SECOND_OPEN_ERRNO, EBUSY);
  n = wire_end (&hello);
  airlock_channel_feed (channel, hello.bytes, n, 1, 1);
  for (guint i = 0; i < r->receipts->len; i++)
    {
      gint64 at = g_array_index (r->receipts, gint64, i);
      gsize size = AIRLOCK_FRAME_HEADER_SIZE + wire_get_le16 (r->stream->data + off + 6);

      airlock_channel_feed (channel, r->stream->data + off, size, at, at);
      off += size;
    }
  g_assert_cmpuint (airlock_channel_get_state (channel), ==, AIRLOCK_CHANNEL_OPEN);
  return channel;
}

static void
ev_begin (Run *r, struct wire_frame *f, guint32 kind, guint32 phase)
{
  wire_begin (f, AIRLOCK_FRAME_EVENT, r->seq);
  wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, kind);
  wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, r->guest_ns + 1000 + r->seq);
  if (phase)
    wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, phase);
}

static void
run_start (Run *r, guint32 phase)
{
  struct wire_frame f;

  ev_begin (r, &f, AIRLOCK_EVENT_WORKLOAD_START, phase);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, 90);
  add_frame (r, &f);
}

/* @result NO_RESULT: the outcome was not seen. */
static void
run_exec (Run *r, guint32 phase, gint64 result, const char *path, const char *note)
{
  struct wire_frame f;

  ev_begin (r, &f, AIRLOCK_EVENT_WORKLOAD_EXEC, phase);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_NSPID, 2);
  if (path)
    wire_put_str (&f, AIRLOCK_TLV_EV_PATH, path);
  if (result != NO_RESULT)
    wire_put_u64 (&f, AIRLOCK_TLV_EV_RESULT, (guint64) result);
  if (note)
    wire_put_str (&f, AIRLOCK_TLV_EV_NOTE, note);
  add_frame (r, &f);
}

static void
run_exit (Run *r, guint32 phase, guint32 status)
{
  struct wire_frame f;

  ev_begin (r, &f, AIRLOCK_EVENT_WORKLOAD_EXIT, phase);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_EXIT_STATUS, status);
  add_frame (r, &f);
}

/* The RESULT of the record with frame @ref: what the emulated call
 * returned. */
static void
run_result (Run *r, guint64 ref, gint64 result)
{
  struct wire_frame f;

  ev_begin (r, &f, AIRLOCK_EVENT_RESULT, 0);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_REF, ref);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_RESULT, (guint64) result);
  add_frame (r, &f);
}

/* A record of a connect (TCP) or sendto (UDP, with @payload when not
 * NULL) to @ip:@port with its @result (NO_RESULT: none seen), and with
 * @on_wire its SYN or datagram in the capture. */
static void
run_attempt_full (Run *r, int family, int protocol, const char *ip, guint16 port,
                  gboolean recorded, gboolean on_wire, gint64 result, GBytes *payload)
{
  gboolean tcp = protocol == IPPROTO_TCP;
  guint8 sa[28] = { 0 };
  gsize salen;
  guint8 sock[12];
  GByteArray *l4, *l3;

  if (family == AF_INET)
    {
      struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (port) };

      g_assert_cmpint (inet_pton (AF_INET, ip, &sin.sin_addr), ==, 1);
      memcpy (sa, &sin, sizeof sin);
      salen = sizeof sin;
    }
  else
    {
      struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons (port) };

      g_assert_cmpint (inet_pton (AF_INET6, ip, &sin6.sin6_addr), ==, 1);
      memcpy (sa, &sin6, sizeof sin6);
      salen = sizeof sin6;
    }
  if (recorded)
    {
      struct wire_frame f;
      guint8 args[48] = { 0 };

      ev_begin (r, &f, AIRLOCK_EVENT_SYSCALL, 0);
      /* The supervisor makes a call itself when it reports its result. */
      wire_put_u32 (&f, AIRLOCK_TLV_EV_ACTION,
                    result != NO_RESULT ? AIRLOCK_ACTION_EMULATE : AIRLOCK_ACTION_CONTINUE);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_SYSCALL, tcp ? NR_CONNECT : NR_SENDTO);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_AUDIT_ARCH, ARCH_X86_64);
      wire_put (&f, AIRLOCK_TLV_EV_ARGS, args, sizeof args);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, 200);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_TID, 200);
      wire_put_str (&f, AIRLOCK_TLV_EV_EXE, "/usr/bin/app");
      wire_le32 (sock, (guint32) family);
      wire_le32 (sock + 4, tcp ? SOCK_STREAM : SOCK_DGRAM);
      wire_le32 (sock + 8, 0);
      wire_put (&f, AIRLOCK_TLV_EV_SOCKET, sock, sizeof sock);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_FD, 3);
      wire_put (&f, AIRLOCK_TLV_EV_ADDR, sa, salen);
      wire_put_u32 (&f, AIRLOCK_TLV_EV_ADDRLEN, (guint32) salen);
      if (payload)
        {
          wire_put (&f, AIRLOCK_TLV_EV_PAYLOAD, g_bytes_get_data (payload, NULL),
                    g_bytes_get_size (payload));
          wire_put_u64 (&f, AIRLOCK_TLV_EV_PAYLOAD_LEN, g_bytes_get_size (payload));
        }
      add_frame (r, &f);
      if (result != NO_RESULT)
        run_result (r, r->seq - 1, result);
    }
  if (!on_wire)
    return;
  l4 = tcp ? cf_tcp (40000, port, 1, 0x02 /* SYN */, NULL, 0)
           : cf_udp (40000, port, "x", 1);
  l3 = family == AF_INET ? cf_ipv4 ("10.0.2.15", ip, (guint8) protocol, l4)
                         : cf_ipv6 ("fec0::15", ip, (guint8) protocol, l4);
  cf_pcap_add (r->pcap, ++r->pcap_sec,
               cf_ethernet (capture_gateway_mac, guest_mac (),
                            family == AF_INET ? 0x0800 : 0x86dd, l3));
}

static void
run_attempt (Run *r, int family, int protocol, const char *ip, guint16 port, gboolean recorded,
             gboolean on_wire)
{
  run_attempt_full (r, family, protocol, ip, port, recorded, on_wire, NO_RESULT, NULL);
}

/* ---- the sinkhole's records, written by its own writer ---- */

/* The run is served by the sinkhole network: it has a record file. */
static void
sink_serve (Run *r)
{
  r->sink = g_string_new (NULL);
}

/* One record of @kind to @ip:@port; @name is the name the address was
 * handed out for, @sni and @host what a TCP client sent. */
static void
sink_record (Run *r, AirlockSinkholeRecordKind kind, const char *ip, guint16 port,
             const char *name, const char *sni, const char *host)
{
  AirlockSinkholeRecord *rec = g_new0 (AirlockSinkholeRecord, 1);
  g_autofree char *line = NULL;

  rec->kind = kind;
  rec->time_us = rec->end_us = r->sink_time_us += 1000;
  rec->family = strchr (ip, ':') ? AF_INET6 : AF_INET;
  g_assert_cmpint (inet_pton (rec->family, ip, rec->address), ==, 1);
  rec->address_text = g_strdup (ip);
  rec->port = port;
  rec->client_port = 40000;
  rec->name = g_strdup (name);
  rec->detected.protocol = sni ? AIRLOCK_SINKHOLE_PROTOCOL_TLS
                           : host ? AIRLOCK_SINKHOLE_PROTOCOL_HTTP
                                  : AIRLOCK_SINKHOLE_PROTOCOL_NONE;
  rec->detected.tls_sni = g_strdup (sni);
  rec->detected.http_host = g_strdup (host);
  if (host)
    {
      rec->detected.http_method = g_strdup ("GET");
      rec->detected.http_path = g_strdup ("/");
    }
  rec->dns.answers = g_ptr_array_new_with_free_func (g_free);
  rec->response = kind == AIRLOCK_SINKHOLE_RECORD_TCP ? g_strdup ("closed") : NULL;
  line = airlock_sinkhole_record_to_json (rec);
  g_string_append_printf (r->sink, "%s\n", line);
  airlock_sinkhole_record_free (rec);
}

/* A DNS query for @name, as a resolver library writes it. */
static GBytes *
dns_query (const char *name)
{
  static const guint8 header[12] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
  static const guint8 a_in[4] = { 0, 1, 0, 1 };
  GByteArray *q = g_byte_array_new ();
  g_auto (GStrv) labels = g_strsplit (name, ".", -1);

  g_byte_array_append (q, header, sizeof header);
  for (guint i = 0; labels[i]; i++)
    {
      guint8 len = (guint8) strlen (labels[i]);

      g_byte_array_append (q, &len, 1);
      g_byte_array_append (q, (const guint8 *) labels[i], len);
    }
  g_byte_array_append (q, (const guint8 *) "", 1);
  g_byte_array_append (q, a_in, sizeof a_in);
  return g_byte_array_free_to_bytes (q);
}

#define SINK_RESOLVER "10.0.2.3"

/* The workload looks @name up: the supervisor's record of the query, the
 * datagram, and the sinkhole's answer, @address. */
static void
sink_lookup (Run *r, const char *name, const char *address)
{
  g_autoptr (GBytes) query = dns_query (name);
  AirlockSinkholeRecord *rec = g_new0 (AirlockSinkholeRecord, 1);
  g_autofree char *line = NULL;

  run_attempt_full (r, AF_INET, IPPROTO_UDP, SINK_RESOLVER, 53, TRUE, TRUE,
                    (gint64) g_bytes_get_size (query), query);
  rec->kind = AIRLOCK_SINKHOLE_RECORD_DNS;
  rec->time_us = rec->end_us = r->sink_time_us += 1000;
  rec->family = AF_INET;
  inet_pton (AF_INET, SINK_RESOLVER, rec->address);
  rec->port = 53;
  rec->client_port = 40001;
  rec->dns_transport = g_strdup ("udp");
  rec->dns.question = g_strdup_printf ("%s.", name);
  rec->dns.qtype = 1;
  rec->dns.answers = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (rec->dns.answers, g_strdup (address));
  line = airlock_sinkhole_record_to_json (rec);
  g_string_append_printf (r->sink, "%s\n", line);
  airlock_sinkhole_record_free (rec);
}

/* The workload connects to @ip:@port (the supervisor's record, the
 * connect returned 0, its SYN in the capture) and the sinkhole accepts the
 * connection, which sends @sni or @host. */
static void
sink_connect (Run *r, const char *ip, guint16 port, const char *name, const char *sni,
              const char *host)
{
  run_attempt_full (r, strchr (ip, ':') ? AF_INET6 : AF_INET, IPPROTO_TCP, ip, port, TRUE, TRUE,
                    0, NULL);
  sink_record (r, AIRLOCK_SINKHOLE_RECORD_TCP, ip, port, name, sni, host);
}

/* The negative controls' phase, every control recorded and on the wire
 * unless it is @skip (by index into probe_controls; -1: none).  On the
 * sinkhole network each call succeeds and the sinkhole records each
 * control too, but @skip_sink. */
static void
run_controls_full (Run *r, int skip_recorded, int skip_wire, int skip_sink)
{
  run_start (r, AIRLOCK_PHASE_CONTROLS);
  run_exec (r, AIRLOCK_PHASE_CONTROLS, 0, "/bin/probe", NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (probe_controls); i++)
    {
      const struct probe_control *pc = &probe_controls[i];
      gboolean tcp = pc->protocol == IPPROTO_TCP;

      run_attempt_full (r, pc->family, pc->protocol, pc->address, pc->port,
                        (int) i != skip_recorded, (int) i != skip_wire,
                        r->sink ? (tcp ? 0 : 25) : NO_RESULT, NULL);
      if (r->sink && (int) i != skip_sink)
        sink_record (r, tcp ? AIRLOCK_SINKHOLE_RECORD_TCP : AIRLOCK_SINKHOLE_RECORD_UDP,
                     pc->address, pc->port, NULL,
                     pc->payload == PROBE_PAYLOAD_TLS ? pc->host_name : NULL,
                     pc->payload == PROBE_PAYLOAD_HTTP ? pc->host_name : NULL);
    }
  run_exit (r, AIRLOCK_PHASE_CONTROLS, 0);
}

static void
run_controls (Run *r, int skip_recorded, int skip_wire)
{
  run_controls_full (r, skip_recorded, skip_wire, -1);
}

/* A clean run: controls, then a workload that starts, runs and exits 0. */
static void
run_clean (Run *r)
{
  run_controls (r, -1, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
}

static AirlockVerdict *
judge (Run *r, const char *policy_text)
{
  g_autoptr (GBytes) pcap = r->has_pcap ? g_bytes_new (r->pcap->data, r->pcap->len) : NULL;
  g_autoptr (GBytes) sink = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autoptr (AirlockRunRecord) record = NULL;
  g_autoptr (AirlockChannel) channel = r->with_channel ? run_channel (r) : NULL;
  AirlockRunRecordInput in = {
    .arch = AIRLOCK_ARCH_AMD64,
    .complete = r->complete,
    .incomplete_reason = r->incomplete_reason,
    .trailer = r->has_trailer ? &r->trailer : NULL,
    .guest_log = r->guest_log,
    .log = r->log,
    .pcap = pcap,
    .pcap_error = "the test made none",
    .timeout_ms = r->timeout_ms,
    .clock_warp = r->clock_warp,
    .guest_time_ms = r->guest_time_ms,
    .channel = channel,
  };

  if (r->sink)
    {
      if (!r->sink_cut)
        {
          g_autofree char *end = airlock_sinkhole_end_line_to_json (r->sink_dropped, r->sink_refused,
                                                                         r->sink_refused ? "frame 9 from the guest has source MAC 52:55:0a:00:02:02, not its NIC's" : NULL);

          g_string_append_printf (r->sink, "%s\n", end);
        }
      sink = g_bytes_new (r->sink->str, r->sink->len);
      in.sinkhole_records = sink;
    }
  in.sinkhole_error = r->sink_error;
  if (policy_text)
    {
      g_autoptr (GError) error = NULL;

      policy = airlock_policy_parse (policy_text, strlen (policy_text), "test", &error);
      g_assert_no_error (error);
    }
  record = airlock_run_record_new (&in);
  return airlock_verdict_compute (record, policy);
}

/* The verdict is @kind and, unless @needle is NULL, one of its reasons
 * contains @needle. */
static void
assert_verdict (const AirlockVerdict *v, AirlockVerdictKind kind, const char *needle)
{
  gboolean found = needle == NULL;

  for (guint i = 0; i < v->reasons->len; i++)
    {
      g_test_message ("reason: %s", (const char *) v->reasons->pdata[i]);
      if (needle && strstr (v->reasons->pdata[i], needle))
        found = TRUE;
    }
  g_assert_cmpstr (airlock_verdict_kind_to_string (v->kind), ==,
                   airlock_verdict_kind_to_string (kind));
  if (!found)
    g_error ("no reason contains '%s'", needle);
}

/* ---- the rows ---- */

typedef struct {
  const char *path;
  void (*build) (Run *r);
  const char *policy;
  AirlockVerdictKind kind;
  const char *needle;            /* a reason must contain it (NULL: no check) */
  gboolean time_limit;           /* verdict->ended_by_time_limit */
  const char *observation;       /* verdict->observation contains it (NULL: no check) */
} Row;

static void
build_clean (Run *r)
{
  run_clean (r);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* guest/reaper.c: a named User whose /etc/passwd is over its bound;
 * the supervisor gives up before the workload exists, init sends its
 * reason as a LOG frame and an error trailer. */
static void
build_setup_failed (Run *r)
{
  run_controls (r, -1, -1);
  g_ptr_array_add (r->guest_log,
                   g_strdup ("the workload's setup failed: user 'app': cannot read the image's "
                             "/etc/passwd: it is over 256 KiB"));
  r->trailer.end_reason = AIRLOCK_END_ERROR;
}

static void
build_exec_enoent (Run *r)
{
  run_controls (r, -1, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, -ENOENT, "/usr/bin/env",
            "cannot execute '/usr/bin/env': No such file or directory");
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 127 << 8);
}

static void
build_exec_chdir_failed (Run *r)
{
  run_controls (r, -1, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, -ENOENT, "/app/run",
            "cannot change to the working directory '/nowhere': No such file or directory");
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 126 << 8);
}

static void
build_exec_unseen (Run *r)
{
  run_controls (r, -1, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, NO_RESULT, "/usr/bin/app",
            "the time limit ended the run before the entrypoint's execve was seen");
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 9);
  r->trailer.end_reason = AIRLOCK_END_TIMEOUT;
}

static void
build_no_exec_record (Run *r)
{
  run_controls (r, -1, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_never_started (Run *r)
{
  run_controls (r, -1, -1);
}

static void
build_timeout (Run *r)
{
  run_clean (r);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 9);   /* SIGKILL */
  r->trailer.end_reason = AIRLOCK_END_TIMEOUT;
}

static void
build_error_mid_run (Run *r)
{
  run_clean (r);
  g_ptr_array_add (r->guest_log, g_strdup ("the seccomp listener failed: Bad file descriptor"));
  r->trailer.end_reason = AIRLOCK_END_ERROR;
}

static void
build_error_no_log (Run *r)
{
  run_controls (r, -1, -1);
  r->trailer.end_reason = AIRLOCK_END_ERROR;
}

/* The workload watched from its start for @guest_ms of guest time and
 * @wall_ms of the host's, then killed (its exit event): the frames go
 * through a channel, whose receipt times give the wall time. */
static void
build_watched (Run *r, guint64 guest_ms, gint64 wall_ms, guint32 end_reason)
{
  r->with_channel = TRUE;
  run_clean (r);
  r->guest_ns += guest_ms * 1000000;
  r->wall_us += wall_ms * 1000;
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 9);
  r->trailer.end_reason = end_reason;
}

static void
build_real_timeout (Run *r)
{
  build_watched (r, 30000, 30400, AIRLOCK_END_TIMEOUT);
}

/* A warped clock: six hours of guest time passed while the workload slept,
 * in 41 s of ours; the guest's own limit ended it. */
static void
build_warp_guest_limit (Run *r)
{
  r->clock_warp = TRUE;
  r->guest_time_ms = 6 * 3600 * 1000;
  build_watched (r, 6 * 3600 * 1000, 41000, AIRLOCK_END_TIMEOUT);
}

/* A warped clock whose workload kept the CPU busy: the host's wall-time
 * limit came first. */
static void
build_warp_wall_limit (Run *r)
{
  r->clock_warp = TRUE;
  r->guest_time_ms = 6 * 3600 * 1000;
  build_watched (r, 7560 * 1000, 30000, AIRLOCK_END_WALL_LIMIT);
}

/* Only the host stops a run by the wall's time, and only a warped one. */
static void
build_wall_limit_unwarped (Run *r)
{
  build_watched (r, 30000, 30000, AIRLOCK_END_WALL_LIMIT);
}

/* The time bomb: an hour's sleep, then the connect, all seen in seconds. */
static void
build_warp_time_bomb (Run *r)
{
  r->clock_warp = TRUE;
  r->guest_time_ms = 6 * 3600 * 1000;
  r->with_channel = TRUE;
  run_clean (r);
  r->guest_ns += 3600ull * 1000 * 1000000;
  r->wall_us += 3500 * 1000;
  run_attempt (r, AF_INET, IPPROTO_TCP, "192.0.2.1", 80, TRUE, TRUE);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_unknown_end (Run *r)
{
  build_clean (r);
  r->trailer.end_reason = 7;
}

static void
build_incomplete (Run *r)
{
  build_clean (r);
  r->complete = FALSE;
  r->incomplete_reason = "sequence gap: expected frame 5, got 7";
  r->has_trailer = FALSE;
}

/* The kprobe recorder (an arm64 guest: docs/supervisor.md) saw sends it
 * could not record: they went ahead, so the records are not the whole. */
static void
build_records_lost (Run *r)
{
  build_clean (r);
  r->trailer.has_records_lost = TRUE;
  r->trailer.records_lost = 3;
}

/* The same recorder with nothing lost: the run is as whole as any. */
static void
build_none_lost (Run *r)
{
  build_clean (r);
  r->trailer.has_records_lost = TRUE;
  r->trailer.records_lost = 0;
}

static void
build_no_trailer (Run *r)
{
  build_clean (r);
  r->has_trailer = FALSE;
}

static void
build_no_controls (Run *r)
{
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_control_not_recorded (Run *r)
{
  run_controls (r, 3, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_control_not_captured (Run *r)
{
  run_controls (r, -1, 8);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_no_capture (Run *r)
{
  build_clean (r);
  r->has_pcap = FALSE;
}

static void
build_egress (Run *r)
{
  run_clean (r);
  run_attempt (r, AF_INET6, IPPROTO_TCP, "2001:db8:1::443", 443, TRUE, TRUE);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_unattributed (Run *r)
{
  run_clean (r);
  run_attempt (r, AF_INET, IPPROTO_UDP, "198.51.100.7", 9999, FALSE, TRUE);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* airlock's own probe did not start: the guest image is broken. */
static void
build_probe_missing (Run *r)
{
  run_start (r, AIRLOCK_PHASE_CONTROLS);
  run_exec (r, AIRLOCK_PHASE_CONTROLS, -ENOENT, "/bin/probe",
            "cannot execute '/bin/probe': No such file or directory");
  run_exit (r, AIRLOCK_PHASE_CONTROLS, 127 << 8);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* A compromised guest kernel: a broadcast datagram sent with QEMU's MAC
 * (it would count as QEMU's own if only the MAC were looked at). */
static void
build_spoofed_mac (Run *r)
{
  static const guint8 bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

  run_clean (r);
  cf_pcap_add (r->pcap, ++r->pcap_sec,
               cf_ethernet (bcast, capture_gateway_mac, 0x0800,
                            cf_ipv4 ("10.0.2.2", "255.255.255.255", IPPROTO_UDP,
                                     cf_udp (68, 67, "x", 1))));
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* A frame of an EtherType nothing in the guest's network speaks. */
static void
build_unknown_ethertype (Run *r)
{
  GByteArray *payload = g_byte_array_new ();

  run_clean (r);
  cf_zeros (payload, 46);
  cf_pcap_add (r->pcap, ++r->pcap_sec,
               cf_ethernet (capture_gateway_mac, guest_mac (), 0x88b5, payload));
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* A non-zero exit is not doubt: the image ran, and was watched. */
static void
build_exit_nonzero (Run *r)
{
  run_clean (r);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 3 << 8);
}

/* ---- on the sinkhole network ---- */

/* The controls, seen by the supervisor, the capture and the sinkhole, and
 * a workload that starts. */
static void
run_sink_clean (Run *r)
{
  sink_serve (r);
  run_controls (r, -1, -1);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
}

static void
build_sink_clean (Run *r)
{
  run_sink_clean (r);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* The update check: pypi.org looked up, then HTTPS to the address
 * the sinkhole handed out for it, asking for pypi.org. */
static void
build_sink_pypi (Run *r)
{
  run_sink_clean (r);
  sink_lookup (r, "pypi.org", "198.18.3.7");
  sink_connect (r, "198.18.3.7", 443, "pypi.org.", "pypi.org", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* The same over IPv6, from an AAAA answer. */
static void
build_sink_pypi_v6 (Run *r)
{
  run_sink_clean (r);
  sink_lookup (r, "pypi.org", "2001:db8:a1::37");
  sink_connect (r, "2001:db8:a1::37", 443, "pypi.org.", "pypi.org", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_sink_evil (Run *r)
{
  run_sink_clean (r);
  sink_lookup (r, "evil.org", "198.18.5.5");
  sink_connect (r, "198.18.5.5", 443, "evil.org.", "evil.org", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* Domain fronting as an image would try it: resolve a name the policy
 * admits, then ask that address for another. */
static void
build_sink_sni_fronted (Run *r)
{
  run_sink_clean (r);
  sink_lookup (r, "allowed.org", "198.18.7.7");
  sink_connect (r, "198.18.7.7", 443, "allowed.org.", "evil.org", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_sink_host_fronted (Run *r)
{
  run_sink_clean (r);
  sink_lookup (r, "allowed.org", "198.18.7.7");
  sink_connect (r, "198.18.7.7", 80, "allowed.org.", NULL, "Evil.org:8080");
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* The supervisor saw the connection made and the capture its SYN; the
 * sinkhole has no record of it. */
static void
build_sink_missed_connection (Run *r)
{
  run_sink_clean (r);
  run_attempt_full (r, AF_INET, IPPROTO_TCP, "198.51.100.7", 8443, TRUE, TRUE, 0, NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_sink_missed_datagram (Run *r)
{
  run_sink_clean (r);
  run_attempt_full (r, AF_INET, IPPROTO_UDP, "198.51.100.7", 9999, TRUE, TRUE, 1, NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* A connect to the guest's own address: made, and it never left the
 * guest, so the sinkhole could not see it. */
static void
build_sink_local_connection (Run *r)
{
  run_sink_clean (r);
  run_attempt_full (r, AF_INET, IPPROTO_TCP, "10.0.2.15", 8080, TRUE, FALSE, 0, NULL);
  run_attempt_full (r, AF_INET, IPPROTO_TCP, "0.0.0.0", 8080, TRUE, FALSE, 0, NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* Connects the sinkhole need not have seen: one whose outcome the
 * supervisor never saw (the run ended during it), one still in progress
 * (it may be given up before the sinkhole accepts it). */
static void
build_sink_unfinished_connects (Run *r)
{
  run_sink_clean (r);
  run_attempt_full (r, AF_INET, IPPROTO_TCP, "198.51.100.7", 8443, TRUE, TRUE, NO_RESULT, NULL);
  run_attempt_full (r, AF_INET6, IPPROTO_TCP, "2001:db8::7", 8443, TRUE, TRUE, -EINPROGRESS,
                    NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* The negative control dns-udp (IPv4) reached the supervisor and the
 * capture but not the sinkhole's records: the datagram makes the records
 * partial (inconclusive), and the control is named as not taken in. */
static void
build_sink_udp_control_missed (Run *r)
{
  sink_serve (r);
  run_controls_full (r, -1, -1, 0);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* The negative control discard-tcp (IPv4) reached the capture but not the
 * sinkhole's records. */
static void
build_sink_control_missed (Run *r)
{
  sink_serve (r);
  run_controls_full (r, -1, -1, 2);
  run_start (r, AIRLOCK_PHASE_WORKLOAD);
  run_exec (r, AIRLOCK_PHASE_WORKLOAD, 0, "/usr/bin/app", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

/* The sinkhole took a connection and a datagram in that no supervisor
 * record explains (and no frame of the capture: the sinkhole alone says
 * so). */
static void
build_sink_unattributed_tcp (Run *r)
{
  run_sink_clean (r);
  sink_lookup (r, "pypi.org", "198.18.3.7");
  sink_record (r, AIRLOCK_SINKHOLE_RECORD_TCP, "198.18.3.7", 443, "pypi.org.", "pypi.org", NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_sink_unattributed_udp (Run *r)
{
  run_sink_clean (r);
  sink_record (r, AIRLOCK_SINKHOLE_RECORD_UDP, "2001:db8::7", 4433, NULL, NULL, NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

static void
build_sink_cut (Run *r)
{
  build_sink_clean (r);
  r->sink_cut = TRUE;
}

static void
build_sink_dropped (Run *r)
{
  build_sink_clean (r);
  r->sink_dropped = 3;
}

/* A workload that writes frames past its kernel under the network's MAC. */
static void
build_sink_forged_frames (Run *r)
{
  build_sink_clean (r);
  r->sink_refused = 2;
}

/* The sinkhole served the run, and its records are gone (it died). */
static void
build_sink_lost (Run *r)
{
  build_sink_clean (r);
  g_string_free (r->sink, TRUE);
  r->sink = NULL;
  r->sink_error = "the sinkhole network failed: killed";
}

static void
build_sink_damaged (Run *r)
{
  build_sink_clean (r);
  g_string_append (r->sink, "{\"kind\":\"tcp\"}\n");
}

/* No sinkhole: the same connection has no name, whatever its SNI. */
static void
build_no_sink_connect (Run *r)
{
  run_clean (r);
  run_attempt_full (r, AF_INET, IPPROTO_TCP, "198.18.3.7", 443, TRUE, TRUE, 0, NULL);
  run_exit (r, AIRLOCK_PHASE_WORKLOAD, 0);
}

#define PYPI_POLICY "allow udp any port 53 dns=pypi.org\nallow tcp any port 443 host=pypi.org\n"

static const Row rows[] = {
  { "/verdict/clean-run-passes", build_clean, NULL, AIRLOCK_VERDICT_PASS, NULL, FALSE,
    "observed until the workload ended (exited 0)" },
  { "/verdict/nonzero-exit-still-passes", build_exit_nonzero, NULL, AIRLOCK_VERDICT_PASS, NULL,
    FALSE, "exited 3" },
  { "/verdict/setup-failure-is-inconclusive", build_setup_failed, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the workload never started: the workload's setup failed: "
    "user 'app': cannot read the image's /etc/passwd: it is over 256 KiB", FALSE, NULL },
  { "/verdict/error-without-reason-is-inconclusive", build_error_no_log, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the workload never started: a trusted guest program failed",
    FALSE, NULL },
  { "/verdict/exec-enoent-is-inconclusive", build_exec_enoent, NULL, AIRLOCK_VERDICT_INCONCLUSIVE,
    "the entrypoint could not be executed: /usr/bin/env: ENOENT", FALSE, NULL },
  { "/verdict/entry-setup-failure-is-inconclusive", build_exec_chdir_failed, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "cannot change to the working directory '/nowhere'", FALSE, NULL },
  { "/verdict/exec-unseen-is-inconclusive", build_exec_unseen, NULL, AIRLOCK_VERDICT_INCONCLUSIVE,
    "the entrypoint was not seen to start: the time limit ended the run", TRUE, NULL },
  { "/verdict/no-exec-record-is-inconclusive", build_no_exec_record, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the evidence has no record of its execve", FALSE, NULL },
  { "/verdict/never-started-is-inconclusive", build_never_started, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the workload never started", FALSE, NULL },
  { "/verdict/timeout-passes-and-says-so", build_timeout, NULL, AIRLOCK_VERDICT_PASS, NULL, TRUE,
    "ended by the time limit (30 s): what the workload would do later was not seen" },
  { "/verdict/timeout-says-guest-and-wall-time", build_real_timeout, NULL, AIRLOCK_VERDICT_PASS,
    NULL, TRUE, "observed 30 s of guest time in 30.4 s; ended by the time limit (30 s)" },
  { "/verdict/warp/guest-limit-says-so", build_warp_guest_limit, NULL, AIRLOCK_VERDICT_PASS,
    NULL, TRUE, "observed 6 h of guest time in 41 s; ended by the guest-time limit (6 h)" },
  { "/verdict/warp/wall-limit-says-so", build_warp_wall_limit, NULL, AIRLOCK_VERDICT_PASS,
    NULL, TRUE, "observed 2.1 h of guest time in 30 s; ended by the wall-time limit (30 s)" },
  { "/verdict/wall-limit-without-warp-is-inconclusive", build_wall_limit_unwarped, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the guest's clock was not warped", FALSE, NULL },
  { "/verdict/warp/time-bomb-fails", build_warp_time_bomb, NULL, AIRLOCK_VERDICT_FAIL,
    "egress not admitted by the policy", FALSE,
    "observed until the workload ended (exited 0), 1 h of guest time in 3.5 s" },
  { "/verdict/error-mid-run-is-inconclusive", build_error_mid_run, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "failed during the run, so it was not watched to its end: the "
    "seccomp listener failed", FALSE, NULL },
  { "/verdict/unknown-end-reason-is-inconclusive", build_unknown_end, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "end reason 7", FALSE, NULL },
  { "/verdict/incomplete-channel-is-inconclusive", build_incomplete, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the evidence is incomplete: sequence gap", FALSE, NULL },
  { "/verdict/no-trailer-is-inconclusive", build_no_trailer, NULL, AIRLOCK_VERDICT_INCONCLUSIVE,
    "the evidence has no trailer", FALSE, NULL },
  { "/verdict/records-lost-is-inconclusive", build_records_lost, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the recorder lost 3 record(s) of sends, connects or their outcomes", FALSE, NULL },
  { "/verdict/none-lost-passes", build_none_lost, NULL, AIRLOCK_VERDICT_PASS, NULL, FALSE,
    "observed until the workload ended (exited 0)" },
  { "/verdict/no-controls-is-inconclusive", build_no_controls, NULL, AIRLOCK_VERDICT_INCONCLUSIVE,
    "the negative controls did not run", FALSE, NULL },
  { "/verdict/probe-not-executed-is-inconclusive", build_probe_missing, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the negative controls' probe could not be executed: /bin/probe: "
    "ENOENT", FALSE, NULL },
  { "/verdict/control-not-recorded-fails", build_control_not_recorded, NULL, AIRLOCK_VERDICT_FAIL,
    "negative control discard-udp (inet/dgram/udp 192.0.2.9:9) was not seen by the supervisor",
    FALSE, NULL },
  { "/verdict/control-not-captured-fails", build_control_not_captured, NULL, AIRLOCK_VERDICT_FAIL,
    "negative control discard-tcp", FALSE, NULL },
  { "/verdict/no-capture-is-inconclusive", build_no_capture, NULL, AIRLOCK_VERDICT_INCONCLUSIVE,
    "there is no packet capture to check against: the test made none", FALSE, NULL },
  { "/verdict/egress-not-admitted-fails", build_egress, NULL, AIRLOCK_VERDICT_FAIL,
    "egress not admitted by the policy", FALSE, NULL },
  { "/verdict/egress-admitted-passes", build_egress, "allow tcp 2001:db8:1::443 port 443\n",
    AIRLOCK_VERDICT_PASS, NULL, FALSE, NULL },
  { "/verdict/spoofed-mac-fails", build_spoofed_mac, NULL, AIRLOCK_VERDICT_FAIL,
    "capture anomaly (foreign-mac, 1 frame(s)): frame 13 ", FALSE, NULL },
  { "/verdict/unknown-ethertype-fails", build_unknown_ethertype, NULL, AIRLOCK_VERDICT_FAIL,
    "capture anomaly (non-ip, 1 frame(s)): frame 13 ", FALSE, NULL },
  { "/verdict/unattributed-flow-fails", build_unattributed, NULL, AIRLOCK_VERDICT_FAIL,
    "unattributed egress inet/dgram/udp 198.51.100.7:9999", FALSE, NULL },
  { "/verdict/sinkhole/clean-run-passes", build_sink_clean, NULL, AIRLOCK_VERDICT_PASS, NULL,
    FALSE, "observed until the workload ended" },
  { "/verdict/sinkhole/host-rule-admits-its-name", build_sink_pypi, PYPI_POLICY,
    AIRLOCK_VERDICT_PASS, NULL, FALSE, NULL },
  { "/verdict/sinkhole/host-rule-admits-its-name-v6", build_sink_pypi_v6, PYPI_POLICY,
    AIRLOCK_VERDICT_PASS, NULL, FALSE, NULL },
  { "/verdict/sinkhole/host-rule-admits-no-other-name", build_sink_evil, PYPI_POLICY,
    AIRLOCK_VERDICT_FAIL, "egress not admitted by the policy: connect emulate inet/stream/tcp "
    "198.18.5.5:443 (evil.org, SNI evil.org) by /usr/bin/app (pid 200)", FALSE, NULL },
  { "/verdict/sinkhole/host-rule-needs-the-sinkhole", build_no_sink_connect, PYPI_POLICY,
    AIRLOCK_VERDICT_FAIL, "egress not admitted by the policy: connect emulate inet/stream/tcp "
    "198.18.3.7:443 by", FALSE, NULL },
  { "/verdict/sinkhole/sni-other-than-its-name-fails", build_sink_sni_fronted,
    "allow udp any port 53\nallow tcp any port 443 host=allowed.org\n", AIRLOCK_VERDICT_FAIL,
    "connect emulate inet/stream/tcp 198.18.7.7:443 (allowed.org, SNI evil.org) by /usr/bin/app (pid "
    "200): it asked for SNI 'evil.org' at the address handed out for 'allowed.org', and no rule "
    "admits it under that name", FALSE, NULL },
  { "/verdict/sinkhole/http-host-admitted-too-passes-noted", build_sink_host_fronted,
    "allow udp any port 53\nallow tcp any port 80 host=*.org\nallow tcp any port 80 "
    "host=allowed.org\n", AIRLOCK_VERDICT_PASS, "noted, not judged: connect emulate inet/stream/tcp "
    "198.18.7.7:80 (allowed.org, Host Evil.org) by /usr/bin/app (pid 200) asked for Host "
    "'Evil.org' at the address handed out for 'allowed.org'", FALSE, NULL },
  { "/verdict/sinkhole/http-host-not-admitted-fails", build_sink_host_fronted,
    "allow udp any port 53\nallow tcp any port 80 host=allowed.org\n", AIRLOCK_VERDICT_FAIL,
    "it asked for Host 'Evil.org' at the address handed out for 'allowed.org'", FALSE, NULL },
  { "/verdict/sinkhole/sni-admitted-too-passes-noted", build_sink_sni_fronted,
    "allow udp any port 53\nallow tcp any port 443 host=allowed.org\n"
    "allow tcp any port 443 host=evil.org\n", AIRLOCK_VERDICT_PASS,
    "noted, not judged: connect emulate inet/stream/tcp 198.18.7.7:443 (allowed.org, SNI evil.org)",
    FALSE, NULL },
  { "/verdict/sinkhole/address-rule-passes-noted", build_sink_sni_fronted,
    "allow udp any port 53\nallow tcp 198.18.0.0/15 port 443\n", AIRLOCK_VERDICT_PASS,
    "the policy admits it under each of its names", FALSE, NULL },
  { "/verdict/sinkhole/connection-it-missed-fails", build_sink_missed_connection,
    "allow any any\n", AIRLOCK_VERDICT_FAIL, "connection missing from the sinkhole's records: "
    "connect emulate inet/stream/tcp 198.51.100.7:8443 by /usr/bin/app (pid 200) was established", FALSE,
    NULL },
  { "/verdict/sinkhole/udp-control-it-missed-is-named", build_sink_udp_control_missed, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "negative control dns-udp (inet/dgram/udp 192.0.2.53:53) was not taken "
    "in by the sinkhole", FALSE, NULL },
  { "/verdict/sinkhole/control-it-missed-fails", build_sink_control_missed, NULL,
    AIRLOCK_VERDICT_FAIL, "the sinkhole recorded no connection to inet/stream/tcp 192.0.2.9:9",
    FALSE, NULL },
  { "/verdict/sinkhole/datagram-it-missed-is-inconclusive", build_sink_missed_datagram,
    "allow any any\n", AIRLOCK_VERDICT_INCONCLUSIVE,
    "the sinkhole recorded no datagram to inet/dgram/udp 198.51.100.7:9999", FALSE, NULL },
  { "/verdict/sinkhole/local-connection-needs-no-record", build_sink_local_connection,
    "allow any any\n", AIRLOCK_VERDICT_PASS, NULL, FALSE, NULL },
  { "/verdict/sinkhole/unfinished-connect-needs-no-record", build_sink_unfinished_connects,
    "allow any any\n", AIRLOCK_VERDICT_PASS, NULL, FALSE, NULL },
  { "/verdict/sinkhole/connection-no-record-explains-fails", build_sink_unattributed_tcp,
    PYPI_POLICY, AIRLOCK_VERDICT_FAIL, "unattributed egress inet/stream/tcp 198.18.3.7:443 "
    "(pypi.org, SNI pypi.org): the sinkhole accepted 1 connection(s) that no supervisor record "
    "explains", FALSE, NULL },
  { "/verdict/sinkhole/datagram-no-record-explains-fails", build_sink_unattributed_udp, NULL,
    AIRLOCK_VERDICT_FAIL, "unattributed egress inet6/dgram/udp [2001:db8::7]:4433: the sinkhole "
    "received 1 datagram(s)", FALSE, NULL },
  { "/verdict/sinkhole/cut-records-are-inconclusive", build_sink_cut, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the sinkhole's records are incomplete: the sinkhole's record "
    "file ends before its final line", FALSE, NULL },
  { "/verdict/sinkhole/dropped-records-are-inconclusive", build_sink_dropped, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the sinkhole's records are not whole: 3 record(s)", FALSE,
    NULL },
  { "/verdict/sinkhole/forged-frames-fail", build_sink_forged_frames, NULL,
    AIRLOCK_VERDICT_FAIL, "the guest sent 2 frame(s) under a source MAC that is not its NIC's "
    "(refused by the sinkhole): frame 9 from the guest", FALSE, NULL },
  { "/verdict/sinkhole/lost-records-are-inconclusive", build_sink_lost, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the sinkhole network failed: killed: what the guest's network "
    "saw cannot be judged", FALSE, NULL },
  { "/verdict/sinkhole/damaged-records-are-inconclusive", build_sink_damaged, NULL,
    AIRLOCK_VERDICT_INCONCLUSIVE, "the sinkhole's records were refused: line ", FALSE, NULL },
};

static void
test_row (gconstpointer data)
{
  const Row *row = data;
  g_autoptr (AirlockVerdict) v = NULL;
  Run r;

  run_init (&r);
  row->build (&r);
  v = judge (&r, row->policy);
  assert_verdict (v, row->kind, row->needle);
  g_assert_cmpint (v->ended_by_time_limit, ==, row->time_limit);
  if (row->observation)
    {
      g_assert_nonnull (v->observation);
      g_assert_nonnull (strstr (v->observation, row->observation));
    }
  run_clear (&r);
}

/* The same record judged twice gives the same verdict: nothing but the
 * record and the policy goes in. */
static void
test_pure (void)
{
  g_autoptr (AirlockVerdict) a = NULL;
  g_autoptr (AirlockVerdict) b = NULL;
  g_autoptr (AirlockRunRecord) record = NULL;
  g_autoptr (GBytes) pcap = NULL;
  Run r;

  run_init (&r);
  build_exec_enoent (&r);
  pcap = g_bytes_new (r.pcap->data, r.pcap->len);
  {
    AirlockRunRecordInput in = {
      .arch = AIRLOCK_ARCH_ARM64, .complete = TRUE, .trailer = &r.trailer,
      .guest_log = r.guest_log, .log = r.log, .pcap = pcap, .timeout_ms = 1000,
    };

    record = airlock_run_record_new (&in);
  }
  /* The record keeps what it needs: the run's own copies may go. */
  run_clear (&r);
  a = airlock_verdict_compute (record, NULL);
  b = airlock_verdict_compute (record, NULL);
  g_assert_cmpint (a->kind, ==, b->kind);
  g_assert_cmpuint (a->reasons->len, ==, b->reasons->len);
  for (guint i = 0; i < a->reasons->len; i++)
    g_assert_cmpstr (a->reasons->pdata[i], ==, b->reasons->pdata[i]);
  g_assert_nonnull (record->workload_exec);
  g_assert_cmpint (record->workload_exec->result, ==, -ENOENT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    g_test_add_data_func (rows[i].path, &rows[i], test_row);
  g_test_add_func ("/verdict/record/pure-and-self-contained", test_pure);
  return g_test_run ();
}
