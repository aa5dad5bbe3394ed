/* The sinkhole's record file (docs/sinkhole.md, "Record file"): one JSON
 * object per line, written by the airlock-sinkhole process as things
 * happen, and a final {"end":true,…} line when it stops.
 *
 * The writer and the reader are both here so that a record read back is
 * exactly the record written: the bundle's verify re-derives the file, and
 * a round trip that loses or changes a member would make an honest file
 * look tampered with.  The file is the process's, not the guest's, so the
 * reader is strict: a line that is not a record is damage (tampering or a
 * bug) and fails the whole read, naming the line and the reason.  What it
 * holds still came from the guest (names, HTTP paths, first bytes), so it
 * is bounded like every other untrusted input. */
#include "config.h"

#include "sinkhole.h"
#include "evidence/frame-private.h"
#include "json-bounded-private.h"

#include <arpa/inet.h>
#include <json-glib/json-glib.h>
#include <string.h>

G_DEFINE_QUARK (airlock-sinkhole-error-quark, airlock_sinkhole_error)

const char *
airlock_sinkhole_protocol_to_string (AirlockSinkholeProtocol protocol)
{
  switch (protocol)
    {
    case AIRLOCK_SINKHOLE_PROTOCOL_NONE: return "none";
    case AIRLOCK_SINKHOLE_PROTOCOL_RAW: return "raw";
    case AIRLOCK_SINKHOLE_PROTOCOL_HTTP: return "http";
    case AIRLOCK_SINKHOLE_PROTOCOL_TLS: return "tls";
    case AIRLOCK_SINKHOLE_PROTOCOL_SSH: return "ssh";
    case AIRLOCK_SINKHOLE_PROTOCOL_DNS: return "dns";
    default: return "unknown";
    }
}

static gboolean
protocol_from_string (const char *text, AirlockSinkholeProtocol *ret)
{
  for (AirlockSinkholeProtocol p = AIRLOCK_SINKHOLE_PROTOCOL_NONE; p <= AIRLOCK_SINKHOLE_PROTOCOL_DNS;
       p++)
    if (strcmp (text, airlock_sinkhole_protocol_to_string (p)) == 0)
      {
        *ret = p;
        return TRUE;
      }
  return FALSE;
}

static const char *const record_kinds[] = {
  [AIRLOCK_SINKHOLE_RECORD_DNS] = "dns",
  [AIRLOCK_SINKHOLE_RECORD_TCP] = "tcp",
  [AIRLOCK_SINKHOLE_RECORD_UDP] = "udp",
  [AIRLOCK_SINKHOLE_RECORD_ICMP] = "icmp",
};

void
airlock_sinkhole_dns_exchange_clear (AirlockSinkholeDnsExchange *exchange)
{
  if (!exchange)
    return;
  g_clear_pointer (&exchange->question, g_free);
  g_clear_pointer (&exchange->answers, g_ptr_array_unref);
  exchange->qtype = 0;
  exchange->rcode = 0;
}

void
airlock_sinkhole_detected_clear (AirlockSinkholeDetected *detected)
{
  if (!detected)
    return;
  g_free (detected->http_method);
  g_free (detected->http_path);
  g_free (detected->http_version);
  g_free (detected->http_host);
  g_free (detected->http_user_agent);
  g_free (detected->tls_sni);
  g_clear_pointer (&detected->tls_alpn, g_ptr_array_unref);
  g_free (detected->tls_version);
  g_free (detected->ssh_banner);
  g_clear_pointer (&detected->dns_questions, g_ptr_array_unref);
  memset (detected, 0, sizeof *detected);
}

void
airlock_sinkhole_record_free (AirlockSinkholeRecord *record)
{
  if (!record)
    return;
  g_free (record->address_text);
  g_free (record->name);
  g_free (record->dns_transport);
  airlock_sinkhole_dns_exchange_clear (&record->dns);
  airlock_sinkhole_detected_clear (&record->detected);
  g_clear_pointer (&record->client_bytes, g_bytes_unref);
  g_clear_pointer (&record->server_bytes, g_bytes_unref);
  g_free (record->response);
  g_free (record);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockSinkholeRecord, airlock_sinkhole_record_free)

/* ---- writing ------------------------------------------------------------ */

