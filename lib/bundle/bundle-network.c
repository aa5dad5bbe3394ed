/* The sinkhole's records in a bundle (bundle-network.h): the report people
 * read, the check against the capture, replay's keys.  Pure: the same
 * records (and capture) always give the same rows, problems and keys, so
 * summary.md made from them can be made again by `airlock verify`. */
#include "config.h"

#include "bundle/bundle-network.h"
#include "bundle/bundle-json-private.h"

#include "evidence/frame-private.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* Raw bytes shown of a connection or datagram no protocol explains. */
#define RAW_SHOWN 32

static void
connection_free (gpointer p)
{
  AirlockNetworkConnection *c = p;

  g_free (c->key);
  g_free (c->name);
  g_free (c->address);
  g_free (c->detail);
  g_free (c->response);
  g_free (c);
}

static void
lookup_free (gpointer p)
{
  AirlockNetworkLookup *l = p;

  g_free (l->question);
  g_free (l->qtype);
  g_free (l->answer);
  g_free (l->server);
  g_free (l);
}

void
airlock_network_report_free (AirlockNetworkReport *report)
{
  if (!report)
    return;
  g_ptr_array_unref (report->lookups);
  g_ptr_array_unref (report->connections);
  g_free (report->incomplete_reason);
  g_free (report->first_refused);
  g_free (report);
}

/* The transport protocol a record's traffic used, as the capture keys it. */
static int
record_protocol (const AirlockSinkholeRecord *r)
{
  switch (r->kind)
    {
    case AIRLOCK_SINKHOLE_RECORD_TCP:
      return IPPROTO_TCP;
    case AIRLOCK_SINKHOLE_RECORD_UDP:
      return IPPROTO_UDP;
    case AIRLOCK_SINKHOLE_RECORD_DNS:
      return g_strcmp0 (r->dns_transport, "tcp") == 0 ? IPPROTO_TCP : IPPROTO_UDP;
    case AIRLOCK_SINKHOLE_RECORD_ICMP:
    default:
      return r->family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
    }
}

static char *
record_key (const AirlockSinkholeRecord *r)
{
  return airlock_capture_flow_key (r->family, record_protocol (r), r->address,
                                   r->kind == AIRLOCK_SINKHOLE_RECORD_ICMP ? 0 : r->port);
}

static gboolean
is_control (GPtrArray *control_keys, const char *key)
{
  for (guint i = 0; control_keys && i < control_keys->len; i++)
    if (g_strcmp0 (control_keys->pdata[i], key) == 0)
      return TRUE;
  return FALSE;
}

/* A name as a host is written: without the final dot of a DNS name. */
static char *
host_name (const char *name)
{
  gsize len;

  if (!name)
    return NULL;
  len = strlen (name);
  if (len > 1 && name[len - 1] == '.')
    len--;
  {
    g_autofree char *bare = g_strndup (name, len);

    return airlock_bundle_safe_text (bare);
  }
}

static const char *
qtype_name (guint16 qtype)
{
  switch (qtype)
    {
    case 1: return "A";
    case 2: return "NS";
    case 5: return "CNAME";
    case 6: return "SOA";
    case 12: return "PTR";
    case 15: return "MX";
    case 16: return "TXT";
    case 28: return "AAAA";
    case 33: return "SRV";
    case 64: return "SVCB";
    case 65: return "HTTPS";
    case 255: return "ANY";
    default: return NULL;
    }
}

static char *
answer_text (const AirlockSinkholeRecord *r)
{
  GString *out;

  if (r->dns.answers && r->dns.answers->len > 0)
    {
      out = g_string_new (NULL);
      for (guint i = 0; i < r->dns.answers->len; i++)
        {
          g_autofree char *a = airlock_bundle_safe_text (r->dns.answers->pdata[i]);

          g_string_append_printf (out, "%s%s", i ? ", " : "", a);
        }
      return g_string_free (out, FALSE);
    }
  switch (r->dns.rcode)
    {
    case 0: return g_strdup ("no address");
    case 1: return g_strdup ("FORMERR");
    case 3: return g_strdup ("NXDOMAIN");
    case 4: return g_strdup ("NOTIMP");
    case 5: return g_strdup ("REFUSED");
    default: return g_strdup_printf ("rcode %u", r->dns.rcode);
    }
}

/* The first bytes a client sent, printable, cut at RAW_SHOWN. */
static void
append_raw (GString *out, GBytes *bytes)
{
  gsize len;
  const guint8 *data = bytes ? g_bytes_get_data (bytes, &len) : NULL;
  g_autofree char *shown = NULL;

  if (!data || len == 0)
    return;
  shown = airlock_evidence_escape_bytes (data, MIN (len, RAW_SHOWN));
  g_string_append_printf (out, "\"%s\"%s", shown, len > RAW_SHOWN ? "…" : "");
}

