/* Writes the seed corpus of fuzz-capture (tests/fuzz/corpus/capture/):
 * one input per kind of frame the analysis tells apart, in the harness's
 * frame-list format (fuzz-capture.h), built with the unit tests' frame
 * builder; plus a whole pcap file and bare TLS / HTTP first payloads (the
 * harness reads every input all three ways).
 *
 *   gen-capture-corpus DIR           write the seeds into DIR
 *   gen-capture-corpus --check DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include <glib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "capture-frames.h"
#include "fuzz-capture.h"
#include "corpus-seed.h"

#define GUEST4 "10.0.2.15"
#define GUEST6 "fec0::15"

/* Appends @frame to the seed @s as one frame-list entry; takes @frame. */
static void
add (GByteArray *s, guint8 flags, GByteArray *frame)
{
  cf_u8 (s, flags);
  cf_le16 (s, (guint16) frame->len);
  cf_take (s, frame);
}

static void
out (GByteArray *s, GByteArray *frame)
{
  add (s, FUZZ_CAPTURE_FROM_GUEST, frame);
}

static void
in (GByteArray *s, GByteArray *frame)
{
  add (s, FUZZ_CAPTURE_TO_GUEST, frame);
}

static GByteArray *
tcp4 (const char *dst, guint16 sport, guint16 dport, guint32 seq, guint8 flags,
      const void *data, gsize len)
{
  return cf_from_guest (0x0800, cf_ipv4 (GUEST4, dst, IPPROTO_TCP,
                                         cf_tcp (sport, dport, seq, flags, data, len)));
}

static void
seed_tcp_syn_v4 (GByteArray *s)
{
  out (s, tcp4 ("192.0.2.1", 40000, 9, 1000, CF_SYN, NULL, 0));
}

static void
seed_tcp_syn_v6 (GByteArray *s)
{
  out (s, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::1", IPPROTO_TCP,
                                          cf_tcp (40000, 9, 7, CF_SYN, NULL, 0))));
}

static void
seed_udp (GByteArray *s)
{
  out (s, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_UDP,
                                          cf_udp (5000, 9, "x", 1))));
  out (s, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::1", IPPROTO_UDP,
                                          cf_udp (5000, 9, "y", 1))));
}

static void
seed_dns_udp (GByteArray *s)
{
  g_autoptr (GByteArray) q = cf_dns_query (1, "example.com");

  out (s, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "10.0.2.3", IPPROTO_UDP,
                                          cf_udp (5353, 53, q->data, q->len))));
  in (s, cf_to_guest (0x0800, cf_ipv4 ("10.0.2.3", GUEST4, IPPROTO_UDP,
                                       cf_udp (53, 5353, q->data, q->len))));
  out (s, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "fec0::3", IPPROTO_UDP,
                                          cf_udp (5353, 53, q->data, q->len))));
}

static void
seed_dns_tcp_split (GByteArray *s)
{
  g_autoptr (GByteArray) q = cf_dns_query (7, "split.example");
  g_autoptr (GByteArray) stream = g_byte_array_new ();
  guint cut = 2 + 12 + 3;

  cf_be16 (stream, (guint16) q->len);
  cf_raw (stream, q->data, q->len);
  out (s, tcp4 ("10.0.2.3", 41000, 53, 100, CF_SYN, NULL, 0));
  out (s, tcp4 ("10.0.2.3", 41000, 53, 101, CF_ACK, stream->data, cut));
  out (s, tcp4 ("10.0.2.3", 41000, 53, 101 + cut, CF_ACK, stream->data + cut,
                stream->len - cut));
}

static void
seed_tls_client_hello (GByteArray *s)
{
  g_autoptr (GByteArray) hello = cf_tls_client_hello ("example.org");

  out (s, tcp4 ("198.51.100.1", 42000, 443, 9, CF_SYN, NULL, 0));
  out (s, tcp4 ("198.51.100.1", 42000, 443, 10, CF_ACK, hello->data, 30));
  out (s, tcp4 ("198.51.100.1", 42000, 443, 40, CF_ACK, hello->data + 30, hello->len - 30));
}

