/* A tiny builder of Ethernet frames and classic pcap files, for the
 * capture analysis tests (tests/unit/test-capture.c), the fuzzer's seed
 * generator (tests/fuzz/gen-capture-corpus.c), and whatever speaks to the
 * sinkhole as QEMU does (tests/unit/test-sinkhole-proc.c, bench/sinkhole.c).
 *
 * Frames are laid out byte by byte from the RFCs, not with the host's
 * struct definitions, so the decoder is checked against the wire format
 * and not against itself.  Checksums are left zero: the analysis does not
 * check them (the guest wrote them; QEMU would drop a bad one, but the
 * guest still sent it); cf_fix_checksums fills them for a frame a kernel
 * takes in.  Each builder takes ownership of the layer it wraps and returns
 * the new one. */
#pragma once

#include <arpa/inet.h>
#include <glib.h>
#include <string.h>

static const guint8 capture_guest_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const guint8 capture_gateway_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };
static const guint8 capture_broadcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static inline void
cf_u8 (GByteArray *b, guint8 v)
{
  g_byte_array_append (b, &v, 1);
}

static inline void
cf_be16 (GByteArray *b, guint16 v)
{
  cf_u8 (b, (guint8) (v >> 8));
  cf_u8 (b, (guint8) v);
}

static inline void
cf_be32 (GByteArray *b, guint32 v)
{
  cf_be16 (b, (guint16) (v >> 16));
  cf_be16 (b, (guint16) v);
}

static inline void
cf_le16 (GByteArray *b, guint16 v)
{
  cf_u8 (b, (guint8) v);
  cf_u8 (b, (guint8) (v >> 8));
}

static inline void
cf_le32 (GByteArray *b, guint32 v)
{
  cf_le16 (b, (guint16) v);
  cf_le16 (b, (guint16) (v >> 16));
}

static inline void
cf_raw (GByteArray *b, const void *data, gsize len)
{
  if (len > 0)
    g_byte_array_append (b, data, (guint) len);
}

static inline void
cf_zeros (GByteArray *b, gsize n)
{
  for (gsize i = 0; i < n; i++)
    cf_u8 (b, 0);
}

static inline void
cf_addr4 (GByteArray *b, const char *text)
{
  guint8 a[4];

  g_assert (inet_pton (AF_INET, text, a) == 1);
  cf_raw (b, a, 4);
}

static inline void
cf_addr6 (GByteArray *b, const char *text)
{
  guint8 a[16];

  g_assert (inet_pton (AF_INET6, text, a) == 1);
  cf_raw (b, a, 16);
}

/* Appends @layer to @b and frees it. */
static inline void
cf_take (GByteArray *b, GByteArray *layer)
{
  cf_raw (b, layer->data, layer->len);
  g_byte_array_unref (layer);
}

/* ---- transport ---- */

#define CF_FIN 0x01
#define CF_SYN 0x02
#define CF_RST 0x04
#define CF_PSH 0x08
#define CF_ACK 0x10

static inline GByteArray *
cf_tcp (guint16 sport, guint16 dport, guint32 seq, guint8 flags, const void *data, gsize len)
{
  GByteArray *b = g_byte_array_new ();

  cf_be16 (b, sport);
  cf_be16 (b, dport);
  cf_be32 (b, seq);
  cf_be32 (b, (flags & CF_ACK) ? 1 : 0);
  cf_u8 (b, 5 << 4);
  cf_u8 (b, flags);
  cf_be16 (b, 64240);
  cf_be16 (b, 0);
  cf_be16 (b, 0);
  cf_raw (b, data, len);
  return b;
}

static inline GByteArray *
cf_udp (guint16 sport, guint16 dport, const void *data, gsize len)
{
  GByteArray *b = g_byte_array_new ();

  cf_be16 (b, sport);
  cf_be16 (b, dport);
  cf_be16 (b, (guint16) (8 + len));
  cf_be16 (b, 0);
  cf_raw (b, data, len);
  return b;
}

