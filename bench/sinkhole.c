/* bench/sinkhole: what the sinkhole (airlock-sinkhole, sinkhole/)
 * costs one connection and one DNS query, on the host alone: no VM
 * (issue 20, "connection setup cost in the sinkhole").
 *
 * The benchmark starts the process as lib/vm/sinkhole-proc.c does (with a
 * --serve fixture for example.com:80), speaks to it as QEMU's stream
 * netdev does (a 4-byte big-endian length, then an Ethernet frame; the
 * frames hand-built with tests/unit/capture-frames.h, as
 * tests/unit/test-sinkhole-proc.c does) and times, per exchange:
 *
 *   tcp  SYN → SYN-ACK ("setup"); then ACK, an HTTP request to
 *        example.com's address on port 80, the fixture's reply and the
 *        server's FIN, our FIN → its ACK ("exchange", from the SYN: what
 *        a guest waits for); and then the server done with the connection:
 *        for the sinkhole, the connection's record written ("to record")
 *   dns  a UDP query for a name not asked before → its answer, and the
 *        server done: for the sinkhole, the query's record written
 *
 * and, once per run before those, what every gate pays once: the process
 * spawned to its "ready" (namespace, tap, nftables, listeners), next to
 * the same program's --help, and QEMU's end closed to the process gone.
 *
 * The exchanges' floor, measured in the same run (sinkhole-floor.c): the
 * same frames written to a tap device in this process's own network
 * namespace (made at start: as root a new network namespace, otherwise one
 * inside a new user namespace, as the sinkhole makes its own), with the
 * sinkhole's addresses and MAC, where the same kernel's TCP/IP answers and
 * a plain listener does the server's part (a thread for TCP: accept, read
 * the request head, write the same reply, shut down, read to the end,
 * close; one for DNS: a canned A answer).  No relay, no capture, no
 * nftables redirect, no detection, no records.
 * The client side (building frames, checksums, reading) is the same code
 * for both, so the ratio is what the sinkhole adds: two hops through its
 * process per frame, the capture, the redirect, detection, the fixture
 * lookup and the record.  A tap rather than loopback TCP because loopback
 * would swap our hand-built client for the kernel's and take the tap, the
 * neighbour table and the netdev path out of the floor only.
 *
 * Floor and sinkhole exchanges alternate (which goes first alternates
 * too), so the machine's noise falls on both; the ratio is the median of
 * each pair's ratio.  Needs root, or unprivileged user namespaces (exit
 * 77 when neither works, so meson counts the benchmark as skipped).  Not a
 * test: it fails (exit 1) only when an exchange does not happen as it
 * should (no answer, the wrong reply, records that do not match).
 *
 *   bench/sinkhole [--exchanges N] [--warmup N] [--starts N] [--verbose]
 *
 * Prints median and p90 per exchange in µs and the ratio to the floor;
 * --verbose also each pair's times, on stderr, as they are taken (an order
 * effect, one side always slower when it goes second, shows there). */
#define _GNU_SOURCE
#include "config.h"

#include "bench-common.h"
#include "capture-frames.h"
#include "net/guest-net.h"
#include "sinkhole/sinkhole.h"
#include "sinkhole-floor.h"
#include "stats.h"
#include "summary.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_CANNOT_RUN 77

/* One step of an exchange waits this long before the run fails. */
#define STEP_TIMEOUT_US (5 * G_USEC_PER_SEC)
/* Stream netdev frames, as the sinkhole bounds them. */
#define FRAME_MAX 65535
/* The sinkhole keeps at most AIRLOCK_SINKHOLE_RECORDS_MAX records and
 * hands out AIRLOCK_SINKHOLE_NAMES_MAX names in a run: two records and
 * one name per round, and example.com's. */
#define EXCHANGES_MAX 5000

static const char http_request[] = BENCH_NET_HTTP_REQUEST;
static const char fixture_reply[] = BENCH_NET_HTTP_REPLY;

static guint8 guest_mac[6];

/* One way to the kernel's stack: the floor's tap, or the sinkhole's socket
 * (the far end of which is its tap). */
typedef struct {
  const char *what;
  int fd;                 /* the tap, or our end of QEMU's socket */
  gboolean stream;        /* frames carry QEMU's 4-byte length */
  GByteArray *in;         /* stream: bytes read, not yet a frame */
  /* Readable when the server may have finished another exchange: the
   * floor's eventfd, the sinkhole's record file's inotify watch. */
  int done_fd;
  int records_fd;         /* sinkhole: the record file, read as it grows */
  guint64 done;           /* exchanges the server finished */
  guint64 expected;       /* … and the ones we made */
} Path;

typedef struct {
  double setup;           /* µs, SYN → SYN-ACK */
  double exchange;        /* µs, SYN → our FIN acknowledged: all the guest waits for */
  double recorded;        /* µs, SYN → the server done with the connection */
  double dns;             /* µs, query → answer and the server done */
} Sample;

static double
now_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static G_GNUC_PRINTF (2, 3) G_GNUC_NORETURN void
die (int status, const char *fmt, ...)
{
  va_list ap;

  fputs ("bench/sinkhole: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (status);
}

static gboolean
write_all (int fd, const guint8 *data, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd p = { .fd = fd, .events = POLLOUT };
          if (poll (&p, 1, 1000) <= 0)
            return FALSE;
          continue;
        }
      if (n <= 0)
        return FALSE;
      data += n;
      len -= (gsize) n;
    }
  return TRUE;
}

