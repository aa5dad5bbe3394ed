/* Unit tests for the host-side capture analysis (lib/net/): the pcap
 * reader, the frame decoder, flows keyed like the supervisor's attempts,
 * housekeeping, replies and anomalies.
 *
 * Every pcap is built here from hand-made frames (capture-frames.h), and
 * every test asserts the exact flows (by key, in order) and housekeeping
 * the capture must produce. */
#include "config.h"

#include "bounds-private.h"
#include "fsutil-private.h"
#include "net/flows.h"
#include "net/pcap.h"
#include "evidence/sockaddr.h"
#include "vm/domain-xml-private.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include "capture-frames.h"

#define GUEST4 "10.0.2.15"
#define GUEST6 "fec0::15"

static AirlockCapture *
analyse (GByteArray *pcap, GError **error)
{
  g_autoptr (GBytes) bytes = g_byte_array_free_to_bytes (pcap);
  AirlockCaptureGuest guest;

  airlock_capture_guest_init (&guest, capture_guest_mac);
  return airlock_capture_analyse (bytes, &guest, error);
}

static AirlockCapture *
analyse_ok (GByteArray *pcap)
{
  g_autoptr (GError) error = NULL;
  AirlockCapture *capture = analyse (pcap, &error);

  g_assert_no_error (error);
  g_assert_nonnull (capture);
  return capture;
}

/* The flows' keys, in order, are exactly @expected (NULL-terminated). */
static void
assert_flow_keys (AirlockCapture *capture, const char *const *expected)
{
  GPtrArray *flows = airlock_capture_get_flows (capture);
  guint n = g_strv_length ((char **) expected);

  for (guint i = 0; i < MIN (n, flows->len); i++)
    g_assert_cmpstr (((AirlockFlow *) flows->pdata[i])->key, ==, expected[i]);
  g_assert_cmpuint (flows->len, ==, n);
}

/* The housekeeping is exactly @expected: "kind count replies" lines. */
static void
assert_housekeeping (AirlockCapture *capture, const char *const *expected)
{
  GPtrArray *list = airlock_capture_get_housekeeping (capture);
  guint n = g_strv_length ((char **) expected);

  for (guint i = 0; i < MIN (n, list->len); i++)
    {
      const AirlockHousekeeping *h = list->pdata[i];
      g_autofree char *line = g_strdup_printf ("%s %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                                               airlock_housekeeping_kind_to_string (h->kind),
                                               h->count, h->replies);

      g_assert_cmpstr (line, ==, expected[i]);
    }
  g_assert_cmpuint (list->len, ==, n);
}

/* The anomalies are exactly @expected: "kind count" lines. */
static void
assert_anomalies (AirlockCapture *capture, const char *const *expected)
{
  GPtrArray *list = airlock_capture_get_anomalies (capture);
  guint n = g_strv_length ((char **) expected);

  for (guint i = 0; i < MIN (n, list->len); i++)
    {
      const AirlockCaptureAnomaly *a = list->pdata[i];
      g_autofree char *line = g_strdup_printf ("%s %" G_GUINT64_FORMAT,
                                               airlock_capture_anomaly_kind_to_string (a->kind),
                                               a->count);

      g_assert_cmpstr (line, ==, expected[i]);
    }
  g_assert_cmpuint (list->len, ==, n);
}

static void
assert_names (GPtrArray *names, const char *const *expected)
{
  guint n = g_strv_length ((char **) expected);

  for (guint i = 0; i < MIN (n, names->len); i++)
    g_assert_cmpstr (names->pdata[i], ==, expected[i]);
  g_assert_cmpuint (names->len, ==, n);
}

static const AirlockFlow *
flow_at (AirlockCapture *capture, guint i)
{
  GPtrArray *flows = airlock_capture_get_flows (capture);

  g_assert_cmpuint (i, <, flows->len);
  return flows->pdata[i];
}

static const char *const none[] = { NULL };

/* ---- pcap files ---- */

static void
test_empty_capture (void)
{
  g_autoptr (AirlockCapture) capture = analyse_ok (cf_pcap_new ());

  assert_flow_keys (capture, none);
  assert_housekeeping (capture, none);
  assert_anomalies (capture, none);
  g_assert_cmpuint (airlock_capture_get_frames (capture), ==, 0);
}

static void
assert_bad_file (GByteArray *pcap, int code, const char *message)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockCapture) capture = analyse (pcap, &error);

  g_assert_null (capture);
  g_assert_error (error, AIRLOCK_PCAP_ERROR, code);
  g_assert_cmpstr (error->message, ==, message);
}

static GByteArray *
syn_frame (void)
{
  return cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_TCP,
                                         cf_tcp (40000, 9, 1000, CF_SYN, NULL, 0)));
}

static void
test_truncated_file (void)
{
  GByteArray *pcap;

  pcap = cf_pcap_new ();
  g_byte_array_set_size (pcap, 10);
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_TRUNCATED,
                   "pcap file header truncated: 10 of 24 bytes at offset 0");

  /* a record header cut after 7 of its 16 bytes */
  pcap = cf_pcap_new ();
  cf_pcap_add (pcap, 1, syn_frame ());
  cf_raw (pcap, "\x01\x00\x00\x00\x00\x00\x00", 7);
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_TRUNCATED,
                   "pcap record 1 truncated: header at offset 94 has 7 of 16 bytes");

  /* a record's data cut short: 54 bytes announced, 20 present */
  pcap = cf_pcap_new ();
  cf_pcap_add (pcap, 1, syn_frame ());
  g_byte_array_set_size (pcap, 24 + 16 + 20);
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_TRUNCATED,
                   "pcap record 0 truncated: 54 bytes of data at offset 40, 20 present");
}

static void
test_bad_header (void)
{
  GByteArray *pcap;

  pcap = cf_pcap_new ();
  pcap->data[0] = 0x0a;
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_BAD_MAGIC,
                   "not a pcap file: magic 0xa1b2c30a at offset 0");

  pcap = cf_pcap_new ();
  pcap->data[4] = 3;
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_UNSUPPORTED,
                   "unsupported pcap version 3.4 at offset 4");

  pcap = cf_pcap_new ();
  pcap->data[20] = 101;   /* LINKTYPE_RAW */
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_UNSUPPORTED,
                   "unsupported pcap link type 101 at offset 20 (expected Ethernet, 1)");

  pcap = cf_pcap_new ();
  memset (pcap->data + 16, 0xff, 4);
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_INVALID,
                   "pcap snapshot length 4294967295 at offset 16 is outside 1–262144");

  pcap = cf_pcap_new ();
  memset (pcap->data + 16, 0, 4);
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_INVALID,
                   "pcap snapshot length 0 at offset 16 is outside 1–262144");
}

static void
test_absurd_record_lengths (void)
{
  GByteArray *pcap;

  /* captured length above the snapshot length (65536) */
  pcap = cf_pcap_new ();
  cf_pcap_add_clipped (pcap, 1, syn_frame (), 0x7fffffff, 0x7fffffff);
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_INVALID,
                   "pcap record 0 at offset 32: captured length 2147483647 exceeds the "
                   "snapshot length 65536");

  /* captured length above the original length */
  pcap = cf_pcap_new ();
  cf_pcap_add_clipped (pcap, 1, syn_frame (), 54, 10);
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_INVALID,
                   "pcap record 0 at offset 32: captured length 54 exceeds the original "
                   "length 10");

  /* microseconds out of range */
  pcap = cf_pcap_new ();
  cf_pcap_add (pcap, 1, syn_frame ());
  memset (pcap->data + 28, 0xff, 4);
  assert_bad_file (pcap, AIRLOCK_PCAP_ERROR_INVALID,
                   "pcap record 0 at offset 28: sub-second timestamp 4294967295 out of range");
}

