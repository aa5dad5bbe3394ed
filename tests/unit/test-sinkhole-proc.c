/* The airlock-sinkhole process on its own, without a VM: this test speaks
 * to it as QEMU's stream netdev does (a 4-byte big-endian length, then an
 * Ethernet frame) and checks what a guest relies on, frame by frame:
 * ARP for its gateway is answered; a DNS query for example.com gets the
 * name's stable address; a TCP connection to that address is accepted by
 * the kernel in the sinkhole's namespace and gets the --serve fixture, and
 * what the client sends after it is still taken in; an ICMP echo to any
 * address is answered from it and recorded; a
 * frame under a forged source MAC is refused (not answered, not captured,
 * counted); and on QEMU's end closing, the process writes its records and
 * final line and exits 0, also when a frame for QEMU is still on its way.
 *
 * Needs a network namespace (root, or unprivileged user namespaces); where
 * the process says it cannot make one, the test skips with its words. */
#define _GNU_SOURCE
#include "config.h"

#include "capture-frames.h"
#include "net/guest-net.h"
#include "sinkhole/sinkhole.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static guint8 guest_mac[6];
static const guint8 net_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };

typedef struct {
  char *dir;
  GSubprocess *proc;
  int fd;                 /* our end of the socket: QEMU's */
  GByteArray *in;         /* bytes read, not yet a frame */
} Fixture;

static GByteArray *
guest_frame (guint16 ethertype, GByteArray *payload)
{
  GByteArray *f = cf_ethernet (ethertype == 0x0806 ? capture_broadcast_mac : net_mac, guest_mac,
                               ethertype, payload);

  if (ethertype == 0x0800)
    cf_fix_checksums (f);
  return f;
}

/* ---- speaking as QEMU ---- */

static void
send_frame (Fixture *fx, GByteArray *frame)
{
  guint8 len[4] = { 0, 0, (guint8) (frame->len >> 8), (guint8) frame->len };

  g_assert_cmpint (write (fx->fd, len, 4), ==, 4);
  g_assert_cmpint (write (fx->fd, frame->data, frame->len), ==, (gssize) frame->len);
  g_byte_array_unref (frame);
}

/* The next frame from the network within @ms, or NULL. */
static GByteArray *
next_frame (Fixture *fx, int ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) ms * 1000;

  for (;;)
    {
      struct pollfd p = { .fd = fx->fd, .events = POLLIN };
      guint8 buf[4096];
      gint64 left;
      ssize_t n;

      if (fx->in->len >= 4)
        {
          gsize flen = ((gsize) fx->in->data[0] << 24) | ((gsize) fx->in->data[1] << 16)
                       | ((gsize) fx->in->data[2] << 8) | fx->in->data[3];

          if (fx->in->len >= 4 + flen)
            {
              GByteArray *f = g_byte_array_new ();

              g_byte_array_append (f, fx->in->data + 4, (guint) flen);
              g_byte_array_remove_range (fx->in, 0, (guint) (4 + flen));
              return f;
            }
        }
      left = deadline - g_get_monotonic_time ();
      if (left <= 0 || poll (&p, 1, (int) (left / 1000) + 1) <= 0)
        return NULL;
      n = read (fx->fd, buf, sizeof buf);
      if (n <= 0)
        return NULL;
      g_byte_array_append (fx->in, buf, (guint) n);
    }
}

/* The next IPv4 frame to the guest of @protocol from @sport, within @ms:
 * other frames (ARP, IPv6 neighbour discovery) are passed over. */
static GByteArray *
next_ipv4 (Fixture *fx, guint8 protocol, guint16 sport, int ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) ms * 1000;
  GByteArray *f;

  while ((f = next_frame (fx, (int) MAX (1, (deadline - g_get_monotonic_time ()) / 1000))))
    {
      const guint8 *ip = f->data + 14;

      if (f->len >= 14 + 20 + 4 && f->data[12] == 0x08 && f->data[13] == 0x00
          && memcmp (f->data, guest_mac, 6) == 0 && memcmp (f->data + 6, net_mac, 6) == 0
          && ip[9] == protocol
          && (((guint16) ip[(ip[0] & 0x0f) * 4] << 8) | ip[(ip[0] & 0x0f) * 4 + 1]) == sport)
        return f;
      g_byte_array_unref (f);
    }
  return NULL;
}