/* ---- frames both ways ---- */

static void
path_send (Path *p, GByteArray *frame)
{
  gboolean ok;

  if (p->stream)
    {
      g_autoptr (GByteArray) b = g_byte_array_sized_new (4 + frame->len);

      cf_be32 (b, frame->len);
      cf_raw (b, frame->data, frame->len);
      ok = write_all (p->fd, b->data, b->len);
    }
  else
    ok = write (p->fd, frame->data, frame->len) == (ssize_t) frame->len;
  if (!ok)
    die (EXIT_FAILED, "%s: cannot send a frame: %s", p->what, g_strerror (errno));
  g_byte_array_unref (frame);
}

static GByteArray *
guest_ipv4 (const char *dst, guint8 protocol, GByteArray *l4)
{
  GByteArray *f = cf_ethernet (bench_net_gateway_mac, guest_mac, 0x0800,
                               cf_ipv4 (BENCH_NET_GUEST_ADDR, dst, protocol, l4));

  cf_fix_checksums (f);
  return f;
}

static GByteArray *
tcp_segment (guint16 sport, guint32 seq, guint32 ack, guint8 flags, const void *data, gsize len)
{
  GByteArray *b = cf_tcp (sport, BENCH_NET_SERVER_PORT, seq, flags, data, len);

  /* cf_tcp writes ack 1: the real one goes in. */
  b->data[8] = (guint8) (ack >> 24);
  b->data[9] = (guint8) (ack >> 16);
  b->data[10] = (guint8) (ack >> 8);
  b->data[11] = (guint8) ack;
  return b;
}

static guint32
be32_at (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
}

/* The kernel asks for the guest's MAC now and then (a neighbour entry
 * going stale): the guest answers, as its own kernel would. */
static void
answer_arp (Path *p, const GByteArray *f)
{
  static const guint8 guest_ip[4] = { 10, 0, 2, 15 };
  char sender[INET_ADDRSTRLEN];

  if (f->len < 42 || f->data[12] != 0x08 || f->data[13] != 0x06 || f->data[21] != 1
      || memcmp (f->data + 38, guest_ip, 4) != 0)
    return;
  inet_ntop (AF_INET, f->data + 28, sender, sizeof sender);
  path_send (p, cf_ethernet (f->data + 6, guest_mac, 0x0806,
                             cf_arp (2, guest_mac, BENCH_NET_GUEST_ADDR, sender)));
}

/* The next frame from the network by @deadline (now_us ()), or NULL. */
static GByteArray *
path_next_frame (Path *p, double deadline)
{
  for (;;)
    {
      struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
      guint8 buf[4 + FRAME_MAX];
      double left;
      ssize_t n;

      if (p->stream && p->in->len >= 4)
        {
          gsize flen = be32_at (p->in->data);

          if (flen > FRAME_MAX)
            die (EXIT_FAILED, "%s: a frame of %zu bytes from the sinkhole", p->what, flen);
          if (p->in->len >= 4 + flen)
            {
              GByteArray *f = g_byte_array_sized_new ((guint) flen);

              g_byte_array_append (f, p->in->data + 4, (guint) flen);
              g_byte_array_remove_range (p->in, 0, (guint) (4 + flen));
              return f;
            }
        }
      n = read (p->fd, buf, sizeof buf);
      if (n > 0)
        {
          if (p->stream)
            {
              g_byte_array_append (p->in, buf, (guint) n);
              continue;
            }
          return g_byte_array_append (g_byte_array_sized_new ((guint) n), buf, (guint) n);
        }
      if (n == 0)
        die (EXIT_FAILED, "%s: the network's end closed", p->what);
      if (errno != EAGAIN && errno != EINTR)
        die (EXIT_FAILED, "%s: cannot read a frame: %s", p->what, g_strerror (errno));
      left = deadline - now_us ();
      if (left <= 0)
        return NULL;
      (void) poll (&pfd, 1, (int) (left / 1000) + 1);
    }
}

typedef struct {
  GByteArray *frame;      /* owns what the pointers below point into */
  guint32 seq, ack;
  guint8 flags;
  const guint8 *payload;
  gsize len;
} Segment;

/* The next IPv4 @protocol packet to the guest's @dport from @sport by
 * @deadline; other frames are passed over (ARP requests answered).  For
 * TCP, its sequence and acknowledgment numbers and flags; @ret_seg->payload
 * is the TCP or UDP payload.  FALSE when none came in time. */
