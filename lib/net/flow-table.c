/* The capture's flows (see capture-private.h): keyed like the
 * supervisor's attempts, so the gate can match the two; the table of them,
 * bounded by AIRLOCK_CAPTURE_FLOWS_MAX; the fragment trains that lead later
 * fragments to their flow; and what one packet from the guest adds to its
 * flow (egress). */
#include "config.h"

#include "capture-private.h"
#include "evidence/sockaddr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

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

/* ---- flows ---- */

void
net_flow_state_free (FlowState *state)
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

FlowState *
net_flow_lookup (AirlockCapture *capture, int family, int protocol, const guint8 *address,
                 guint16 port)
{
  g_autofree char *key = airlock_capture_flow_key (family, protocol, address, port);

  return g_hash_table_lookup (capture->flow_index, key);
}

FlowState *
net_flow_get (AirlockCapture *capture, const NetPacket *pkt, int protocol, guint16 port)
{
  g_autofree char *key = airlock_capture_flow_key (pkt->family, protocol, pkt->dst, port);
  FlowState *state = g_hash_table_lookup (capture->flow_index, key);
  char text[INET6_ADDRSTRLEN];

  if (state != NULL)
    return state;
  if (capture->flows->len >= AIRLOCK_CAPTURE_FLOWS_MAX)
    {
      net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_LIMIT,
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
                                              (GDestroyNotify) net_tcp_connection_free);
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

/* ---- egress: one packet from the guest ---- */

void
net_capture_egress (AirlockCapture *capture, const NetPacket *pkt)
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
        net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_FRAGMENT,
                                  "a fragment whose first fragment was not seen");
    }
  if (state == NULL)
    state = net_flow_get (capture, pkt, protocol,
                          ported && pkt->have_transport ? pkt->dst_port : 0);
  if (state == NULL)
    return;

  if (pkt->fragment && !pkt->later_fragment && pkt->have_transport
      && g_hash_table_size (capture->fragments) < AIRLOCK_CAPTURE_FRAGMENTS_MAX)
    g_hash_table_replace (capture->fragments, g_steal_pointer (&frag_key), state);
  else if (pkt->fragment && !pkt->later_fragment && pkt->have_transport)
    net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_LIMIT,
                              "more than " G_STRINGIFY (AIRLOCK_CAPTURE_FRAGMENTS_MAX)
                              " fragment trains");

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
        net_track_tcp (capture, state, pkt);
      break;
    case IPPROTO_UDP:
      state->flow.datagrams++;
      if (pkt->dst_port == DNS_PORT)
        {
          g_autoptr (AirlockDnsQuery) query =
            airlock_dns_parse_query (pkt->payload, pkt->payload_len, pkt->payload_wire_len);

          net_flow_add_dns_query (capture, state, query);
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