static const char http_request[] = "GET / HTTP/1.1\r\nHost: example.net\r\n\r\n";

static void
seed_http_get (GByteArray *s)
{
  out (s, tcp4 ("198.51.100.80", 43000, 80, 1, CF_SYN, NULL, 0));
  out (s, tcp4 ("198.51.100.80", 43000, 80, 2, CF_ACK, http_request, strlen (http_request)));
}

static void
seed_icmp_echo (GByteArray *s)
{
  out (s, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "192.0.2.1", IPPROTO_ICMP,
                                          cf_icmp (8, 0, 0x00010001, "ping", 4))));
  in (s, cf_to_guest (0x0800, cf_ipv4 ("192.0.2.1", GUEST4, IPPROTO_ICMP,
                                       cf_icmp (0, 0, 0x00010001, "ping", 4))));
  out (s, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::1", IPPROTO_ICMPV6,
                                          cf_icmp (128, 0, 0x00020001, NULL, 0))));
}

static void
seed_arp (GByteArray *s)
{
  out (s, cf_ethernet (capture_broadcast_mac, capture_guest_mac, 0x0806,
                       cf_arp (1, capture_guest_mac, GUEST4, "10.0.2.2")));
  in (s, cf_to_guest (0x0806, cf_arp (2, capture_gateway_mac, "10.0.2.2", GUEST4)));
}

static void
seed_neighbour_discovery (GByteArray *s)
{
  GByteArray *target = g_byte_array_new ();

  cf_addr6 (target, "fe80::2");
  out (s, cf_from_guest (0x86dd, cf_ipv6 ("fe80::5054:ff:fe12:3456", "ff02::1:ff00:2",
                                          IPPROTO_ICMPV6,
                                          cf_icmp (135, 0, 0, target->data, target->len))));
  in (s, cf_to_guest (0x86dd, cf_ipv6 ("fe80::2", "fe80::5054:ff:fe12:3456", IPPROTO_ICMPV6,
                                       cf_icmp (136, 0, 0, target->data, target->len))));
  out (s, cf_from_guest (0x86dd, cf_ipv6 ("fe80::5054:ff:fe12:3456", "ff02::2", IPPROTO_ICMPV6,
                                          cf_icmp (133, 0, 0, NULL, 0))));
  g_byte_array_unref (target);
}

static void
seed_mldv2 (GByteArray *s)
{
  GByteArray *record = g_byte_array_new ();

  cf_u8 (record, 4);
  cf_u8 (record, 0);
  cf_be16 (record, 0);
  cf_addr6 (record, "ff02::1:ff12:3456");
  out (s, cf_from_guest (0x86dd, cf_ipv6 ("::", "ff02::16", 0,
                                          cf_ipv6_router_alert (IPPROTO_ICMPV6,
                                                                cf_icmp (143, 0, 1, record->data,
                                                                         record->len)))));
  g_byte_array_unref (record);
}

static void
seed_ipv6_extensions (GByteArray *s)
{
  out (s, cf_from_guest (0x86dd,
                         cf_ipv6 (GUEST6, "2001:db8::1", 0,
                                  cf_ipv6_options (43, cf_ipv6_srh (IPPROTO_UDP, "2001:db8::99",
                                                                    cf_udp (6000, 9, "r", 1))))));
}

static void
seed_vlan (GByteArray *s)
{
  GByteArray *tagged = g_byte_array_new ();

  cf_be16 (tagged, 42);
  cf_be16 (tagged, 0x0800);
  cf_take (tagged, cf_ipv4 (GUEST4, "192.0.2.5", IPPROTO_UDP, cf_udp (1, 9, "v", 1)));
  out (s, cf_from_guest (0x8100, tagged));
}