/* ICMP or ICMPv6: type, code, checksum, then @rest (identifier and
 * sequence for an echo) and @data. */
static inline GByteArray *
cf_icmp (guint8 type, guint8 code, guint32 rest, const void *data, gsize len)
{
  GByteArray *b = g_byte_array_new ();

  cf_u8 (b, type);
  cf_u8 (b, code);
  cf_be16 (b, 0);
  cf_be32 (b, rest);
  cf_raw (b, data, len);
  return b;
}

/* ---- IP ---- */

/* IPv4 with @options_words 32-bit words of NOP options and the fragment
 * field @frag (flags and offset, as on the wire). */
static inline GByteArray *
cf_ipv4_full (const char *src, const char *dst, guint8 protocol, guint options_words,
              guint16 id, guint16 frag, GByteArray *payload)
{
  GByteArray *b = g_byte_array_new ();

  cf_u8 (b, (guint8) (0x40 | (5 + options_words)));
  cf_u8 (b, 0);
  cf_be16 (b, (guint16) (20 + 4 * options_words + payload->len));
  cf_be16 (b, id);
  cf_be16 (b, frag);
  cf_u8 (b, 64);
  cf_u8 (b, protocol);
  cf_be16 (b, 0);
  cf_addr4 (b, src);
  cf_addr4 (b, dst);
  for (guint i = 0; i < 4 * options_words; i++)
    cf_u8 (b, 1);
  cf_take (b, payload);
  return b;
}

static inline GByteArray *
cf_ipv4 (const char *src, const char *dst, guint8 protocol, GByteArray *payload)
{
  return cf_ipv4_full (src, dst, protocol, 0, 1, 0x4000 /* DF */, payload);
}

/* IPv6; @next is the first next-header value, @payload starts with any
 * extension headers the caller built. */
static inline GByteArray *
cf_ipv6 (const char *src, const char *dst, guint8 next, GByteArray *payload)
{
  GByteArray *b = g_byte_array_new ();

  cf_be32 (b, 0x60000000);
  cf_be16 (b, (guint16) payload->len);
  cf_u8 (b, next);
  cf_u8 (b, 64);
  cf_addr6 (b, src);
  cf_addr6 (b, dst);
  cf_take (b, payload);
  return b;
}

/* An IPv6 option header (hop-by-hop or destination options) of 8 bytes:
 * next header, length 0, PadN. */
static inline GByteArray *
cf_ipv6_options (guint8 next, GByteArray *rest)
{
  GByteArray *b = g_byte_array_new ();

  cf_u8 (b, next);
  cf_u8 (b, 0);
  cf_u8 (b, 1);
  cf_u8 (b, 4);
  cf_zeros (b, 4);
  cf_take (b, rest);
  return b;
}

/* Hop-by-hop with the router alert option MLD carries (RFC 2711). */
static inline GByteArray *
cf_ipv6_router_alert (guint8 next, GByteArray *rest)
{
  GByteArray *b = g_byte_array_new ();

  cf_u8 (b, next);
  cf_u8 (b, 0);
  cf_u8 (b, 5);
  cf_u8 (b, 2);
  cf_be16 (b, 0);
  cf_u8 (b, 1);
  cf_u8 (b, 0);
  cf_take (b, rest);
  return b;
}

/* A segment routing header (RFC 8754, type 4) with one segment, @final,
 * still to visit. */
static inline GByteArray *
cf_ipv6_srh (guint8 next, const char *final, GByteArray *rest)
{
  GByteArray *b = g_byte_array_new ();

  cf_u8 (b, next);
  cf_u8 (b, 2);     /* (2 + 1) * 8 = 24 bytes */
  cf_u8 (b, 4);     /* routing type */
  cf_u8 (b, 1);     /* segments left */
  cf_u8 (b, 0);     /* last entry */
  cf_u8 (b, 0);
  cf_be16 (b, 0);
  cf_addr6 (b, final);
  cf_take (b, rest);
  return b;
}