static gboolean
next_to_guest (Path *p, guint8 protocol, guint16 sport, guint16 dport, double deadline,
               Segment *ret_seg)
{
  GByteArray *f;

  while ((f = path_next_frame (p, deadline)))
    {
      const guint8 *ip = f->data + 14;
      gsize ihl, total, hlen;
      const guint8 *l4;

      answer_arp (p, f);
      if (f->len < 14 + 20 + 8 || f->data[12] != 0x08 || f->data[13] != 0x00
          || memcmp (f->data, guest_mac, 6) != 0 || ip[9] != protocol)
        goto next;
      ihl = (gsize) (ip[0] & 0x0f) * 4;
      total = ((gsize) ip[2] << 8) | ip[3];
      if (ihl < 20 || total < ihl + 8 || 14 + total > f->len)
        goto next;
      l4 = ip + ihl;
      if ((((guint16) l4[0] << 8) | l4[1]) != sport || (((guint16) l4[2] << 8) | l4[3]) != dport)
        goto next;
      hlen = 8;
      if (protocol == IPPROTO_TCP)
        {
          if (total < ihl + 20 || (hlen = (gsize) (l4[12] >> 4) * 4) < 20 || total < ihl + hlen)
            goto next;
          ret_seg->seq = be32_at (l4 + 4);
          ret_seg->ack = be32_at (l4 + 8);
          ret_seg->flags = l4[13];
        }
      ret_seg->frame = f;
      ret_seg->payload = l4 + hlen;
      ret_seg->len = total - ihl - hlen;
      return TRUE;
    next:
      g_byte_array_unref (f);
    }
  return FALSE;
}

/* How many exchanges the server has finished: the floor's listeners count
 * them on an eventfd; the sinkhole writes a record line for each. */
static void
path_count_done (Path *p)
{
  if (p->records_fd < 0)
    {
      guint64 v;

      if (read (p->done_fd, &v, sizeof v) == sizeof v)
        p->done += v;
      return;
    }
  for (;;)
    {
      guint8 buf[65536];
      ssize_t n = read (p->records_fd, buf, sizeof buf);

      if (n <= 0)
        break;
      for (ssize_t i = 0; i < n; i++)
        p->done += buf[i] == '\n';
    }
  {
    /* Drain the watch: the file is read to its end above. */
    guint8 ev[4096];
    while (read (p->done_fd, ev, sizeof ev) > 0)
      ;
  }
}

static gboolean
path_wait_done (Path *p, double deadline)
{
  p->expected++;
  for (;;)
    {
      struct pollfd pfd = { .fd = p->done_fd, .events = POLLIN };
      double left;

      path_count_done (p);
      if (p->done >= p->expected)
        return TRUE;
      left = deadline - now_us ();
      if (left <= 0)
        return FALSE;
      (void) poll (&pfd, 1, (int) (left / 1000) + 1);
    }
}

/* ---- the exchanges ---- */

/* ARP for the gateway: the kernel learns the guest's MAC from it, as the
 * guest's first frame teaches the sinkhole's. */
static void
arp_exchange (Path *p)
{
  double deadline = now_us () + STEP_TIMEOUT_US;
  GByteArray *f;

  path_send (p, cf_ethernet (capture_broadcast_mac, guest_mac, 0x0806,
                             cf_arp (1, guest_mac, BENCH_NET_GUEST_ADDR, BENCH_NET_GATEWAY_ADDR)));
  while ((f = path_next_frame (p, deadline)))
    {
      gboolean is_reply = f->len >= 42 && f->data[12] == 0x08 && f->data[13] == 0x06
                          && f->data[21] == 2
                          && memcmp (f->data + 6, bench_net_gateway_mac, 6) == 0;

      g_byte_array_unref (f);
      if (is_reply)
        return;
    }
  die (EXIT_FAILED, "%s: no ARP reply for the gateway " BENCH_NET_GATEWAY_ADDR, p->what);
}

static void
dns_exchange (Path *p, guint16 sport, guint16 id, const char *name, double *ret_us)
{
  GByteArray *q = cf_dns_query (id, name);
  double t0 = now_us (), deadline = t0 + STEP_TIMEOUT_US;
  Segment seg = { 0 };
  guint16 answers;

  path_send (p, guest_ipv4 (BENCH_NET_DNS_ADDR, IPPROTO_UDP,
                            cf_udp (sport, 53, q->data, q->len)));
  g_byte_array_unref (q);
  for (;;)
    {
      if (!next_to_guest (p, IPPROTO_UDP, 53, sport, deadline, &seg))
        die (EXIT_FAILED, "%s: no answer to the DNS query for '%s'", p->what, name);
      if (seg.len >= 12 && ((guint16) seg.payload[0] << 8 | seg.payload[1]) == id)
        break;
      g_byte_array_unref (seg.frame);
    }
  /* QR, NOERROR, one answer. */
  answers = (guint16) (seg.payload[6] << 8 | seg.payload[7]);
  if (!(seg.payload[2] & 0x80) || (seg.payload[3] & 0x0f) != 0 || answers != 1)
    die (EXIT_FAILED, "%s: the answer for '%s' is not one address (flags %02x%02x, %u answers)",
         p->what, name, seg.payload[2], seg.payload[3], answers);
  g_byte_array_unref (seg.frame);
  if (!path_wait_done (p, deadline))
    die (EXIT_FAILED, "%s: the DNS query for '%s' was answered, but the server never finished it",
         p->what, name);
  *ret_us = now_us () - t0;
}

/* One connection as a client whose kernel is as simple as can be: no TCP
 * options, every segment of the server's acknowledged at once. */
