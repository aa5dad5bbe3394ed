/* A run's network as the sinkhole serves it, built without a VM: the
 * capture (net.pcap) the process writes of the frames it relays, and the
 * record file it writes of what it answered and accepted, made together
 * so that they agree the way a real run's do.  For the bundle tests
 * (tests/unit/test-bundle.c) and the bundle fuzzer's seed generator
 * (tests/fuzz/gen-bundle-corpus.c).
 *
 * Frames come from capture-frames.h, under the guest NIC's MAC the domain
 * XML gives it (net/guest-net.h); the network's frames come from the
 * sinkhole's tap MAC.  Records are written by the sinkhole's own writer
 * (airlock_sinkhole_record_to_json) with what its own detection
 * (airlock_sinkhole_detect) makes of the client's bytes.  The supervisor's
 * stream of the same run comes from guest/wire.h, the guest's encoder. */
#pragma once

#include "net/guest-net.h"
#include "protocol.h"
#include "sinkhole/sinkhole.h"
#include "wire.h"

#include "capture-frames.h"
#include "sinkhole-bytes.h"

#include <netinet/in.h>

#include <arpa/inet.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define NETWORK_RUN_GUEST4 "10.0.2.15"
#define NETWORK_RUN_RESOLVER "10.0.2.3"

typedef struct {
  GByteArray *pcap;
  GString *records;
  guint32 sec;
  gint64 time_us;
  guint16 next_port;
} NetworkRun;

static inline void
network_run_init (NetworkRun *n)
{
  memset (n, 0, sizeof *n);
  n->pcap = cf_pcap_new ();
  n->records = g_string_new (NULL);
  n->sec = 1;
  n->next_port = 40000;
}

static inline void
network_run_clear (NetworkRun *n)
{
  g_byte_array_unref (n->pcap);
  g_string_free (n->records, TRUE);
}

static inline const guint8 *
network_run_guest_mac (void)
{
  static guint8 mac[6];
  guint v[6];

  sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
  for (int i = 0; i < 6; i++)
    mac[i] = (guint8) v[i];
  return mac;
}

/* An IPv4 packet of the guest's (@to_network) or of the network's. */
static inline void
network_run_frame (NetworkRun *n, gboolean to_network, const char *far, guint8 protocol,
                   GByteArray *l4)
{
  GByteArray *l3 = to_network ? cf_ipv4 (NETWORK_RUN_GUEST4, far, protocol, l4)
                              : cf_ipv4 (far, NETWORK_RUN_GUEST4, protocol, l4);

  cf_pcap_add (n->pcap, n->sec,
               to_network ? cf_ethernet (capture_gateway_mac, network_run_guest_mac (), 0x0800, l3)
                          : cf_ethernet (network_run_guest_mac (), capture_gateway_mac, 0x0800, l3));
}

static inline void
network_run_write (NetworkRun *n, AirlockSinkholeRecord *rec)
{
  g_autofree char *line = airlock_sinkhole_record_to_json (rec);

  g_string_append_printf (n->records, "%s\n", line);
  airlock_sinkhole_record_free (rec);
}

static inline AirlockSinkholeRecord *
network_run_record (NetworkRun *n, AirlockSinkholeRecordKind kind, const char *ip, guint16 port,
                    guint16 client_port)
{
  return sb_record_new (kind, n->time_us += 1000, AF_INET, ip, port, client_port);
}

/* The guest asks the resolver for @name's A record and the sinkhole
 * answers @answer: the query and its answer in the capture, the record. */
static inline void
network_run_lookup (NetworkRun *n, const char *name, const char *answer)
{
  guint16 port = n->next_port++;
  GByteArray *query = cf_dns_query (0x1234, name);
  AirlockSinkholeRecord *rec = network_run_record (n, AIRLOCK_SINKHOLE_RECORD_DNS,
                                                   NETWORK_RUN_RESOLVER, 53, port);

  network_run_frame (n, TRUE, NETWORK_RUN_RESOLVER, IPPROTO_UDP,
                     cf_udp (port, 53, query->data, query->len));
  /* The answer's bytes do not matter to the analysis: it is a reply. */
  network_run_frame (n, FALSE, NETWORK_RUN_RESOLVER, IPPROTO_UDP,
                     cf_udp (53, port, query->data, query->len));
  g_byte_array_unref (query);
  rec->dns_transport = g_strdup ("udp");
  rec->dns.question = g_strdup_printf ("%s.", name);
  rec->dns.qtype = 1;
  g_ptr_array_add (rec->dns.answers, g_strdup (answer));
  network_run_write (n, rec);
  n->sec++;
}