static void
set_str (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, value);
}

static void
set_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

/* Counters are guint64 in memory and int64 in JSON (json-glib's integer):
 * no connection comes near 2^63 bytes, but the writer must not wrap. */
static void
set_count (JsonBuilder *b, const char *name, guint64 value)
{
  set_int (b, name, (gint64) MIN (value, (guint64) G_MAXINT64));
}

static void
set_opt_str (JsonBuilder *b, const char *name, const char *value)
{
  if (value)
    set_str (b, name, value);
}

static void
set_strings (JsonBuilder *b, const char *name, GPtrArray *strings)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; strings && i < strings->len; i++)
    json_builder_add_string_value (b, g_ptr_array_index (strings, i));
  json_builder_end_array (b);
}

static void
set_base64 (JsonBuilder *b, const char *name, GBytes *bytes)
{
  gsize len = 0;
  const guint8 *data = bytes ? g_bytes_get_data (bytes, &len) : NULL;
  g_autofree char *text = g_base64_encode (data, len);

  set_str (b, name, text);
}

static char *
builder_to_text (JsonBuilder *b)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);

  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

static void
add_detected (JsonBuilder *b, const AirlockSinkholeDetected *d)
{
  set_str (b, "protocol", airlock_sinkhole_protocol_to_string (d->protocol));
  if (d->http_method || d->http_path || d->http_version || d->http_host || d->http_user_agent)
    {
      json_builder_set_member_name (b, "http");
      json_builder_begin_object (b);
      set_opt_str (b, "method", d->http_method);
      set_opt_str (b, "path", d->http_path);
      set_opt_str (b, "version", d->http_version);
      set_opt_str (b, "host", d->http_host);
      set_opt_str (b, "user_agent", d->http_user_agent);
      json_builder_end_object (b);
    }
  if (d->protocol == AIRLOCK_SINKHOLE_PROTOCOL_TLS || d->tls_sni || d->tls_alpn || d->tls_version)
    {
      json_builder_set_member_name (b, "tls");
      json_builder_begin_object (b);
      set_opt_str (b, "sni", d->tls_sni);
      set_strings (b, "alpn", d->tls_alpn);
      set_opt_str (b, "version", d->tls_version);
      json_builder_end_object (b);
    }
  if (d->ssh_banner)
    {
      json_builder_set_member_name (b, "ssh");
      json_builder_begin_object (b);
      set_str (b, "banner", d->ssh_banner);
      json_builder_end_object (b);
    }
  if (d->dns_questions)
    set_strings (b, "dns_questions", d->dns_questions);
}

char *
airlock_sinkhole_record_to_json (const AirlockSinkholeRecord *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  char text[INET6_ADDRSTRLEN] = "";

  g_return_val_if_fail (r != NULL, NULL);
  g_return_val_if_fail (r->kind <= AIRLOCK_SINKHOLE_RECORD_ICMP, NULL);
  g_return_val_if_fail (r->family == AF_INET || r->family == AF_INET6, NULL);

  json_builder_begin_object (b);
  set_str (b, "kind", record_kinds[r->kind]);
  set_int (b, "time_us", r->time_us);
  set_int (b, "end_us", r->end_us);
  set_str (b, "family", r->family == AF_INET ? "inet" : "inet6");
  if (!r->address_text)
    inet_ntop (r->family, r->address, text, sizeof text);
  set_str (b, "address", r->address_text ? r->address_text : text);
  set_int (b, "port", r->port);
  set_int (b, "client_port", r->client_port);
  set_opt_str (b, "name", r->name);

  switch (r->kind)
    {
    case AIRLOCK_SINKHOLE_RECORD_DNS:
      set_str (b, "transport", r->dns_transport ? r->dns_transport : "udp");
      set_opt_str (b, "question", r->dns.question);
      set_int (b, "qtype", r->dns.qtype);
      set_int (b, "rcode", r->dns.rcode);
      set_strings (b, "answers", r->dns.answers);
      break;
    case AIRLOCK_SINKHOLE_RECORD_TCP:
      add_detected (b, &r->detected);
      set_base64 (b, "client_bytes", r->client_bytes);
      set_base64 (b, "server_bytes", r->server_bytes);
      set_count (b, "bytes_in", r->bytes_in);
      set_count (b, "bytes_out", r->bytes_out);
      set_opt_str (b, "response", r->response);
      break;
    case AIRLOCK_SINKHOLE_RECORD_UDP:
    case AIRLOCK_SINKHOLE_RECORD_ICMP:
      /* An echo request's data is what the guest sent, like a datagram. */
      set_base64 (b, "client_bytes", r->client_bytes);
      set_count (b, "bytes_in", r->bytes_in);
      break;
    }
  json_builder_end_object (b);
  return builder_to_text (b);
}