static void
tcp_exchange (Path *p, guint16 sport, guint32 iss, double *ret_setup_us, double *ret_exchange_us,
              double *ret_recorded_us)
{
  double t0 = now_us (), deadline = t0 + STEP_TIMEOUT_US;
  g_autoptr (GByteArray) got = g_byte_array_new ();
  guint32 our_next = iss + 1 + sizeof http_request - 1;
  guint32 their_next;
  gboolean fin = FALSE;
  Segment seg = { 0 };

  path_send (p, guest_ipv4 (BENCH_NET_SERVER_ADDR, IPPROTO_TCP,
                            tcp_segment (sport, iss, 0, CF_SYN, NULL, 0)));
  if (!next_to_guest (p, IPPROTO_TCP, BENCH_NET_SERVER_PORT, sport, deadline, &seg))
    die (EXIT_FAILED, "%s: no SYN-ACK to port %u", p->what, sport);
  *ret_setup_us = now_us () - t0;
  if ((seg.flags & (CF_SYN | CF_ACK | CF_RST)) != (CF_SYN | CF_ACK) || seg.ack != iss + 1)
    die (EXIT_FAILED, "%s: the answer to port %u's SYN has flags %02x, ack %u (want a SYN-ACK, "
         "ack %u)", p->what, sport, seg.flags, seg.ack, iss + 1);
  their_next = seg.seq + 1;
  g_byte_array_unref (seg.frame);

  path_send (p, guest_ipv4 (BENCH_NET_SERVER_ADDR, IPPROTO_TCP,
                            tcp_segment (sport, iss + 1, their_next, CF_ACK, NULL, 0)));
  path_send (p, guest_ipv4 (BENCH_NET_SERVER_ADDR, IPPROTO_TCP,
                            tcp_segment (sport, iss + 1, their_next, CF_ACK | CF_PSH, http_request,
                                         sizeof http_request - 1)));
  while (!fin)
    {
      if (!next_to_guest (p, IPPROTO_TCP, BENCH_NET_SERVER_PORT, sport, deadline, &seg))
        die (EXIT_FAILED, "%s: port %u: the server's reply stopped after %u bytes", p->what, sport,
             got->len);
      if (seg.flags & CF_RST)
        die (EXIT_FAILED, "%s: port %u: the server reset the connection", p->what, sport);
      if (seg.seq == their_next)
        {
          g_byte_array_append (got, seg.payload, (guint) seg.len);
          their_next += (guint32) seg.len;
          if (seg.flags & CF_FIN)
            {
              fin = TRUE;
              their_next++;
            }
        }
      g_byte_array_unref (seg.frame);
      if (!fin && seg.len > 0)
        path_send (p, guest_ipv4 (BENCH_NET_SERVER_ADDR, IPPROTO_TCP,
                                  tcp_segment (sport, our_next, their_next, CF_ACK, NULL, 0)));
    }
  if (got->len != sizeof fixture_reply - 1 || memcmp (got->data, fixture_reply, got->len) != 0)
    die (EXIT_FAILED, "%s: port %u: the reply is not the fixture (%u bytes)", p->what, sport,
         got->len);

  path_send (p, guest_ipv4 (BENCH_NET_SERVER_ADDR, IPPROTO_TCP,
                            tcp_segment (sport, our_next, their_next, CF_FIN | CF_ACK, NULL, 0)));
  for (;;)
    {
      gboolean last;

      if (!next_to_guest (p, IPPROTO_TCP, BENCH_NET_SERVER_PORT, sport, deadline, &seg))
        die (EXIT_FAILED, "%s: port %u: our FIN was never acknowledged", p->what, sport);
      last = (seg.flags & CF_ACK) && seg.ack == our_next + 1;
      g_byte_array_unref (seg.frame);
      if (last)
        break;
    }
  *ret_exchange_us = now_us () - t0;
  if (!path_wait_done (p, deadline))
    die (EXIT_FAILED, "%s: port %u: the connection ended, but the server never finished it",
         p->what, sport);
  *ret_recorded_us = now_us () - t0;
}

/* ---- the sinkhole process ---- */

typedef struct {
  char *dir;
  char *socket_path, *pcap_path, *records_path, *stderr_path, *reply_path;
  GSubprocess *proc;
} Sinkhole;

/* The run's files, removed however the benchmark ends (die () exits). */
static Sinkhole *files_to_remove;

static void
remove_files (void)
{
  Sinkhole *sh = files_to_remove;

  if (!sh)
    return;
  {
    const char *files[] = { sh->socket_path, sh->pcap_path, sh->records_path, sh->stderr_path,
                            sh->reply_path };

    for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
      if (files[i])
        g_unlink (files[i]);
  }
  g_rmdir (sh->dir);
  files_to_remove = NULL;
}

/* A directory of its own for one process's files, and the fixture. */
static void
sinkhole_prepare (Sinkhole *sh)
{
  g_autoptr (GError) error = NULL;

  sh->dir = g_dir_make_tmp ("airlock-bench-sinkhole-XXXXXX", &error);
  if (!sh->dir)
    die (EXIT_FAILED, "cannot make a temporary directory: %s", error->message);
  sh->socket_path = g_build_filename (sh->dir, "net.sock", NULL);
  sh->pcap_path = g_build_filename (sh->dir, "net.pcap", NULL);
  sh->records_path = g_build_filename (sh->dir, "records.jsonl", NULL);
  sh->stderr_path = g_build_filename (sh->dir, "stderr", NULL);
  sh->reply_path = g_build_filename (sh->dir, "reply.http", NULL);
  files_to_remove = sh;
  if (strlen (sh->socket_path) >= sizeof ((struct sockaddr_un *) NULL)->sun_path)
    die (EXIT_FAILED, "the socket path '%s' is too long for a unix socket: set a shorter TMPDIR",
         sh->socket_path);
  if (!g_file_set_contents (sh->reply_path, fixture_reply, sizeof fixture_reply - 1, &error))
    die (EXIT_FAILED, "%s", error->message);
}

