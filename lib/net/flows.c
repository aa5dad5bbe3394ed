/* The capture analysis: pcap records → decoded frames → flows,
 * housekeeping and anomalies (see flows.h).
 *
 * Everything the guest controls is bounded here: the number of flows,
 * of TCP connections reassembled, of fragment trains remembered, of names
 * kept per flow, and the bytes kept per connection (the first payload up
 * to AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX, a DNS message up to the TCP
 * framing's 64 KiB).  Reaching a cap is an anomaly of kind LIMIT, never a
 * silent drop. */
#include "config.h"

#include "flows.h"
#include "net-private.h"
#include "pcap.h"
#include "evidence/dns.h"
#include "evidence/sockaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#define ICMP_ECHO_REPLY 0
#define ICMP_UNREACHABLE 3
#define ICMP_SOURCE_QUENCH 4
#define ICMP_ECHO_REQUEST 8
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAMETER_PROBLEM 12
#define ICMPV6_ERROR_MAX 4          /* types 1–4: unreachable … parameter problem */
#define ICMPV6_ECHO_REQUEST 128
#define ICMPV6_ECHO_REPLY 129
#define ICMPV6_MLD_QUERY 130
#define ICMPV6_MLD_REPORT 131
#define ICMPV6_MLD_DONE 132
#define ICMPV6_ROUTER_SOLICITATION 133
#define ICMPV6_ROUTER_ADVERTISEMENT 134
#define ICMPV6_NEIGHBOUR_SOLICITATION 135
#define ICMPV6_NEIGHBOUR_ADVERTISEMENT 136
#define ICMPV6_REDIRECT 137
#define ICMPV6_MLDV2_REPORT 143
#define DNS_PORT 53
#define ETHERNET_HEADER_SIZE 14

/* One TCP connection of a flow, client (guest) to server, reassembled in
 * order: bytes reach the DNS stream and the first-payload buffer only when
 * they continue exactly where the last ones ended. */
typedef struct {
  gboolean have_isn;
  guint32 isn;
  gboolean have_next;
  guint32 next_seq;
  gboolean stopped;          /* after a gap: later bytes are not parsed */
  AirlockDnsTcpStream *dns;  /* connections to port 53 */
  GByteArray *first;         /* the first payload, while a name may still be found in it */
  gboolean tls_done;
  gboolean http_done;
  gboolean taken;            /* the far end sent bytes or a FIN on it (AirlockFlow.taken) */
} TcpConnection;

typedef struct {
  AirlockFlow flow;          /* first: the public part */
  GHashTable *connections;   /* GBytes (guest address + port) → TcpConnection */
} FlowState;

struct _AirlockCapture {
  AirlockCaptureGuest guest;
  GPtrArray *flows;          /* FlowState *, as AirlockFlow * */
  GHashTable *flow_index;    /* key (owned by the flow) → FlowState */
  GHashTable *fragments;     /* GBytes (family, protocol, src, dst, id) → FlowState */
  guint connections;
  AirlockHousekeeping housekeeping[AIRLOCK_HOUSEKEEPING_N_KINDS];
  GPtrArray *housekeeping_list;
  AirlockCaptureAnomaly anomalies[AIRLOCK_CAPTURE_ANOMALY_N_KINDS];
  GPtrArray *anomaly_list;
  guint64 frames;
  guint64 guest_frames;
  guint64 unmatched_replies;

  /* the record being analysed */
  const AirlockPcapRecord *record;
  gboolean from_guest;
};

void
airlock_capture_guest_init (AirlockCaptureGuest *guest, const guint8 mac[6])
{
  static const guint8 ipv4[4] = { 10, 0, 2, 15 };
  static const guint8 ipv6[16] = { 0xfe, 0xc0, [15] = 0x15 };
  static const guint8 gateway4[4] = { 10, 0, 2, 2 };
  static const guint8 dns4[4] = { 10, 0, 2, 3 };

  g_return_if_fail (guest != NULL && mac != NULL);
  memset (guest, 0, sizeof *guest);
  memcpy (guest->mac, mac, 6);
  memcpy (guest->ipv4, ipv4, 4);
  memcpy (guest->ipv6, ipv6, 16);
  memcpy (guest->gateway4, gateway4, 4);
  memcpy (guest->dns4, dns4, 4);
  /* The kernel's default (addr_gen_mode eui64): fe80:: with the modified
   * EUI-64 of the MAC, the universal/local bit flipped. */
  guest->link_local[0] = 0xfe;
  guest->link_local[1] = 0x80;
  guest->link_local[8] = mac[0] ^ 0x02;
  guest->link_local[9] = mac[1];
  guest->link_local[10] = mac[2];
  guest->link_local[11] = 0xff;
  guest->link_local[12] = 0xfe;
  memcpy (guest->link_local + 13, mac + 3, 3);
}

const char *
airlock_housekeeping_kind_to_string (AirlockHousekeepingKind kind)
{
  switch (kind)
    {
    case AIRLOCK_HOUSEKEEPING_ARP: return "arp";
    case AIRLOCK_HOUSEKEEPING_ROUTER_SOLICITATION: return "router-solicitation";
    case AIRLOCK_HOUSEKEEPING_ROUTER_ADVERTISEMENT: return "router-advertisement";
    case AIRLOCK_HOUSEKEEPING_NEIGHBOUR_SOLICITATION: return "neighbour-solicitation";
    case AIRLOCK_HOUSEKEEPING_NEIGHBOUR_ADVERTISEMENT: return "neighbour-advertisement";
    case AIRLOCK_HOUSEKEEPING_REDIRECT: return "redirect";
    case AIRLOCK_HOUSEKEEPING_MLD_QUERY: return "mld-query";
    case AIRLOCK_HOUSEKEEPING_MLD_REPORT: return "mld-report";
    case AIRLOCK_HOUSEKEEPING_MLD_DONE: return "mld-done";
    case AIRLOCK_HOUSEKEEPING_MLDV2_REPORT: return "mldv2-report";
    case AIRLOCK_HOUSEKEEPING_IGMP: return "igmp";
    case AIRLOCK_HOUSEKEEPING_ICMP_ERROR: return "icmp-error";
    case AIRLOCK_HOUSEKEEPING_ICMPV6_ERROR: return "icmpv6-error";
    case AIRLOCK_HOUSEKEEPING_N_KINDS:
    default: return "invalid";
    }
}