static void
fixture_setup (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *sock = NULL;
  g_autofree char *serve = NULL;
  g_autofree char *reply = NULL;
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  char ready[16] = "";
  gsize got = 0;
  const char *program = g_getenv ("AIRLOCK_SINKHOLE");

  fx->fd = -1;
  fx->in = g_byte_array_new ();
  fx->dir = g_dir_make_tmp ("airlock-sinkhole-test-XXXXXX", &error);
  g_assert_no_error (error);
  if (!program)
    {
      g_test_fail_printf ("AIRLOCK_SINKHOLE is not set: run through meson test");
      return;
    }
  reply = g_build_filename (fx->dir, "reply.http", NULL);
  g_assert_true (g_file_set_contents (reply, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
                                      -1, NULL));
  sock = g_build_filename (fx->dir, "net.sock", NULL);
  serve = g_strdup_printf ("--serve=example.com:80=%s", reply);
  {
    g_autofree char *pcap = g_build_filename (fx->dir, "net.pcap", NULL);
    g_autofree char *records = g_build_filename (fx->dir, "records.jsonl", NULL);
    g_autofree char *log = g_build_filename (fx->dir, "stderr", NULL);
    g_autoptr (GSubprocessLauncher) l = g_subprocess_launcher_new (
      G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE);

    g_subprocess_launcher_set_stderr_file_path (l, log);
    fx->proc = g_subprocess_launcher_spawn (l, &error, program, "--socket", sock, "--pcap", pcap,
                                            "--records", records, serve, NULL);
    g_assert_no_error (error);
  }
  g_input_stream_read_all (g_subprocess_get_stdout_pipe (fx->proc), ready, 6, &got, NULL, &error);
  if (got != 6 || memcmp (ready, "ready\n", 6) != 0)
    {
      g_autofree char *log = g_build_filename (fx->dir, "stderr", NULL);
      g_autofree char *text = NULL;

      g_subprocess_wait (fx->proc, NULL, NULL);
      g_file_get_contents (log, &text, NULL, NULL);
      if (text && (strstr (text, "cannot make a network namespace")
                   || strstr (text, "cannot make a user and network namespace")))
        g_test_skip_printf ("%s", text);
      else
        g_test_fail_printf ("the sinkhole did not start: %s", text ? text : "(nothing on stderr)");
      return;
    }
  strcpy (sun.sun_path, sock);
  fx->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (connect (fx->fd, (struct sockaddr *) &sun, sizeof sun), ==, 0);
}

static void
fixture_teardown (Fixture *fx, gconstpointer data)
{
  if (fx->fd >= 0)
    close (fx->fd);
  if (fx->proc)
    {
      if (g_subprocess_get_identifier (fx->proc))
        g_subprocess_force_exit (fx->proc);
      g_subprocess_wait (fx->proc, NULL, NULL);
      g_object_unref (fx->proc);
    }
  g_byte_array_unref (fx->in);
  if (fx->dir)
    {
      const char *files[] = { "net.sock", "net.pcap", "records.jsonl", "stderr", "reply.http" };

      for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
        {
          g_autofree char *p = g_build_filename (fx->dir, files[i], NULL);
          g_unlink (p);
        }
      g_rmdir (fx->dir);
      g_free (fx->dir);
    }
}

static const guint8 *
udp_payload (GByteArray *f, gsize *len)
{
  const guint8 *ip = f->data + 14;
  gsize ihl = (gsize) (ip[0] & 0x0f) * 4;

  *len = f->len - 14 - ihl - 8;
  return ip + ihl + 8;
}