/* Starts the process as lib/vm/sinkhole-proc.c does and waits for its
 * "ready": its network namespace, tap, nftables and listeners are made. */
static void
sinkhole_spawn (Sinkhole *sh, const char *program)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocessLauncher) l = NULL;
  g_autofree char *serve = NULL;
  char ready[7] = "";
  gsize got = 0;

  serve = g_strdup_printf ("--serve=" BENCH_NET_SERVER_NAME ":%u=%s", BENCH_NET_SERVER_PORT,
                           sh->reply_path);

  /* Our stdin pipe is its parent's life line, as lib/vm/sinkhole-proc.c's is. */
  l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_subprocess_launcher_set_stderr_file_path (l, sh->stderr_path);
  sh->proc = g_subprocess_launcher_spawn (l, &error, program, "--socket", sh->socket_path,
                                          "--pcap", sh->pcap_path, "--records", sh->records_path,
                                          serve, NULL);
  if (!sh->proc)
    die (EXIT_FAILED, "cannot start '%s': %s", program, error->message);
  g_input_stream_read_all (g_subprocess_get_stdout_pipe (sh->proc), ready, 6, &got, NULL, NULL);
  if (got != 6 || memcmp (ready, "ready\n", 6) != 0)
    {
      g_autofree char *text = NULL;

      g_subprocess_wait (sh->proc, NULL, NULL);
      g_file_get_contents (sh->stderr_path, &text, NULL, NULL);
      die (text && strstr (text, "namespace") ? EXIT_CANNOT_RUN : EXIT_FAILED,
           "the sinkhole did not start: %s",
           text && *text ? g_strstrip (text) : "(nothing on stderr)");
    }
}

/* Our end of QEMU's socket, non-blocking. */
static int
sinkhole_connect (Sinkhole *sh)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  strcpy (sun.sun_path, sh->socket_path);
  if (fd < 0 || connect (fd, (struct sockaddr *) &sun, sizeof sun) < 0
      || fcntl (fd, F_SETFL, O_NONBLOCK) < 0)
    die (EXIT_FAILED, "cannot connect to the sinkhole's socket '%s': %s", sh->socket_path,
         g_strerror (errno));
  return fd;
}

static void
sinkhole_start (Sinkhole *sh, const char *program, Path *p)
{
  sinkhole_prepare (sh);
  sinkhole_spawn (sh, program);
  p->fd = sinkhole_connect (sh);
  p->records_fd = open (sh->records_path, O_RDONLY | O_CLOEXEC);
  p->done_fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  if (p->records_fd < 0 || p->done_fd < 0
      || inotify_add_watch (p->done_fd, sh->records_path, IN_MODIFY) < 0)
    die (EXIT_FAILED, "cannot watch the record file '%s': %s", sh->records_path,
         g_strerror (errno));
}

/* QEMU's end closes, as when the VM stops: the process writes its final
 * line and exits 0.  Then its records must be the exchanges made. */
static void
sinkhole_finish (Sinkhole *sh, Path *p, guint64 connections, guint64 queries)
{
  /* The record names the fixture as --serve was written ("fixture
   * example.com:80", since main's a585477) or with the name's final dot
   * (before it). */
  g_autofree char *fixture = g_strdup_printf ("fixture %s:%u", BENCH_NET_SERVER_NAME,
                                              BENCH_NET_SERVER_PORT);
  g_autofree char *fixture_dot = g_strdup_printf ("fixture %s.:%u", BENCH_NET_SERVER_NAME,
                                                  BENCH_NET_SERVER_PORT);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (AirlockSinkholeLog) log = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;
  guint64 tcp = 0, dns = 0;

  close (p->fd);
  p->fd = -1;
  if (!g_subprocess_wait (sh->proc, NULL, &error) || !g_subprocess_get_if_exited (sh->proc)
      || g_subprocess_get_exit_status (sh->proc) != 0)
    die (EXIT_FAILED, "the sinkhole did not end with status 0 after QEMU's end closed");
  if (!g_file_get_contents (sh->records_path, &text, &len, &error))
    die (EXIT_FAILED, "%s", error->message);
  bytes = g_bytes_new_take (g_steal_pointer (&text), len);
  log = airlock_sinkhole_log_new_from_bytes (bytes, &error);
  if (!log)
    die (EXIT_FAILED, "the sinkhole's records do not read back: %s", error->message);
  for (guint i = 0; i < log->records->len; i++)
    {
      const AirlockSinkholeRecord *r = log->records->pdata[i];

      if (r->kind == AIRLOCK_SINKHOLE_RECORD_TCP && r->port == BENCH_NET_SERVER_PORT
          && r->detected.protocol == AIRLOCK_SINKHOLE_PROTOCOL_HTTP
          && (g_strcmp0 (r->response, fixture) == 0 || g_strcmp0 (r->response, fixture_dot) == 0)
          && r->bytes_in == sizeof http_request - 1 && r->bytes_out == sizeof fixture_reply - 1)
        tcp++;
      else if (r->kind == AIRLOCK_SINKHOLE_RECORD_DNS && r->dns.rcode == 0
               && r->dns.answers->len == 1)
        dns++;
    }
  if (!log->complete || log->records_dropped || log->frames_refused || tcp != connections
      || dns != queries || log->records->len != connections + queries)
    die (EXIT_FAILED, "the sinkhole's records are not the exchanges made: %u records, %"
         G_GUINT64_FORMAT " connections served the fixture (of %" G_GUINT64_FORMAT "), %"
         G_GUINT64_FORMAT " queries answered (of %" G_GUINT64_FORMAT "), %s, %" G_GUINT64_FORMAT
         " dropped, %" G_GUINT64_FORMAT " frames refused", log->records->len, tcp, connections,
         dns, queries, log->complete ? "complete" : "incomplete", log->records_dropped,
         log->frames_refused);
  close (p->records_fd);
  close (p->done_fd);
}