const char *
airlock_capture_anomaly_kind_to_string (AirlockCaptureAnomalyKind kind)
{
  switch (kind)
    {
    case AIRLOCK_CAPTURE_ANOMALY_CLIPPED: return "clipped";
    case AIRLOCK_CAPTURE_ANOMALY_ETHERNET: return "ethernet";
    case AIRLOCK_CAPTURE_ANOMALY_VLAN: return "vlan";
    case AIRLOCK_CAPTURE_ANOMALY_NON_IP: return "non-ip";
    case AIRLOCK_CAPTURE_ANOMALY_ARP: return "arp";
    case AIRLOCK_CAPTURE_ANOMALY_IPV4: return "ipv4";
    case AIRLOCK_CAPTURE_ANOMALY_IPV6: return "ipv6";
    case AIRLOCK_CAPTURE_ANOMALY_TCP: return "tcp";
    case AIRLOCK_CAPTURE_ANOMALY_UDP: return "udp";
    case AIRLOCK_CAPTURE_ANOMALY_ICMP: return "icmp";
    case AIRLOCK_CAPTURE_ANOMALY_ICMPV6: return "icmpv6";
    case AIRLOCK_CAPTURE_ANOMALY_FRAGMENT: return "fragment";
    case AIRLOCK_CAPTURE_ANOMALY_FOREIGN_MAC: return "foreign-mac";
    case AIRLOCK_CAPTURE_ANOMALY_IGMP: return "igmp";
    case AIRLOCK_CAPTURE_ANOMALY_FOREIGN_SOURCE: return "foreign-source";
    case AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR: return "neighbour";
    case AIRLOCK_CAPTURE_ANOMALY_MULTICAST: return "multicast";
    case AIRLOCK_CAPTURE_ANOMALY_VLAN_TAG: return "vlan-tag";
    case AIRLOCK_CAPTURE_ANOMALY_LIMIT: return "limit";
    case AIRLOCK_CAPTURE_ANOMALY_N_KINDS:
    default: return "invalid";
    }
}

static int
flow_socket_type (int family, int protocol)
{
  if (protocol == IPPROTO_TCP)
    return SOCK_STREAM;
  if (protocol == IPPROTO_UDP)
    return SOCK_DGRAM;
  /* ICMP echo from an unprivileged program goes through a ping socket,
   * SOCK_DGRAM (net/ipv4/ping.c), which is what the supervisor records. */
  if ((family == AF_INET && protocol == IPPROTO_ICMP)
      || (family == AF_INET6 && protocol == IPPROTO_ICMPV6))
    return SOCK_DGRAM;
  return SOCK_RAW;
}

char *
airlock_capture_flow_key (int family, int protocol, const guint8 *address, guint16 port)
{
  AirlockSockaddr sa;

  g_return_val_if_fail (family == AF_INET || family == AF_INET6, NULL);
  g_return_val_if_fail (address != NULL, NULL);

  /* The same address the supervisor's decoder would produce for a
   * connect() there, so airlock_attempt_key() spells both alike. */
  memset (&sa, 0, sizeof sa);
  sa.effect = AIRLOCK_SOCKADDR_ADDRESS;
  sa.family = (guint16) family;
  sa.family_field = (guint16) family;
  sa.inet.port = port;
  if (family == AF_INET)
    {
      sa.len = 16;
      sa.inet.is_v4 = TRUE;
      memcpy (sa.inet.addr, address, 4);
      memcpy (sa.inet.v4, address, 4);
    }
  else
    {
      sa.len = 28;
      sa.inet.has_scope_id = TRUE;
      memcpy (sa.inet.addr, address, 16);
    }
  return airlock_attempt_key (family, flow_socket_type (family, protocol), protocol, &sa);
}

/* ---- anomalies and housekeeping ---- */

static void
note_anomaly (AirlockCapture *capture, AirlockCaptureAnomalyKind kind, const char *reason)
{
  AirlockCaptureAnomaly *anomaly = &capture->anomalies[kind];

  if (anomaly->count == 0)
    {
      anomaly->kind = kind;
      anomaly->first_record = capture->record->index;
      anomaly->first_frame = capture->record->index + 1;
      anomaly->first_reason = g_strdup_printf ("frame %" G_GUINT64_FORMAT " at offset %"
                                               G_GSIZE_FORMAT " (%s): %s",
                                               anomaly->first_frame, capture->record->offset,
                                               capture->from_guest ? "from the guest" : "from QEMU",
                                               reason);
    }
  anomaly->count++;
  if (capture->from_guest)
    anomaly->from_guest++;
}

static void
note_housekeeping (AirlockCapture *capture, AirlockHousekeepingKind kind)
{
  AirlockHousekeeping *h = &capture->housekeeping[kind];

  h->kind = kind;
  if (capture->from_guest)
    h->count++;
  else
    h->replies++;
}

/* Whether an ICMP / ICMPv6 error quotes a packet that was addressed to the
 * guest: then it is the kernel answering something it received.  An error
 * quoting anything else carries bytes of the sender's choosing to a
 * destination of its choosing, and is a flow like any other. */
static gboolean
quotes_packet_to_guest (const AirlockCapture *capture, const NetPacket *pkt)
{
  const guint8 *q = pkt->icmp_body;

  if (pkt->family == AF_INET)
    return pkt->icmp_body_len >= 20 && q[0] >> 4 == 4
           && memcmp (q + 16, capture->guest.ipv4, 4) == 0;
  if (pkt->icmp_body_len < 40 || q[0] >> 4 != 6)
    return FALSE;
  /* the guest's own address, or its link-local one (fe80::/10) */
  return memcmp (q + 24, capture->guest.ipv6, 16) == 0 || (q[24] == 0xfe && (q[25] & 0xc0) == 0x80);
}

/* The housekeeping kind of this IP packet, or -1 when it is not
 * housekeeping. */
static int
housekeeping_kind (const AirlockCapture *capture, const NetPacket *pkt)
{
  if (pkt->family == AF_INET && pkt->protocol == IPPROTO_IGMP)
    return AIRLOCK_HOUSEKEEPING_IGMP;
  if (!pkt->have_transport)
    return -1;
  if (pkt->family == AF_INET && pkt->protocol == IPPROTO_ICMP)
    {
      switch (pkt->icmp_type)
        {
        case ICMP_UNREACHABLE:
        case ICMP_SOURCE_QUENCH:
        case ICMP_TIME_EXCEEDED:
        case ICMP_PARAMETER_PROBLEM:
          if (!capture->from_guest || quotes_packet_to_guest (capture, pkt))
            return AIRLOCK_HOUSEKEEPING_ICMP_ERROR;
          return -1;
        default:
          return -1;
        }
    }
  if (pkt->family == AF_INET6 && pkt->protocol == IPPROTO_ICMPV6)
    {
      if (pkt->icmp_type >= 1 && pkt->icmp_type <= ICMPV6_ERROR_MAX)
        {
          if (!capture->from_guest || quotes_packet_to_guest (capture, pkt))
            return AIRLOCK_HOUSEKEEPING_ICMPV6_ERROR;
          return -1;
        }
      switch (pkt->icmp_type)
        {
        case ICMPV6_MLD_QUERY: return AIRLOCK_HOUSEKEEPING_MLD_QUERY;
        case ICMPV6_MLD_REPORT: return AIRLOCK_HOUSEKEEPING_MLD_REPORT;
        case ICMPV6_MLD_DONE: return AIRLOCK_HOUSEKEEPING_MLD_DONE;
        case ICMPV6_MLDV2_REPORT: return AIRLOCK_HOUSEKEEPING_MLDV2_REPORT;
        case ICMPV6_ROUTER_SOLICITATION: return AIRLOCK_HOUSEKEEPING_ROUTER_SOLICITATION;
        case ICMPV6_ROUTER_ADVERTISEMENT: return AIRLOCK_HOUSEKEEPING_ROUTER_ADVERTISEMENT;
        case ICMPV6_NEIGHBOUR_SOLICITATION: return AIRLOCK_HOUSEKEEPING_NEIGHBOUR_SOLICITATION;
        case ICMPV6_NEIGHBOUR_ADVERTISEMENT: return AIRLOCK_HOUSEKEEPING_NEIGHBOUR_ADVERTISEMENT;
        case ICMPV6_REDIRECT: return AIRLOCK_HOUSEKEEPING_REDIRECT;
        default: return -1;
        }
    }
  return -1;
}

