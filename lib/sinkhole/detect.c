/* What a client's first bytes are (see sinkhole.h): an HTTP/1.x request,
 * a TLS ClientHello, an SSH banner, DNS over TCP, or raw bytes.
 *
 * Detection is by content, as the guest chose it: a program may speak TLS
 * to port 80 or HTTP to port 8443, and the record must say what it sent.
 * The HTTP and TLS parsers are the capture analysis's own (net/payload.c),
 * so the sinkhole and the capture read a first payload the same way; the
 * DNS messages go through the supervisor's DNS decoder (evidence/dns.h).
 * The candidates are told apart by their first bytes ("SSH-", a TLS
 * handshake record, a method and a space); DNS, whose first bytes are a
 * length and can be anything, comes last and needs a message that looks
 * like a query, unless the port is 53. */
#include "config.h"

#include "sinkhole.h"
#include "evidence/dns.h"
#include "evidence/frame-private.h"
#include "net/net-private.h"

#include <string.h>

/* RFC 4253 §4.2: the identification line is at most 255 bytes, CR LF
 * included. */
#define SSH_BANNER_MAX 255
#define DNS_PORT 53
#define DNS_FLAG_QR 0x8000
#define DNS_OPCODE(flags) (((flags) >> 11) & 0xf)
/* A query with more questions than this is no query a resolver sends:
 * bytes that merely start with a plausible length are not DNS. */
#define DNS_QUESTIONS_PLAUSIBLE 16

/* One candidate's verdict on the bytes so far. */
typedef enum {
  CANDIDATE_NO,    /* these bytes are not it */
  CANDIDATE_MAYBE, /* could still be: more bytes decide */
  CANDIDATE_YES,   /* it is; @detected holds its fields */
} Candidate;

static Candidate
detect_ssh (const guint8 *data, gsize len, gboolean final, AirlockSinkholeDetected *detected)
{
  static const char prefix[] = "SSH-";
  const guint8 *lf;
  gsize end;

  if (memcmp (data, prefix, MIN (len, strlen (prefix))) != 0)
    return CANDIDATE_NO;
  if (len < strlen (prefix))
    return final ? CANDIDATE_NO : CANDIDATE_MAYBE;

  lf = memchr (data, '\n', MIN (len, SSH_BANNER_MAX));
  if (lf)
    end = (gsize) (lf - data);
  else if (len >= SSH_BANNER_MAX)
    return CANDIDATE_NO;   /* a longer line is no identification string */
  else if (!final)
    return CANDIDATE_MAYBE;
  else
    end = len;             /* the client stopped inside its banner */
  if (end > 0 && data[end - 1] == '\r')
    end--;
  detected->protocol = AIRLOCK_SINKHOLE_PROTOCOL_SSH;
  detected->ssh_banner = airlock_evidence_escape_bytes (data, end);
  return CANDIDATE_YES;
}

/* "1.3", "1.2", …: the versions of TLS and SSL 3.0; anything else as the
 * hex of its code point. */
static char *
tls_version_text (guint16 version)
{
  switch (version)
    {
    case 0x0304: return g_strdup ("1.3");
    case 0x0303: return g_strdup ("1.2");
    case 0x0302: return g_strdup ("1.1");
    case 0x0301: return g_strdup ("1.0");
    case 0x0300: return g_strdup ("ssl3");
    default: return g_strdup_printf ("0x%04x", version);
    }
}

static Candidate
detect_tls (const guint8 *data, gsize len, gboolean final, AirlockSinkholeDetected *detected)
{
  NetTlsClientHello hello;
  NetPayloadResult result = net_tls_client_hello_parse (data, len, &hello);
  Candidate candidate = CANDIDATE_NO;

  switch (result)
    {
    case NET_PAYLOAD_NONE:
      break;
    case NET_PAYLOAD_NEED_MORE:
      if (!final)
        {
          candidate = CANDIDATE_MAYBE;
          break;
        }
      /* The client stopped inside its ClientHello: TLS, by a whole record
       * header, but nothing it offered is known. */
      if (len < 5)
        break;
      detected->protocol = AIRLOCK_SINKHOLE_PROTOCOL_TLS;
      detected->tls_alpn = g_ptr_array_new_with_free_func (g_free);
      candidate = CANDIDATE_YES;
      break;
    case NET_PAYLOAD_FOUND:
      detected->protocol = AIRLOCK_SINKHOLE_PROTOCOL_TLS;
      detected->tls_sni = g_steal_pointer (&hello.sni);
      detected->tls_alpn = hello.alpn ? g_steal_pointer (&hello.alpn)
                                      : g_ptr_array_new_with_free_func (g_free);
      /* A ClientHello too short to hold its legacy_version offers
       * nothing. */
      if (hello.highest_supported_version)
        detected->tls_version = tls_version_text (hello.highest_supported_version);
      else if (hello.legacy_version)
        detected->tls_version = tls_version_text (hello.legacy_version);
      candidate = CANDIDATE_YES;
      break;
    }
  net_tls_client_hello_clear (&hello);
  return candidate;
}