/* The same frames in a big-endian, nanosecond file read the same. */
static void
test_byte_orders (void)
{
  g_autoptr (GByteArray) frame = syn_frame ();
  GByteArray *pcap = g_byte_array_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockFlow *flow;

  cf_be32 (pcap, 0xa1b23c4d);
  cf_be16 (pcap, 2);
  cf_be16 (pcap, 4);
  cf_be32 (pcap, 0);
  cf_be32 (pcap, 0);
  cf_be32 (pcap, 65535);
  cf_be32 (pcap, 1);
  cf_be32 (pcap, 100);
  cf_be32 (pcap, 999999999);
  cf_be32 (pcap, frame->len);
  cf_be32 (pcap, frame->len);
  cf_raw (pcap, frame->data, frame->len);

  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 192.0.2.1:9", NULL });
  flow = flow_at (capture, 0);
  g_assert_cmpint (flow->first_time_us, ==, 100 * G_USEC_PER_SEC + 999999);
}

/* ---- flows ---- */

static void
test_tcp_syn_v4 (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockFlow *flow;

  cf_pcap_add (pcap, 10, syn_frame ());
  cf_pcap_add (pcap, 11, syn_frame ());   /* retransmitted */
  capture = analyse_ok (pcap);

  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 192.0.2.1:9", NULL });
  assert_housekeeping (capture, none);
  assert_anomalies (capture, none);
  flow = flow_at (capture, 0);
  g_assert_cmpint (flow->family, ==, AF_INET);
  g_assert_cmpint (flow->type, ==, SOCK_STREAM);
  g_assert_cmpint (flow->protocol, ==, IPPROTO_TCP);
  g_assert_cmpstr (flow->address_text, ==, "192.0.2.1");
  g_assert_cmpuint (flow->port, ==, 9);
  g_assert_cmpuint (flow->packets, ==, 2);
  g_assert_cmpuint (flow->bytes, ==, 2 * 54);
  g_assert_cmpuint (flow->syns, ==, 2);
  g_assert_false (flow->rst_seen);
  g_assert_cmpint (flow->first_time_us, ==, 10 * G_USEC_PER_SEC);
  g_assert_cmpint (flow->last_time_us, ==, 11 * G_USEC_PER_SEC);
  g_assert_cmpuint (airlock_capture_get_frames (capture), ==, 2);
  g_assert_cmpuint (airlock_capture_get_guest_frames (capture), ==, 2);
  g_assert_true (airlock_capture_lookup_flow (capture, "inet/stream/tcp 192.0.2.1:9") == flow);
  g_assert_null (airlock_capture_lookup_flow (capture, "inet/dgram/udp 192.0.2.1:9"));
}

static void
test_tcp_syn_v6 (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockFlow *flow;

  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::1", IPPROTO_TCP,
                                                        cf_tcp (40000, 9, 7, CF_SYN, NULL, 0))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture,
                    (const char *const[]) { "inet6/stream/tcp [2001:db8::1]:9", NULL });
  flow = flow_at (capture, 0);
  g_assert_cmpint (flow->family, ==, AF_INET6);
  g_assert_cmpstr (flow->address_text, ==, "2001:db8::1");
  g_assert_cmpuint (flow->syns, ==, 1);
  g_assert_cmpuint (flow->ip_options, ==, 0);
}

static void
test_udp (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;

  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_UDP,
                                                        cf_udp (5000, 9, "x", 1))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::1", IPPROTO_UDP,
                                                        cf_udp (5000, 9, "yy", 2))));
  cf_pcap_add (pcap, 2, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_UDP,
                                                        cf_udp (5001, 9, "z", 1))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/dgram/udp 192.0.2.1:9",
                                                     "inet6/dgram/udp [2001:db8::1]:9", NULL });
  g_assert_cmpuint (flow_at (capture, 0)->datagrams, ==, 2);
  g_assert_cmpuint (flow_at (capture, 1)->datagrams, ==, 1);
  g_assert_cmpuint (flow_at (capture, 0)->syns, ==, 0);
  assert_names (flow_at (capture, 0)->dns_names, none);
  assert_anomalies (capture, none);
}

/* The capture's key is the supervisor's attempt key for the same
 * destination, byte for byte. */
static void
test_key_matches_attempt_key (void)
{
  /* sockaddr_in6 for [2001:db8::1]:53, as a process passes it */
  guint8 sin6[28] = { AF_INET6, 0, 0, 53 };
  guint8 sin[16] = { AF_INET, 0, 0, 9, 192, 0, 2, 1 };
  guint8 addr6[16];
  AirlockSockaddr sa;
  g_autofree char *attempt6 = NULL, *attempt4 = NULL, *key6 = NULL, *key4 = NULL;

  g_assert_true (inet_pton (AF_INET6, "2001:db8::1", addr6) == 1);
  memcpy (sin6 + 8, addr6, 16);
  g_assert_true (airlock_sockaddr_decode_for_socket (AF_INET6, SOCK_DGRAM, 0,
                                                     AIRLOCK_SOCKADDR_CALL_SENDTO, sin6,
                                                     sizeof sin6, &sa, NULL));
  attempt6 = airlock_attempt_key (AF_INET6, SOCK_DGRAM, 0, &sa);
  key6 = airlock_capture_flow_key (AF_INET6, IPPROTO_UDP, addr6, 53);
  g_assert_cmpstr (key6, ==, "inet6/dgram/udp [2001:db8::1]:53");
  g_assert_cmpstr (key6, ==, attempt6);

  g_assert_true (airlock_sockaddr_decode_for_socket (AF_INET, SOCK_STREAM, 0,
                                                     AIRLOCK_SOCKADDR_CALL_CONNECT, sin,
                                                     sizeof sin, &sa, NULL));
  attempt4 = airlock_attempt_key (AF_INET, SOCK_STREAM, IPPROTO_TCP, &sa);
  key4 = airlock_capture_flow_key (AF_INET, IPPROTO_TCP, sin + 4, 9);
  g_assert_cmpstr (key4, ==, "inet/stream/tcp 192.0.2.1:9");
  g_assert_cmpstr (key4, ==, attempt4);
}

static void
test_dns_udp (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *q4 = cf_dns_query (1, "example.com");
  GByteArray *q6 = cf_dns_query (2, "example.org");
  GByteArray *again = cf_dns_query (3, "example.com");
  const AirlockFlow *flow;

  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "10.0.2.3", IPPROTO_UDP,
                                                        cf_udp (5353, 53, q4->data, q4->len))));
  /* QEMU's DNS answers: a reply, no flow */
  cf_pcap_add (pcap, 1, cf_to_guest (0x0800, cf_ipv4 ("10.0.2.3", GUEST4, IPPROTO_UDP,
                                                      cf_udp (53, 5353, q4->data, q4->len))));
  cf_pcap_add (pcap, 2, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "10.0.2.3", IPPROTO_UDP,
                                                        cf_udp (5353, 53, again->data,
                                                                again->len))));
  cf_pcap_add (pcap, 2, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::53", IPPROTO_UDP,
                                                        cf_udp (5353, 53, q6->data, q6->len))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/dgram/udp 10.0.2.3:53",
                                                     "inet6/dgram/udp [2001:db8::53]:53", NULL });
  flow = flow_at (capture, 0);
  assert_names (flow->dns_names, (const char *const[]) { "example.com.", NULL });
  g_assert_cmpuint (flow->datagrams, ==, 2);
  g_assert_cmpuint (flow->reply_packets, ==, 1);
  g_assert_cmpuint (flow->dns_malformed, ==, 0);
  assert_names (flow_at (capture, 1)->dns_names, (const char *const[]) { "example.org.", NULL });
  g_assert_cmpuint (airlock_capture_get_unmatched_replies (capture), ==, 0);
  g_byte_array_unref (q4);
  g_byte_array_unref (q6);
  g_byte_array_unref (again);
}

/* One DNS message over TCP, its length prefix and name split across two
 * segments; then a second connection whose bytes come out of order. */