char *
airlock_sinkhole_end_line_to_json (guint64 records_dropped)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "end");
  json_builder_add_boolean_value (b, TRUE);
  set_count (b, "records_dropped", records_dropped);
  json_builder_end_object (b);
  return builder_to_text (b);
}

/* ---- reading ------------------------------------------------------------ */

/* One line being read: where the errors say it is. */
typedef struct {
  JsonObject *o;
  guint line;
  GError **error;
} Line;

/* The reason is made printable: it may quote the file's strings (a
 * member's value, the bytes json-glib choked on), which hold whatever the
 * guest sent. */
static gboolean G_GNUC_PRINTF (2, 3)
refuse (Line *l, const char *fmt, ...)
{
  g_autofree char *why = NULL;
  g_autofree char *printable = NULL;
  va_list ap;

  va_start (ap, fmt);
  why = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  printable = airlock_evidence_escape_bytes ((const guint8 *) why, strlen (why));
  g_set_error (l->error, AIRLOCK_SINKHOLE_ERROR, AIRLOCK_SINKHOLE_ERROR_INVALID,
               "line %u of the sinkhole's records: %s", l->line, printable);
  return FALSE;
}

static const char *
type_name (JsonNode *n)
{
  switch (JSON_NODE_TYPE (n))
    {
    case JSON_NODE_OBJECT: return "an object";
    case JSON_NODE_ARRAY: return "an array";
    case JSON_NODE_NULL: return "null";
    case JSON_NODE_VALUE:
    default:
      switch (json_node_get_value_type (n))
        {
        case G_TYPE_STRING: return "a string";
        case G_TYPE_BOOLEAN: return "a boolean";
        case G_TYPE_DOUBLE: return "a fractional number";
        default: return "an integer";
        }
    }
}

/* The member's node: NULL with an error when it is required and absent,
 * NULL without one when it is optional and absent. */
static JsonNode *
member (Line *l, JsonObject *o, const char *name, gboolean required, gboolean *ok)
{
  JsonNode *n = json_object_get_member (o, name);

  if (!n && required)
    *ok = refuse (l, "member '%s' is missing", name);
  return n;
}

static gboolean
get_string (Line *l, JsonObject *o, const char *name, gboolean required, const char **ret)
{
  gboolean ok = TRUE;
  JsonNode *n = member (l, o, name, required, &ok);

  *ret = NULL;
  if (!n)
    return ok;
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
    return refuse (l, "member '%s' is %s, not a string", name, type_name (n));
  *ret = json_node_get_string (n);
  return TRUE;
}

static gboolean
dup_string (Line *l, JsonObject *o, const char *name, gboolean required, char **ret)
{
  const char *s;

  if (!get_string (l, o, name, required, &s))
    return FALSE;
  *ret = g_strdup (s);
  return TRUE;
}

/* An integer member within [min, max]. */
static gboolean
get_int (Line *l, JsonObject *o, const char *name, gboolean required, gint64 min, gint64 max,
         gint64 *ret)
{
  gboolean ok = TRUE;
  JsonNode *n = member (l, o, name, required, &ok);
  gint64 v;

  *ret = 0;
  if (!n)
    return ok;
  if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_INT64)
    return refuse (l, "member '%s' is %s, not an integer", name, type_name (n));
  v = json_node_get_int (n);
  if (v < min || v > max)
    return refuse (l, "member '%s' is %" G_GINT64_FORMAT ", outside %" G_GINT64_FORMAT "–%"
                   G_GINT64_FORMAT, name, v, min, max);
  *ret = v;
  return TRUE;
}