static inline GByteArray *
cf_ipv6_fragment (guint8 next, guint16 offset_and_m, guint32 id, GByteArray *rest)
{
  GByteArray *b = g_byte_array_new ();

  cf_u8 (b, next);
  cf_u8 (b, 0);
  cf_be16 (b, offset_and_m);
  cf_be32 (b, id);
  cf_take (b, rest);
  return b;
}

/* ---- checksums ---- */

/* For frames a kernel takes in (the sinkhole's tap: tests/unit/
 * test-sinkhole-proc.c, bench/sinkhole.c), which drops a bad checksum
 * where the capture analysis does not look. */
static inline guint32
cf_sum16 (const guint8 *p, gsize len, guint32 sum)
{
  for (gsize i = 0; i + 1 < len; i += 2)
    sum += ((guint32) p[i] << 8) | p[i + 1];
  if (len & 1)
    sum += (guint32) p[len - 1] << 8;
  return sum;
}

static inline guint16
cf_fold (guint32 sum)
{
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return (guint16) ~sum;
}

/* Fills the IPv4 header checksum and the TCP/UDP/ICMP checksum of an
 * Ethernet frame holding IPv4 (no VLAN tag). */
static inline void
cf_fix_checksums (GByteArray *frame)
{
  guint8 *ip = frame->data + 14;
  gsize ihl = (gsize) (ip[0] & 0x0f) * 4;
  gsize total = ((gsize) ip[2] << 8) | ip[3];
  guint8 *l4 = ip + ihl;
  gsize l4len = total - ihl;
  guint32 sum;
  guint16 c;
  int at = ip[9] == IPPROTO_TCP ? 16 : ip[9] == IPPROTO_UDP ? 6 : -1;

  ip[10] = ip[11] = 0;
  c = cf_fold (cf_sum16 (ip, ihl, 0));
  ip[10] = (guint8) (c >> 8);
  ip[11] = (guint8) c;
  if (ip[9] == IPPROTO_ICMP)
    {
      /* ICMP's checksum covers its message alone (RFC 792). */
      l4[2] = l4[3] = 0;
      c = cf_fold (cf_sum16 (l4, l4len, 0));
      l4[2] = (guint8) (c >> 8);
      l4[3] = (guint8) c;
      return;
    }
  if (at < 0)
    return;
  l4[at] = l4[at + 1] = 0;
  sum = cf_sum16 (ip + 12, 8, 0) + ip[9] + (guint32) l4len;
  c = cf_fold (cf_sum16 (l4, l4len, sum));
  l4[at] = (guint8) (c >> 8);
  l4[at + 1] = (guint8) c;
}

/* ---- link ---- */

static inline GByteArray *
cf_ethernet (const guint8 *dst, const guint8 *src, guint16 ethertype, GByteArray *payload)
{
  GByteArray *b = g_byte_array_new ();

  cf_raw (b, dst, 6);
  cf_raw (b, src, 6);
  cf_be16 (b, ethertype);
  cf_take (b, payload);
  return b;
}

static inline GByteArray *
cf_from_guest (guint16 ethertype, GByteArray *payload)
{
  return cf_ethernet (capture_gateway_mac, capture_guest_mac, ethertype, payload);
}

/* From QEMU: slirp sends IPv4 and ARP from 52:55 and its IPv4 address,
 * IPv6 from 52:56 and the low four bytes of the packet's source. */
static inline GByteArray *
cf_to_guest (guint16 ethertype, GByteArray *payload)
{
  guint8 mac[6];

  memcpy (mac, capture_gateway_mac, 6);
  if (ethertype == 0x86dd && payload->len >= 24)
    {
      mac[1] = 0x56;
      memcpy (mac + 2, payload->data + 20, 4);
    }
  return cf_ethernet (capture_guest_mac, mac, ethertype, payload);
}