static void
test_dns_tcp_split (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *q = cf_dns_query (7, "split.example");
  GByteArray *stream = g_byte_array_new ();
  GByteArray *q2 = cf_dns_query (8, "late.example");
  GByteArray *stream2 = g_byte_array_new ();
  const AirlockFlow *flow;
  guint cut = 2 + 12 + 3;   /* the prefix, the header and 3 bytes of the name */

  cf_be16 (stream, (guint16) q->len);
  cf_raw (stream, q->data, q->len);
  cf_be16 (stream2, (guint16) q2->len);
  cf_raw (stream2, q2->data, q2->len);

#define TCP53(sport, seq, flags, data, len) \
  cf_from_guest (0x0800, cf_ipv4 (GUEST4, "10.0.2.3", IPPROTO_TCP, \
                                  cf_tcp (sport, 53, seq, flags, data, len)))
  cf_pcap_add (pcap, 1, TCP53 (41000, 100, CF_SYN, NULL, 0));
  cf_pcap_add (pcap, 1, TCP53 (41000, 101, CF_ACK | CF_PSH, stream->data, cut));
  cf_pcap_add (pcap, 1, TCP53 (41000, 101, CF_ACK | CF_PSH, stream->data, cut)); /* again */
  cf_pcap_add (pcap, 1, TCP53 (41000, 101 + cut, CF_ACK | CF_PSH, stream->data + cut,
                               stream->len - cut));
  /* second connection: the second half first is a gap, the stream stops */
  cf_pcap_add (pcap, 2, TCP53 (41001, 500, CF_SYN, NULL, 0));
  cf_pcap_add (pcap, 2, TCP53 (41001, 501 + cut, CF_ACK, stream2->data + cut,
                               stream2->len - cut));
  cf_pcap_add (pcap, 2, TCP53 (41001, 501, CF_ACK, stream2->data, cut));
#undef TCP53

  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 10.0.2.3:53", NULL });
  flow = flow_at (capture, 0);
  assert_names (flow->dns_names, (const char *const[]) { "split.example.", NULL });
  g_assert_cmpuint (flow->syns, ==, 2);
  g_assert_cmpuint (flow->packets, ==, 7);
  assert_names (flow->sni, none);
  assert_names (flow->http_hosts, none);
  assert_anomalies (capture, none);
  g_byte_array_unref (q);
  g_byte_array_unref (q2);
  g_byte_array_unref (stream);
  g_byte_array_unref (stream2);
}

static void
test_tls_sni (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *hello = cf_tls_client_hello ("example.org");
  GByteArray *hello6 = cf_tls_client_hello ("v6.example.org");
  const AirlockFlow *flow;

  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "198.51.100.1", IPPROTO_TCP,
                                                        cf_tcp (42000, 443, 9, CF_SYN, NULL, 0))));
  /* the ClientHello in two segments: the name only in the second */
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "198.51.100.1", IPPROTO_TCP,
                                                        cf_tcp (42000, 443, 10, CF_ACK,
                                                                hello->data, 30))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "198.51.100.1", IPPROTO_TCP,
                                                        cf_tcp (42000, 443, 40, CF_ACK,
                                                                hello->data + 30,
                                                                hello->len - 30))));
  /* no SYN seen: the stream starts with the first data */
  cf_pcap_add (pcap, 2, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::443", IPPROTO_TCP,
                                                        cf_tcp (42001, 443, 77, CF_ACK,
                                                                hello6->data, hello6->len))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 198.51.100.1:443",
                                                     "inet6/stream/tcp [2001:db8::443]:443",
                                                     NULL });
  flow = flow_at (capture, 0);
  assert_names (flow->sni, (const char *const[]) { "example.org", NULL });
  assert_names (flow->http_hosts, none);
  assert_names (flow->dns_names, none);
  g_assert_cmpuint (flow->syns, ==, 1);
  assert_names (flow_at (capture, 1)->sni, (const char *const[]) { "v6.example.org", NULL });
  g_assert_cmpuint (flow_at (capture, 1)->syns, ==, 0);
  g_byte_array_unref (hello);
  g_byte_array_unref (hello6);
}

static void
test_http_host (void)
{
  static const char request[] = "GET /index.html HTTP/1.1\r\nUser-Agent: t\r\n"
                                "hOsT:  example.net \r\n\r\n";
  static const char not_http[] = "GETS / HTTP/1.1\r\nHost: no.example\r\n\r\n";
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockFlow *flow;

  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "198.51.100.80", IPPROTO_TCP,
                                                        cf_tcp (43000, 80, 1, CF_SYN, NULL, 0))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "198.51.100.80", IPPROTO_TCP,
                                                        cf_tcp (43000, 80, 2, CF_ACK, request,
                                                                strlen (request)))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "198.51.100.80", IPPROTO_TCP,
                                                        cf_tcp (43001, 80, 2, CF_ACK, not_http,
                                                                strlen (not_http)))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 198.51.100.80:80", NULL });
  flow = flow_at (capture, 0);
  assert_names (flow->http_hosts, (const char *const[]) { "example.net", NULL });
  assert_names (flow->sni, none);
}

static void
test_icmp_echo (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;

  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_ICMP,
                                                        cf_icmp (8, 0, 0x00010001, "ping", 4))));
  cf_pcap_add (pcap, 1, cf_to_guest (0x0800, cf_ipv4 ("192.0.2.1", GUEST4, IPPROTO_ICMP,
                                                      cf_icmp (0, 0, 0x00010001, "ping", 4))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::1", IPPROTO_ICMPV6,
                                                        cf_icmp (128, 0, 0x00020001, NULL, 0))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/dgram/icmp 192.0.2.1:0",
                                                     "inet6/dgram/icmpv6 [2001:db8::1]:0", NULL });
  g_assert_cmpuint (flow_at (capture, 0)->echo_requests, ==, 1);
  g_assert_cmpuint (flow_at (capture, 0)->echo_replies, ==, 1);
  g_assert_cmpuint (flow_at (capture, 0)->reply_packets, ==, 1);
  g_assert_cmpuint (flow_at (capture, 1)->echo_requests, ==, 1);
  g_assert_cmpuint (flow_at (capture, 1)->echo_replies, ==, 0);
  assert_housekeeping (capture, none);
}

/* ---- housekeeping ---- */

static void
test_arp (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;

  cf_pcap_add (pcap, 1, cf_ethernet (capture_broadcast_mac, capture_guest_mac, 0x0806,
                                     cf_arp (1, capture_guest_mac, GUEST4, "10.0.2.2")));
  cf_pcap_add (pcap, 1, cf_to_guest (0x0806, cf_arp (2, capture_gateway_mac, "10.0.2.2",
                                                     GUEST4)));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, none);
  assert_housekeeping (capture, (const char *const[]) { "arp 1 1", NULL });
  assert_anomalies (capture, none);
  g_assert_cmpuint (airlock_capture_get_unmatched_replies (capture), ==, 0);
}

static GByteArray *
nd_message (guint8 type, const char *target)
{
  GByteArray *body = g_byte_array_new ();

  if (target != NULL)
    cf_addr6 (body, target);
  return cf_icmp (type, 0, 0, body->data, body->len);
}

static void
test_neighbour_discovery (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *ns, *mldv2_record;

  ns = nd_message (135, "fe80::2");
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd, cf_ipv6 ("fe80::5054:ff:fe12:3456",
                                                        "ff02::1:ff00:2", IPPROTO_ICMPV6, ns)));
  cf_pcap_add (pcap, 1, cf_to_guest (0x86dd, cf_ipv6 ("fe80::2", "fe80::5054:ff:fe12:3456",
                                                      IPPROTO_ICMPV6,
                                                      nd_message (136, "fe80::2"))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd, cf_ipv6 ("fe80::5054:ff:fe12:3456", "fe80::2",
                                                        IPPROTO_ICMPV6,
                                                        nd_message (136, "fe80::5054:ff:fe12:3456"))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd, cf_ipv6 ("fe80::5054:ff:fe12:3456", "ff02::2",
                                                        IPPROTO_ICMPV6, nd_message (133, NULL))));
  /* MLDv2 report behind a hop-by-hop header with router alert */
  mldv2_record = g_byte_array_new ();
  cf_u8 (mldv2_record, 4);   /* CHANGE_TO_EXCLUDE */
  cf_u8 (mldv2_record, 0);
  cf_be16 (mldv2_record, 0);
  cf_addr6 (mldv2_record, "ff02::1:ff12:3456");
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd,
                                       cf_ipv6 ("::", "ff02::16", 0,
                                                cf_ipv6_router_alert (IPPROTO_ICMPV6,
                                                                      cf_icmp (143, 0, 1,
                                                                               mldv2_record->data,
                                                                               mldv2_record->len)))));
  /* IGMPv3 report from the IPv4 side */
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4_full (GUEST4, "224.0.0.22", IPPROTO_IGMP,
                                                             1, 2, 0x4000,
                                                             cf_icmp (0x22, 0, 0, NULL, 0))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, none);
  assert_housekeeping (capture, (const char *const[]) { "router-solicitation 1 0",
                                                        "neighbour-solicitation 1 0",
                                                        "neighbour-advertisement 1 1",
                                                        "mldv2-report 1 0", "igmp 1 0", NULL });
  assert_anomalies (capture, none);
  g_byte_array_unref (mldv2_record);
}

