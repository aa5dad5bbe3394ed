/* QEMU's frames (see capture-private.h): each answers the flow keyed by
 * its source, or counts as an unmatched reply; what it says (bytes or a
 * FIN taken on a connection, a RST, an echo reply) is what the gate reads
 * as the far end's part of a flow. */
#include "config.h"

#include "capture-private.h"

#include <netinet/in.h>
#include <string.h>

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
void
net_capture_reply (AirlockCapture *capture, const NetPacket *pkt)
{
  FlowState *state = NULL;
  int protocol = pkt->protocol >= 0 ? pkt->protocol : IPPROTO_RAW;
  gboolean ported = protocol == IPPROTO_TCP || protocol == IPPROTO_UDP;

  if (!ported || pkt->have_transport)
    state = net_flow_lookup (capture, pkt->family, protocol, pkt->src,
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