static void
sinkhole_clear (Sinkhole *sh)
{
  remove_files ();
  g_clear_object (&sh->proc);
  g_free (sh->dir);
  g_free (sh->socket_path);
  g_free (sh->pcap_path);
  g_free (sh->records_path);
  g_free (sh->stderr_path);
  g_free (sh->reply_path);
}

/* ---- the process's start and end ---- */

typedef struct {
  double floor;           /* ms, `airlock-sinkhole --help`: spawn → exited */
  double start;           /* ms, spawn → "ready" */
  double end;             /* ms, QEMU's end closed → exited (final line, files synced, exit) */
} StartSample;

/* The floor of a start: the same program loaded, its options parsed and
 * its help printed, without making its network. */
static double
help_once (const char *program)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GSubprocess) proc = NULL;
  double t0 = now_us ();

  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, program, "--help", NULL);
  if (!proc || !g_subprocess_wait_check (proc, NULL, &error))
    die (EXIT_FAILED, "'%s --help': %s", program, error->message);
  return (now_us () - t0) / 1000;
}

/* What every run pays once: the process started to its "ready" (before
 * the domain is defined), and after QEMU has gone, its end. */
static void
start_once (const char *program, StartSample *s)
{
  Sinkhole sh = { 0 };
  double t0;
  int fd;

  sinkhole_prepare (&sh);
  t0 = now_us ();
  sinkhole_spawn (&sh, program);
  s->start = (now_us () - t0) / 1000;
  fd = sinkhole_connect (&sh);
  t0 = now_us ();
  close (fd);
  if (!g_subprocess_wait (sh.proc, NULL, NULL) || !g_subprocess_get_if_exited (sh.proc)
      || g_subprocess_get_exit_status (sh.proc) != 0)
    {
      g_autofree char *text = NULL;

      g_file_get_contents (sh.stderr_path, &text, NULL, NULL);
      die (EXIT_FAILED, "the sinkhole did not end with status 0 after QEMU's end closed "
           "(wait status %d): %s", g_subprocess_get_status (sh.proc),
           text && *text ? g_strstrip (text) : "(nothing on stderr)");
    }
  s->end = (now_us () - t0) / 1000;
  sinkhole_clear (&sh);
}

/* ---- numbers ---- */

static double
sample_at (GArray *samples, guint i, gsize offset)
{
  return *(const double *) (samples->data + (gsize) i * g_array_get_element_size (samples)
                            + offset);
}

/* The @q quantile of one column (nearest rank), or -1 without samples. */
static double
quantile (GArray *samples, gsize offset, double q)
{
  g_autoptr (GArray) v = g_array_sized_new (FALSE, FALSE, sizeof (double), samples->len);
  guint rank;

  for (guint i = 0; i < samples->len; i++)
    {
      double x = sample_at (samples, i, offset);
      g_array_append_val (v, x);
    }
  if (v->len == 0)
    return -1;
  g_array_sort (v, stats_compare_doubles);
  rank = (guint) (q * v->len + 0.999999);
  return g_array_index (v, double, CLAMP (rank, 1, v->len) - 1);
}

/* Median of each pair's sinkhole/floor ratio: the pair ran back to back,
 * so a slow spell of the machine mostly hits both. */
static double
paired_ratio (GArray *sinkhole, GArray *floor, gsize offset)
{
  g_autoptr (GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; i < floor->len && i < sinkhole->len; i++)
    {
      double f = sample_at (floor, i, offset), s = sample_at (sinkhole, i, offset);
      double r = (f > 0 && s > 0) ? s / f : -1;

      g_array_append_val (ratios, r);
    }
  return stats_of (ratios, 0).median;
}

typedef struct {
  const char *label;      /* in the table */
  const char *what;       /* in scripts/bench's summary */
  gsize offset;
} Column;

static const Column columns[] = {
  { "tcp setup: SYN to SYN-ACK", "TCP setup: SYN → SYN-ACK", G_STRUCT_OFFSET (Sample, setup) },
  { "tcp exchange: SYN to last ACK", "TCP exchange: SYN … fixture … FIN acknowledged",
    G_STRUCT_OFFSET (Sample, exchange) },
  { "tcp exchange: SYN to record", "TCP exchange: SYN … FIN, and its record written",
    G_STRUCT_OFFSET (Sample, recorded) },
  { "dns: query to record", "DNS query (UDP, new name): answered, recorded",
    G_STRUCT_OFFSET (Sample, dns) },
};