static gboolean
get_object (Line *l, JsonObject *o, const char *name, JsonObject **ret)
{
  JsonNode *n = json_object_get_member (o, name);

  *ret = NULL;
  if (!n)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (n))
    return refuse (l, "member '%s' is %s, not an object", name, type_name (n));
  *ret = json_node_get_object (n);
  return TRUE;
}

/* An array of strings; *@ret NULL when optional and absent. */
static gboolean
get_strings (Line *l, JsonObject *o, const char *name, gboolean required, GPtrArray **ret)
{
  gboolean ok = TRUE;
  JsonNode *n = member (l, o, name, required, &ok);
  JsonArray *a;
  g_autoptr (GPtrArray) strings = NULL;

  *ret = NULL;
  if (!n)
    return ok;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    return refuse (l, "member '%s' is %s, not an array", name, type_name (n));
  a = json_node_get_array (n);
  strings = g_ptr_array_new_full (json_array_get_length (a), g_free);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);

      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
        return refuse (l, "element %u of '%s' is %s, not a string", i, name, type_name (e));
      g_ptr_array_add (strings, g_strdup (json_node_get_string (e)));
    }
  *ret = g_steal_pointer (&strings);
  return TRUE;
}

static gboolean
is_base64_char (char c)
{
  return g_ascii_isalnum (c) || c == '+' || c == '/';
}

/* Base64 exactly as g_base64_encode() writes it (so the record writes back
 * the same text), at most @max bytes decoded. */
static gboolean
get_base64 (Line *l, JsonObject *o, const char *name, gboolean required, gsize max, GBytes **ret)
{
  const char *text;
  gsize len, pad = 0, decoded_len = 0;
  guchar *decoded;
  g_autofree char *again = NULL;

  *ret = NULL;
  if (!get_string (l, o, name, required, &text))
    return FALSE;
  if (!text)
    return TRUE;
  len = strlen (text);
  if (len % 4 != 0)
    return refuse (l, "member '%s' is not base64: %" G_GSIZE_FORMAT " characters", name, len);
  while (pad < 2 && pad < len && text[len - 1 - pad] == '=')
    pad++;
  for (gsize i = 0; i < len - pad; i++)
    if (!is_base64_char (text[i]))
      return refuse (l, "member '%s' is not base64: character %" G_GSIZE_FORMAT, name, i);
  if (len / 4 * 3 - pad > max)
    return refuse (l, "member '%s' holds %" G_GSIZE_FORMAT " bytes, more than the %" G_GSIZE_FORMAT
                   " a record keeps", name, len / 4 * 3 - pad, max);
  decoded = g_base64_decode (text, &decoded_len);
  again = g_base64_encode (decoded, decoded_len);
  if (strcmp (again, text) != 0)
    {
      g_free (decoded);
      return refuse (l, "member '%s' is not base64 in its canonical form", name);
    }
  *ret = g_bytes_new_take (decoded, decoded_len);
  return TRUE;
}

static gboolean
read_detected (Line *l, JsonObject *o, AirlockSinkholeDetected *d)
{
  const char *protocol;
  JsonObject *http, *tls, *ssh;

  if (!get_string (l, o, "protocol", TRUE, &protocol))
    return FALSE;
  if (!protocol_from_string (protocol, &d->protocol))
    return refuse (l, "member 'protocol' is '%s', not one of none, raw, http, tls, ssh, dns",
                   protocol);

  if (!get_object (l, o, "http", &http))
    return FALSE;
  if (http && (!dup_string (l, http, "method", FALSE, &d->http_method)
               || !dup_string (l, http, "path", FALSE, &d->http_path)
               || !dup_string (l, http, "version", FALSE, &d->http_version)
               || !dup_string (l, http, "host", FALSE, &d->http_host)
               || !dup_string (l, http, "user_agent", FALSE, &d->http_user_agent)))
    return FALSE;

  if (!get_object (l, o, "tls", &tls))
    return FALSE;
  if (tls && (!dup_string (l, tls, "sni", FALSE, &d->tls_sni)
              || !get_strings (l, tls, "alpn", FALSE, &d->tls_alpn)
              || !dup_string (l, tls, "version", FALSE, &d->tls_version)))
    return FALSE;
  /* The writer writes "alpn" whenever it writes "tls", and "tls" always
   * for a TLS connection: an absent one reads as the empty list it was. */
  if (!d->tls_alpn && (tls || d->protocol == AIRLOCK_SINKHOLE_PROTOCOL_TLS))
    d->tls_alpn = g_ptr_array_new_with_free_func (g_free);

  if (!get_object (l, o, "ssh", &ssh))
    return FALSE;
  if (ssh && !dup_string (l, ssh, "banner", TRUE, &d->ssh_banner))
    return FALSE;

  return get_strings (l, o, "dns_questions", FALSE, &d->dns_questions);
}