/* One field "LABEL VALUE" of the detail, the value made safe. */
static void
append_field (GString *out, const char *label, const char *value)
{
  g_autofree char *safe = NULL;

  if (!value)
    return;
  safe = airlock_bundle_safe_text (value);
  if (out->len)
    g_string_append_c (out, ' ');
  if (label)
    g_string_append_printf (out, "%s ", label);
  g_string_append (out, safe);
}

static void
append_list (GString *out, const char *label, GPtrArray *values)
{
  GString *joined;

  if (!values || values->len == 0)
    return;
  joined = g_string_new (NULL);
  for (guint i = 0; i < values->len; i++)
    g_string_append_printf (joined, "%s%s", i ? "," : "", (const char *) values->pdata[i]);
  append_field (out, label, joined->str);
  g_string_free (joined, TRUE);
}

static char *
detail_text (const AirlockSinkholeRecord *r)
{
  const AirlockSinkholeDetected *d = &r->detected;
  GString *out = g_string_new (NULL);

  if (r->kind == AIRLOCK_SINKHOLE_RECORD_UDP)
    append_raw (out, r->client_bytes);
  else if (r->kind == AIRLOCK_SINKHOLE_RECORD_ICMP)
    g_string_append (out, "echo request");
  else
    switch (d->protocol)
      {
      case AIRLOCK_SINKHOLE_PROTOCOL_HTTP:
        append_field (out, NULL, d->http_method);
        append_field (out, NULL, d->http_path);
        append_field (out, "Host:", d->http_host);
        append_field (out, "User-Agent:", d->http_user_agent);
        break;
      case AIRLOCK_SINKHOLE_PROTOCOL_TLS:
        append_field (out, "SNI", d->tls_sni);
        append_list (out, "ALPN", d->tls_alpn);
        append_field (out, "TLS", d->tls_version);
        break;
      case AIRLOCK_SINKHOLE_PROTOCOL_SSH:
        append_field (out, NULL, d->ssh_banner);
        break;
      case AIRLOCK_SINKHOLE_PROTOCOL_DNS:
        append_list (out, "DNS", d->dns_questions);
        break;
      case AIRLOCK_SINKHOLE_PROTOCOL_RAW:
        append_raw (out, r->client_bytes);
        break;
      case AIRLOCK_SINKHOLE_PROTOCOL_NONE:
      default:
        break;
      }
  if (out->len == 0)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

AirlockNetworkReport *
airlock_network_report_new (const AirlockSinkholeLog *log, GPtrArray *control_keys)
{
  AirlockNetworkReport *report = g_new0 (AirlockNetworkReport, 1);

  report->lookups = g_ptr_array_new_with_free_func (lookup_free);
  report->connections = g_ptr_array_new_with_free_func (connection_free);
  if (!log)
    return report;
  report->complete = log->complete;
  report->incomplete_reason = airlock_bundle_safe_text (log->incomplete_reason);
  report->records_dropped = log->records_dropped;
  report->frames_refused = log->frames_refused;
  report->first_refused = airlock_bundle_safe_text (log->first_refused);

  for (guint i = 0; log->records && i < log->records->len; i++)
    {
      const AirlockSinkholeRecord *r = log->records->pdata[i];
      g_autofree char *key = record_key (r);
      gboolean control = is_control (control_keys, key);

      report->n_controls += control;
      if (r->kind == AIRLOCK_SINKHOLE_RECORD_DNS)
        {
          AirlockNetworkLookup *l = g_new0 (AirlockNetworkLookup, 1);

          l->line = i + 1;
          l->question = airlock_bundle_safe_text (r->dns.question);
          if (r->dns.question)
            l->qtype = qtype_name (r->dns.qtype) ? g_strdup (qtype_name (r->dns.qtype))
                                                 : g_strdup_printf ("TYPE%u", r->dns.qtype);
          l->answer = answer_text (r);
          l->transport = g_strcmp0 (r->dns_transport, "tcp") == 0 ? "tcp" : "udp";
          l->server = airlock_bundle_safe_text (r->address_text);
          l->port = r->port;
          l->time_us = r->time_us;
          l->control = control;
          g_ptr_array_add (report->lookups, l);
        }
      else
        {
          AirlockNetworkConnection *c = g_new0 (AirlockNetworkConnection, 1);
          const char *name = r->name ? r->name
                                     : airlock_sinkhole_log_name_for_address (log, r->family,
                                                                              r->address);

          c->line = i + 1;
          c->kind = r->kind;
          c->key = g_steal_pointer (&key);
          c->name = host_name (name);
          c->address = airlock_bundle_safe_text (r->address_text);
          c->port = r->kind == AIRLOCK_SINKHOLE_RECORD_ICMP ? 0 : r->port;
          c->protocol = r->kind == AIRLOCK_SINKHOLE_RECORD_UDP    ? "udp"
                        : r->kind == AIRLOCK_SINKHOLE_RECORD_ICMP ? "icmp"
                        : airlock_sinkhole_protocol_to_string (r->detected.protocol);
          c->detail = detail_text (r);
          c->bytes_in = r->bytes_in;
          c->bytes_out = r->bytes_out;
          c->response = airlock_bundle_safe_text (r->response);
          c->time_us = r->time_us;
          c->end_us = r->end_us;
          c->control = control;
          g_ptr_array_add (report->connections, c);
        }
    }
  return report;
}

const char *
airlock_network_connection_destination (const AirlockNetworkConnection *c)
{
  return c->name ? c->name : c->address;
}

/* ---- the records against the capture ---- */

/* What one flow key of the records holds. */
typedef struct {
  char *key;
  guint first_line;         /* the first record of it */
  int protocol;
  guint64 n;                /* tcp connections, udp datagrams (dns over udp included), echoes */
} KeyCount;

static void
key_count_free (gpointer p)
{
  KeyCount *kc = p;

  g_free (kc->key);
  g_free (kc);
}

/* The name the record was asked about, as the capture spells DNS names. */
static gboolean
capture_has_name (const AirlockFlow *flow, const char *name)
{
  for (guint i = 0; flow->dns_names && i < flow->dns_names->len; i++)
    if (g_str_equal (flow->dns_names->pdata[i], name))
      return TRUE;
  return FALSE;
}

/* "line 7 (tcp to 198.18.243.18:80, example.com.)" */
static char *
record_label (const AirlockSinkholeRecord *r, guint line)
{
  static const char *const kinds[] = { "dns", "tcp", "udp", "icmp" };
  g_autofree char *address = airlock_bundle_safe_text (r->address_text);
  g_autofree char *name = airlock_bundle_safe_text (r->name);
  g_autofree char *where = NULL;
  g_autofree char *what = NULL;

  if (r->kind == AIRLOCK_SINKHOLE_RECORD_ICMP)
    where = g_strdup (address);
  else
    where = g_strdup_printf (r->family == AF_INET6 ? "[%s]:%u" : "%s:%u", address, r->port);
  if (r->kind == AIRLOCK_SINKHOLE_RECORD_DNS)
    what = g_strdup_printf ("dns over %s", record_protocol (r) == IPPROTO_TCP ? "tcp" : "udp");
  else
    what = g_strdup ((guint) r->kind < G_N_ELEMENTS (kinds) ? kinds[r->kind] : "?");
  return g_strdup_printf ("line %u (%s to %s%s%s)", line, what, where, name ? ", " : "",
                          name ? name : "");
}

GPtrArray *
airlock_network_check_capture (const AirlockSinkholeLog *log, AirlockCapture *capture)
{
  GPtrArray *problems = g_ptr_array_new_with_free_func (g_free);
  /* @counts borrows the keys @order owns: declared after it, freed first. */
  g_autoptr (GPtrArray) order = g_ptr_array_new_with_free_func (key_count_free);
  g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  GPtrArray *anomalies;
  GPtrArray *flows;

  g_return_val_if_fail (log != NULL && capture != NULL, problems);

  /* A cap reached: flows, connections or names past it were not kept, so
   * the capture's silence about a record proves nothing. */
  anomalies = airlock_capture_get_anomalies (capture);
  for (guint i = 0; i < anomalies->len; i++)
    if (((AirlockCaptureAnomaly *) anomalies->pdata[i])->kind == AIRLOCK_CAPTURE_ANOMALY_LIMIT)
      return problems;

  for (guint i = 0; log->records && i < log->records->len; i++)
    {
      const AirlockSinkholeRecord *r = log->records->pdata[i];
      g_autofree char *key = NULL;
      g_autofree char *label = NULL;
      const AirlockFlow *flow;
      KeyCount *kc;
      gboolean counted;

      if (r->family != AF_INET && r->family != AF_INET6)
        continue;
      key = record_key (r);
      flow = airlock_capture_lookup_flow (capture, key);
      /* Each of these is one connection, datagram or echo request of the
       * guest's, and every frame the sinkhole passed on is in the capture:
       * a record with no traffic under it was not written by this run.  A
       * query over TCP rides on its connection's record. */
      counted = !(r->kind == AIRLOCK_SINKHOLE_RECORD_DNS && record_protocol (r) == IPPROTO_TCP);
      kc = g_hash_table_lookup (counts, key);
      if (!kc)
        {
          kc = g_new0 (KeyCount, 1);
          kc->key = g_strdup (key);
          kc->first_line = i + 1;
          kc->protocol = record_protocol (r);
          g_ptr_array_add (order, kc);
          g_hash_table_insert (counts, kc->key, kc);
        }
      kc->n += counted;
      label = record_label (r, i + 1);
      if (!flow || (record_protocol (r) == IPPROTO_TCP && flow->syns == 0)
          || (record_protocol (r) == IPPROTO_UDP && flow->datagrams == 0)
          || (r->kind == AIRLOCK_SINKHOLE_RECORD_ICMP && flow->echo_requests == 0))
        {
          g_ptr_array_add (problems,
                           g_strdup_printf ("%s: net.pcap holds no %s from the guest to %s: the "
                                            "record is not of this run's traffic",
                                            label,
                                            record_protocol (r) == IPPROTO_TCP ? "SYN"
                                            : record_protocol (r) == IPPROTO_UDP ? "datagram"
                                                                                 : "echo request",
                                            key));
          continue;
        }
      if (r->kind == AIRLOCK_SINKHOLE_RECORD_DNS && r->dns.question && *r->dns.question
          && !g_str_equal (r->dns.question, ".") && !capture_has_name (flow, r->dns.question))
        {
          g_autofree char *question = airlock_bundle_safe_text (r->dns.question);

          g_ptr_array_add (problems,
                           g_strdup_printf ("%s: it answers the question '%s', which no query in "
                                            "net.pcap to %s asks",
                                            label, question, key));
        }
    }

  /* No more records to a destination than the guest sent it connections,
   * datagrams or echo requests. */
  for (guint i = 0; i < order->len; i++)
    {
      const KeyCount *kc = order->pdata[i];
      const AirlockFlow *flow = airlock_capture_lookup_flow (capture, kc->key);
      guint64 most;
      const char *what;

      if (!flow)
        continue;   /* said above */
      if (kc->protocol == IPPROTO_TCP)
        most = flow->syns, what = "SYN(s)";
      else if (kc->protocol == IPPROTO_UDP)
        most = flow->datagrams, what = "datagram(s)";
      else
        most = flow->echo_requests, what = "echo request(s)";
      if (kc->n > most)
        g_ptr_array_add (problems,
                         g_strdup_printf ("line %u and later: %" G_GUINT64_FORMAT " record(s) "
                                          "of %s, but net.pcap holds %" G_GUINT64_FORMAT " %s "
                                          "from the guest to it",
                                          kc->first_line, kc->n, kc->key, most, what));
    }

  /* The other way: every connection the capture shows the network took
   * (it sent bytes or a FIN) was accepted by the sinkhole, which records
   * each one it accepts.  Only a whole record file can be held to it. */
  if (!log->complete || log->records_dropped > 0)
    return problems;
  flows = airlock_capture_get_flows (capture);
  for (guint i = 0; i < flows->len; i++)
    {
      const AirlockFlow *flow = flows->pdata[i];
      const KeyCount *kc;
      guint64 recorded;

      if (flow->protocol != IPPROTO_TCP || flow->taken == 0)
        continue;
      kc = g_hash_table_lookup (counts, flow->key);
      recorded = kc ? kc->n : 0;
      if (recorded < flow->taken)
        g_ptr_array_add (problems,
                         g_strdup_printf ("net.pcap shows %" G_GUINT64_FORMAT " connection(s) to "
                                          "%s that the network took (it sent bytes or a FIN on "
                                          "them), but network.jsonl records %" G_GUINT64_FORMAT
                                          ": a record is missing",
                                          flow->taken, flow->key, recorded));
    }
  return problems;
}

/* ---- replay ---- */

GPtrArray *
airlock_network_replay_keys (const AirlockNetworkReport *report)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < report->lookups->len; i++)
    {
      const AirlockNetworkLookup *l = report->lookups->pdata[i];

      g_ptr_array_add (keys, g_strdup_printf ("dns %s %s %s", l->transport,
                                              l->question ? l->question : "(no question)",
                                              l->qtype ? l->qtype : "-"));
    }
  for (guint i = 0; i < report->connections->len; i++)
    {
      const AirlockNetworkConnection *c = report->connections->pdata[i];
      const char *where = airlock_network_connection_destination (c);
      gboolean v6 = !c->name && strchr (c->address, ':');

      if (c->kind == AIRLOCK_SINKHOLE_RECORD_ICMP)
        g_ptr_array_add (keys, g_strdup_printf ("icmp %s", where));
      else if (c->kind == AIRLOCK_SINKHOLE_RECORD_UDP)
        g_ptr_array_add (keys, g_strdup_printf ("udp %s%s%s:%u", v6 ? "[" : "", where,
                                                v6 ? "]" : "", c->port));
      else
        g_ptr_array_add (keys, g_strdup_printf ("tcp %s%s%s:%u %s", v6 ? "[" : "", where,
                                                v6 ? "]" : "", c->port, c->protocol));
    }
  return keys;
}