static Candidate
detect_http (const guint8 *data, gsize len, gboolean final, AirlockSinkholeDetected *detected)
{
  NetHttpRequest request;
  NetPayloadResult result = net_http_request_head (data, len, &request);
  Candidate candidate = CANDIDATE_NO;

  /* The whole head, or what there is of it when the client stopped after
   * a method and a space (the request line alone, say, or a head longer
   * than the bytes kept). */
  if (result == NET_PAYLOAD_FOUND || (final && request.method))
    {
      detected->protocol = AIRLOCK_SINKHOLE_PROTOCOL_HTTP;
      detected->http_method = g_steal_pointer (&request.method);
      detected->http_path = g_steal_pointer (&request.path);
      detected->http_version = g_steal_pointer (&request.version);
      detected->http_host = g_steal_pointer (&request.host);
      detected->http_user_agent = g_steal_pointer (&request.user_agent);
      candidate = CANDIDATE_YES;
    }
  else if (result == NET_PAYLOAD_NEED_MORE && !final)
    candidate = CANDIDATE_MAYBE;
  net_http_request_clear (&request);
  return candidate;
}

/* Whether the first message's header, of which @have bytes are present,
 * can still be a query a resolver sends: judged on the fields present. */
static gboolean
dns_header_plausible (const guint8 *msg, gsize have)
{
  if (have >= 4)
    {
      guint16 flags = (guint16) ((msg[2] << 8) | msg[3]);

      if ((flags & DNS_FLAG_QR) || DNS_OPCODE (flags) != 0)
        return FALSE;
    }
  if (have >= 6)
    {
      guint16 qdcount = (guint16) ((msg[4] << 8) | msg[5]);

      if (qdcount < 1 || qdcount > DNS_QUESTIONS_PLAUSIBLE)
        return FALSE;
    }
  return TRUE;
}

/* Whether a first message (@have of its @message_len bytes) decodes as a
 * query: its header and at least its first question whole, and nothing
 * wrong in the bytes present. */
static gboolean
dns_message_plausible (const guint8 *msg, gsize have, gsize message_len)
{
  g_autoptr (AirlockDnsQuery) query = airlock_dns_parse_query (msg, have, message_len);

  if (!query->have_header || query->questions->len == 0)
    return FALSE;
  if (!((AirlockDnsQuestion *) g_ptr_array_index (query->questions, 0))->complete)
    return FALSE;
  return query->problem == AIRLOCK_DNS_WELL_FORMED || query->problem == AIRLOCK_DNS_CLIPPED;
}

static void
add_questions (GPtrArray *names, const AirlockDnsQuery *query)
{
  /* Names come out of the decoder in dig's presentation form, already
   * printable: escaping them again would double their backslashes. */
  for (guint i = 0; i < query->questions->len; i++)
    {
      const AirlockDnsQuestion *q = g_ptr_array_index (query->questions, i);

      if (q->complete)
        g_ptr_array_add (names, g_strdup (q->name));
    }
}