static void
seed_fragments (GByteArray *s)
{
  GByteArray *first = cf_udp (7000, 9, "0123456789abcdef", 16);

  first->data[5] = 40;
  out (s, cf_from_guest (0x0800, cf_ipv4_full (GUEST4, "192.0.2.9", IPPROTO_UDP, 0, 77, 0x2000,
                                               first)));
  out (s, cf_from_guest (0x0800, cf_ipv4_full (GUEST4, "192.0.2.9", IPPROTO_UDP, 1, 77, 3,
                                               cf_udp (0, 0, "tail", 4))));
  out (s, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "2001:db8::9", 44,
                                          cf_ipv6_fragment (IPPROTO_UDP, 0x0001, 5,
                                                            cf_udp (7001, 9, "head", 4)))));
}

static void
seed_gateway_rst (GByteArray *s)
{
  out (s, tcp4 ("192.0.2.1", 40000, 9, 1000, CF_SYN, NULL, 0));
  in (s, cf_to_guest (0x0800, cf_ipv4 ("192.0.2.1", GUEST4, IPPROTO_TCP,
                                       cf_tcp (9, 40000, 0, CF_RST | CF_ACK, NULL, 0))));
}

static void
seed_clipped (GByteArray *s)
{
  add (s, FUZZ_CAPTURE_FROM_GUEST | FUZZ_CAPTURE_CLIPPED,
       tcp4 ("192.0.2.1", 40000, 80, 1, CF_ACK, http_request, strlen (http_request)));
}

/* ---- frames no flow, QEMU or the guest kernel's housekeeping explains ---- */

/* UDP to the broadcast MAC under QEMU's own source MAC, from the guest's
 * address to a foreign one (not QEMU's: it sends only to the guest). */
static void
seed_spoofed_qemu_mac (GByteArray *s)
{
  add (s, 0, cf_ethernet (capture_broadcast_mac, capture_gateway_mac, 0x0800,
                          cf_ipv4 (GUEST4, "192.0.2.45", IPPROTO_UDP, cf_udp (1, 9, "x", 1))));
}

/* A neighbour advertisement of the gateway's address, with a link-layer
 * option, and a solicitation for an off-link target. */
static void
seed_nd_foreign (GByteArray *s)
{
  GByteArray *body = g_byte_array_new ();

  cf_addr6 (body, "fec0::2");
  cf_u8 (body, 2);
  cf_u8 (body, 1);
  cf_raw (body, capture_guest_mac, 6);
  out (s, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "ff02::1", IPPROTO_ICMPV6,
                                          cf_icmp (136, 0, 0x20000000, body->data, body->len))));
  g_byte_array_set_size (body, 0);
  cf_addr6 (body, "2001:db8::1");
  out (s, cf_from_guest (0x86dd, cf_ipv6 (GUEST6, "ff02::1:ff00:1", IPPROTO_ICMPV6,
                                          cf_icmp (135, 0, 0, body->data, body->len))));
  g_byte_array_unref (body);
}

/* MLDv2 records about a foreign group and with a source; an IGMPv3 report
 * of a foreign group. */
static void
seed_multicast_foreign (GByteArray *s)
{
  GByteArray *records = g_byte_array_new ();
  GByteArray *igmp = g_byte_array_new ();

  cf_u8 (records, 4);
  cf_u8 (records, 0);
  cf_be16 (records, 0);
  cf_addr6 (records, "ff0e::db8:1");
  cf_u8 (records, 1);
  cf_u8 (records, 0);
  cf_be16 (records, 1);
  cf_addr6 (records, "ff02::1:ff00:15");
  cf_addr6 (records, "2001:db8::7");
  out (s, cf_from_guest (0x86dd, cf_ipv6 ("fe80::5054:ff:fe12:3456", "ff02::16", 0,
                                          cf_ipv6_router_alert (IPPROTO_ICMPV6,
                                                                cf_icmp (143, 0, 2, records->data,
                                                                         records->len)))));
  cf_u8 (igmp, 4);
  cf_u8 (igmp, 0);
  cf_be16 (igmp, 0);
  cf_addr4 (igmp, "239.1.2.3");
  out (s, cf_from_guest (0x0800, cf_ipv4_full (GUEST4, "224.0.0.22", IPPROTO_IGMP, 1, 2, 0x4000,
                                               cf_icmp (0x22, 0, 1, igmp->data, igmp->len))));
  g_byte_array_unref (records);
  g_byte_array_unref (igmp);
}