static void
print_table (GArray *floor, GArray *sinkhole, int exchanges, int warmup, const char *load)
{
  printf ("airlock-sinkhole on the host, no VM: %d exchanges of each kind after %d warm-up, "
          "floor and sinkhole alternating; load average before: %s\n", exchanges, warmup, load);
  printf ("floor: the same frames to a tap in this process's own network namespace: the "
          "kernel's TCP/IP and a plain listener (no relay, capture, redirect, detection or "
          "records)\n\n");
  printf ("%-30s %9s %9s | %9s %9s | %8s %8s\n", "microseconds per exchange", "floor", "p90",
          "sinkhole", "p90", "ratio", "paired");
  for (gsize c = 0; c < G_N_ELEMENTS (columns); c++)
    {
      double f = stats_of (floor, columns[c].offset).median;
      double s = stats_of (sinkhole, columns[c].offset).median;

      printf ("%-30s %9.1f %9.1f | %9.1f %9.1f | %7.2fx %7.2fx\n", columns[c].label, f,
              quantile (floor, columns[c].offset, 0.9), s,
              quantile (sinkhole, columns[c].offset, 0.9), s / f,
              paired_ratio (sinkhole, floor, columns[c].offset));
    }
  printf ("\ntcp setup    = our SYN written to the SYN-ACK read back\n"
          "tcp exchange = SYN, ACK, an HTTP request to %s:%u, the reply (the\n"
          "               sinkhole's --serve fixture; the floor's listener writes the\n"
          "               same bytes) and the server's FIN, our FIN to its ACK: what a\n"
          "               guest waits for\n"
          "  to record  = … and then the server done with the connection (the sinkhole:\n"
          "               its record written; the floor: the socket closed)\n"
          "dns          = a UDP query for a name not asked before to its answer, and the\n"
          "               server done (the sinkhole: its record written)\n"
          "ratio = the medians'; paired = the median of each back-to-back pair's ratio\n",
          BENCH_NET_SERVER_NAME, BENCH_NET_SERVER_PORT);
  for (gsize c = 0; c < G_N_ELEMENTS (columns); c++)
    {
      BenchSummaryRow row = {
        .bench = "sinkhole",
        .what = columns[c].what,
        .value = stats_of (sinkhole, columns[c].offset).median,
        .unit = "µs",
        .floor = stats_of (floor, columns[c].offset).median,
        .floor_what = "same frames, kernel tap, plain listener",
        .ratio = paired_ratio (sinkhole, floor, columns[c].offset),
      };

      bench_summary_add (&row);
    }
}

static void
print_starts (GArray *starts)
{
  gsize floor_at = G_STRUCT_OFFSET (StartSample, floor);
  gsize start_at = G_STRUCT_OFFSET (StartSample, start);
  gsize end_at = G_STRUCT_OFFSET (StartSample, end);
  double f = stats_of (starts, floor_at).median, s = stats_of (starts, start_at).median;
  g_autoptr (GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));
  double paired;

  for (guint i = 0; i < starts->len; i++)
    {
      double r = sample_at (starts, i, start_at) / sample_at (starts, i, floor_at);
      g_array_append_val (ratios, r);
    }
  paired = stats_of (ratios, 0).median;
  printf ("\n%-30s %9s %9s | %9s %9s | %8s %8s\n", "milliseconds per run", "floor", "p90",
          "sinkhole", "p90", "ratio", "paired");
  printf ("%-30s %9.2f %9.2f | %9.2f %9.2f | %7.2fx %7.2fx\n", "start: spawn to ready", f,
          quantile (starts, floor_at, 0.9), s, quantile (starts, start_at, 0.9), s / f, paired);
  printf ("%-30s %9s %9s | %9.2f %9.2f |\n", "end: QEMU's end closed to exit", "", "",
          stats_of (starts, end_at).median, quantile (starts, end_at, 0.9));
  printf ("\nstart = airlock-sinkhole spawned to its \"ready\" (network namespace, tap, nftables,\n"
          "        listeners, seccomp); its floor the same program's --help, spawned to its exit\n"
          "end   = QEMU's end of the socket closed to the process gone (final line written,\n"
          "        capture and records synced, its exit: the kernel removes its tap and\n"
          "        namespace), which lib/vm/sinkhole-proc.c waits for\n"
          "both once per run, %u runs\n",
          starts->len);
  {
    BenchSummaryRow start_row = {
      .bench = "sinkhole",
      .what = "process start: spawn → ready (once per run)",
      .value = s,
      .unit = "ms",
      .floor = f,
      .floor_what = "the same program's --help, spawn → exit",
      .ratio = paired,
    };
    BenchSummaryRow end_row = {
      .bench = "sinkhole",
      .what = "process end: QEMU gone → exited (once per run)",
      .value = stats_of (starts, end_at).median,
      .unit = "ms",
      .floor = -1,
    };

    bench_summary_add (&start_row);
    bench_summary_add (&end_row);
  }
}