/* ---- judging who sent a frame, and the guest's housekeeping ---- */

#define ND_OPTION_SOURCE_LINK_ADDRESS 1
#define ND_OPTION_TARGET_LINK_ADDRESS 2
#define ND_OPTION_NONCE 14
#define IGMP_QUERY 0x11
#define IGMP_V1_REPORT 0x12
#define IGMP_V2_REPORT 0x16
#define IGMP_LEAVE 0x17
#define IGMP_V3_REPORT 0x22

static const guint8 ipv6_unspecified[16];
static const guint8 ipv6_all_nodes[16] = { 0xff, 0x02, [15] = 0x01 };
static const guint8 ipv4_all_hosts[4] = { 224, 0, 0, 1 };

static void
mac_text (const guint8 *mac, char out[18])
{
  g_snprintf (out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
              mac[5]);
}

static const char *
address_text (int family, const guint8 *address, char out[INET6_ADDRSTRLEN])
{
  return inet_ntop (family, address, out, INET6_ADDRSTRLEN) ? out : "?";
}

/* QEMU's slirp builds its source MACs from its addresses: 52:55 and the
 * IPv4 address it speaks as (every IPv4 frame goes out as its host
 * address; an ARP answer as the address asked for), 52:56 and the low
 * four bytes of the IPv6 source (libslirp's if_encap4, arp_input,
 * in6_compute_ethaddr). */
static gboolean
is_qemu_mac (const guint8 *mac, guint8 second, const guint8 *low4)
{
  return mac[0] == 0x52 && mac[1] == second && memcmp (mac + 2, low4, 4) == 0;
}

static gboolean
is_guest_ipv6 (const AirlockCaptureGuest *g, const guint8 *a)
{
  return memcmp (a, g->ipv6, 16) == 0 || memcmp (a, g->link_local, 16) == 0;
}

/* The solicited-node group of @a (RFC 4291 2.7.1): ff02::1:ff and its low
 * 24 bits. */
static gboolean
is_solicited_node_of (const guint8 *group, const guint8 *a)
{
  static const guint8 prefix[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

  return memcmp (group, prefix, 13) == 0 && memcmp (group + 13, a + 13, 3) == 0;
}

/* A group the guest's kernel joins for itself: all-nodes and the
 * solicited-node groups of its two addresses (and so reports in MLD). */
static gboolean
is_guest_group6 (const AirlockCaptureGuest *g, const guint8 *group)
{
  return memcmp (group, ipv6_all_nodes, 16) == 0 || is_solicited_node_of (group, g->ipv6)
         || is_solicited_node_of (group, g->link_local);
}

/* On the guest's link: where its kernel resolves a neighbour rather than
 * the gateway (10.0.2.0/24; fec0::/64 and fe80::/64). */
static gboolean
is_on_link (const AirlockCaptureGuest *g, int family, const guint8 *a)
{
  static const guint8 link_local_prefix[8] = { 0xfe, 0x80 };

  if (family == AF_INET)
    return memcmp (a, g->ipv4, 3) == 0;
  return memcmp (a, g->ipv6, 8) == 0 || memcmp (a, link_local_prefix, 8) == 0;
}

/* Whether a frame whose source MAC is not the guest's is QEMU's own: its
 * MAC *and* its addresses, to the guest.  When it is not, @why says what
 * gave it away (the frame is then the guest's, sent under a forged
 * source). */
static gboolean
is_qemu_frame (const AirlockCapture *capture, const NetPacket *pkt, char *why, gsize why_size)
{
  const AirlockCaptureGuest *g = &capture->guest;
  char mac[18], text[INET6_ADDRSTRLEN], text2[INET6_ADDRSTRLEN];
  gboolean to_guest_mac = memcmp (pkt->dst_mac, g->mac, 6) == 0;
  gboolean to_multicast_mac = (pkt->dst_mac[0] & 1) != 0;

  mac_text (pkt->src_mac, mac);
  if (pkt->vlan)
    {
      g_snprintf (why, why_size, "a frame from MAC %s with an 802.1Q tag, which QEMU never adds",
                  mac);
      return FALSE;
    }
  if (pkt->arp)
    {
      gboolean as_qemu = memcmp (pkt->arp_spa, g->gateway4, 4) == 0
                         || memcmp (pkt->arp_spa, g->dns4, 4) == 0;

      if (as_qemu && is_qemu_mac (pkt->src_mac, 0x55, pkt->arp_spa)
          && memcmp (pkt->arp_sha, pkt->src_mac, 6) == 0 && memcmp (pkt->arp_tpa, g->ipv4, 4) == 0
          && (to_guest_mac || to_multicast_mac))
        return TRUE;
      g_snprintf (why, why_size, "ARP from MAC %s for %s to %s is not QEMU's (it speaks for its "
                  "gateway and resolver addresses, from their MACs, to the guest)", mac,
                  address_text (AF_INET, pkt->arp_spa, text),
                  address_text (AF_INET, pkt->arp_tpa, text2));
      return FALSE;
    }
  if (pkt->family == AF_INET)
    {
      if ((is_qemu_mac (pkt->src_mac, 0x55, g->gateway4) || is_qemu_mac (pkt->src_mac, 0x55, g->dns4))
          && to_guest_mac && memcmp (pkt->dst, g->ipv4, 4) == 0)
        return TRUE;
      g_snprintf (why, why_size, "an IPv4 packet from MAC %s, %s to %s, is not QEMU's (it sends "
                  "from 52:55:0a:00:02:02 to the guest only)", mac,
                  address_text (AF_INET, pkt->src, text), address_text (AF_INET, pkt->dst, text2));
      return FALSE;
    }
  if (pkt->family == AF_INET6)
    {
      gboolean to_guest = is_guest_ipv6 (g, pkt->dst) || is_guest_group6 (g, pkt->dst);

      if (is_qemu_mac (pkt->src_mac, 0x56, pkt->src + 12) && to_guest
          && (to_guest_mac || to_multicast_mac) && !is_guest_ipv6 (g, pkt->src))
        return TRUE;
      g_snprintf (why, why_size, "an IPv6 packet from MAC %s, %s to %s, is not QEMU's (it sends "
                  "from 52:56: and the source's low 32 bits, to the guest only)", mac,
                  address_text (AF_INET6, pkt->src, text), address_text (AF_INET6, pkt->dst, text2));
      return FALSE;
    }
  g_snprintf (why, why_size, "a frame from MAC %s, EtherType 0x%04x, which QEMU never sends", mac,
              pkt->ethertype);
  return FALSE;
}

/* The guest's ARP: from its MAC and IPv4, a request or an answer about an
 * address on its link (off-link destinations are the gateway's to
 * resolve). */
static void
judge_guest_arp (AirlockCapture *capture, const NetPacket *pkt)
{
  const AirlockCaptureGuest *g = &capture->guest;
  char mac[18], text[INET6_ADDRSTRLEN];

  if (pkt->arp_op != 1 && pkt->arp_op != 2)
    {
      g_autofree char *reason = g_strdup_printf ("ARP operation %u, which the guest's kernel "
                                                 "does not send", pkt->arp_op);

      note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR, reason);
    }
  else if (memcmp (pkt->arp_sha, g->mac, 6) != 0)
    {
      g_autofree char *reason = NULL;

      mac_text (pkt->arp_sha, mac);
      reason = g_strdup_printf ("ARP from the guest names MAC %s as the sender's", mac);
      note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR, reason);
    }
  else if (memcmp (pkt->arp_spa, g->ipv4, 4) != 0)
    {
      g_autofree char *reason = g_strdup_printf ("ARP from the guest claims %s, not its address",
                                                 address_text (AF_INET, pkt->arp_spa, text));

      note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR, reason);
    }
  else if (!is_on_link (g, AF_INET, pkt->arp_tpa))
    {
      g_autofree char *reason = g_strdup_printf ("ARP from the guest about %s, which is not on "
                                                 "its link",
                                                 address_text (AF_INET, pkt->arp_tpa, text));

      note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR, reason);
    }
}

