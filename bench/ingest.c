/* bench/ingest: how fast the host takes in evidence, against the floor of
 * hashing the same bytes.
 *
 * A synthetic evidence stream shaped like a busy workload's (a hello, the
 * workload's start, then connect and sendto records with their socket, sockaddr, exe and argv, a
 * RESULT per connect, DNS payloads on every tenth send, a heartbeat per
 * hundred records, the trailer) is fed to the channel in 64 KiB reads, as
 * the VM's reader does: frame checks, the SHA-256 chain and the event log
 * that decodes every record.  The floor is SHA-256 alone over the same
 * bytes (libcrypto's, what the chain uses) in the same run, GLib's
 * portable one for reference.  A second row adds
 * what a bundle does after the run: the events as JSON lines.
 *
 *   bench/ingest [--mib N] [--rounds N]
 *
 * Prints MB/s (median of the rounds) and the ratio to the floor.  Not a
 * test: it fails only when the stream does not end complete. */
#include "config.h"

#include "stats.h"
#include "summary.h"
#include "evidence/channel.h"
#include "evidence/event.h"
#include "protocol.h"
#include "wire.h"

#include <errno.h>
#include <openssl/evp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const guint8 nonce[AIRLOCK_NONCE_LEN] = { 0x42 };

typedef struct {
  GByteArray *bytes;
  guint64 seq, heartbeats, events;
  struct wire_frame f;
} Stream;

static struct wire_frame *
begin (Stream *s, guint8 type)
{
  wire_begin (&s->f, type, s->seq);
  return &s->f;
}

static void
end (Stream *s)
{
  size_t n = wire_end (&s->f);

  g_assert (n > 0);
  g_byte_array_append (s->bytes, s->f.bytes, (guint) n);
  s->seq++;
}

static void
who (struct wire_frame *f, guint64 seq)
{
  static const char argv[] = "/usr/bin/curl\0-s\0https://example.com/\0";

  wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_SYSCALL);
  wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, 2000000000ull + seq * 1000);
  wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 300 + (guint32) (seq % 7));
  wire_put_u32 (f, AIRLOCK_TLV_EV_TID, 300 + (guint32) (seq % 7));
  wire_put_u32 (f, AIRLOCK_TLV_EV_PPID, 290);
  wire_put_u32 (f, AIRLOCK_TLV_EV_NSPID, 2 + (guint32) (seq % 7));
  wire_put_u32 (f, AIRLOCK_TLV_EV_UID, 1000);
  wire_put_u32 (f, AIRLOCK_TLV_EV_GID, 1000);
  wire_put_str (f, AIRLOCK_TLV_EV_EXE, "/usr/bin/curl");
  wire_put (f, AIRLOCK_TLV_EV_ARGV, argv, sizeof argv - 1);
}

static void
put_call (struct wire_frame *f, guint32 action, guint32 nr, guint64 fd, guint32 type)
{
  guint8 args[48] = { 0 };
  guint8 sock[12];

  wire_le64 (args, fd);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ACTION, action);
  wire_put_u32 (f, AIRLOCK_TLV_EV_SYSCALL, nr);
  wire_put_u32 (f, AIRLOCK_TLV_EV_AUDIT_ARCH, 0xc000003e); /* AUDIT_ARCH_X86_64 */
  wire_put (f, AIRLOCK_TLV_EV_ARGS, args, sizeof args);
  wire_put_u32 (f, AIRLOCK_TLV_EV_FD, (guint32) fd);
  wire_le32 (sock, AF_INET);
  wire_le32 (sock + 4, type);
  wire_le32 (sock + 8, type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP);
  wire_put (f, AIRLOCK_TLV_EV_SOCKET, sock, sizeof sock);
  wire_put_u64 (f, AIRLOCK_TLV_EV_SOCK_ID, 9000 + fd);
}

