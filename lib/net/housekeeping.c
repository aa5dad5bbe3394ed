/* The guest kernel's own frames (see capture-private.h): ARP, neighbour
 * discovery, MLD, IGMP and ICMP errors about packets it received are
 * housekeeping, counted per kind rather than as flows.  They must be
 * about the guest's own addresses; what is not is an anomaly.  Here too:
 * whether a frame not from the guest's MAC is QEMU's (its MACs and
 * addresses), or the guest's under a forged source. */
#include "config.h"

#include "capture-private.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

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

void
net_capture_note_housekeeping (AirlockCapture *capture, AirlockHousekeepingKind kind)
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
int
net_housekeeping_kind (const AirlockCapture *capture, const NetPacket *pkt)
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
gboolean
net_is_qemu_frame (const AirlockCapture *capture, const NetPacket *pkt, char *why, gsize why_size)
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
void
net_judge_guest_arp (AirlockCapture *capture, const NetPacket *pkt)
{
  const AirlockCaptureGuest *g = &capture->guest;
  char mac[18], text[INET6_ADDRSTRLEN];

  if (pkt->arp_op != 1 && pkt->arp_op != 2)
    {
      g_autofree char *reason = g_strdup_printf ("ARP operation %u, which the guest's kernel "
                                                 "does not send", pkt->arp_op);

      net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR, reason);
    }
  else if (memcmp (pkt->arp_sha, g->mac, 6) != 0)
    {
      g_autofree char *reason = NULL;

      mac_text (pkt->arp_sha, mac);
      reason = g_strdup_printf ("ARP from the guest names MAC %s as the sender's", mac);
      net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR, reason);
    }
  else if (memcmp (pkt->arp_spa, g->ipv4, 4) != 0)
    {
      g_autofree char *reason = g_strdup_printf ("ARP from the guest claims %s, not its address",
                                                 address_text (AF_INET, pkt->arp_spa, text));

      net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR, reason);
    }
  else if (!is_on_link (g, AF_INET, pkt->arp_tpa))
    {
      g_autofree char *reason = g_strdup_printf ("ARP from the guest about %s, which is not on "
                                                 "its link",
                                                 address_text (AF_INET, pkt->arp_tpa, text));

      net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR, reason);
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
void
net_judge_guest_housekeeping (AirlockCapture *capture, const NetPacket *pkt,
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
    net_capture_note_anomaly (capture, anomaly, why);
}

/* An IP packet from the guest must come from one of its addresses; :: only
 * for what the kernel sends before it has one (MLD reports, DAD). */
void
net_judge_guest_source (AirlockCapture *capture, const NetPacket *pkt)
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
  net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_FOREIGN_SOURCE, reason);
}

GPtrArray *
airlock_capture_get_housekeeping (AirlockCapture *capture)
{
  g_return_val_if_fail (capture != NULL, NULL);
  return capture->housekeeping_list;
}