/* The options of a neighbour discovery message from the guest: only
 * @allowed (a link-layer address option, which must name the guest's
 * MAC) and, from ::, the DAD nonce.  FALSE with @why set otherwise. */
static gboolean
nd_options_ok (const AirlockCapture *capture, const guint8 *p, gsize len, guint8 allowed,
               gboolean unspecified_source, char *why, gsize why_size)
{
  char mac[18];

  while (len > 0)
    {
      gsize olen = len >= 2 ? (gsize) p[1] * 8 : 0;

      if (olen == 0 || olen > len)
        {
          g_snprintf (why, why_size, "an option of %" G_GSIZE_FORMAT " bytes that does not fit",
                      olen);
          return FALSE;
        }
      if (p[0] == allowed && olen == 8)
        {
          if (memcmp (p + 2, capture->guest.mac, 6) != 0)
            {
              mac_text (p + 2, mac);
              g_snprintf (why, why_size, "a link-layer address option naming MAC %s", mac);
              return FALSE;
            }
        }
      else if (!(p[0] == ND_OPTION_NONCE && unspecified_source))
        {
          g_snprintf (why, why_size, "option type %u, which the guest's kernel does not send",
                      p[0]);
          return FALSE;
        }
      p += olen;
      len -= olen;
    }
  return TRUE;
}

/* An MLD report's group, or an MLDv2 report's records: only the groups the
 * guest's kernel joins for its own addresses, without sources.  FALSE with
 * @why set otherwise. */
static gboolean
mld_groups_ok (const AirlockCapture *capture, const NetPacket *pkt, char *why, gsize why_size)
{
  const guint8 *p = pkt->icmp_body;
  gsize len = pkt->icmp_body_len;
  char text[INET6_ADDRSTRLEN];
  guint records;

  if (pkt->icmp_type != ICMPV6_MLDV2_REPORT)
    {
      if (len < 16)
        {
          g_snprintf (why, why_size, "an MLD message without its group");
          return FALSE;
        }
      if (!is_guest_group6 (&capture->guest, p))
        {
          g_snprintf (why, why_size, "MLD about group %s, which the guest's kernel does not join",
                      address_text (AF_INET6, p, text));
          return FALSE;
        }
      return TRUE;
    }
  records = pkt->icmp_rest & 0xffff;
  for (guint i = 0; i < records; i++)
    {
      gsize sources, size;

      if (len < 20)
        {
          g_snprintf (why, why_size, "an MLDv2 report cut inside record %u of %u", i + 1, records);
          return FALSE;
        }
      sources = ((gsize) p[2] << 8) | p[3];
      size = 20 + 16 * sources + 4 * (gsize) p[1];
      if (!is_guest_group6 (&capture->guest, p + 4) || sources > 0 || p[1] != 0)
        {
          g_snprintf (why, why_size, "an MLDv2 record about group %s (%" G_GSIZE_FORMAT
                      " sources, %u words of auxiliary data): the guest's kernel reports only "
                      "the groups of its own addresses", address_text (AF_INET6, p + 4, text),
                      sources, p[1]);
          return FALSE;
        }
      p += MIN (size, len);
      len -= MIN (size, len);
    }
  if (len > 0)
    {
      g_snprintf (why, why_size, "%" G_GSIZE_FORMAT " bytes after the last of %u MLDv2 records",
                  len, records);
      return FALSE;
    }
  return TRUE;
}

/* IGMP from the guest: its kernel joins only all-hosts on IPv4, which IGMP
 * never reports, so a report may name no other group. */
static gboolean
igmp_groups_ok (const NetPacket *pkt, char *why, gsize why_size)
{
  const guint8 *p = pkt->icmp_body;
  gsize len = pkt->icmp_body_len;
  char text[INET6_ADDRSTRLEN];
  guint8 group[4];
  guint records;

  switch (pkt->icmp_type)
    {
    case IGMP_V1_REPORT:
    case IGMP_V2_REPORT:
    case IGMP_LEAVE:
      group[0] = (guint8) (pkt->icmp_rest >> 24);
      group[1] = (guint8) (pkt->icmp_rest >> 16);
      group[2] = (guint8) (pkt->icmp_rest >> 8);
      group[3] = (guint8) pkt->icmp_rest;
      if (memcmp (group, ipv4_all_hosts, 4) == 0)
        return TRUE;
      g_snprintf (why, why_size, "IGMP about group %s, which the guest's kernel does not join",
                  address_text (AF_INET, group, text));
      return FALSE;
    case IGMP_V3_REPORT:
      records = pkt->icmp_rest & 0xffff;
      for (guint i = 0; i < records; i++)
        {
          if (len < 8)
            {
              g_snprintf (why, why_size, "an IGMPv3 report cut inside record %u of %u", i + 1,
                          records);
              return FALSE;
            }
          if (memcmp (p + 4, ipv4_all_hosts, 4) != 0 || p[1] != 0 || p[2] != 0 || p[3] != 0)
            {
              g_snprintf (why, why_size, "an IGMPv3 record about group %s, which the guest's "
                          "kernel does not join", address_text (AF_INET, p + 4, text));
              return FALSE;
            }
          p += 8;
          len -= 8;
        }
      return TRUE;
    case IGMP_QUERY:
      g_snprintf (why, why_size, "an IGMP query, which only a multicast router sends");
      return FALSE;
    default:
      g_snprintf (why, why_size, "IGMP type 0x%02x", pkt->icmp_type);
      return FALSE;
    }
}

/* The guest's link housekeeping must be about its own addresses (see
 * airlock_capture_get_anomalies()); what is not is an anomaly, still
 * counted as the housekeeping it claims to be. */