/* ARP claiming the gateway's address, and ARP for an off-link one. */
static void
seed_arp_foreign (GByteArray *s)
{
  out (s, cf_ethernet (capture_broadcast_mac, capture_guest_mac, 0x0806,
                       cf_arp (2, capture_guest_mac, "10.0.2.2", GUEST4)));
  out (s, cf_ethernet (capture_broadcast_mac, capture_guest_mac, 0x0806,
                       cf_arp (1, capture_guest_mac, GUEST4, "192.0.2.1")));
}

/* An unknown EtherType, and IPv4 from an address that is not the guest's. */
static void
seed_unknown_ethertype_foreign_source (GByteArray *s)
{
  GByteArray *payload = g_byte_array_new ();

  cf_zeros (payload, 46);
  out (s, cf_from_guest (0x88b5, payload));
  out (s, cf_from_guest (0x0800, cf_ipv4 ("10.0.2.2", "192.0.2.8", IPPROTO_UDP,
                                          cf_udp (1, 9, "s", 1))));
}

/* A whole pcap file, as filter-dump writes it. */
static void
seed_pcap_file (GByteArray *s)
{
  g_autoptr (GByteArray) q = cf_dns_query (1, "example.com");
  GByteArray *pcap = cf_pcap_new ();

  cf_pcap_add (pcap, 1, tcp4 ("192.0.2.1", 40000, 9, 1000, CF_SYN, NULL, 0));
  cf_pcap_add (pcap, 2, cf_from_guest (0x0800, cf_ipv4 (GUEST4, "10.0.2.3", IPPROTO_UDP,
                                                        cf_udp (5353, 53, q->data, q->len))));
  cf_take (s, pcap);
}

static void
seed_tls_payload (GByteArray *s)
{
  cf_take (s, cf_tls_client_hello ("payload.example"));
}

static void
seed_http_payload (GByteArray *s)
{
  cf_raw (s, http_request, strlen (http_request));
}

static const CorpusSeed seeds[] = {
  { "tcp-syn-v4", seed_tcp_syn_v4 },
  { "tcp-syn-v6", seed_tcp_syn_v6 },
  { "udp", seed_udp },
  { "dns-udp", seed_dns_udp },
  { "dns-tcp-split", seed_dns_tcp_split },
  { "tls-client-hello", seed_tls_client_hello },
  { "http-get", seed_http_get },
  { "icmp-echo", seed_icmp_echo },
  { "arp", seed_arp },
  { "neighbour-discovery", seed_neighbour_discovery },
  { "mldv2", seed_mldv2 },
  { "ipv6-extensions", seed_ipv6_extensions },
  { "vlan", seed_vlan },
  { "fragments", seed_fragments },
  { "gateway-rst", seed_gateway_rst },
  { "clipped", seed_clipped },
  { "spoofed-qemu-mac", seed_spoofed_qemu_mac },
  { "nd-foreign", seed_nd_foreign },
  { "multicast-foreign", seed_multicast_foreign },
  { "arp-foreign", seed_arp_foreign },
  { "unknown-ethertype-foreign-source", seed_unknown_ethertype_foreign_source },
  { "pcap-file", seed_pcap_file },
  { "tls-payload", seed_tls_payload },
  { "http-payload", seed_http_payload },
};

/* One corpus, read by fuzz-capture. */
static const CorpusSet capture = { .n_seeds = G_N_ELEMENTS (seeds), .seeds = seeds };

int
main (int argc, char **argv)
{
  return corpus_seed_main (argc, argv, &capture, 1);
}