/* An ICMP error quoting a reply that came to the guest is housekeeping;
 * one quoting a packet to anywhere else is a flow. */
static void
test_icmp_errors (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *late_reply = cf_ipv4 ("10.0.2.3", GUEST4, IPPROTO_UDP, cf_udp (53, 5353, NULL, 0));
  GByteArray *crafted = cf_ipv4 (GUEST4, "192.0.2.66", IPPROTO_UDP, cf_udp (1, 2, NULL, 0));

  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "10.0.2.3", IPPROTO_ICMP,
                                                        cf_icmp (3, 3, 0, late_reply->data,
                                                                 late_reply->len))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.66", IPPROTO_ICMP,
                                                        cf_icmp (3, 3, 0, crafted->data,
                                                                 crafted->len))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/dgram/icmp 192.0.2.66:0", NULL });
  assert_housekeeping (capture, (const char *const[]) { "icmp-error 1 0", NULL });
  g_byte_array_unref (late_reply);
  g_byte_array_unref (crafted);
}

/* ---- layers ---- */

static void
test_ipv6_extension_headers (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;

  /* hop-by-hop, then a segment routing header whose final segment is
   * 2001:db8::99: the socket connected there, the header's destination is
   * only the next hop */
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd,
                                       cf_ipv6 (GUEST6, "2001:db8::1", 0,
                                                cf_ipv6_options (43,
                                                                 cf_ipv6_srh (IPPROTO_UDP,
                                                                              "2001:db8::99",
                                                                              cf_udp (6000, 9, "r", 1))))));
  /* hop-by-hop, destination options, TCP */
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd,
                                       cf_ipv6 (GUEST6, "2001:db8::2", 0,
                                                cf_ipv6_options (60,
                                                                 cf_ipv6_options (IPPROTO_TCP,
                                                                                  cf_tcp (6001, 25, 1, CF_SYN, NULL, 0))))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet6/dgram/udp [2001:db8::99]:9",
                                                     "inet6/stream/tcp [2001:db8::2]:25", NULL });
  g_assert_cmpuint (flow_at (capture, 0)->ip_options, ==, 1);
  g_assert_cmpuint (flow_at (capture, 0)->datagrams, ==, 1);
  g_assert_cmpuint (flow_at (capture, 1)->syns, ==, 1);
  assert_anomalies (capture, none);
}

static void
test_vlan (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *tagged = g_byte_array_new ();
  GByteArray *nested = g_byte_array_new ();

  cf_be16 (tagged, 42);
  cf_be16 (tagged, 0x0800);
  cf_take (tagged, cf_ipv4 (GUEST4, "192.0.2.5", IPPROTO_UDP, cf_udp (1, 9, "v", 1)));
  cf_pcap_add (pcap, 1, cf_from_guest (0x8100, tagged));
  cf_be16 (nested, 42);
  cf_be16 (nested, 0x8100);
  cf_be16 (nested, 43);
  cf_be16 (nested, 0x0800);
  cf_take (nested, cf_ipv4 (GUEST4, "192.0.2.6", IPPROTO_UDP, cf_udp (1, 9, "v", 1)));
  cf_pcap_add (pcap, 1, cf_from_guest (0x8100, nested));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/dgram/udp 192.0.2.5:9", NULL });
  /* the guest has no VLAN interface: even one tag is an anomaly */
  assert_anomalies (capture, (const char *const[]) { "vlan 1", "vlan-tag 2", NULL });
  g_assert_cmpstr (((AirlockCaptureAnomaly *) airlock_capture_get_anomalies (capture)->pdata[0])
                     ->first_reason, ==,
                   "frame 2 at offset 87 (from the guest): nested 802.1Q tag 0x8100");
}

/* A RST from QEMU answering a guest SYN is attached to the flow; one
 * answering nothing makes no flow. */
static void
test_gateway_rst (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockFlow *flow;

  cf_pcap_add (pcap, 1, syn_frame ());
  cf_pcap_add (pcap, 1, cf_to_guest (0x0800, cf_ipv4 ("192.0.2.1", GUEST4, IPPROTO_TCP,
                                                      cf_tcp (9, 40000, 0, CF_RST | CF_ACK,
                                                              NULL, 0))));
  cf_pcap_add (pcap, 1, cf_to_guest (0x0800, cf_ipv4 ("192.0.2.7", GUEST4, IPPROTO_TCP,
                                                      cf_tcp (9, 40000, 0, CF_RST | CF_ACK,
                                                              NULL, 0))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 192.0.2.1:9", NULL });
  flow = flow_at (capture, 0);
  g_assert_true (flow->rst_seen);
  g_assert_cmpuint (flow->reply_packets, ==, 1);
  g_assert_cmpuint (flow->reply_bytes, ==, 54);
  g_assert_cmpuint (flow->packets, ==, 1);
  g_assert_cmpuint (airlock_capture_get_unmatched_replies (capture), ==, 1);
  g_assert_cmpuint (airlock_capture_get_guest_frames (capture), ==, 1);
}

/* From the far end of the guest's TCP connection from @guest_port. */
static GByteArray *
far_tcp (guint16 guest_port, guint8 flags, const char *data)
{
  return cf_to_guest (0x0800, cf_ipv4 ("192.0.2.1", GUEST4, IPPROTO_TCP,
                                       cf_tcp (9, guest_port, 5000, flags, data,
                                               data ? strlen (data) : 0)));
}

static GByteArray *
guest_tcp (guint16 port, guint32 seq, guint8 flags)
{
  return cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_TCP,
                                         cf_tcp (port, 9, seq, flags, NULL, 0)));
}

/* A connection the far end took is one it sent bytes or a FIN on, counted
 * once: a SYN-ACK or a bare ACK proves nothing (the kernel sends them for a
 * connection no process accepted), a RST is what a queued connection gets
 * when its listener closes, and a new SYN from the same port is a new
 * connection. */
static void
test_tcp_taken (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockFlow *flow;

  /* 40000: handshake, the far end's data, then its FIN: taken once. */
  cf_pcap_add (pcap, 1, guest_tcp (40000, 1000, CF_SYN));
  cf_pcap_add (pcap, 1, far_tcp (40000, CF_SYN | CF_ACK, NULL));
  cf_pcap_add (pcap, 1, guest_tcp (40000, 1001, CF_ACK));
  cf_pcap_add (pcap, 1, far_tcp (40000, CF_ACK | CF_PSH, "SSH-2.0-x\r\n"));
  cf_pcap_add (pcap, 1, far_tcp (40000, CF_FIN | CF_ACK, NULL));
  /* 40001: handshake, then the far end's ACK and RST: not taken. */
  cf_pcap_add (pcap, 2, guest_tcp (40001, 2000, CF_SYN));
  cf_pcap_add (pcap, 2, far_tcp (40001, CF_SYN | CF_ACK, NULL));
  cf_pcap_add (pcap, 2, guest_tcp (40001, 2001, CF_ACK));
  cf_pcap_add (pcap, 2, far_tcp (40001, CF_ACK, NULL));
  cf_pcap_add (pcap, 2, far_tcp (40001, CF_RST | CF_ACK, NULL));
  /* 40000 again, with a new initial sequence number: a second connection. */
  cf_pcap_add (pcap, 3, guest_tcp (40000, 9000, CF_SYN));
  cf_pcap_add (pcap, 3, far_tcp (40000, CF_SYN | CF_ACK, NULL));
  cf_pcap_add (pcap, 3, far_tcp (40000, CF_FIN | CF_ACK, NULL));
  /* A FIN to a port the guest never connected from: no connection. */
  cf_pcap_add (pcap, 4, far_tcp (40009, CF_FIN | CF_ACK, NULL));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 192.0.2.1:9", NULL });
  flow = flow_at (capture, 0);
  g_assert_cmpuint (flow->syns, ==, 3);
  g_assert_cmpuint (flow->taken, ==, 2);
  g_assert_true (flow->rst_seen);
}