static void
judge_guest_housekeeping (AirlockCapture *capture, const NetPacket *pkt,
                          AirlockHousekeepingKind kind)
{
  const AirlockCaptureGuest *g = &capture->guest;
  char why[200], text[INET6_ADDRSTRLEN];
  gboolean unspecified = pkt->family == AF_INET6
                         && memcmp (pkt->src, ipv6_unspecified, 16) == 0;
  AirlockCaptureAnomalyKind anomaly = AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR;
  gboolean ok = TRUE;

  why[0] = '\0';
  switch (kind)
    {
    case AIRLOCK_HOUSEKEEPING_ROUTER_SOLICITATION:
      ok = nd_options_ok (capture, pkt->icmp_body, pkt->icmp_body_len,
                          ND_OPTION_SOURCE_LINK_ADDRESS, unspecified, why, sizeof why);
      break;
    case AIRLOCK_HOUSEKEEPING_NEIGHBOUR_SOLICITATION:
      if (pkt->icmp_body_len < 16)
        {
          g_snprintf (why, sizeof why, "a neighbour solicitation without its target");
          ok = FALSE;
        }
      else if (unspecified ? !is_guest_ipv6 (g, pkt->icmp_body)
                           : !is_on_link (g, AF_INET6, pkt->icmp_body))
        {
          g_snprintf (why, sizeof why, "a neighbour solicitation for %s, %s",
                      address_text (AF_INET6, pkt->icmp_body, text),
                      unspecified ? "not the guest's own address (from ::)"
                                  : "which is not on the guest's link");
          ok = FALSE;
        }
      else
        ok = nd_options_ok (capture, pkt->icmp_body + 16, pkt->icmp_body_len - 16,
                            ND_OPTION_SOURCE_LINK_ADDRESS, unspecified, why, sizeof why);
      break;
    case AIRLOCK_HOUSEKEEPING_NEIGHBOUR_ADVERTISEMENT:
      if (pkt->icmp_body_len < 16)
        {
          g_snprintf (why, sizeof why, "a neighbour advertisement without its target");
          ok = FALSE;
        }
      else if (!is_guest_ipv6 (g, pkt->icmp_body))
        {
          g_snprintf (why, sizeof why, "a neighbour advertisement for %s, not the guest's address",
                      address_text (AF_INET6, pkt->icmp_body, text));
          ok = FALSE;
        }
      else
        ok = nd_options_ok (capture, pkt->icmp_body + 16, pkt->icmp_body_len - 16,
                            ND_OPTION_TARGET_LINK_ADDRESS, FALSE, why, sizeof why);
      break;
    case AIRLOCK_HOUSEKEEPING_ROUTER_ADVERTISEMENT:
    case AIRLOCK_HOUSEKEEPING_REDIRECT:
    case AIRLOCK_HOUSEKEEPING_MLD_QUERY:
      g_snprintf (why, sizeof why, "a %s, which only a router sends",
                  airlock_housekeeping_kind_to_string (kind));
      ok = FALSE;
      break;
    case AIRLOCK_HOUSEKEEPING_MLD_REPORT:
    case AIRLOCK_HOUSEKEEPING_MLD_DONE:
    case AIRLOCK_HOUSEKEEPING_MLDV2_REPORT:
      anomaly = AIRLOCK_CAPTURE_ANOMALY_MULTICAST;
      ok = mld_groups_ok (capture, pkt, why, sizeof why);
      break;
    case AIRLOCK_HOUSEKEEPING_IGMP:
      anomaly = AIRLOCK_CAPTURE_ANOMALY_MULTICAST;
      ok = igmp_groups_ok (pkt, why, sizeof why);
      break;
    case AIRLOCK_HOUSEKEEPING_ARP:
    case AIRLOCK_HOUSEKEEPING_ICMP_ERROR:
    case AIRLOCK_HOUSEKEEPING_ICMPV6_ERROR:
    case AIRLOCK_HOUSEKEEPING_N_KINDS:
    default:
      break;
    }
  if (!ok)
    note_anomaly (capture, anomaly, why);
}

/* An IP packet from the guest must come from one of its addresses; :: only
 * for what the kernel sends before it has one (MLD reports, DAD). */
static void
judge_guest_source (AirlockCapture *capture, const NetPacket *pkt)
{
  const AirlockCaptureGuest *g = &capture->guest;
  char text[INET6_ADDRSTRLEN];
  g_autofree char *reason = NULL;

  if (pkt->family == AF_INET && memcmp (pkt->src, g->ipv4, 4) == 0)
    return;
  if (pkt->family == AF_INET6)
    {
      if (is_guest_ipv6 (g, pkt->src))
        return;
      if (memcmp (pkt->src, ipv6_unspecified, 16) == 0 && pkt->protocol == IPPROTO_ICMPV6
          && pkt->have_transport
          && (pkt->icmp_type == ICMPV6_MLDV2_REPORT || pkt->icmp_type == ICMPV6_MLD_REPORT
              || pkt->icmp_type == ICMPV6_MLD_DONE
              || pkt->icmp_type == ICMPV6_NEIGHBOUR_SOLICITATION
              || pkt->icmp_type == ICMPV6_ROUTER_SOLICITATION))
        return;
    }
  reason = g_strdup_printf ("an IPv%c packet from source address %s, not the guest's",
                            pkt->family == AF_INET ? '4' : '6',
                            address_text (pkt->family, pkt->src, text));
  note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_FOREIGN_SOURCE, reason);
}

/* ---- flows ---- */

static void
tcp_connection_free (TcpConnection *conn)
{
  if (conn == NULL)
    return;
  airlock_dns_tcp_stream_free (conn->dns);
  if (conn->first != NULL)
    g_byte_array_unref (conn->first);
  g_free (conn);
}

static void
flow_state_free (FlowState *state)
{
  if (state == NULL)
    return;
  g_free (state->flow.address_text);
  g_free (state->flow.key);
  g_ptr_array_unref (state->flow.dns_names);
  g_ptr_array_unref (state->flow.sni);
  g_ptr_array_unref (state->flow.http_hosts);
  g_hash_table_unref (state->connections);
  g_free (state);
}

static void
add_name (AirlockCapture *capture, GPtrArray *names, const char *name)
{
  for (guint i = 0; i < names->len; i++)
    if (strcmp (names->pdata[i], name) == 0)
      return;
  if (names->len >= AIRLOCK_CAPTURE_NAMES_MAX)
    {
      note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_LIMIT,
                    "more than " G_STRINGIFY (AIRLOCK_CAPTURE_NAMES_MAX) " names in one flow");
      return;
    }
  g_ptr_array_add (names, g_strdup (name));
}

static void
add_dns_query (AirlockCapture *capture, FlowState *state, const AirlockDnsQuery *query)
{
  if (query->problem != AIRLOCK_DNS_WELL_FORMED)
    state->flow.dns_malformed++;
  for (guint i = 0; i < query->questions->len; i++)
    {
      const AirlockDnsQuestion *q = query->questions->pdata[i];

      if (q->name[0] != '\0')
        add_name (capture, state->flow.dns_names, q->name);
    }
}