int
main (int argc, char **argv)
{
  int exchanges = 200, warmup = 20, starts = 10;
  gboolean verbose = FALSE;
  GOptionEntry entries[] = {
    { "exchanges", 'n', 0, G_OPTION_ARG_INT, &exchanges,
      "measured exchanges of each kind, each path (default 200)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &warmup, "unmeasured ones first (default 20)", "N" },
    { "starts", 0, 0, G_OPTION_ARG_INT, &starts,
      "process starts and ends timed (default 10; 0: none)", "N" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "each pair's times on stderr", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx =
    g_option_context_new ("- a connection and a DNS query through the sinkhole, next to the "
                          "kernel's stack alone (needs root or user namespaces)");
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) floor_samples = g_array_new (FALSE, FALSE, sizeof (Sample));
  g_autoptr (GArray) sinkhole_samples = g_array_new (FALSE, FALSE, sizeof (Sample));
  g_autoptr (GArray) start_samples = g_array_new (FALSE, FALSE, sizeof (StartSample));
  g_autofree char *load = NULL;
  Sinkhole sh = { 0 };
  Path floor_path = { .what = "floor", .records_fd = -1 };
  Path sinkhole_path = { .what = "sinkhole", .stream = TRUE };
  const char *program = g_getenv ("AIRLOCK_SINKHOLE");
  double ignored;
  guint m[6];

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    die (EXIT_USAGE, "%s", error->message);
  if (exchanges < 1 || warmup < 0 || exchanges + warmup > EXCHANGES_MAX || starts < 0)
    die (EXIT_USAGE, "--exchanges must be at least 1, --warmup and --starts at least 0, and "
         "--exchanges and --warmup together at most %d (the sinkhole's bounds on records and "
         "names in one run)", EXCHANGES_MAX);
  if (!program || !*program)
    die (EXIT_USAGE, "set AIRLOCK_SINKHOLE to the airlock-sinkhole program (meson test "
         "--benchmark and meson devenv set it)");
  if (sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
              &m[5]) != 6)
    die (EXIT_FAILED, "cannot read the guest's MAC '%s'", AIRLOCK_NET_GUEST_MAC);
  for (int i = 0; i < 6; i++)
    guest_mac[i] = (guint8) m[i];
  load = bench_load_average ();
  atexit (remove_files);

  if (!bench_net_floor_enter_namespace (&error))
    die (EXIT_CANNOT_RUN, "%s", error->message);
  floor_path.done_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (floor_path.done_fd < 0)
    die (EXIT_FAILED, "cannot make an eventfd: %s", g_strerror (errno));
  floor_path.fd = bench_net_floor_start (floor_path.done_fd, &error);
  if (floor_path.fd < 0)
    die (EXIT_CANNOT_RUN, "cannot make the floor: %s", error->message);
  for (int i = 0; i < starts; i++)
    {
      StartSample s = { 0 };

      /* Alternating which goes first, as the exchanges do. */
      if (i % 2)
        s.floor = help_once (program);
      start_once (program, &s);
      if (i % 2 == 0)
        s.floor = help_once (program);
      if (verbose)
        fprintf (stderr, "bench/sinkhole: run %d: --help %.2f, start %.2f, end %.2f ms\n", i + 1,
                 s.floor, s.start, s.end);
      g_array_append_val (start_samples, s);
    }
  sinkhole_path.in = g_byte_array_new ();
  sinkhole_start (&sh, program, &sinkhole_path);

  /* Both kernels learn the guest's MAC; the sinkhole hands example.com
   * its address, so connections to it get the fixture. */
  arp_exchange (&floor_path);
  arp_exchange (&sinkhole_path);
  dns_exchange (&floor_path, 9999, 1, BENCH_NET_SERVER_NAME, &ignored);
  dns_exchange (&sinkhole_path, 9999, 1, BENCH_NET_SERVER_NAME, &ignored);

  for (int r = 0; r < warmup + exchanges; r++)
    {
      g_autofree char *name = g_strdup_printf ("n%d.%s", r, BENCH_NET_SERVER_NAME);
      Path *order[2] = { &floor_path, &sinkhole_path };
      Sample s[2] = { { 0 } };
      guint16 port = (guint16) (10000 + r);
      guint32 iss = 0x10000000u + (guint32) r * 0x10000u;

      /* Which goes first alternates: neither always finds the other's
       * leftovers (a TIME_WAIT, a cache line) in its way. */
      if (r % 2)
        {
          order[0] = &sinkhole_path;
          order[1] = &floor_path;
        }
      for (int k = 0; k < 2; k++)
        tcp_exchange (order[k], port, iss, &s[k].setup, &s[k].exchange, &s[k].recorded);
      for (int k = 0; k < 2; k++)
        dns_exchange (order[k], port, (guint16) (2 + r), name, &s[k].dns);
      if (verbose)
        fprintf (stderr, "bench/sinkhole: %s %d, %s first: setup %.1f %.1f, exchange %.1f %.1f, "
                 "to record %.1f %.1f, dns %.1f %.1f µs\n", r < warmup ? "warm-up" : "pair",
                 r < warmup ? r + 1 : r - warmup + 1, order[0]->what, s[0].setup, s[1].setup,
                 s[0].exchange, s[1].exchange, s[0].recorded, s[1].recorded, s[0].dns, s[1].dns);
      if (r < warmup)
        continue;
      g_array_append_val (floor_samples, s[r % 2 ? 1 : 0]);
      g_array_append_val (sinkhole_samples, s[r % 2 ? 0 : 1]);
    }
  sinkhole_finish (&sh, &sinkhole_path, (guint64) (warmup + exchanges),
                   (guint64) (warmup + exchanges) + 1);
  print_table (floor_samples, sinkhole_samples, exchanges, warmup, load);
  if (start_samples->len)
    print_starts (start_samples);
  sinkhole_clear (&sh);
  g_byte_array_unref (sinkhole_path.in);
  return 0;
}