static void
test_fragments (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *first = cf_udp (7000, 9, "0123456789abcdef", 16);
  GByteArray *orphan = g_byte_array_new ();

  /* the UDP header says 8 + 32 bytes; the first fragment holds 8 + 16 */
  first->data[5] = 40;
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4_full (GUEST4, "192.0.2.9", IPPROTO_UDP,
                                                             0, 77, 0x2000, first)));
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4_full (GUEST4, "192.0.2.9", IPPROTO_UDP,
                                                             1, 77, 3, cf_udp (0, 0, "tail", 4))));
  /* a later fragment of a datagram whose head was never sent */
  cf_raw (orphan, "later bytes only", 16);
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd,
                                       cf_ipv6 (GUEST6, "2001:db8::9", 44,
                                                cf_ipv6_fragment (IPPROTO_UDP, 0x0010, 5,
                                                                  orphan))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/dgram/udp 192.0.2.9:9",
                                                     "inet6/dgram/udp [2001:db8::9]:0", NULL });
  g_assert_cmpuint (flow_at (capture, 0)->packets, ==, 2);
  g_assert_cmpuint (flow_at (capture, 0)->fragments, ==, 2);
  g_assert_cmpuint (flow_at (capture, 0)->datagrams, ==, 1);
  g_assert_cmpuint (flow_at (capture, 0)->ip_options, ==, 1);
  g_assert_cmpuint (flow_at (capture, 1)->fragments, ==, 1);
  assert_anomalies (capture, (const char *const[]) { "fragment 1", NULL });
}

/* ---- malformed packets ---- */

static void
test_truncated_packet (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *frame;
  GPtrArray *anomalies;

  /* an IP total length past the end of the frame: no destination to trust */
  frame = syn_frame ();
  frame->data[14 + 3] = 200;
  cf_pcap_add (pcap, 1, frame);
  /* a TCP header cut after 10 bytes: still egress, to port 0 */
  frame = cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_TCP,
                                          cf_tcp (40000, 9, 1, CF_SYN, NULL, 0)));
  frame->data[14 + 3] = 30;
  g_byte_array_set_size (frame, 14 + 30);
  cf_pcap_add (pcap, 1, frame);
  /* clipped by the snapshot length inside the TCP header */
  cf_pcap_add_clipped (pcap, 1, syn_frame (), 40, 54);
  /* a runt Ethernet frame from QEMU */
  frame = g_byte_array_new ();
  cf_zeros (frame, 9);
  cf_pcap_add (pcap, 1, frame);

  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 192.0.2.1:0", NULL });
  g_assert_cmpuint (flow_at (capture, 0)->packets, ==, 2);
  g_assert_cmpuint (flow_at (capture, 0)->malformed, ==, 2);
  assert_anomalies (capture, (const char *const[]) { "clipped 1", "ethernet 1", "ipv4 1",
                                                     "tcp 1", NULL });
  anomalies = airlock_capture_get_anomalies (capture);
  g_assert_cmpstr (((AirlockCaptureAnomaly *) anomalies->pdata[2])->first_reason, ==,
                   "frame 1 at offset 24 (from the guest): IPv4 total length 200 outside "
                   "20–40");
  g_assert_cmpstr (((AirlockCaptureAnomaly *) anomalies->pdata[3])->first_reason, ==,
                   "frame 2 at offset 94 (from the guest): TCP header truncated: 20 bytes "
                   "needed, 10 sent");
  g_assert_cmpstr (((AirlockCaptureAnomaly *) anomalies->pdata[1])->first_reason, ==,
                   "frame 4 at offset 210 (from QEMU): Ethernet header truncated: 14 bytes "
                   "needed, 9 sent");
}

static void
test_absurd_lengths (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *frame, *chain, *record;

  /* IPv6 payload length 65535 in a short frame */
  frame = cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::1", IPPROTO_UDP,
                                          cf_udp (1, 9, NULL, 0)));
  frame->data[14 + 4] = 0xff;
  frame->data[14 + 5] = 0xff;
  cf_pcap_add (pcap, 1, frame);
  /* UDP length 65535 */
  frame = cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_UDP,
                                          cf_udp (1, 9, NULL, 0)));
  frame->data[14 + 20 + 4] = 0xff;
  frame->data[14 + 20 + 5] = 0xff;
  cf_pcap_add (pcap, 1, frame);
  /* nine destination-options headers: past the walk's bound */
  chain = cf_udp (1, 9, NULL, 0);
  for (int i = 0; i < 9; i++)
    chain = cf_ipv6_options (i == 0 ? IPPROTO_UDP : 60, chain);
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::2", 60, chain)));
  /* a TCP data offset of 60 with 20 bytes of header */
  frame = syn_frame ();
  frame->data[14 + 20 + 12] = 0xf0;
  cf_pcap_add (pcap, 1, frame);
  /* a TLS record that claims 65535 bytes: no name, no crash */
  record = cf_tls_client_hello ("absurd.example");
  record->data[3] = 0xff;
  record->data[4] = 0xff;
  cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.2", IPPROTO_TCP,
                                                        cf_tcp (2, 443, 1, CF_ACK, record->data,
                                                                record->len))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/dgram/udp 192.0.2.1:0",
                                                     "inet6/raw/raw [2001:db8::2]:0",
                                                     "inet/stream/tcp 192.0.2.1:0",
                                                     "inet/stream/tcp 192.0.2.2:443", NULL });
  assert_names (flow_at (capture, 3)->sni, none);
  assert_anomalies (capture, (const char *const[]) { "ipv6 2", "tcp 1", "udp 1", NULL });
  g_byte_array_unref (record);
}

/* A frame from QEMU that is not IP, ARP or housekeeping answers nothing. */
static void
test_non_ip (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  GByteArray *payload = g_byte_array_new ();

  cf_zeros (payload, 46);
  cf_pcap_add (pcap, 1, cf_from_guest (0x88b5, payload));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, none);
  assert_anomalies (capture, (const char *const[]) { "non-ip 1", NULL });
  g_assert_cmpuint (((AirlockCaptureAnomaly *) airlock_capture_get_anomalies (capture)->pdata[0])
                      ->from_guest, ==, 1);
}

/* A frame neither from the guest's MAC nor QEMU's own (its MAC and its
 * addresses) is the guest sending under a forged source: egress all the
 * same, and an anomaly with its frame number.  That includes a broadcast
 * that only looks like QEMU's. */
static void
test_forged_source_mac (void)
{
  static const guint8 forged[6] = { 0x02, 0, 0, 0, 0, 0x99 };
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockCaptureAnomaly *first;

  cf_pcap_add (pcap, 1, cf_ethernet (capture_gateway_mac, forged, 0x0800,
                                     cf_ipv4 ("10.0.2.99", "192.0.2.44", IPPROTO_TCP,
                                              cf_tcp (1234, 443, 5, CF_SYN, NULL, 0))));
  /* from the same forged source to broadcast */
  cf_pcap_add (pcap, 1, cf_ethernet (capture_broadcast_mac, forged, 0x0800,
                                     cf_ipv4 ("10.0.2.99", "192.0.2.45", IPPROTO_UDP,
                                              cf_udp (1, 9, NULL, 0))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 192.0.2.44:443",
                                                     "inet/dgram/udp 192.0.2.45:9", NULL });
  assert_anomalies (capture, (const char *const[]) { "foreign-mac 2", "foreign-source 2", NULL });
  g_assert_cmpuint (airlock_capture_get_guest_frames (capture), ==, 2);
  g_assert_cmpuint (airlock_capture_get_unmatched_replies (capture), ==, 0);
  first = airlock_capture_get_first_anomaly (capture);
  g_assert_nonnull (first);
  g_assert_cmpuint (first->first_frame, ==, 1);
}