static Candidate
detect_dns (const guint8 *data, gsize len, guint16 port, gboolean final,
            AirlockSinkholeDetected *detected)
{
  g_autoptr (AirlockDnsTcpStream) stream = NULL;
  g_autoptr (GPtrArray) messages = NULL;
  g_autoptr (AirlockDnsQuery) last = NULL;
  gboolean hinted = port == DNS_PORT;
  gsize message_len, have;

  if (len < 2 && !final)
    return CANDIDATE_MAYBE;
  if (len < 2 && !hinted)
    return CANDIDATE_NO;
  /* (A single byte to port 53 is DNS that stopped inside its length.) */
  message_len = len < 2 ? 0 : ((gsize) data[0] << 8) | data[1];
  have = len < 2 ? 0 : MIN (len - 2, message_len);
  if (!hinted)
    {
      /* By content alone: a length a header fits in, a header like a
       * query's, and (once whole) a first message that decodes. */
      if (message_len < AIRLOCK_DNS_HEADER_SIZE || !dns_header_plausible (data + 2, have))
        return CANDIDATE_NO;
      if (have < message_len && !final)
        return CANDIDATE_MAYBE;
      if (!dns_message_plausible (data + 2, have, message_len))
        return CANDIDATE_NO;
    }
  else if (have < message_len && !final)
    return CANDIDATE_MAYBE;

  detected->protocol = AIRLOCK_SINKHOLE_PROTOCOL_DNS;
  detected->dns_questions = g_ptr_array_new_with_free_func (g_free);
  /* Every message in the bytes (a client may send several before it
   * reads), and the one they end inside, as far as it goes. */
  stream = airlock_dns_tcp_stream_new (0);
  messages = airlock_dns_tcp_stream_feed (stream, data, len);
  for (guint i = 0; i < messages->len; i++)
    add_questions (detected->dns_questions, g_ptr_array_index (messages, i));
  last = airlock_dns_tcp_stream_finish (stream);
  if (last)
    add_questions (detected->dns_questions, last);
  return CANDIDATE_YES;
}

typedef Candidate (*Detector) (const guint8 *data, gsize len, gboolean final,
                               AirlockSinkholeDetected *detected);

AirlockSinkholeDetectResult
airlock_sinkhole_detect (const guint8 *data, gsize len, guint16 port, gboolean final,
                         AirlockSinkholeDetected *ret_detected)
{
  /* Each decides on its own first bytes, so their order does not matter;
   * DNS, which has none, is asked only when they all said no. */
  static const Detector by_prefix[] = { detect_ssh, detect_tls, detect_http };
  gboolean maybe = FALSE;
  Candidate dns;

  g_return_val_if_fail (data != NULL || len == 0, AIRLOCK_SINKHOLE_DETECT_DONE);
  g_return_val_if_fail (ret_detected != NULL, AIRLOCK_SINKHOLE_DETECT_DONE);

  memset (ret_detected, 0, sizeof *ret_detected);
  if (len == 0)
    {
      ret_detected->protocol = AIRLOCK_SINKHOLE_PROTOCOL_NONE;
      return final ? AIRLOCK_SINKHOLE_DETECT_DONE : AIRLOCK_SINKHOLE_DETECT_NEED_MORE;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (by_prefix); i++)
    switch (by_prefix[i] (data, len, final, ret_detected))
      {
      case CANDIDATE_YES:
        return AIRLOCK_SINKHOLE_DETECT_DONE;
      case CANDIDATE_MAYBE:
        maybe = TRUE;
        break;
      case CANDIDATE_NO:
        break;
      }

  /* Bytes that may still become one of the above are not DNS: a length
   * prefix of "SS", 0x16 0x03 or "GE" is longer than anyone's query. */
  dns = maybe ? CANDIDATE_MAYBE : detect_dns (data, len, port, final, ret_detected);
  if (dns == CANDIDATE_YES)
    return AIRLOCK_SINKHOLE_DETECT_DONE;
  if (dns == CANDIDATE_MAYBE)
    return AIRLOCK_SINKHOLE_DETECT_NEED_MORE;
  ret_detected->protocol = AIRLOCK_SINKHOLE_PROTOCOL_RAW;
  return AIRLOCK_SINKHOLE_DETECT_DONE;
}

char *
airlock_sinkhole_host_without_port (const char *host)
{
  const char *colon = strrchr (host, ':');

  if (colon && host[0] != '[' && strchr (host, ':') == colon && colon[1] != '\0')
    {
      for (const char *p = colon + 1; *p; p++)
        if (!g_ascii_isdigit (*p))
          return g_strdup (host);
      return g_strndup (host, (gsize) (colon - host));
    }
  return g_strdup (host);
}