static void
test_serves_a_guest (Fixture *fx, gconstpointer data)
{
  static const char request[] = "GET /simple HTTP/1.1\r\nHost: example.com\r\n"
                                "User-Agent: test\r\n\r\n";
  static const char more[] = "GET /again HTTP/1.1\r\n\r\n";
  g_autoptr (GByteArray) arp = NULL;
  g_autoptr (GByteArray) answer = NULL;
  g_autoptr (GByteArray) synack = NULL;
  g_autoptr (GBytes) records = NULL;
  g_autoptr (AirlockSinkholeLog) log = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *records_path = NULL;
  g_autofree char *pcap_path = NULL;
  g_autofree char *pcap = NULL;
  gsize pcap_len = 0;
  const guint8 *p;
  gsize len;
  guint32 server_seq;
  gboolean got_fixture = FALSE;
  const AirlockSinkholeRecord *dns = NULL, *tcp = NULL, *udp = NULL, *icmp = NULL;

  if (g_test_failed () || fx->fd < 0)
    return;

  /* ARP for the gateway, answered by the namespace's kernel. */
  send_frame (fx, guest_frame (0x0806, cf_arp (1, guest_mac, "10.0.2.15", "10.0.2.2")));
  while ((arp = next_frame (fx, 5000)) && !(arp->data[12] == 0x08 && arp->data[13] == 0x06))
    g_byte_array_unref (g_steal_pointer (&arp));
  g_assert_nonnull (arp);
  g_assert_cmpmem (arp->data + 6, 6, net_mac, 6);
  g_assert_cmpuint (((guint) arp->data[20] << 8) | arp->data[21], ==, 2);

  /* DNS over UDP, to the resolver the guest is configured with. */
  {
    GByteArray *q = cf_dns_query (0x1234, "example.com");
    send_frame (fx, guest_frame (0x0800, cf_ipv4 ("10.0.2.15", "10.0.2.3", IPPROTO_UDP,
                                                  cf_udp (40000, 53, q->data, q->len))));
    g_byte_array_unref (q);
  }
  answer = next_ipv4 (fx, IPPROTO_UDP, 53, 5000);
  g_assert_nonnull (answer);
  p = udp_payload (answer, &len);
  g_assert_cmpuint (len, >=, 16);
  g_assert_cmpuint (((guint) p[0] << 8) | p[1], ==, 0x1234);
  g_assert_cmpuint (((guint) p[6] << 8) | p[7], ==, 1);     /* one answer */
  /* The A record's data ends the message: 198.18.243.18 for example.com. */
  {
    static const guint8 want[4] = { 198, 18, 243, 18 };
    g_assert_cmpmem (p + len - 4, 4, want, 4);
  }

  /* TCP to that address, port 80: the kernel in the namespace accepts, the
   * request is taken in, the fixture comes back. */
  send_frame (fx, guest_frame (0x0800, cf_ipv4 ("10.0.2.15", "198.18.243.18", IPPROTO_TCP,
                                                cf_tcp (41000, 80, 1000, CF_SYN, NULL, 0))));
  synack = next_ipv4 (fx, IPPROTO_TCP, 80, 5000);
  g_assert_nonnull (synack);
  {
    const guint8 *ip = synack->data + 14;
    const guint8 *tcph = ip + (ip[0] & 0x0f) * 4;
    static const guint8 from[4] = { 198, 18, 243, 18 };

    g_assert_cmpmem (ip + 12, 4, from, 4);       /* from the address the guest asked for */
    g_assert_cmpuint (tcph[13] & (CF_SYN | CF_ACK), ==, CF_SYN | CF_ACK);
    server_seq = ((guint32) tcph[4] << 24) | ((guint32) tcph[5] << 16) | ((guint32) tcph[6] << 8)
                 | tcph[7];
  }
  {
    GByteArray *ack = cf_tcp (41000, 80, 1001, CF_ACK, NULL, 0);
    GByteArray *req = cf_tcp (41000, 80, 1001, CF_ACK | CF_PSH, request, sizeof request - 1);
    guint32 a = server_seq + 1;

    /* cf_tcp writes ack 1: the real one goes in. */
    for (GByteArray *seg = ack; seg; seg = seg == ack ? req : NULL)
      {
        seg->data[8] = (guint8) (a >> 24);
        seg->data[9] = (guint8) (a >> 16);
        seg->data[10] = (guint8) (a >> 8);
        seg->data[11] = (guint8) a;
      }
    send_frame (fx, guest_frame (0x0800, cf_ipv4 ("10.0.2.15", "198.18.243.18", IPPROTO_TCP, ack)));
    send_frame (fx, guest_frame (0x0800, cf_ipv4 ("10.0.2.15", "198.18.243.18", IPPROTO_TCP, req)));
  }
  for (int i = 0; i < 20 && !got_fixture; i++)
    {
      g_autoptr (GByteArray) seg = next_ipv4 (fx, IPPROTO_TCP, 80, 5000);

      if (!seg)
        break;
      got_fixture = memmem (seg->data, seg->len, "HTTP/1.1 200 OK", 15) != NULL;
    }
  g_assert_true (got_fixture);
  /* What the client sends once the fixture is on its way is still read
   * while the connection lingers, and counted in its record. */
  {
    GByteArray *seg = cf_tcp (41000, 80, 1001 + sizeof request - 1, CF_ACK | CF_PSH, more,
                              sizeof more - 1);
    guint32 a = server_seq + 1;

    seg->data[8] = (guint8) (a >> 24);
    seg->data[9] = (guint8) (a >> 16);
    seg->data[10] = (guint8) (a >> 8);
    seg->data[11] = (guint8) a;
    send_frame (fx, guest_frame (0x0800, cf_ipv4 ("10.0.2.15", "198.18.243.18", IPPROTO_TCP, seg)));
  }

  /* An echo request to anywhere: answered from that address, and recorded. */
  send_frame (fx, guest_frame (0x0800, cf_ipv4 ("10.0.2.15", "192.0.2.7", IPPROTO_ICMP,
                                                cf_icmp (8, 0, 0x12340001, "airlock", 7))));
  {
    g_autoptr (GByteArray) reply = NULL;
    static const guint8 from[4] = { 192, 0, 2, 7 };

    /* next_ipv4 matches the first two transport bytes: an echo reply's
     * type 0 and code 0. */
    reply = next_ipv4 (fx, IPPROTO_ICMP, 0x0000, 5000);
    g_assert_nonnull (reply);
    g_assert_cmpmem (reply->data + 14 + 12, 4, from, 4);
  }

  /* A datagram to anywhere: recorded, not answered. */
  send_frame (fx, guest_frame (0x0800, cf_ipv4 ("10.0.2.15", "192.0.2.1", IPPROTO_UDP,
                                                cf_udp (42000, 4444, "ping", 4))));
  /* A frame under the network's own MAC: refused. */
  {
    GByteArray *forged = cf_ethernet (net_mac, net_mac, 0x0800,
                                      cf_ipv4 ("10.0.2.15", "192.0.2.2", IPPROTO_UDP,
                                               cf_udp (42001, 7777, "forged", 6)));
    cf_fix_checksums (forged);
    send_frame (fx, forged);
  }

  /* QEMU goes: the process finishes its records and exits 0. */
  g_usleep (300 * 1000);
  close (fx->fd);
  fx->fd = -1;
  g_assert_true (g_subprocess_wait (fx->proc, NULL, &error));
  g_assert_true (g_subprocess_get_if_exited (fx->proc));
  g_assert_cmpint (g_subprocess_get_exit_status (fx->proc), ==, 0);

  records_path = g_build_filename (fx->dir, "records.jsonl", NULL);
  {
    g_autofree char *text = NULL;
    gsize tlen;
    g_assert_true (g_file_get_contents (records_path, &text, &tlen, NULL));
    g_test_message ("records:\n%s", text);
    records = g_bytes_new_take (g_steal_pointer (&text), tlen);
  }
  log = airlock_sinkhole_log_new_from_bytes (records, &error);
  g_assert_no_error (error);
  g_assert_true (log->complete);
  g_assert_cmpuint (log->frames_refused, ==, 1);
  g_assert_nonnull (strstr (log->first_refused, "52:55:0a:00:02:02"));
  for (guint i = 0; i < log->records->len; i++)
    {
      const AirlockSinkholeRecord *r = log->records->pdata[i];

      if (r->kind == AIRLOCK_SINKHOLE_RECORD_DNS)
        dns = r;
      else if (r->kind == AIRLOCK_SINKHOLE_RECORD_TCP)
        tcp = r;
      else if (r->kind == AIRLOCK_SINKHOLE_RECORD_UDP)
        udp = r;
      else if (r->kind == AIRLOCK_SINKHOLE_RECORD_ICMP)
        icmp = r;
    }
  g_assert_nonnull (dns);
  g_assert_cmpstr (dns->address_text, ==, "10.0.2.3");
  g_assert_cmpstr (dns->dns.question, ==, "example.com.");
  g_assert_cmpuint (dns->dns.answers->len, ==, 1);
  g_assert_cmpstr (dns->dns.answers->pdata[0], ==, "198.18.243.18");
  g_assert_nonnull (tcp);
  g_assert_cmpstr (tcp->address_text, ==, "198.18.243.18");
  g_assert_cmpuint (tcp->port, ==, 80);
  g_assert_cmpstr (tcp->name, ==, "example.com.");
  g_assert_cmpint (tcp->detected.protocol, ==, AIRLOCK_SINKHOLE_PROTOCOL_HTTP);
  g_assert_cmpstr (tcp->detected.http_host, ==, "example.com");
  g_assert_cmpstr (tcp->detected.http_path, ==, "/simple");
  g_assert_cmpstr (tcp->response, ==, "fixture example.com:80");
  g_assert_cmpuint (tcp->bytes_in, ==, sizeof request - 1 + sizeof more - 1);
  g_assert_nonnull (icmp);
  g_assert_cmpstr (icmp->address_text, ==, "192.0.2.7");
  g_assert_nonnull (udp);
  g_assert_cmpstr (udp->address_text, ==, "192.0.2.1");
  g_assert_cmpuint (udp->port, ==, 4444);

  /* The capture holds the guest's frames but not the forged one. */
  pcap_path = g_build_filename (fx->dir, "net.pcap", NULL);
  g_assert_true (g_file_get_contents (pcap_path, &pcap, &pcap_len, NULL));
  g_assert_cmpuint (pcap_len, >, 24);
  g_assert_nonnull (memmem (pcap, pcap_len, "GET /simple", 11));
  g_assert_nonnull (memmem (pcap, pcap_len, "HTTP/1.1 200 OK", 15));
  g_assert_null (memmem (pcap, pcap_len, "forged", 6));
}