static void
put_sin (struct wire_frame *f, guint32 addr_host_order, guint16 port)
{
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (port),
                             .sin_addr.s_addr = htonl (addr_host_order) };

  wire_put (f, AIRLOCK_TLV_EV_ADDR, &sin, sizeof sin);
  wire_put_u32 (f, AIRLOCK_TLV_EV_ADDRLEN, sizeof sin);
}

/* A DNS query for "api-N.example.com" (A, IN). */
static gsize
dns_query (guint8 *out, guint64 n)
{
  g_autofree char *label = g_strdup_printf ("api-%" G_GUINT64_FORMAT, n % 1000);
  gsize len = 0;

  memset (out, 0, 12);
  out[0] = (guint8) (n >> 8);
  out[1] = (guint8) n;
  out[2] = 0x01;   /* RD */
  out[5] = 1;      /* one question */
  len = 12;
  out[len++] = (guint8) strlen (label);
  memcpy (out + len, label, strlen (label));
  len += strlen (label);
  out[len++] = 7;
  memcpy (out + len, "example", 7);
  len += 7;
  out[len++] = 3;
  memcpy (out + len, "com", 3);
  len += 3;
  out[len++] = 0;
  out[len++] = 0;
  out[len++] = 1;  /* A */
  out[len++] = 0;
  out[len++] = 1;  /* IN */
  return len;
}

static GBytes *
make_stream (gsize target_bytes, guint64 *ret_events)
{
  Stream s = { .bytes = g_byte_array_new () };
  guint64 n = 0;

  {
    struct wire_frame *f = begin (&s, AIRLOCK_FRAME_HELLO);
    static const guint8 build_id[20] = { 1 };

    wire_put (f, AIRLOCK_TLV_NONCE, nonce, AIRLOCK_NONCE_LEN);
    wire_put_str (f, AIRLOCK_TLV_ARCH, "x86_64");
    wire_put_str (f, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0-bench");
    wire_put (f, AIRLOCK_TLV_BUILD_ID, build_id, sizeof build_id);
    wire_put_u64 (f, AIRLOCK_TLV_UPTIME_NS, 1);
    wire_put_u32 (f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, EBUSY);
    end (&s);
  }
  {
    /* The workload's phase begins: its records follow. */
    struct wire_frame *f = begin (&s, AIRLOCK_FRAME_EVENT);

    wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_WORKLOAD_START);
    wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, 1000000000ull);
    wire_put_u32 (f, AIRLOCK_TLV_EV_PID, 290);
    wire_put_u32 (f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
    end (&s);
    s.events++;
  }
  while (s.bytes->len < target_bytes)
    {
      struct wire_frame *f;

      if (n % 3 == 0)
        {
          /* connect, emulated, then its RESULT */
          guint64 call_seq = s.seq;

          f = begin (&s, AIRLOCK_FRAME_EVENT);
          who (f, s.seq);
          put_call (f, AIRLOCK_ACTION_EMULATE, 42, 3 + n % 50, SOCK_STREAM);
          put_sin (f, 0xc6336450 + (guint32) (n % 200), 443);   /* 198.51.100.80+ */
          end (&s);
          s.events++;
          f = begin (&s, AIRLOCK_FRAME_EVENT);
          wire_put_u32 (f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_RESULT);
          wire_put_u64 (f, AIRLOCK_TLV_EV_TIME_NS, 2000000000ull + s.seq * 1000);
          wire_put_u64 (f, AIRLOCK_TLV_EV_REF, call_seq);
          wire_put_u64 (f, AIRLOCK_TLV_EV_RESULT, (guint64) (gint64) -111);
          end (&s);
          s.events++;
        }
      else
        {
          /* sendto a resolver; every tenth with its DNS query */
          guint8 q[64];
          gsize qlen = dns_query (q, n);

          f = begin (&s, AIRLOCK_FRAME_EVENT);
          who (f, s.seq);
          put_call (f, AIRLOCK_ACTION_EMULATE, 44, 60 + n % 50, SOCK_DGRAM);
          put_sin (f, 0x0a000203, 53);   /* 10.0.2.3 */
          wire_put_u64 (f, AIRLOCK_TLV_EV_PAYLOAD_LEN, qlen);
          if (n % 10 == 1)
            wire_put (f, AIRLOCK_TLV_EV_PAYLOAD, q, qlen);
          end (&s);
          s.events++;
        }
      n++;
      if (n % 100 == 0)
        {
          wire_put_u64 (begin (&s, AIRLOCK_FRAME_HEARTBEAT), AIRLOCK_TLV_UPTIME_NS,
                        1000000000ull * (s.heartbeats + 1));
          end (&s);
          s.heartbeats++;
        }
    }
  {
    struct wire_frame *f = begin (&s, AIRLOCK_FRAME_TRAILER);

    wire_put_u64 (f, AIRLOCK_TLV_FRAME_COUNT, s.seq);
    wire_put_u64 (f, AIRLOCK_TLV_HEARTBEAT_COUNT, s.heartbeats);
    wire_put_u64 (f, AIRLOCK_TLV_EVENT_COUNT, s.events);
    wire_put_u32 (f, AIRLOCK_TLV_EXIT_STATUS, 0);
    wire_put_u32 (f, AIRLOCK_TLV_END_REASON, AIRLOCK_END_COMPLETED);
    end (&s);
  }
  *ret_events = s.events;
  return g_byte_array_free_to_bytes (s.bytes);
}