static void
add_dns_queries (AirlockCapture *capture, FlowState *state, GPtrArray *queries)
{
  for (guint i = 0; i < queries->len; i++)
    add_dns_query (capture, state, queries->pdata[i]);
  g_ptr_array_unref (queries);
}

static FlowState *
lookup_flow (AirlockCapture *capture, int family, int protocol, const guint8 *address,
             guint16 port)
{
  g_autofree char *key = airlock_capture_flow_key (family, protocol, address, port);

  return g_hash_table_lookup (capture->flow_index, key);
}

static FlowState *
get_flow (AirlockCapture *capture, const NetPacket *pkt, int protocol, guint16 port)
{
  g_autofree char *key = airlock_capture_flow_key (pkt->family, protocol, pkt->dst, port);
  FlowState *state = g_hash_table_lookup (capture->flow_index, key);
  char text[INET6_ADDRSTRLEN];

  if (state != NULL)
    return state;
  if (capture->flows->len >= AIRLOCK_CAPTURE_FLOWS_MAX)
    {
      note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_LIMIT,
                    "more than " G_STRINGIFY (AIRLOCK_CAPTURE_FLOWS_MAX) " flows");
      return NULL;
    }

  state = g_new0 (FlowState, 1);
  state->flow.family = pkt->family;
  state->flow.type = flow_socket_type (pkt->family, protocol);
  state->flow.protocol = protocol;
  memcpy (state->flow.address, pkt->dst, pkt->family == AF_INET ? 4 : 16);
  inet_ntop (pkt->family, pkt->dst, text, sizeof text);
  state->flow.address_text = g_strdup (text);
  state->flow.port = port;
  state->flow.key = g_steal_pointer (&key);
  state->flow.first_record = capture->record->index;
  state->flow.first_time_us = capture->record->time_us;
  state->flow.dns_names = g_ptr_array_new_with_free_func (g_free);
  state->flow.sni = g_ptr_array_new_with_free_func (g_free);
  state->flow.http_hosts = g_ptr_array_new_with_free_func (g_free);
  state->connections = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                              (GDestroyNotify) g_bytes_unref,
                                              (GDestroyNotify) tcp_connection_free);
  g_ptr_array_add (capture->flows, state);
  g_hash_table_insert (capture->flow_index, state->flow.key, state);
  return state;
}

static GBytes *
fragment_key (const NetPacket *pkt)
{
  guint8 key[2 + 16 + 16 + 4];

  key[0] = (guint8) pkt->family;
  key[1] = (guint8) pkt->protocol;
  memcpy (key + 2, pkt->src, 16);
  memcpy (key + 18, pkt->dst, 16);
  memcpy (key + 34, &pkt->fragment_id, 4);
  return g_bytes_new (key, sizeof key);
}

/* ---- TCP: in-order reassembly of the client's bytes ---- */

static void
connection_finish (AirlockCapture *capture, FlowState *state, TcpConnection *conn)
{
  if (conn->dns != NULL)
    {
      g_autoptr (AirlockDnsQuery) last = NULL;

      if (!conn->stopped)
        last = airlock_dns_tcp_stream_finish (conn->dns);
      if (last != NULL)
        add_dns_query (capture, state, last);
      g_clear_pointer (&conn->dns, airlock_dns_tcp_stream_free);
    }
  g_clear_pointer (&conn->first, g_byte_array_unref);
}

/* Looks for a name in the first payload so far; @final when no more bytes
 * will come. */
static void
scan_first_payload (AirlockCapture *capture, FlowState *state, TcpConnection *conn,
                    gboolean final)
{
  GByteArray *first = conn->first;
  NetPayloadResult result;
  char *name = NULL;

  if (!conn->tls_done)
    {
      result = net_tls_client_hello_sni (first->data, first->len, &name);
      if (result == NET_PAYLOAD_FOUND)
        {
          add_name (capture, state->flow.sni, name);
          g_free (name);
          conn->http_done = TRUE;
        }
      if (result != NET_PAYLOAD_NEED_MORE)
        conn->tls_done = TRUE;
    }
  if (!conn->http_done)
    {
      result = net_http_request_host (first->data, first->len, &name);
      if (result == NET_PAYLOAD_FOUND)
        {
          add_name (capture, state->flow.http_hosts, name);
          g_free (name);
          conn->tls_done = TRUE;
        }
      if (result != NET_PAYLOAD_NEED_MORE)
        conn->http_done = TRUE;
    }
  if (final || first->len >= AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX)
    conn->tls_done = conn->http_done = TRUE;
  if (conn->tls_done && conn->http_done)
    g_clear_pointer (&conn->first, g_byte_array_unref);
}

static void
connection_consume (AirlockCapture *capture, FlowState *state, TcpConnection *conn,
                    const guint8 *data, gsize len)
{
  if (len == 0)
    return;
  if (conn->dns != NULL)
    add_dns_queries (capture, state, airlock_dns_tcp_stream_feed (conn->dns, data, len));
  if (conn->first != NULL)
    {
      gsize room = AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX - conn->first->len;

      g_byte_array_append (conn->first, data, (guint) MIN (len, room));
      scan_first_payload (capture, state, conn, FALSE);
    }
}

/* @len bytes of the stream are missing (not sent in order, or cut by the
 * snapshot length): framing cannot be trusted after them, so the stream
 * stops. */
static void
connection_gap (AirlockCapture *capture, FlowState *state, TcpConnection *conn, gsize len)
{
  if (conn->dns != NULL)
    add_dns_queries (capture, state, airlock_dns_tcp_stream_feed_gap (conn->dns, len));
  if (conn->first != NULL)
    scan_first_payload (capture, state, conn, TRUE);
  conn->stopped = TRUE;
}

static void
connection_reset (AirlockCapture *capture, FlowState *state, TcpConnection *conn)
{
  connection_finish (capture, state, conn);
  conn->have_isn = conn->have_next = conn->stopped = FALSE;
  conn->tls_done = conn->http_done = conn->taken = FALSE;
  conn->first = g_byte_array_new ();
  if (state->flow.port == DNS_PORT)
    conn->dns = airlock_dns_tcp_stream_new (0);
}