/* The guest connects to @ip:@port and sends @request; the sinkhole accepts
 * the connection, reads the bytes, and closes it: SYN, SYN-ACK, ACK, the
 * request and its ACK, the network's FIN, in the capture; a tcp record
 * naming @name (NULL: an address no name was handed out for). */
static inline void
network_run_connect (NetworkRun *n, const char *ip, guint16 port, const char *name,
                     const guint8 *request, gsize len)
{
  guint16 cport = n->next_port++;
  AirlockSinkholeRecord *rec = network_run_record (n, AIRLOCK_SINKHOLE_RECORD_TCP, ip, port, cport);

  network_run_frame (n, TRUE, ip, IPPROTO_TCP, cf_tcp (cport, port, 1000, CF_SYN, NULL, 0));
  network_run_frame (n, FALSE, ip, IPPROTO_TCP,
                     cf_tcp (port, cport, 5000, CF_SYN | CF_ACK, NULL, 0));
  network_run_frame (n, TRUE, ip, IPPROTO_TCP, cf_tcp (cport, port, 1001, CF_ACK, NULL, 0));
  network_run_frame (n, TRUE, ip, IPPROTO_TCP,
                     cf_tcp (cport, port, 1001, CF_ACK | CF_PSH, request, len));
  network_run_frame (n, FALSE, ip, IPPROTO_TCP, cf_tcp (port, cport, 5001, CF_ACK, NULL, 0));
  network_run_frame (n, FALSE, ip, IPPROTO_TCP,
                     cf_tcp (port, cport, 5001, CF_FIN | CF_ACK, NULL, 0));
  network_run_frame (n, TRUE, ip, IPPROTO_TCP,
                     cf_tcp (cport, port, 1001 + (guint32) len, CF_FIN | CF_ACK, NULL, 0));
  g_assert (airlock_sinkhole_detect (request, len, port, TRUE, &rec->detected)
            == AIRLOCK_SINKHOLE_DETECT_DONE);
  rec->name = g_strdup (name);
  g_bytes_unref (rec->client_bytes);
  rec->client_bytes = g_bytes_new (request, len);
  rec->bytes_in = len;
  rec->response = g_strdup ("closed");
  rec->end_us = rec->time_us + 500;
  network_run_write (n, rec);
  n->sec++;
}

static inline void
network_run_http (NetworkRun *n, const char *ip, const char *name, const char *path)
{
  g_autofree char *request = g_strdup_printf ("GET %s HTTP/1.1\r\nHost: %.*s\r\n"
                                              "User-Agent: egress-probe\r\n\r\n",
                                              path, (int) strlen (name) - 1, name);

  network_run_connect (n, ip, 80, name, (const guint8 *) request, strlen (request));
}

static inline void
network_run_tls (NetworkRun *n, const char *ip, const char *name)
{
  g_autofree char *host = g_strndup (name, strlen (name) - 1);
  GByteArray *hello = cf_tls_client_hello (host);

  network_run_connect (n, ip, 443, name, hello->data, hello->len);
  g_byte_array_unref (hello);
}

/* The record file with the process's final line. */
static inline GBytes *
network_run_records (NetworkRun *n)
{
  g_autofree char *end = airlock_sinkhole_end_line_to_json (0, 0, NULL);
  GString *all = g_string_new (n->records->str);
  gsize len;

  g_string_append_printf (all, "%s\n", end);
  len = all->len;
  return g_bytes_new_take (g_string_free (all, FALSE), len);
}

static inline GBytes *
network_run_pcap (NetworkRun *n)
{
  return g_bytes_new (n->pcap->data, n->pcap->len);
}

/* The egress sample's network: example.com looked up, then asked for
 * over HTTP and TLS at the address handed out for it. */
static inline void
network_run_egress (NetworkRun *n)
{
  network_run_lookup (n, "example.com", "198.18.243.18");
  network_run_http (n, "198.18.243.18", "example.com.", "/");
  network_run_tls (n, "198.18.243.18", "example.com.");
}