static void
on_frame (AirlockChannel *channel, const AirlockFrame *frame, gpointer user_data)
{
  AirlockEventLog *log = user_data;
  g_autoptr (GError) error = NULL;

  if (frame->type == AIRLOCK_FRAME_EVENT && !airlock_event_log_add_frame (log, frame, &error))
    {
      fprintf (stderr, "bench/ingest: the synthetic stream is wrong: %s\n", error->message);
      exit (1);
    }
}

/* One ingestion of @stream as the VM's reader does it; with @jsonl, the
 * events as a bundle writes them.  Returns seconds. */
static double
ingest (GBytes *stream, gboolean jsonl, guint64 *ret_events)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (stream, &len);
  g_autoptr (AirlockChannel) channel = airlock_channel_new (nonce, 200, 5000);
  g_autoptr (AirlockEventLog) log = airlock_event_log_new ();
  gint64 t0 = g_get_monotonic_time (), t1;

  airlock_channel_set_frame_func (channel, on_frame, log);
  for (gsize off = 0; off < len; off += 65536)
    {
      gint64 now = g_get_monotonic_time ();

      airlock_channel_feed (channel, data + off, MIN ((gsize) 65536, len - off), now, now);
    }
  airlock_channel_close (channel, g_get_monotonic_time ());
  if (jsonl)
    {
      GPtrArray *events = airlock_event_log_get_events (log);
      GString *out = g_string_sized_new (len * 2);

      for (guint i = 0; i < events->len; i++)
        {
          g_autofree char *line = airlock_event_to_json (AIRLOCK_ARCH_AMD64, events->pdata[i]);

          g_string_append (out, line);
          g_string_append_c (out, '\n');
        }
      g_string_free (out, TRUE);
    }
  t1 = g_get_monotonic_time ();
  if (airlock_channel_get_state (channel) != AIRLOCK_CHANNEL_COMPLETE)
    {
      fprintf (stderr, "bench/ingest: the stream did not end complete: %s\n",
               airlock_channel_get_reason (channel));
      exit (1);
    }
  *ret_events = airlock_event_log_get_events (log)->len;
  return (double) (t1 - t0) / 1e6;
}

/* The floor: libcrypto's SHA-256 (the CPU's SHA extensions, what the
 * chain uses), one pass over the bytes. */
static double
hash_floor (GBytes *stream)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (stream, &len);
  guint8 md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  gint64 t0 = g_get_monotonic_time ();

  if (!EVP_Digest (data, len, md, &md_len, EVP_sha256 (), NULL))
    {
      fprintf (stderr, "bench/ingest: libcrypto's SHA-256 failed\n");
      exit (1);
    }
  return (double) (g_get_monotonic_time () - t0) / 1e6;
}