static AirlockSinkholeRecord *
read_record (Line *l)
{
  g_autoptr (AirlockSinkholeRecord) r = g_new0 (AirlockSinkholeRecord, 1);
  JsonObject *o = l->o;
  const char *kind, *family;
  gint64 v;
  gsize max_bytes;
  guint k;

  if (!get_string (l, o, "kind", TRUE, &kind))
    return NULL;
  for (k = 0; k < G_N_ELEMENTS (record_kinds); k++)
    if (strcmp (kind, record_kinds[k]) == 0)
      break;
  if (k == G_N_ELEMENTS (record_kinds))
    return refuse (l, "member 'kind' is '%s', not one of dns, tcp, udp, icmp", kind), NULL;
  r->kind = (AirlockSinkholeRecordKind) k;

  if (!get_int (l, o, "time_us", TRUE, 0, G_MAXINT64, &r->time_us)
      || !get_int (l, o, "end_us", TRUE, r->time_us, G_MAXINT64, &r->end_us))
    return NULL;

  if (!get_string (l, o, "family", TRUE, &family))
    return NULL;
  if (strcmp (family, "inet") == 0)
    r->family = AF_INET;
  else if (strcmp (family, "inet6") == 0)
    r->family = AF_INET6;
  else
    return refuse (l, "member 'family' is '%s', not inet or inet6", family), NULL;
  if (!dup_string (l, o, "address", TRUE, &r->address_text))
    return NULL;
  /* address[] is filled from the text, so the two cannot disagree. */
  if (inet_pton (r->family, r->address_text, r->address) != 1)
    return refuse (l, "member 'address' is '%s', not an %s address", r->address_text,
                   r->family == AF_INET ? "IPv4" : "IPv6"), NULL;

  if (!get_int (l, o, "port", TRUE, 0, G_MAXUINT16, &v))
    return NULL;
  r->port = (guint16) v;
  if (!get_int (l, o, "client_port", TRUE, 0, G_MAXUINT16, &v))
    return NULL;
  r->client_port = (guint16) v;
  if (!dup_string (l, o, "name", FALSE, &r->name))
    return NULL;

  switch (r->kind)
    {
    case AIRLOCK_SINKHOLE_RECORD_DNS:
      if (!dup_string (l, o, "transport", TRUE, &r->dns_transport))
        return NULL;
      if (strcmp (r->dns_transport, "udp") != 0 && strcmp (r->dns_transport, "tcp") != 0)
        return refuse (l, "member 'transport' is '%s', not udp or tcp", r->dns_transport), NULL;
      if (!dup_string (l, o, "question", FALSE, &r->dns.question))
        return NULL;
      if (!get_int (l, o, "qtype", TRUE, 0, G_MAXUINT16, &v))
        return NULL;
      r->dns.qtype = (guint16) v;
      if (!get_int (l, o, "rcode", TRUE, 0, G_MAXUINT16, &v))
        return NULL;
      r->dns.rcode = (guint16) v;
      if (!get_strings (l, o, "answers", TRUE, &r->dns.answers))
        return NULL;
      break;

    case AIRLOCK_SINKHOLE_RECORD_TCP:
      if (!read_detected (l, o, &r->detected)
          || !get_base64 (l, o, "client_bytes", TRUE, AIRLOCK_SINKHOLE_FIRST_BYTES_MAX,
                          &r->client_bytes)
          || !get_base64 (l, o, "server_bytes", TRUE, AIRLOCK_SINKHOLE_FIRST_BYTES_MAX,
                          &r->server_bytes)
          || !get_int (l, o, "bytes_in", TRUE, 0, G_MAXINT64, &v))
        return NULL;
      r->bytes_in = (guint64) v;
      if (!get_int (l, o, "bytes_out", TRUE, 0, G_MAXINT64, &v))
        return NULL;
      r->bytes_out = (guint64) v;
      if (r->bytes_out < g_bytes_get_size (r->server_bytes))
        return refuse (l, "member 'bytes_out' is %" G_GUINT64_FORMAT ", fewer than the %"
                       G_GSIZE_FORMAT " server bytes it keeps", r->bytes_out,
                       g_bytes_get_size (r->server_bytes)), NULL;
      if (!dup_string (l, o, "response", FALSE, &r->response))
        return NULL;
      break;

    case AIRLOCK_SINKHOLE_RECORD_UDP:
    case AIRLOCK_SINKHOLE_RECORD_ICMP:
      /* The process keeps as much of an echo request's data as of a
       * datagram. */
      max_bytes = AIRLOCK_SINKHOLE_DATAGRAM_BYTES_MAX;
      if (!get_base64 (l, o, "client_bytes", r->kind == AIRLOCK_SINKHOLE_RECORD_UDP, max_bytes,
                       &r->client_bytes)
          || !get_int (l, o, "bytes_in", r->kind == AIRLOCK_SINKHOLE_RECORD_UDP, 0, G_MAXINT64,
                       &v))
        return NULL;
      r->bytes_in = (guint64) v;
      break;
    }

  if (r->client_bytes && r->bytes_in < g_bytes_get_size (r->client_bytes))
    return refuse (l, "member 'bytes_in' is %" G_GUINT64_FORMAT ", fewer than the %"
                   G_GSIZE_FORMAT " client bytes it keeps", r->bytes_in,
                   g_bytes_get_size (r->client_bytes)), NULL;

  /* Never NULL, whatever the kind: readers need not check. */
  if (!r->dns.answers)
    r->dns.answers = g_ptr_array_new_with_free_func (g_free);
  if (!r->client_bytes)
    r->client_bytes = g_bytes_new (NULL, 0);
  if (!r->server_bytes)
    r->server_bytes = g_bytes_new (NULL, 0);
  return g_steal_pointer (&r);
}