/* The finding: UDP to the broadcast MAC from QEMU's own MAC, but from and
 * to addresses that are not QEMU's and the guest's, was taken as QEMU's
 * and judged by nothing.  It is the guest's egress and an anomaly. */
static void
test_spoofed_qemu_mac_broadcast (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockCaptureAnomaly *first;

  cf_pcap_add (pcap, 1, syn_frame ());
  cf_pcap_add (pcap, 1, cf_ethernet (capture_broadcast_mac, capture_gateway_mac, 0x0800,
                                     cf_ipv4 (GUEST4, "192.0.2.45", IPPROTO_UDP,
                                              cf_udp (1, 9, "x", 1))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, (const char *const[]) { "inet/stream/tcp 192.0.2.1:9",
                                                     "inet/dgram/udp 192.0.2.45:9", NULL });
  assert_anomalies (capture, (const char *const[]) { "foreign-mac 1", NULL });
  first = airlock_capture_get_first_anomaly (capture);
  g_assert_cmpuint (first->first_frame, ==, 2);
  g_assert_cmpstr (first->first_reason, ==,
                   "frame 2 at offset 94 (from the guest): an IPv4 packet from MAC "
                   "52:55:0a:00:02:02, 10.0.2.15 to 192.0.2.45, is not QEMU's (it sends from "
                   "52:55:0a:00:02:02 to the guest only)");
}

/* ---- every frame judged: the guest kernel's own housekeeping is clean,
 * anything about foreign addresses is an anomaly with its frame ---- */

#define GUEST_LINK_LOCAL "fe80::5054:ff:fe12:3456"

static GByteArray *
mldv2_report (const char *const *groups, guint16 sources)
{
  GByteArray *records = g_byte_array_new ();
  GByteArray *icmp;
  guint n = g_strv_length ((char **) groups);

  for (guint i = 0; i < n; i++)
    {
      cf_u8 (records, 4);
      cf_u8 (records, 0);
      cf_be16 (records, sources);
      cf_addr6 (records, groups[i]);
      for (guint j = 0; j < sources; j++)
        cf_addr6 (records, "2001:db8::7");
    }
  icmp = cf_icmp (143, 0, n, records->data, records->len);
  g_byte_array_unref (records);
  return cf_ipv6_router_alert (IPPROTO_ICMPV6, icmp);
}

/* A neighbour solicitation or advertisement for @target with a link-layer
 * address option (@option_type 1 or 2) naming @mac, or none when NULL. */
static GByteArray *
nd_with_option (guint8 type, const char *target, guint8 option_type, const guint8 *mac)
{
  GByteArray *body = g_byte_array_new ();
  GByteArray *icmp;

  cf_addr6 (body, target);
  if (mac != NULL)
    {
      cf_u8 (body, option_type);
      cf_u8 (body, 1);
      cf_raw (body, mac, 6);
    }
  icmp = cf_icmp (type, 0, type == 136 ? 0x60000000 : 0, body->data, body->len);
  g_byte_array_unref (body);
  return icmp;
}

/* What the Debian 6.1 guest kernel sends on this link by itself, as
 * guest/network.c configures it (accept_dad, accept_ra and autoconf
 * off; fec0::15/64 and 10.0.2.15/24): MLDv2 reports of the
 * solicited-node groups of fec0::15 and of its link-local address (from ::
 * before that address is ready), ARP for the gateway and the resolver,
 * neighbour solicitations for the gateway with its MAC, and advertisements
 * of its own addresses answering QEMU.  None of it is an anomaly. */
static void
test_guest_housekeeping_is_clean (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;

  cf_pcap_add (pcap, 1, cf_ethernet ((const guint8[]) { 0x33, 0x33, 0, 0, 0, 0x16 },
                                     capture_guest_mac, 0x86dd,
                                     cf_ipv6 ("::", "ff02::16", 0,
                                              mldv2_report ((const char *const[]) {
                                                              "ff02::1:ff00:15", NULL }, 0))));
  cf_pcap_add (pcap, 1, cf_ethernet (capture_broadcast_mac, capture_guest_mac, 0x0806,
                                     cf_arp (1, capture_guest_mac, GUEST4, "10.0.2.2")));
  cf_pcap_add (pcap, 1, cf_to_guest (0x0806, cf_arp (2, capture_gateway_mac, "10.0.2.2", GUEST4)));
  cf_pcap_add (pcap, 1, cf_ethernet (capture_broadcast_mac, capture_guest_mac, 0x0806,
                                     cf_arp (1, capture_guest_mac, GUEST4, "10.0.2.3")));
  cf_pcap_add (pcap, 1, cf_ethernet (capture_guest_mac,
                                     (const guint8[]) { 0x52, 0x55, 10, 0, 2, 3 }, 0x0806,
                                     cf_arp (2, (const guint8[]) { 0x52, 0x55, 10, 0, 2, 3 },
                                             "10.0.2.3", GUEST4)));
  cf_pcap_add (pcap, 1, cf_ethernet ((const guint8[]) { 0x33, 0x33, 0xff, 0, 0, 2 },
                                     capture_guest_mac, 0x86dd,
                                     cf_ipv6 (GUEST6, "ff02::1:ff00:2", IPPROTO_ICMPV6,
                                              nd_with_option (135, "fec0::2", 1,
                                                              capture_guest_mac))));
  cf_pcap_add (pcap, 1, cf_to_guest (0x86dd, cf_ipv6 ("fec0::2", GUEST6, IPPROTO_ICMPV6,
                                                      nd_with_option (136, "fec0::2", 2,
                                                                      (const guint8[]) {
                                                                        0x52, 0x56, 0, 0, 0, 2 }))));
  /* QEMU asking for the guest, and the guest's answer */
  cf_pcap_add (pcap, 1, cf_to_guest (0x86dd, cf_ipv6 ("fec0::2", "ff02::1:ff00:15", IPPROTO_ICMPV6,
                                                      nd_with_option (135, GUEST6, 1, NULL))));
  cf_pcap_add (pcap, 1, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "fec0::2", IPPROTO_ICMPV6,
                                                        nd_with_option (136, GUEST6, 2,
                                                                        capture_guest_mac))));
  cf_pcap_add (pcap, 1, cf_ethernet ((const guint8[]) { 0x33, 0x33, 0, 0, 0, 0x16 },
                                     capture_guest_mac, 0x86dd,
                                     cf_ipv6 (GUEST_LINK_LOCAL, "ff02::16", 0,
                                              mldv2_report ((const char *const[]) {
                                                              "ff02::1:ff12:3456",
                                                              "ff02::1:ff00:15", NULL }, 0))));
  /* duplicate address detection, should it be on: from ::, for itself */
  cf_pcap_add (pcap, 1, cf_ethernet ((const guint8[]) { 0x33, 0x33, 0xff, 0x12, 0x34, 0x56 },
                                     capture_guest_mac, 0x86dd,
                                     cf_ipv6 ("::", "ff02::1:ff12:3456", IPPROTO_ICMPV6,
                                              nd_with_option (135, GUEST_LINK_LOCAL, 1, NULL))));
  /* a router advertisement from QEMU (slirp's fe80::2) to all nodes */
  cf_pcap_add (pcap, 1, cf_ethernet ((const guint8[]) { 0x33, 0x33, 0, 0, 0, 1 },
                                     (const guint8[]) { 0x52, 0x56, 0, 0, 0, 2 }, 0x86dd,
                                     cf_ipv6 ("fe80::2", "ff02::1", IPPROTO_ICMPV6,
                                              cf_icmp (134, 0, 0x40000708, NULL, 0))));
  capture = analyse_ok (pcap);
  assert_flow_keys (capture, none);
  assert_anomalies (capture, none);
  g_assert_null (airlock_capture_get_first_anomaly (capture));
  assert_housekeeping (capture, (const char *const[]) { "arp 2 2", "router-advertisement 0 1",
                                                        "neighbour-solicitation 2 1",
                                                        "neighbour-advertisement 1 1",
                                                        "mldv2-report 2 0", NULL });
}