/* QEMU's end closes while a frame from the network is still on its way
 * (the ARP reply to its last frame, the tap's own first frames): the
 * process must still end as a run needs, its final line written and
 * status 0, not killed by the SIGPIPE of relaying that frame. */
static void
test_qemu_gone_with_a_frame_pending (Fixture *fx, gconstpointer data)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) records = NULL;
  g_autoptr (AirlockSinkholeLog) log = NULL;
  g_autofree char *records_path = NULL;
  g_autofree char *text = NULL;
  gsize len;

  if (g_test_failed () || fx->fd < 0)
    return;
  send_frame (fx, guest_frame (0x0806, cf_arp (1, guest_mac, "10.0.2.15", "10.0.2.2")));
  close (fx->fd);
  fx->fd = -1;
  g_assert_true (g_subprocess_wait (fx->proc, NULL, &error));
  g_assert_true (g_subprocess_get_if_exited (fx->proc));
  g_assert_cmpint (g_subprocess_get_exit_status (fx->proc), ==, 0);
  records_path = g_build_filename (fx->dir, "records.jsonl", NULL);
  g_assert_true (g_file_get_contents (records_path, &text, &len, NULL));
  records = g_bytes_new_take (g_steal_pointer (&text), len);
  log = airlock_sinkhole_log_new_from_bytes (records, &error);
  g_assert_no_error (error);
  g_assert_true (log->complete);
}

int
main (int argc, char **argv)
{
  guint m[6];

  g_test_init (&argc, &argv, NULL);
  g_assert_cmpint (sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2],
                           &m[3], &m[4], &m[5]), ==, 6);
  for (int i = 0; i < 6; i++)
    guest_mac[i] = (guint8) m[i];
  g_test_add ("/sinkhole-proc/serves-a-guest", Fixture, NULL, fixture_setup,
              test_serves_a_guest, fixture_teardown);
  g_test_add ("/sinkhole-proc/qemu-gone-with-a-frame-pending", Fixture, NULL, fixture_setup,
              test_qemu_gone_with_a_frame_pending, fixture_teardown);
  return g_test_run ();
}