/* The final line: TRUE with @ret_dropped. */
static gboolean
read_end (Line *l, guint64 *ret_dropped)
{
  JsonNode *end = json_object_get_member (l->o, "end");
  gint64 dropped;

  if (!JSON_NODE_HOLDS_VALUE (end) || json_node_get_value_type (end) != G_TYPE_BOOLEAN
      || !json_node_get_boolean (end))
    return refuse (l, "member 'end' is %s, not true", type_name (end));
  if (!get_int (l, l->o, "records_dropped", TRUE, 0, G_MAXINT64, &dropped))
    return FALSE;
  *ret_dropped = (guint64) dropped;
  return TRUE;
}

static GBytes *
address_key (int family, const guint8 *address)
{
  guint8 key[17];
  gsize n = family == AF_INET ? 4 : 16;

  key[0] = (guint8) family;
  memcpy (key + 1, address, n);
  return g_bytes_new (key, n + 1);
}

/* An address this record ties to a name: DNS answers, and any record's
 * own name.  The first one written wins (one run never hands an address
 * out twice). */
static void
index_record (GHashTable *index, const AirlockSinkholeRecord *r)
{
  if (r->kind == AIRLOCK_SINKHOLE_RECORD_DNS && r->dns.question && r->dns.answers)
    for (guint i = 0; i < r->dns.answers->len; i++)
      {
        const char *answer = g_ptr_array_index (r->dns.answers, i);
        guint8 address[16];
        int family = strchr (answer, ':') ? AF_INET6 : AF_INET;

        if (inet_pton (family, answer, address) == 1)
          {
            GBytes *key = address_key (family, address);

            if (!g_hash_table_contains (index, key))
              g_hash_table_insert (index, key, r->dns.question);
            else
              g_bytes_unref (key);
          }
      }
  if (r->name)
    {
      GBytes *key = address_key (r->family, r->address);

      if (!g_hash_table_contains (index, key))
        g_hash_table_insert (index, key, r->name);
      else
        g_bytes_unref (key);
    }
}