/* Captures of real runs (airlock gate of the egress sample, both arches,
 * this tree): every frame is explained, none is an anomaly.  A rule that
 * flagged any of these would fail every gate. */
static void
test_real_run (gconstpointer data)
{
  const char *arch = data;
  g_autofree char *name = g_strdup_printf ("capture-egress-%s.pcap", arch);
  g_autofree char *path = g_build_filename (CAPTURE_DATA_DIR, name, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autoptr (AirlockCapture) capture = NULL;
  char *contents = NULL;
  gsize len = 0;
  guint mac[6];
  guint8 mac_bytes[6];
  AirlockCaptureGuest guest;

  g_assert_true (g_file_get_contents (path, &contents, &len, &error));
  g_assert_no_error (error);
  bytes = g_bytes_new_take (contents, len);
  g_assert_cmpint (sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2],
                           &mac[3], &mac[4], &mac[5]), ==, 6);
  for (int i = 0; i < 6; i++)
    mac_bytes[i] = (guint8) mac[i];
  airlock_capture_guest_init (&guest, mac_bytes);
  capture = airlock_capture_analyse (bytes, &guest, &error);
  g_assert_no_error (error);
  assert_anomalies (capture, none);
  g_assert_cmpuint (airlock_capture_get_unmatched_replies (capture), ==, 0);
  /* the run's egress is there as flows: the controls and the sample's own */
  g_assert_nonnull (airlock_capture_lookup_flow (capture, "inet/stream/tcp 192.0.2.9:9"));
  g_assert_nonnull (airlock_capture_lookup_flow (capture, "inet6/dgram/udp [2001:db8::53]:53"));
  g_assert_nonnull (airlock_capture_lookup_flow (capture, "inet/stream/tcp 198.51.100.80:443"));
  g_assert_cmpuint (airlock_capture_get_housekeeping (capture)->len, >=, 3);
}

/* Each class of anomaly, alone in a capture after one clean frame, names
 * frame 2 and its reason. */
typedef struct {
  const char *name;
  GByteArray *(*frame) (void);
  const char *kind;
  const char *reason;   /* after "frame 2 at offset 94 (from the guest): " */
} AnomalyCase;

static GByteArray *
frame_nd_foreign_target (void)
{
  /* advertising an address that is not the guest's */
  return cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "ff02::1", IPPROTO_ICMPV6,
                                         nd_with_option (136, "fec0::2", 2, capture_guest_mac)));
}

static GByteArray *
frame_nd_off_link (void)
{
  return cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "ff02::1:ff00:1", IPPROTO_ICMPV6,
                                         nd_with_option (135, "2001:db8::1", 1, capture_guest_mac)));
}

static GByteArray *
frame_nd_foreign_mac_option (void)
{
  return cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "ff02::1:ff00:2", IPPROTO_ICMPV6,
                                         nd_with_option (135, "fec0::2", 1, capture_gateway_mac)));
}

static GByteArray *
frame_router_advertisement (void)
{
  return cf_from_guest (0x86dd, cf_ipv6 (GUEST_LINK_LOCAL, "ff02::1", IPPROTO_ICMPV6,
                                         cf_icmp (134, 0, 0, NULL, 0)));
}

static GByteArray *
frame_mldv2_foreign_group (void)
{
  return cf_from_guest (0x86dd, cf_ipv6 (GUEST_LINK_LOCAL, "ff02::16", 0,
                                         mldv2_report ((const char *const[]) {
                                                         "ff02::1:ff00:15", "ff0e::db8:1", NULL },
                                                       0)));
}

static GByteArray *
frame_mldv2_sources (void)
{
  return cf_from_guest (0x86dd, cf_ipv6 (GUEST_LINK_LOCAL, "ff02::16", 0,
                                         mldv2_report ((const char *const[]) {
                                                         "ff02::1:ff00:15", NULL }, 1)));
}

static GByteArray *
frame_mldv1_foreign_group (void)
{
  GByteArray *group = g_byte_array_new ();
  GByteArray *icmp;

  cf_addr6 (group, "ff05::1:3");
  icmp = cf_icmp (131, 0, 0, group->data, group->len);
  g_byte_array_unref (group);
  return cf_from_guest (0x86dd, cf_ipv6 (GUEST_LINK_LOCAL, "ff05::1:3", 0,
                                         cf_ipv6_router_alert (IPPROTO_ICMPV6, icmp)));
}

static GByteArray *
frame_igmp_foreign_group (void)
{
  return cf_from_guest (0x0800, cf_ipv4_full (GUEST4, "239.1.2.3", IPPROTO_IGMP, 1, 2, 0x4000,
                                              cf_icmp (0x16, 0, 0xef010203, NULL, 0)));
}

static GByteArray *
frame_arp_claims_gateway (void)
{
  return cf_ethernet (capture_broadcast_mac, capture_guest_mac, 0x0806,
                      cf_arp (2, capture_guest_mac, "10.0.2.2", GUEST4));
}

static GByteArray *
frame_arp_off_link (void)
{
  return cf_ethernet (capture_broadcast_mac, capture_guest_mac, 0x0806,
                      cf_arp (1, capture_guest_mac, GUEST4, "192.0.2.1"));
}

static GByteArray *
frame_unknown_ethertype (void)
{
  GByteArray *payload = g_byte_array_new ();

  cf_zeros (payload, 46);
  return cf_from_guest (0x88b5, payload);
}

static GByteArray *
frame_foreign_source (void)
{
  return cf_from_guest (0x0800, cf_ipv4 ("10.0.2.2", "192.0.2.8", IPPROTO_UDP,
                                         cf_udp (1, 9, "s", 1)));
}

static GByteArray *
frame_qemu_ipv6_mac_mismatch (void)
{
  /* 52:56 like QEMU's, but not the low bytes of the source fec0::2 */
  return cf_ethernet (capture_guest_mac, (const guint8[]) { 0x52, 0x56, 0, 0, 0, 9 }, 0x86dd,
                      cf_ipv6 ("fec0::2", GUEST6, IPPROTO_UDP, cf_udp (53, 9, "q", 1)));
}

static const AnomalyCase anomaly_cases[] = {
  { "nd-foreign-target", frame_nd_foreign_target, "neighbour",
    "a neighbour advertisement for fec0::2, not the guest's address" },
  { "nd-off-link", frame_nd_off_link, "neighbour",
    "a neighbour solicitation for 2001:db8::1, which is not on the guest's link" },
  { "nd-foreign-mac-option", frame_nd_foreign_mac_option, "neighbour",
    "a link-layer address option naming MAC 52:55:0a:00:02:02" },
  { "router-advertisement", frame_router_advertisement, "neighbour",
    "a router-advertisement, which only a router sends" },
  { "mld-foreign-group", frame_mldv2_foreign_group, "multicast",
    "an MLDv2 record about group ff0e::db8:1 (0 sources, 0 words of auxiliary data): the guest's "
    "kernel reports only the groups of its own addresses" },
  { "mld-sources", frame_mldv2_sources, "multicast",
    "an MLDv2 record about group ff02::1:ff00:15 (1 sources, 0 words of auxiliary data): the "
    "guest's kernel reports only the groups of its own addresses" },
  { "mldv1-foreign-group", frame_mldv1_foreign_group, "multicast",
    "MLD about group ff05::1:3, which the guest's kernel does not join" },
  { "igmp-foreign-group", frame_igmp_foreign_group, "multicast",
    "IGMP about group 239.1.2.3, which the guest's kernel does not join" },
  { "arp-foreign-ip", frame_arp_claims_gateway, "neighbour",
    "ARP from the guest claims 10.0.2.2, not its address" },
  { "arp-off-link", frame_arp_off_link, "neighbour",
    "ARP from the guest about 192.0.2.1, which is not on its link" },
  { "unknown-ethertype", frame_unknown_ethertype, "non-ip", "EtherType 0x88b5" },
  { "foreign-source", frame_foreign_source, "foreign-source",
    "an IPv4 packet from source address 10.0.2.2, not the guest's" },
  { "qemu-ipv6-mac-mismatch", frame_qemu_ipv6_mac_mismatch, "foreign-mac",
    "an IPv6 packet from MAC 52:56:00:00:00:09, fec0::2 to fec0::15, is not QEMU's (it sends "
    "from 52:56: and the source's low 32 bits, to the guest only)" },
};

