/* A TCP connection's client bytes, in order (see capture-private.h):
 * what continues exactly where the last bytes ended feeds the DNS stream
 * of a connection to port 53 and the first-payload buffer the TLS SNI and
 * HTTP Host come from; after a gap nothing more is parsed, since framing
 * cannot be trusted.  Bounded by AIRLOCK_CAPTURE_CONNECTIONS_MAX
 * connections and AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX bytes each. */
#include "config.h"

#include "capture-private.h"

#include <string.h>

void
net_tcp_connection_free (TcpConnection *conn)
{
  if (conn == NULL)
    return;
  airlock_dns_tcp_stream_free (conn->dns);
  if (conn->first != NULL)
    g_byte_array_unref (conn->first);
  g_free (conn);
}

static void
connection_finish (AirlockCapture *capture, FlowState *state, TcpConnection *conn)
{
  if (conn->dns != NULL)
    {
      g_autoptr (AirlockDnsQuery) last = NULL;

      if (!conn->stopped)
        last = airlock_dns_tcp_stream_finish (conn->dns);
      if (last != NULL)
        net_flow_add_dns_query (capture, state, last);
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
          net_flow_add_name (capture, state->flow.sni, name);
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
          net_flow_add_name (capture, state->flow.http_hosts, name);
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
    net_flow_add_dns_queries (capture, state, airlock_dns_tcp_stream_feed (conn->dns, data, len));
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
    net_flow_add_dns_queries (capture, state, airlock_dns_tcp_stream_feed_gap (conn->dns, len));
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

void
net_track_tcp (AirlockCapture *capture, FlowState *state, const NetPacket *pkt)
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
          net_capture_note_anomaly (capture, AIRLOCK_CAPTURE_ANOMALY_LIMIT,
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

void
net_tcp_connection_close (AirlockCapture *capture, FlowState *state, TcpConnection *conn)
{
  if (conn->first != NULL)
    scan_first_payload (capture, state, conn, TRUE);
  connection_finish (capture, state, conn);
}