/* An ARP request (op 1) or reply (op 2) between @sender and @target. */
static inline GByteArray *
cf_arp (guint16 op, const guint8 *sender_mac, const char *sender, const char *target)
{
  GByteArray *b = g_byte_array_new ();

  cf_be16 (b, 1);
  cf_be16 (b, 0x0800);
  cf_u8 (b, 6);
  cf_u8 (b, 4);
  cf_be16 (b, op);
  cf_raw (b, sender_mac, 6);
  cf_addr4 (b, sender);
  cf_zeros (b, 6);
  cf_addr4 (b, target);
  return b;
}

/* ---- application payloads ---- */

/* A DNS query for @name (dotted, no trailing dot), type A, class IN. */
static inline GByteArray *
cf_dns_query (guint16 id, const char *name)
{
  GByteArray *b = g_byte_array_new ();
  g_auto (GStrv) labels = g_strsplit (name, ".", -1);

  cf_be16 (b, id);
  cf_be16 (b, 0x0100);
  cf_be16 (b, 1);
  cf_be16 (b, 0);
  cf_be16 (b, 0);
  cf_be16 (b, 0);
  for (guint i = 0; labels[i] != NULL; i++)
    {
      cf_u8 (b, (guint8) strlen (labels[i]));
      cf_raw (b, labels[i], strlen (labels[i]));
    }
  cf_u8 (b, 0);
  cf_be16 (b, 1);
  cf_be16 (b, 1);
  return b;
}

/* A TLS 1.3-style ClientHello in one handshake record, with a supported
 * groups extension before the server_name one. */
static inline GByteArray *
cf_tls_client_hello (const char *sni)
{
  GByteArray *ext = g_byte_array_new ();
  GByteArray *body = g_byte_array_new ();
  GByteArray *record = g_byte_array_new ();
  gsize name_len = strlen (sni);

  cf_be16 (ext, 0x000a);
  cf_be16 (ext, 4);
  cf_be16 (ext, 2);
  cf_be16 (ext, 0x001d);
  cf_be16 (ext, 0x0000);
  cf_be16 (ext, (guint16) (name_len + 5));
  cf_be16 (ext, (guint16) (name_len + 3));
  cf_u8 (ext, 0);
  cf_be16 (ext, (guint16) name_len);
  cf_raw (ext, sni, name_len);

  cf_be16 (body, 0x0303);
  cf_zeros (body, 32);
  cf_u8 (body, 0);
  cf_be16 (body, 2);
  cf_be16 (body, 0x1301);
  cf_u8 (body, 1);
  cf_u8 (body, 0);
  cf_be16 (body, (guint16) ext->len);
  cf_take (body, ext);

  cf_u8 (record, 22);
  cf_be16 (record, 0x0301);
  cf_be16 (record, (guint16) (body->len + 4));
  cf_u8 (record, 1);
  cf_u8 (record, 0);
  cf_be16 (record, (guint16) body->len);
  cf_take (record, body);
  return record;
}

/* ---- pcap ---- */

/* A classic pcap file header as QEMU's filter-dump writes it on a
 * little-endian host. */
static inline GByteArray *
cf_pcap_new (void)
{
  GByteArray *b = g_byte_array_new ();

  cf_le32 (b, 0xa1b2c3d4);
  cf_le16 (b, 2);
  cf_le16 (b, 4);
  cf_le32 (b, 0);
  cf_le32 (b, 0);
  cf_le32 (b, 65536);
  cf_le32 (b, 1);
  return b;
}

/* A record holding the first @caplen bytes of @frame, which had @origlen
 * on the wire; takes @frame. */
static inline void
cf_pcap_add_clipped (GByteArray *pcap, guint32 sec, GByteArray *frame, guint32 caplen,
                     guint32 origlen)
{
  cf_le32 (pcap, sec);
  cf_le32 (pcap, 0);
  cf_le32 (pcap, caplen);
  cf_le32 (pcap, origlen);
  cf_raw (pcap, frame->data, MIN (caplen, frame->len));
  g_byte_array_unref (frame);
}

static inline void
cf_pcap_add (GByteArray *pcap, guint32 sec, GByteArray *frame)
{
  cf_pcap_add_clipped (pcap, sec, frame, frame->len, frame->len);
}