static void
test_anomaly_class (gconstpointer data)
{
  const AnomalyCase *c = data;
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockCaptureAnomaly *first;
  g_autofree char *reason = NULL;

  cf_pcap_add (pcap, 1, syn_frame ());
  cf_pcap_add (pcap, 2, c->frame ());
  capture = analyse_ok (pcap);
  first = airlock_capture_get_first_anomaly (capture);
  g_assert_nonnull (first);
  g_assert_cmpstr (airlock_capture_anomaly_kind_to_string (first->kind), ==, c->kind);
  g_assert_cmpuint (first->first_frame, ==, 2);
  reason = g_strdup_printf ("frame 2 at offset 94 (%s): %s",
                            first->from_guest ? "from the guest" : "from QEMU", c->reason);
  g_assert_cmpstr (first->first_reason, ==, reason);
  g_assert_cmpuint (first->from_guest, ==, 1);
}

/* Flows past the cap were dropped unjudged: now the first flow that does
 * not fit is an anomaly naming its frame. */
static void
test_flow_overflow (void)
{
  GByteArray *pcap = cf_pcap_new ();
  g_autoptr (AirlockCapture) capture = NULL;
  const AirlockCaptureAnomaly *first;

  for (guint i = 0; i <= AIRLOCK_CAPTURE_FLOWS_MAX; i++)
    cf_pcap_add (pcap, 1, cf_from_guest (0x0800, cf_ipv4 (GUEST4, i < 60000 ? "192.0.2.1"
                                                                            : "192.0.2.2",
                                                          IPPROTO_UDP,
                                                          cf_udp (1, (guint16) (i % 60000 + 1),
                                                                  NULL, 0))));
  capture = analyse_ok (pcap);
  g_assert_cmpuint (airlock_capture_get_flows (capture)->len, ==, AIRLOCK_CAPTURE_FLOWS_MAX);
  assert_anomalies (capture, (const char *const[]) { "limit 1", NULL });
  first = airlock_capture_get_first_anomaly (capture);
  g_assert_cmpuint (first->first_frame, ==, AIRLOCK_CAPTURE_FLOWS_MAX + 1);
  g_assert_nonnull (strstr (first->first_reason, "more than 65536 flows"));
}

/* ---- the capture file after a run ---- */

/* Bytes this process has read so far (/proc/self/io rchar). */
static guint64
bytes_read_so_far (void)
{
  g_autofree char *io = NULL;
  const char *at;

  g_assert_true (g_file_get_contents ("/proc/self/io", &io, NULL, NULL));
  at = strstr (io, "rchar: ");
  g_assert_nonnull (at);
  return g_ascii_strtoull (at + 7, NULL, 10);
}

/* A capture over AIRLOCK_BOUND_CAPTURE is refused with a reason naming the
 * bound, and without being read: what the live run does with net.pcap
 * (lib/vm/teardown.c) before the analysis, whatever size the guest made it. */
static void
test_capture_over_bound_refused_unread (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autofree char *path = NULL;
  g_autofree char *expected = NULL;
  guint64 before, after;
  int fd = g_file_open_tmp ("airlock-capture-XXXXXX", &path, &error);

  g_assert_no_error (error);
  /* sparse: it costs no disk */
  g_assert_cmpint (ftruncate (fd, (off_t) AIRLOCK_BOUND_CAPTURE + 1), ==, 0);
  close (fd);

  before = bytes_read_so_far ();
  bytes = airlock_read_file_bounded (path, AIRLOCK_BOUND_CAPTURE, &error);
  after = bytes_read_so_far ();
  g_assert_null (bytes);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
  expected = g_strdup_printf ("cannot read '%s': it is 268435457 bytes, over the bound of "
                              "268435456", path);
  g_assert_cmpstr (error->message, ==, expected);
  /* only the /proc/self/io read itself */
  g_assert_cmpuint (after - before, <, 4096);

  /* at the bound exactly it is read, all of it: a small bound shows it */
  g_clear_error (&error);
  g_assert_true (g_file_set_contents (path, "0123456789", 10, &error));
  bytes = airlock_read_file_bounded (path, 10, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), "0123456789", 10);
  g_clear_pointer (&bytes, g_bytes_unref);
  bytes = airlock_read_file_bounded (path, 9, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
  g_assert_null (bytes);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/net/pcap/empty", test_empty_capture);
  g_test_add_func ("/net/pcap/truncated-file", test_truncated_file);
  g_test_add_func ("/net/pcap/bad-header", test_bad_header);
  g_test_add_func ("/net/pcap/absurd-record-lengths", test_absurd_record_lengths);
  g_test_add_func ("/net/pcap/big-endian-nanoseconds", test_byte_orders);
  g_test_add_func ("/net/flows/tcp-syn-v4", test_tcp_syn_v4);
  g_test_add_func ("/net/flows/tcp-syn-v6", test_tcp_syn_v6);
  g_test_add_func ("/net/flows/udp", test_udp);
  g_test_add_func ("/net/flows/key-matches-attempt-key", test_key_matches_attempt_key);
  g_test_add_func ("/net/flows/dns-udp", test_dns_udp);
  g_test_add_func ("/net/flows/dns-tcp-split", test_dns_tcp_split);
  g_test_add_func ("/net/flows/tls-sni", test_tls_sni);
  g_test_add_func ("/net/flows/http-host", test_http_host);
  g_test_add_func ("/net/flows/icmp-echo", test_icmp_echo);
  g_test_add_func ("/net/flows/gateway-rst", test_gateway_rst);
  g_test_add_func ("/net/flows/tcp-taken-by-the-far-end", test_tcp_taken);
  g_test_add_func ("/net/flows/fragments", test_fragments);
  g_test_add_func ("/net/housekeeping/arp", test_arp);
  g_test_add_func ("/net/housekeeping/neighbour-discovery", test_neighbour_discovery);
  g_test_add_func ("/net/housekeeping/icmp-errors", test_icmp_errors);
  g_test_add_func ("/net/decode/ipv6-extension-headers", test_ipv6_extension_headers);
  g_test_add_func ("/net/decode/vlan", test_vlan);
  g_test_add_func ("/net/decode/truncated-packet", test_truncated_packet);
  g_test_add_func ("/net/decode/absurd-lengths", test_absurd_lengths);
  g_test_add_func ("/net/decode/non-ip", test_non_ip);
  g_test_add_func ("/net/decode/forged-source-mac", test_forged_source_mac);
  g_test_add_func ("/net/judge/spoofed-qemu-mac-broadcast", test_spoofed_qemu_mac_broadcast);
  g_test_add_func ("/net/judge/guest-housekeeping-is-clean", test_guest_housekeeping_is_clean);
  g_test_add_data_func ("/net/judge/real-run-amd64", "amd64", test_real_run);
  g_test_add_data_func ("/net/judge/real-run-arm64", "arm64", test_real_run);
  for (guint i = 0; i < G_N_ELEMENTS (anomaly_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/net/judge/anomaly/%s", anomaly_cases[i].name);

      g_test_add_data_func (path, &anomaly_cases[i], test_anomaly_class);
    }
  g_test_add_func ("/net/judge/flow-overflow", test_flow_overflow);
  g_test_add_func ("/net/capture-file/over-bound-refused-unread",
                   test_capture_over_bound_refused_unread);

  return g_test_run ();
}
