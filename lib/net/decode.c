/* One Ethernet frame into its layers (see net-private.h).
 *
 * The guest wrote every byte read here.  Each layer checks the bytes
 * present before reading (a frame cut by the snapshot length is CLIPPED,
 * one that is short on the wire is malformed), lengths from headers are
 * checked against what was sent before they are used, and the IPv6
 * extension chain is walked at most AIRLOCK_CAPTURE_IPV6_EXTENSIONS_MAX
 * steps, so a frame costs time linear in its size. */
#include "config.h"

#include "net-private.h"

#include <netinet/in.h>
#include <string.h>

#define ETHERNET_HEADER 14
#define VLAN_TAG 4
#define ARP_LEN 28
#define IPV4_HEADER 20
#define IPV6_HEADER 40
#define TCP_HEADER 20
#define UDP_HEADER 8
#define ICMP_HEADER 8

#define IPV6_EXT_HOP_BY_HOP 0
#define IPV6_EXT_ROUTING 43
#define IPV6_EXT_FRAGMENT 44
#define IPV6_EXT_AH 51
#define IPV6_EXT_DESTINATION 60
#define IPV6_EXT_MOBILITY 135
#define IPV6_EXT_HIP 139
#define IPV6_EXT_SHIM6 140

static guint16
get_be16 (const guint8 *p)
{
  return (guint16) ((p[0] << 8) | p[1]);
}

static guint32
get_be32 (const guint8 *p)
{
  return ((guint32) p[0] << 24) | ((guint32) p[1] << 16) | ((guint32) p[2] << 8) | p[3];
}

static void G_GNUC_PRINTF (3, 4)
problem (NetPacket *pkt, AirlockCaptureAnomalyKind kind, const char *format, ...)
{
  va_list args;

  if (pkt->problem_set)
    return;
  pkt->problem_set = TRUE;
  pkt->problem = kind;
  va_start (args, format);
  g_vsnprintf (pkt->reason, sizeof pkt->reason, format, args);
  va_end (args);
}

/* A header of @need bytes at @offset of a layer that has @have bytes
 * captured and @wire bytes sent: TRUE when it is all there; otherwise the
 * problem is set (CLIPPED when the snapshot length cut it, @kind when the
 * guest sent too few bytes). */
static gboolean
need (NetPacket *pkt, AirlockCaptureAnomalyKind kind, const char *what, gsize offset,
      gsize need_len, gsize have, gsize wire)
{
  if (have >= offset && have - offset >= need_len)
    return TRUE;
  if (wire >= offset && wire - offset >= need_len)
    problem (pkt, AIRLOCK_CAPTURE_ANOMALY_CLIPPED, "%s cut by the snapshot length", what);
  else
    problem (pkt, kind, "%s truncated: %" G_GSIZE_FORMAT " bytes needed, %" G_GSIZE_FORMAT
             " sent", what, need_len, wire >= offset ? wire - offset : 0);
  return FALSE;
}

static void
decode_tcp (const guint8 *p, gsize have, gsize wire, NetPacket *pkt)
{
  gsize data_offset;

  if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_TCP, "TCP header", 0, TCP_HEADER, have, wire))
    return;
  data_offset = (gsize) (p[12] >> 4) * 4;
  if (data_offset < TCP_HEADER)
    {
      problem (pkt, AIRLOCK_CAPTURE_ANOMALY_TCP, "TCP data offset %" G_GSIZE_FORMAT
               " is below 20", data_offset);
      return;
    }
  if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_TCP, "TCP options", 0, data_offset, have, wire))
    return;
  pkt->src_port = get_be16 (p);
  pkt->dst_port = get_be16 (p + 2);
  pkt->tcp_seq = get_be32 (p + 4);
  pkt->tcp_flags = p[13];
  pkt->payload = p + data_offset;
  pkt->payload_len = have - data_offset;
  pkt->payload_wire_len = wire - data_offset;
  pkt->have_transport = TRUE;
}