static void
track_tcp (AirlockCapture *capture, FlowState *state, const NetPacket *pkt)
{
  guint8 raw_key[18];
  g_autoptr (GBytes) key = NULL;
  TcpConnection *conn;
  gboolean syn = (pkt->tcp_flags & NET_TCP_SYN) != 0;
  guint32 data_seq, ahead;
  const guint8 *data = pkt->payload;
  gsize len = pkt->payload_len, wire_len = pkt->payload_wire_len;

  memcpy (raw_key, pkt->src, 16);
  raw_key[16] = (guint8) (pkt->src_port >> 8);
  raw_key[17] = (guint8) pkt->src_port;
  key = g_bytes_new (raw_key, sizeof raw_key);
  conn = g_hash_table_lookup (state->connections, key);
  if (conn == NULL)
    {
      if (capture->connections >= AIRLOCK_CAPTURE_CONNECTIONS_MAX)
        {
          note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_LIMIT,
                        "more than " G_STRINGIFY (AIRLOCK_CAPTURE_CONNECTIONS_MAX)
                        " TCP connections: payloads not parsed");
          return;
        }
      capture->connections++;
      conn = g_new0 (TcpConnection, 1);
      connection_reset (capture, state, conn);
      g_hash_table_insert (state->connections, g_steal_pointer (&key), conn);
    }

  if (syn)
    {
      /* A SYN with another initial sequence number is a new connection
       * from the same port: what the old one held is finished first. */
      if (conn->have_isn && conn->isn != pkt->tcp_seq)
        connection_reset (capture, state, conn);
      if (!conn->have_isn)
        {
          conn->have_isn = TRUE;
          conn->isn = pkt->tcp_seq;
          conn->have_next = TRUE;
          conn->next_seq = pkt->tcp_seq + 1;
        }
    }
  if (wire_len == 0 || conn->stopped)
    return;

  /* Data starts after the SYN's own sequence number. */
  data_seq = pkt->tcp_seq + (syn ? 1 : 0);
  if (!conn->have_next)
    {
      /* The SYN was not seen: the stream starts with the first data. */
      conn->have_next = TRUE;
      conn->next_seq = data_seq;
    }

  ahead = data_seq - conn->next_seq;
  if (ahead != 0 && ahead < 0x80000000u)
    {
      /* Bytes before these are missing: out of order or never sent. */
      connection_gap (capture, state, conn, ahead);
      return;
    }
  if (ahead != 0)
    {
      /* A retransmission starting before the bytes already taken: only
       * its new tail counts. */
      guint32 behind = conn->next_seq - data_seq;

      if (behind >= wire_len)
        return;
      if (behind >= len)
        {
          connection_gap (capture, state, conn, wire_len - behind);
          return;
        }
      data += behind;
      len -= behind;
      wire_len -= behind;
    }
  connection_consume (capture, state, conn, data, len);
  conn->next_seq += (guint32) wire_len;
  if (len < wire_len)
    connection_gap (capture, state, conn, wire_len - len);
}

/* ---- one frame ---- */

static void
egress (AirlockCapture *capture, const NetPacket *pkt)
{
  const AirlockPcapRecord *record = capture->record;
  FlowState *state = NULL;
  int protocol = pkt->protocol >= 0 ? pkt->protocol : IPPROTO_RAW;
  gboolean ported = protocol == IPPROTO_TCP || protocol == IPPROTO_UDP;
  gboolean transport_expected = ported || (pkt->family == AF_INET && protocol == IPPROTO_ICMP)
                                || (pkt->family == AF_INET6 && protocol == IPPROTO_ICMPV6);
  g_autoptr (GBytes) frag_key = NULL;

  if (pkt->fragment)
    frag_key = fragment_key (pkt);
  if (pkt->later_fragment)
    {
      state = g_hash_table_lookup (capture->fragments, frag_key);
      if (state == NULL)
        note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_FRAGMENT,
                      "a fragment whose first fragment was not seen");
    }
  if (state == NULL)
    state = get_flow (capture, pkt, protocol,
                      ported && pkt->have_transport ? pkt->dst_port : 0);
  if (state == NULL)
    return;

  if (pkt->fragment && !pkt->later_fragment && pkt->have_transport
      && g_hash_table_size (capture->fragments) < AIRLOCK_CAPTURE_FRAGMENTS_MAX)
    g_hash_table_replace (capture->fragments, g_steal_pointer (&frag_key), state);
  else if (pkt->fragment && !pkt->later_fragment && pkt->have_transport)
    note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_LIMIT,
                  "more than " G_STRINGIFY (AIRLOCK_CAPTURE_FRAGMENTS_MAX) " fragment trains");

  state->flow.packets++;
  state->flow.bytes += record->origlen;
  state->flow.last_time_us = record->time_us;
  if (pkt->fragment)
    state->flow.fragments++;
  if (pkt->ip_options)
    state->flow.ip_options++;
  if (transport_expected && !pkt->later_fragment && !pkt->have_transport)
    state->flow.malformed++;
  if (!pkt->have_transport)
    return;

  switch (protocol)
    {
    case IPPROTO_TCP:
      if ((pkt->tcp_flags & (NET_TCP_SYN | NET_TCP_ACK)) == NET_TCP_SYN)
        state->flow.syns++;
      if (!pkt->fragment)
        track_tcp (capture, state, pkt);
      break;
    case IPPROTO_UDP:
      state->flow.datagrams++;
      if (pkt->dst_port == DNS_PORT)
        {
          g_autoptr (AirlockDnsQuery) query =
            airlock_dns_parse_query (pkt->payload, pkt->payload_len, pkt->payload_wire_len);

          add_dns_query (capture, state, query);
        }
      break;
    case IPPROTO_ICMP:
      if (pkt->icmp_type == ICMP_ECHO_REQUEST)
        state->flow.echo_requests++;
      break;
    case IPPROTO_ICMPV6:
      if (pkt->icmp_type == ICMPV6_ECHO_REQUEST)
        state->flow.echo_requests++;
      break;
    default:
      break;
    }
}

/* The far end sent bytes or a FIN on the guest's connection @pkt is
 * addressed to: it took the connection (AirlockFlow.taken). */
static void
note_taken (FlowState *state, const NetPacket *pkt)
{
  guint8 raw_key[18];
  g_autoptr (GBytes) key = NULL;
  TcpConnection *conn;

  memcpy (raw_key, pkt->dst, 16);
  raw_key[16] = (guint8) (pkt->dst_port >> 8);
  raw_key[17] = (guint8) pkt->dst_port;
  key = g_bytes_new (raw_key, sizeof raw_key);
  conn = g_hash_table_lookup (state->connections, key);
  if (conn == NULL || conn->taken)
    return;
  conn->taken = TRUE;
  state->flow.taken++;
}

/* A frame from QEMU: it answers the flow keyed by its source. */
static void
reply (AirlockCapture *capture, const NetPacket *pkt)
{
  FlowState *state = NULL;
  int protocol = pkt->protocol >= 0 ? pkt->protocol : IPPROTO_RAW;
  gboolean ported = protocol == IPPROTO_TCP || protocol == IPPROTO_UDP;

  if (!ported || pkt->have_transport)
    state = lookup_flow (capture, pkt->family, protocol, pkt->src,
                         ported ? pkt->src_port : 0);
  if (state == NULL)
    {
      capture->unmatched_replies++;
      return;
    }
  state->flow.reply_packets++;
  state->flow.reply_bytes += capture->record->origlen;
  if (!pkt->have_transport)
    return;
  if (protocol == IPPROTO_TCP && (pkt->tcp_flags & NET_TCP_RST) != 0)
    state->flow.rst_seen = TRUE;
  else if (protocol == IPPROTO_TCP && (pkt->tcp_flags & NET_TCP_SYN) == 0
           && (pkt->payload_wire_len > 0 || (pkt->tcp_flags & NET_TCP_FIN) != 0))
    note_taken (state, pkt);
  else if ((protocol == IPPROTO_ICMP && pkt->icmp_type == ICMP_ECHO_REPLY)
           || (protocol == IPPROTO_ICMPV6 && pkt->icmp_type == ICMPV6_ECHO_REPLY))
    state->flow.echo_replies++;
}