/* GLib's portable SHA-256, for reference. */
static double
hash_glib (GBytes *stream)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (stream, &len);
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  gint64 t0 = g_get_monotonic_time ();

  for (gsize off = 0; off < len; off += 65536)
    g_checksum_update (sum, data + off, (gssize) MIN ((gsize) 65536, len - off));
  (void) g_checksum_get_string (sum);
  return (double) (g_get_monotonic_time () - t0) / 1e6;
}

int
main (int argc, char **argv)
{
  int mib = 64, rounds = 5;
  gboolean no_jsonl = FALSE;
  GOptionEntry entries[] = {
    { "no-jsonl", 0, 0, G_OPTION_ARG_NONE, &no_jsonl, "skip the events.jsonl row (for profiling)", NULL },
    { "mib", 0, 0, G_OPTION_ARG_INT, &mib, "size of the synthetic stream (default 64)", "N" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "measurements of each (default 5)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- evidence ingestion vs SHA-256");
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) stream = NULL;
  g_autoptr (GArray) floor_s = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) ingest_s = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) jsonl_s = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) glib_s = g_array_new (FALSE, FALSE, sizeof (double));
  guint64 events = 0, decoded = 0;
  double mb, f, i, j;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error) || mib <= 0 || rounds <= 0)
    {
      fprintf (stderr, "bench/ingest: %s\n", error ? error->message : "--mib and --rounds must be positive");
      return 2;
    }
  stream = make_stream ((gsize) mib << 20, &events);
  mb = (double) g_bytes_get_size (stream) / 1e6;
  (void) ingest (stream, FALSE, &decoded);   /* warm-up */
  for (int r = 0; r < rounds; r++)
    {
      /* Interleaved, so machine noise hits floor and measurement alike. */
      double a = hash_floor (stream), b = ingest (stream, FALSE, &decoded),
             c = no_jsonl ? -1 : ingest (stream, TRUE, &decoded), d = hash_glib (stream);

      g_array_append_val (floor_s, a);
      g_array_append_val (glib_s, d);
      g_array_append_val (ingest_s, b);
      g_array_append_val (jsonl_s, c);
    }
  f = stats_of (floor_s, 0).median;
  i = stats_of (ingest_s, 0).median;
  j = stats_of (jsonl_s, 0).median;
  printf ("evidence stream: %.1f MB, %" G_GUINT64_FORMAT " records (%" G_GUINT64_FORMAT
          " decoded), %d rounds, median\n", mb, events, decoded, rounds);
  printf ("%-44s %10s %10s %8s\n", "", "seconds", "MB/s", "vs floor");
  printf ("%-44s %10.3f %10.1f %8s\n", "floor: SHA-256 of the bytes (libcrypto)", f, mb / f, "1.00x");
  printf ("%-44s %10.3f %10.1f %7.2fx\n", "SHA-256 of the bytes (GLib)", stats_of (glib_s, 0).median,
          mb / stats_of (glib_s, 0).median, stats_of (glib_s, 0).median / f);
  printf ("%-44s %10.3f %10.1f %7.2fx\n", "ingest: frames + chain + decoded events", i, mb / i, i / f);
  printf ("%-44s %10.3f %10.1f %7.2fx\n", "ingest + events.jsonl (a bundle's)", j, mb / j, j / f);
  printf ("target: ingest at least 200 MB/s: %s\n", mb / i >= 200 ? "met" : "NOT met");
  {
    BenchSummaryRow row = {
      .bench = "ingest",
      .what = "evidence decode + chain + events",
      .value = mb / i,
      .unit = "MB/s",
      .floor = mb / f,
      .floor_what = "SHA-256 of the bytes",
      .target = 200,
      .target_is_value = TRUE,
      .higher_is_better = TRUE,
    };

    bench_summary_add (&row);
  }
  return 0;
}