static void
decode_udp (const guint8 *p, gsize have, gsize wire, NetPacket *pkt)
{
  guint16 udp_len;

  if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_UDP, "UDP header", 0, UDP_HEADER, have, wire))
    return;
  udp_len = get_be16 (p + 4);
  pkt->src_port = get_be16 (p);
  pkt->dst_port = get_be16 (p + 2);
  /* In a first fragment the UDP length covers the whole datagram, which is
   * longer than this packet: only the bytes here are parsed. */
  if (!pkt->fragment)
    {
      if (udp_len < UDP_HEADER || udp_len > wire)
        {
          problem (pkt, AIRLOCK_CAPTURE_ANOMALY_UDP, "UDP length %u outside 8–%" G_GSIZE_FORMAT,
                   udp_len, wire);
          return;
        }
      wire = udp_len;
      have = MIN (have, wire);
    }
  pkt->payload = p + UDP_HEADER;
  pkt->payload_len = have - UDP_HEADER;
  pkt->payload_wire_len = wire - UDP_HEADER;
  pkt->have_transport = TRUE;
}

/* ICMP, ICMPv6 and IGMP share a layout: type, code, checksum and 4 more
 * bytes (identifier and sequence, unused, MTU or pointer; IGMP's group or
 * record count), then a body. */
static void
decode_icmp (const guint8 *p, gsize have, gsize wire, NetPacket *pkt,
             AirlockCaptureAnomalyKind kind, const char *what)
{
  if (!need (pkt, kind, what, 0, ICMP_HEADER, have, wire))
    return;
  pkt->icmp_type = p[0];
  pkt->icmp_code = p[1];
  pkt->icmp_rest = get_be32 (p + 4);
  pkt->icmp_body = p + ICMP_HEADER;
  pkt->icmp_body_len = have - ICMP_HEADER;
  pkt->have_transport = TRUE;
}

static void
decode_transport (const guint8 *p, gsize have, gsize wire, NetPacket *pkt)
{
  if (pkt->later_fragment)
    return;
  switch (pkt->protocol)
    {
    case IPPROTO_TCP:
      decode_tcp (p, have, wire, pkt);
      break;
    case IPPROTO_UDP:
      decode_udp (p, have, wire, pkt);
      break;
    case IPPROTO_ICMP:
      if (pkt->family == AF_INET)
        decode_icmp (p, have, wire, pkt, AIRLOCK_CAPTURE_ANOMALY_ICMP, "ICMP header");
      break;
    case IPPROTO_ICMPV6:
      if (pkt->family == AF_INET6)
        decode_icmp (p, have, wire, pkt, AIRLOCK_CAPTURE_ANOMALY_ICMPV6, "ICMPv6 header");
      break;
    case IPPROTO_IGMP:
      /* Its groups are what the capture judges (housekeeping.c: IGMP names only
       * groups the guest's kernel joins itself). */
      if (pkt->family == AF_INET)
        decode_icmp (p, have, wire, pkt, AIRLOCK_CAPTURE_ANOMALY_IGMP, "IGMP header");
      break;
    default:
      /* Every other protocol: the IP header is all a flow needs. */
      break;
    }
}

static void
decode_ipv4 (const guint8 *p, gsize have, gsize wire, NetPacket *pkt)
{
  gsize header_len, total_len;
  guint16 frag;

  if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV4, "IPv4 header", 0, IPV4_HEADER, have, wire))
    return;
  if (p[0] >> 4 != 4)
    {
      problem (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV4, "IPv4 EtherType with IP version %u", p[0] >> 4);
      return;
    }
  header_len = (gsize) (p[0] & 0xf) * 4;
  total_len = get_be16 (p + 2);
  if (header_len < IPV4_HEADER)
    {
      problem (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV4, "IPv4 header length %" G_GSIZE_FORMAT
               " is below 20", header_len);
      return;
    }
  /* Ethernet pads short frames: bytes past the total length are padding,
   * but a total length past the frame is a lie. */
  if (total_len < header_len || total_len > wire)
    {
      problem (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV4, "IPv4 total length %" G_GSIZE_FORMAT
               " outside %" G_GSIZE_FORMAT "–%" G_GSIZE_FORMAT, total_len, header_len, wire);
      return;
    }
  if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV4, "IPv4 options", 0, header_len, have, wire))
    return;
  wire = total_len;
  have = MIN (have, wire);

  pkt->family = AF_INET;
  memcpy (pkt->src, p + 12, 4);
  memcpy (pkt->dst, p + 16, 4);
  pkt->protocol = p[9];
  pkt->ip_options = header_len > IPV4_HEADER;
  frag = get_be16 (p + 6);
  /* MF set or a non-zero offset: a fragment.  Only the first (offset 0)
   * holds the transport header; nothing is reassembled. */
  pkt->fragment = (frag & 0x3fff) != 0;
  pkt->later_fragment = (frag & 0x1fff) != 0;
  pkt->fragment_id = get_be16 (p + 4);
  decode_transport (p + header_len, have - header_len, wire - header_len, pkt);
}