static void
analyse_record (AirlockCapture *capture, const AirlockPcapRecord *record)
{
  NetPacket pkt;
  char why[200];
  int kind;

  net_decode_frame (record->data, record->caplen, record->origlen, &pkt);
  capture->record = record;
  capture->frames++;
  /* The MACs and addresses decide (a pcap records no direction): from the
   * guest's MAC is from the guest (a frame cut before its EtherType still
   * says who sent it); from QEMU's MAC and addresses to the guest is
   * QEMU's; anything else was sent by the guest under a forged source: it
   * is egress, and an anomaly. */
  if (record->caplen >= 12 && memcmp (record->data + 6, capture->guest.mac, 6) == 0)
    capture->from_guest = TRUE;
  else if (record->caplen < ETHERNET_HEADER_SIZE)
    capture->from_guest = FALSE;    /* an ETHERNET anomaly below */
  else if (capture->guest.sinkhole)
    capture->from_guest = FALSE;    /* the network's: the sinkhole refuses forged sources */
  else if (is_qemu_frame (capture, &pkt, why, sizeof why))
    capture->from_guest = FALSE;
  else
    {
      capture->from_guest = TRUE;
      note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_FOREIGN_MAC, why);
    }
  if (capture->from_guest)
    capture->guest_frames++;
  if (pkt.problem_set)
    note_anomaly (capture, pkt.problem, pkt.reason);
  if (capture->from_guest && pkt.vlan)
    note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_VLAN_TAG,
                  "an 802.1Q tag: the guest has no VLAN interface");
  if (capture->from_guest && pkt.arp)
    judge_guest_arp (capture, &pkt);
  if (capture->from_guest && pkt.family != 0)
    judge_guest_source (capture, &pkt);

  if (pkt.arp)
    {
      note_housekeeping (capture, AIRLOCK_HOUSEKEEPING_ARP);
      return;
    }
  if (pkt.family == 0)
    {
      if (!capture->from_guest && !pkt.problem_set)
        capture->unmatched_replies++;
      return;
    }
  kind = housekeeping_kind (capture, &pkt);
  if (kind >= 0 && capture->from_guest)
    judge_guest_housekeeping (capture, &pkt, (AirlockHousekeepingKind) kind);
  if (kind >= 0)
    note_housekeeping (capture, (AirlockHousekeepingKind) kind);
  else if (capture->from_guest)
    egress (capture, &pkt);
  else
    reply (capture, &pkt);
}

/* ---- the capture ---- */

static AirlockCapture *
capture_new (const AirlockCaptureGuest *guest)
{
  AirlockCapture *capture = g_new0 (AirlockCapture, 1);

  capture->guest = *guest;
  capture->flows = g_ptr_array_new_with_free_func ((GDestroyNotify) flow_state_free);
  capture->flow_index = g_hash_table_new (g_str_hash, g_str_equal);
  capture->fragments = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                              (GDestroyNotify) g_bytes_unref, NULL);
  capture->housekeeping_list = g_ptr_array_new ();
  capture->anomaly_list = g_ptr_array_new ();
  return capture;
}

void
airlock_capture_free (AirlockCapture *capture)
{
  if (capture == NULL)
    return;
  g_hash_table_unref (capture->fragments);
  g_hash_table_unref (capture->flow_index);
  g_ptr_array_unref (capture->flows);
  g_ptr_array_unref (capture->housekeeping_list);
  g_ptr_array_unref (capture->anomaly_list);
  for (guint i = 0; i < AIRLOCK_CAPTURE_ANOMALY_N_KINDS; i++)
    g_free (capture->anomalies[i].first_reason);
  g_free (capture);
}

AirlockCapture *
airlock_capture_analyse (GBytes *pcap, const AirlockCaptureGuest *guest, GError **error)
{
  g_autoptr (AirlockPcapReader) reader = NULL;
  g_autoptr (AirlockCapture) capture = NULL;
  AirlockPcapRecord record;
  GError *read_error = NULL;

  g_return_val_if_fail (pcap != NULL, NULL);
  g_return_val_if_fail (guest != NULL, NULL);

  reader = airlock_pcap_reader_new (pcap, error);
  if (reader == NULL)
    return NULL;
  capture = capture_new (guest);
  while (airlock_pcap_reader_next (reader, &record, &read_error))
    analyse_record (capture, &record);
  if (read_error != NULL)
    {
      g_propagate_error (error, read_error);
      return NULL;
    }

  /* Connections still open: a DNS message they ended inside, and a first
   * payload that never completed. */
  for (guint i = 0; i < capture->flows->len; i++)
    {
      FlowState *state = capture->flows->pdata[i];
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, state->connections);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          TcpConnection *conn = value;

          if (conn->first != NULL)
            scan_first_payload (capture, state, conn, TRUE);
          connection_finish (capture, state, conn);
        }
      g_hash_table_remove_all (state->connections);
    }
  g_hash_table_remove_all (capture->fragments);

  for (guint i = 0; i < AIRLOCK_HOUSEKEEPING_N_KINDS; i++)
    if (capture->housekeeping[i].count + capture->housekeeping[i].replies > 0)
      g_ptr_array_add (capture->housekeeping_list, &capture->housekeeping[i]);
  for (guint i = 0; i < AIRLOCK_CAPTURE_ANOMALY_N_KINDS; i++)
    if (capture->anomalies[i].count > 0)
      g_ptr_array_add (capture->anomaly_list, &capture->anomalies[i]);
  capture->record = NULL;
  return g_steal_pointer (&capture);
}

GPtrArray *
airlock_capture_get_flows (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, NULL);
  return capture->flows;
}

const AirlockFlow *
airlock_capture_lookup_flow (AirlockCapture *capture, const char *key)
{
  FlowState *state;

  g_return_val_if_fail (capture != NULL, NULL);
  g_return_val_if_fail (key != NULL, NULL);
  state = g_hash_table_lookup (capture->flow_index, key);
  return state != NULL ? &state->flow : NULL;
}

GPtrArray *
airlock_capture_get_housekeeping (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, NULL);
  return capture->housekeeping_list;
}

GPtrArray *
airlock_capture_get_anomalies (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, NULL);
  return capture->anomaly_list;
}

const AirlockCaptureAnomaly *
airlock_capture_get_first_anomaly (AirlockCapture *capture)
{
  const AirlockCaptureAnomaly *first = NULL;

  g_return_val_if_fail (capture != NULL, NULL);
  for (guint i = 0; i < capture->anomaly_list->len; i++)
    {
      const AirlockCaptureAnomaly *a = capture->anomaly_list->pdata[i];

      if (first == NULL || a->first_record < first->first_record)
        first = a;
    }
  return first;
}

guint64
airlock_capture_get_frames (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, 0);
  return capture->frames;
}

guint64
airlock_capture_get_guest_frames (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, 0);
  return capture->guest_frames;
}

guint64
airlock_capture_get_unmatched_replies (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, 0);
  return capture->unmatched_replies;
}