#define NETWORK_RUN_AUDIT_ARCH_X86_64 0xc000003eu
#define NETWORK_RUN_NR_CONNECT 42

static inline void
network_run_stream_frame (GByteArray *bytes, struct wire_frame *f)
{
  size_t n = wire_end (f);

  g_assert_cmpuint (n, >, 0);
  g_byte_array_append (bytes, f->bytes, (guint) n);
}

/* The supervisor's stream of the egress sample's run (amd64), as far as a
 * bundle needs it: hello (with @nonce), the workload's start and exec, its
 * connect to the address the sinkhole handed out for example.com, a
 * heartbeat, its exit, the trailer. */
static inline GByteArray *
network_run_guest_stream (const guint8 nonce[AIRLOCK_NONCE_LEN])
{
  static const guint8 build_id[20] = { 0xde, 0xad, 0xbe, 0xef };
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (80) };
  GByteArray *bytes = g_byte_array_new ();
  guint8 args[48] = { 0 };
  guint8 sock[12];
  struct wire_frame f;

  g_assert_cmpint (inet_pton (AF_INET, "198.18.243.18", &sin.sin_addr), ==, 1);
  wire_begin (&f, AIRLOCK_FRAME_HELLO, 0);
  wire_put (&f, AIRLOCK_TLV_NONCE, nonce, AIRLOCK_NONCE_LEN);
  wire_put_str (&f, AIRLOCK_TLV_ARCH, "x86_64");
  wire_put_str (&f, AIRLOCK_TLV_KERNEL_RELEASE, "6.1.0-airlock");
  wire_put (&f, AIRLOCK_TLV_BUILD_ID, build_id, sizeof build_id);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, 123456789);
  wire_put_u32 (&f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, 16 /* EBUSY */);
  network_run_stream_frame (bytes, &f);

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 1);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_WORKLOAD_START);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, 1001);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, 90);
  network_run_stream_frame (bytes, &f);

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 2);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_WORKLOAD_EXEC);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, 1002);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_NSPID, 2);
  wire_put_str (&f, AIRLOCK_TLV_EV_PATH, "/usr/local/bin/egress-probe");
  wire_put_u64 (&f, AIRLOCK_TLV_EV_RESULT, 0);
  network_run_stream_frame (bytes, &f);

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 3);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_SYSCALL);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, 1003);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_ACTION, AIRLOCK_ACTION_CONTINUE);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_SYSCALL, NETWORK_RUN_NR_CONNECT);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_AUDIT_ARCH, NETWORK_RUN_AUDIT_ARCH_X86_64);
  wire_put (&f, AIRLOCK_TLV_EV_ARGS, args, sizeof args);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, 91);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_TID, 91);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_NSPID, 2);
  wire_put_str (&f, AIRLOCK_TLV_EV_EXE, "/usr/local/bin/egress-probe");
  wire_le32 (sock, AF_INET);
  wire_le32 (sock + 4, SOCK_STREAM);
  wire_le32 (sock + 8, 0);
  wire_put (&f, AIRLOCK_TLV_EV_SOCKET, sock, sizeof sock);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_FD, 3);
  wire_put (&f, AIRLOCK_TLV_EV_ADDR, &sin, sizeof sin);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_ADDRLEN, sizeof sin);
  network_run_stream_frame (bytes, &f);

  wire_begin (&f, AIRLOCK_FRAME_HEARTBEAT, 4);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, 1000000000ull);
  network_run_stream_frame (bytes, &f);

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 5);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_WORKLOAD_EXIT);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, 1005);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PHASE, AIRLOCK_PHASE_WORKLOAD);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_EXIT_STATUS, 0);
  network_run_stream_frame (bytes, &f);

  wire_begin (&f, AIRLOCK_FRAME_TRAILER, 6);
  wire_put_u64 (&f, AIRLOCK_TLV_FRAME_COUNT, 6);
  wire_put_u64 (&f, AIRLOCK_TLV_HEARTBEAT_COUNT, 1);
  wire_put_u64 (&f, AIRLOCK_TLV_EVENT_COUNT, 4);
  wire_put_u32 (&f, AIRLOCK_TLV_EXIT_STATUS, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_END_REASON, AIRLOCK_END_COMPLETED);
  network_run_stream_frame (bytes, &f);
  return bytes;
}