void
airlock_sinkhole_log_free (AirlockSinkholeLog *log)
{
  if (!log)
    return;
  g_clear_pointer (&log->names_by_address, g_hash_table_unref);
  g_clear_pointer (&log->records, g_ptr_array_unref);
  g_free (log->incomplete_reason);
  g_free (log);
}

AirlockSinkholeLog *
airlock_sinkhole_log_new_from_bytes (GBytes *bytes, GError **error)
{
  g_autoptr (AirlockSinkholeLog) log = g_new0 (AirlockSinkholeLog, 1);
  const char *data;
  gsize len, start = 0;
  guint line_no = 0;
  gboolean ended = FALSE;

  g_return_val_if_fail (bytes != NULL, NULL);

  data = g_bytes_get_data (bytes, &len);
  if (len > AIRLOCK_SINKHOLE_LOG_MAX)
    {
      g_set_error (error, AIRLOCK_SINKHOLE_ERROR, AIRLOCK_SINKHOLE_ERROR_TOO_LARGE,
                   "the sinkhole's records are %" G_GSIZE_FORMAT " bytes, more than the %u "
                   "they may have", len, AIRLOCK_SINKHOLE_LOG_MAX);
      return NULL;
    }
  log->records = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_sinkhole_record_free);
  log->names_by_address = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                 (GDestroyNotify) g_bytes_unref, NULL);

  while (start < len)
    {
      const char *eol = memchr (data + start, '\n', len - start);
      gsize end = eol ? (gsize) (eol - data) : len;
      g_autoptr (GError) local = NULL;
      g_autoptr (JsonNode) root = NULL;
      Line l = { NULL, ++line_no, error };

      if (ended)
        {
          refuse (&l, "a line after the final one");
          return NULL;
        }
      root = airlock_json_parse_bounded (data + start, end - start, NULL, &local);
      if (!root && !eol)
        {
          /* The last line has no newline and does not parse: the process
           * died while writing it (it writes each line, newline included,
           * in one go).  What it wrote before is kept. */
          log->incomplete_reason = g_strdup_printf ("the sinkhole's record file ends inside line %u, "
                                                    "before its final line", line_no);
          break;
        }
      if (!root)
        {
          refuse (&l, "%s", local->message);
          return NULL;
        }
      if (!JSON_NODE_HOLDS_OBJECT (root))
        {
          refuse (&l, "%s, not an object", type_name (root));
          return NULL;
        }
      l.o = json_node_get_object (root);

      if (json_object_has_member (l.o, "end"))
        {
          if (!read_end (&l, &log->records_dropped))
            return NULL;
          ended = TRUE;
        }
      else
        {
          AirlockSinkholeRecord *r;

          if (log->records->len >= AIRLOCK_SINKHOLE_RECORDS_MAX)
            {
              g_set_error (error, AIRLOCK_SINKHOLE_ERROR, AIRLOCK_SINKHOLE_ERROR_TOO_LARGE,
                           "line %u of the sinkhole's records: more than the %d records a run "
                           "may hold", line_no, AIRLOCK_SINKHOLE_RECORDS_MAX);
              return NULL;
            }
          r = read_record (&l);
          if (!r)
            return NULL;
          g_ptr_array_add (log->records, r);
          index_record (log->names_by_address, r);
        }
      start = end + 1;
    }

  log->complete = ended;
  if (!ended && !log->incomplete_reason)
    log->incomplete_reason = g_strdup ("the sinkhole's record file ends before its final line");
  return g_steal_pointer (&log);
}

const char *
airlock_sinkhole_log_name_for_address (const AirlockSinkholeLog *log, int family,
                                       const guint8 *address)
{
  g_autoptr (GHashTable) index = NULL;
  g_autoptr (GBytes) key = NULL;
  GHashTable *names;

  g_return_val_if_fail (log != NULL, NULL);
  g_return_val_if_fail (address != NULL, NULL);

  if (family != AF_INET && family != AF_INET6)
    return NULL;
  names = log->names_by_address;
  if (!names)
    {
      /* A log made without the reader: indexed now, the same way. */
      names = index = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                             (GDestroyNotify) g_bytes_unref, NULL);
      for (guint i = 0; log->records && i < log->records->len; i++)
        index_record (index, g_ptr_array_index (log->records, i));
    }
  key = address_key (family, address);
  return g_hash_table_lookup (names, key);
}