/* The final destination a routing header names, when it still has
 * segments to visit: RFC 8200 type 0 and RFC 6275 type 2 list the
 * addresses in order (the last is final); RFC 8754 type 4 (SRH) lists them
 * in reverse (segment 0 is final).  A socket connects to the final
 * address, so that is what the flow is keyed by. */
static void
routing_final_destination (const guint8 *h, gsize len, NetPacket *pkt)
{
  guint8 type = h[2];
  guint8 segments_left = h[3];
  gsize n_addresses = h[1] / 2;
  gsize at;

  if (segments_left == 0 || n_addresses == 0)
    return;
  if (type == 0 || type == 2)
    at = 8 + (n_addresses - 1) * 16;
  else if (type == 4)
    at = 8;
  else
    return;
  if (at + 16 <= len)
    memcpy (pkt->dst, h + at, 16);
}

static void
decode_ipv6 (const guint8 *p, gsize have, gsize wire, NetPacket *pkt)
{
  gsize payload_len, offset;
  guint8 next;

  if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV6, "IPv6 header", 0, IPV6_HEADER, have, wire))
    return;
  if (p[0] >> 4 != 6)
    {
      problem (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV6, "IPv6 EtherType with IP version %u", p[0] >> 4);
      return;
    }
  payload_len = get_be16 (p + 4);
  next = p[6];
  /* A payload length of 0 with a hop-by-hop header is a jumbogram (RFC
   * 2675): its length is the frame's. */
  if (payload_len == 0 && next == IPV6_EXT_HOP_BY_HOP)
    payload_len = wire - IPV6_HEADER;
  if (payload_len > wire - IPV6_HEADER)
    {
      problem (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV6, "IPv6 payload length %" G_GSIZE_FORMAT
               " exceeds the %" G_GSIZE_FORMAT " bytes sent", payload_len, wire - IPV6_HEADER);
      return;
    }
  wire = IPV6_HEADER + payload_len;
  have = MIN (have, wire);

  pkt->family = AF_INET6;
  memcpy (pkt->src, p + 8, 16);
  memcpy (pkt->dst, p + 24, 16);
  pkt->protocol = -1;

  offset = IPV6_HEADER;
  for (guint i = 0;; i++)
    {
      const guint8 *h = p + offset;
      gsize ext_len;

      switch (next)
        {
        case IPV6_EXT_HOP_BY_HOP:
        case IPV6_EXT_ROUTING:
        case IPV6_EXT_FRAGMENT:
        case IPV6_EXT_AH:
        case IPV6_EXT_DESTINATION:
        case IPV6_EXT_MOBILITY:
        case IPV6_EXT_HIP:
        case IPV6_EXT_SHIM6:
          break;
        default:
          pkt->protocol = next;
          decode_transport (h, have - offset, wire - offset, pkt);
          return;
        }

      if (i == AIRLOCK_CAPTURE_IPV6_EXTENSIONS_MAX)
        {
          problem (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV6, "more than %d IPv6 extension headers",
                   AIRLOCK_CAPTURE_IPV6_EXTENSIONS_MAX);
          return;
        }
      if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV6, "IPv6 extension header", offset, 8, have,
                 wire))
        return;
      pkt->ip_options = TRUE;
      if (next == IPV6_EXT_FRAGMENT)
        ext_len = 8;
      else if (next == IPV6_EXT_AH)
        ext_len = ((gsize) h[1] + 2) * 4;
      else
        ext_len = ((gsize) h[1] + 1) * 8;
      if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_IPV6, "IPv6 extension header", offset, ext_len,
                 have, wire))
        return;

      if (next == IPV6_EXT_ROUTING)
        routing_final_destination (h, ext_len, pkt);
      else if (next == IPV6_EXT_FRAGMENT)
        {
          guint16 frag = get_be16 (h + 2);

          pkt->fragment = TRUE;
          pkt->fragment_id = get_be32 (h + 4);
          if ((frag & 0xfff8) != 0)
            {
              /* Not the first fragment: the protocol is known, the
               * transport header is in another packet. */
              pkt->later_fragment = TRUE;
              pkt->protocol = h[0];
              return;
            }
        }
      next = h[0];
      offset += ext_len;
    }
}

static void
decode_arp (const guint8 *p, gsize have, gsize wire, NetPacket *pkt)
{
  if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_ARP, "ARP packet", 0, ARP_LEN, have, wire))
    return;
  /* Ethernet hardware, IPv4 protocol, 6- and 4-byte addresses: the only
   * ARP a Linux guest on this NIC sends. */
  if (get_be16 (p) != 1 || get_be16 (p + 2) != NET_ETHERTYPE_IPV4 || p[4] != 6 || p[5] != 4)
    {
      problem (pkt, AIRLOCK_CAPTURE_ANOMALY_ARP,
               "ARP for hardware type %u, protocol 0x%04x, lengths %u/%u", get_be16 (p),
               get_be16 (p + 2), p[4], p[5]);
      return;
    }
  pkt->arp = TRUE;
  pkt->arp_op = get_be16 (p + 6);
  memcpy (pkt->arp_sha, p + 8, 6);
  memcpy (pkt->arp_spa, p + 14, 4);
  memcpy (pkt->arp_tha, p + 18, 6);
  memcpy (pkt->arp_tpa, p + 24, 4);
}

void
net_decode_frame (const guint8 *frame, gsize caplen, gsize origlen, NetPacket *pkt)
{
  gsize offset = ETHERNET_HEADER;
  guint16 ethertype;

  memset (pkt, 0, sizeof *pkt);
  pkt->protocol = -1;
  origlen = MAX (origlen, caplen);

  if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_ETHERNET, "Ethernet header", 0, ETHERNET_HEADER,
             caplen, origlen))
    return;
  memcpy (pkt->dst_mac, frame, 6);
  memcpy (pkt->src_mac, frame + 6, 6);
  ethertype = get_be16 (frame + 12);

  if (ethertype == NET_ETHERTYPE_VLAN || ethertype == NET_ETHERTYPE_QINQ)
    {
      if (!need (pkt, AIRLOCK_CAPTURE_ANOMALY_VLAN, "802.1Q tag", offset, VLAN_TAG, caplen,
                 origlen))
        return;
      ethertype = get_be16 (frame + offset + 2);
      offset += VLAN_TAG;
      pkt->vlan = TRUE;
      /* One tag is decoded; a stack of them is not something this NIC's
       * guest has a reason to send. */
      if (ethertype == NET_ETHERTYPE_VLAN || ethertype == NET_ETHERTYPE_QINQ)
        {
          problem (pkt, AIRLOCK_CAPTURE_ANOMALY_VLAN, "nested 802.1Q tag 0x%04x", ethertype);
          return;
        }
    }
  pkt->ethertype = ethertype;

  switch (ethertype)
    {
    case NET_ETHERTYPE_IPV4:
      decode_ipv4 (frame + offset, caplen - offset, origlen - offset, pkt);
      break;
    case NET_ETHERTYPE_IPV6:
      decode_ipv6 (frame + offset, caplen - offset, origlen - offset, pkt);
      break;
    case NET_ETHERTYPE_ARP:
      decode_arp (frame + offset, caplen - offset, origlen - offset, pkt);
      break;
    default:
      problem (pkt, AIRLOCK_CAPTURE_ANOMALY_NON_IP, "EtherType 0x%04x", ethertype);
      break;
    }
}
