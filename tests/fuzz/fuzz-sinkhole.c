/* libFuzzer harness for the sinkhole's pure part (lib/sinkhole/): the
 * guest's bytes as a connection's first bytes (protocol detection), as a
 * DNS message (the answerer), and the same bytes as a record file (the
 * reader, whose file is the process's but whose strings came from the
 * guest).  Split points come from a hash of the input, so a crash
 * reproduces from the input file alone.
 *
 * Besides the sanitizers' findings, it aborts when an invariant breaks:
 *   - detection: final calls are always DONE; NONE exactly for no bytes;
 *     every string is safe text; TLS has its ALPN list; bytes cut at
 *     random points say NEED_MORE until they say DONE, and what a prefix
 *     said DONE to is what the whole says (the same fields for HTTP, TLS
 *     and SSH);
 *   - DNS: no reply without a header or to a response; a reply is at most
 *     512 bytes, decodes well-formed with the project's own parser, echoes
 *     the ID, opcode and RD, says the rcode recorded, and carries a
 *     question only when the query had exactly one, equal to it; an answer
 *     is the table's address for that question, mapping back to it;
 *   - records: a file that reads writes back to lines that read again to
 *     the same lines; errors are safe text. */
#include "config.h"

#include "sinkhole/sinkhole.h"
#include "evidence/dns.h"
#include "fuzz-util.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The reply's own size bound: a question of at most 255 octets and one
 * AAAA answer fit in a classic UDP message. */
#define DNS_UDP_MAX 512

static void
check_opt_text (const char *text)
{
  if (text)
    fuzz_check_safe_text (text);
}

static void
check_texts (GPtrArray *texts)
{
  for (guint i = 0; texts && i < texts->len; i++)
    fuzz_check_safe_text (g_ptr_array_index (texts, i));
}

static void
check_detected (const AirlockSinkholeDetected *d)
{
  fuzz_check (d->protocol <= AIRLOCK_SINKHOLE_PROTOCOL_DNS);
  check_opt_text (d->http_method);
  check_opt_text (d->http_path);
  check_opt_text (d->http_version);
  check_opt_text (d->http_host);
  check_opt_text (d->http_user_agent);
  check_opt_text (d->tls_sni);
  check_opt_text (d->tls_version);
  check_opt_text (d->ssh_banner);
  check_texts (d->tls_alpn);
  check_texts (d->dns_questions);
  if (d->protocol == AIRLOCK_SINKHOLE_PROTOCOL_TLS)
    fuzz_check (d->tls_alpn != NULL);
  if (d->protocol == AIRLOCK_SINKHOLE_PROTOCOL_DNS)
    fuzz_check (d->dns_questions != NULL);
  if (d->protocol != AIRLOCK_SINKHOLE_PROTOCOL_HTTP)
    fuzz_check (d->http_method == NULL && d->http_host == NULL);
  if (d->protocol != AIRLOCK_SINKHOLE_PROTOCOL_SSH)
    fuzz_check (d->ssh_banner == NULL);
}

static gboolean
same_text (const char *a, const char *b)
{
  return g_strcmp0 (a, b) == 0;
}

static gboolean
same_texts (GPtrArray *a, GPtrArray *b)
{
  if (!a || !b)
    return a == b;
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (strcmp (g_ptr_array_index (a, i), g_ptr_array_index (b, i)) != 0)
      return FALSE;
  return TRUE;
}

static void
run_detect (const guint8 *data, gsize size, guint64 *state)
{
  static const guint16 ports[] = { 53, 80, 443, 22, 7 };
  guint16 port = ports[fuzz_splitmix64 (state) % G_N_ELEMENTS (ports)];
  AirlockSinkholeDetected whole, part;
  gsize cut = 0;

  fuzz_check (airlock_sinkhole_detect (data, size, port, TRUE, &whole)
              == AIRLOCK_SINKHOLE_DETECT_DONE);
  check_detected (&whole);
  fuzz_check ((whole.protocol == AIRLOCK_SINKHOLE_PROTOCOL_NONE) == (size == 0));

  /* As a connection delivers them: more bytes each time, at random. */
  while (cut < size)
    {
      AirlockSinkholeDetectResult result;

      cut += 1 + fuzz_splitmix64 (state) % MIN (size - cut, (gsize) 512);
      result = airlock_sinkhole_detect (data, cut, port, FALSE, &part);
      check_detected (&part);
      if (result == AIRLOCK_SINKHOLE_DETECT_DONE)
        {
          fuzz_check (part.protocol == whole.protocol);
          fuzz_check (same_text (part.http_method, whole.http_method));
          fuzz_check (same_text (part.http_path, whole.http_path));
          fuzz_check (same_text (part.http_version, whole.http_version));
          fuzz_check (same_text (part.http_host, whole.http_host));
          fuzz_check (same_text (part.http_user_agent, whole.http_user_agent));
          fuzz_check (same_text (part.tls_sni, whole.tls_sni));
          fuzz_check (same_texts (part.tls_alpn, whole.tls_alpn));
          fuzz_check (same_text (part.tls_version, whole.tls_version));
          fuzz_check (same_text (part.ssh_banner, whole.ssh_banner));
          airlock_sinkhole_detected_clear (&part);
          break;
        }
      fuzz_check (part.protocol == AIRLOCK_SINKHOLE_PROTOCOL_NONE);
      airlock_sinkhole_detected_clear (&part);
    }
  airlock_sinkhole_detected_clear (&whole);
}

static void
run_dns (AirlockSinkholeNames *names, const guint8 *data, gsize size)
{
  g_autoptr (AirlockDnsQuery) asked = airlock_dns_parse_query (data, size, size);
  AirlockSinkholeDnsExchange exchange;
  g_autoptr (GBytes) reply = airlock_sinkhole_dns_answer (names, data, size, &exchange);
  g_autoptr (AirlockDnsQuery) parsed = NULL;
  const guint8 *r;
  gsize len;

  fuzz_check (exchange.answers != NULL);
  check_opt_text (exchange.question);
  if (!asked->have_header || (asked->flags & 0x8000))
    {
      fuzz_check (reply == NULL);
      fuzz_check (exchange.answers->len == 0);
      airlock_sinkhole_dns_exchange_clear (&exchange);
      return;
    }
  fuzz_check (reply != NULL);
  r = g_bytes_get_data (reply, &len);
  fuzz_check (len <= DNS_UDP_MAX);
  parsed = airlock_dns_parse_query (r, len, len);
  fuzz_check (parsed->problem == AIRLOCK_DNS_WELL_FORMED);
  fuzz_check (parsed->id == asked->id);
  fuzz_check (parsed->flags & 0x8000);
  fuzz_check ((parsed->flags & 0x7900) == (asked->flags & 0x7900));
  fuzz_check ((parsed->flags & 0x000f) == exchange.rcode);
  fuzz_check (parsed->nscount == 0 && parsed->arcount == 0);
  fuzz_check (parsed->ancount == exchange.answers->len && parsed->ancount <= 1);

  if (parsed->qdcount == 1)
    {
      const AirlockDnsQuestion *p = g_ptr_array_index (parsed->questions, 0);
      const AirlockDnsQuestion *a;

      fuzz_check (asked->qdcount == 1 && asked->questions->len >= 1);
      a = g_ptr_array_index (asked->questions, 0);
      fuzz_check (a->complete);
      fuzz_check (strcmp (p->name, a->name) == 0);
      fuzz_check (p->qtype == a->qtype && p->qclass == a->qclass);
      fuzz_check (same_text (exchange.question, a->name));
    }
  else
    fuzz_check (parsed->qdcount == 0 && exchange.answers->len == 0);

  if (exchange.answers->len == 1)
    {
      const char *answer = g_ptr_array_index (exchange.answers, 0);
      int family = exchange.qtype == 1 ? AF_INET : AF_INET6;
      guint8 address[16], v4[4], v6[16];
      const char *back;

      fuzz_check (exchange.rcode == 0);
      fuzz_check (exchange.qtype == 1 || exchange.qtype == 28);
      fuzz_check (inet_pton (family, answer, address) == 1);
      /* The reply's RDATA is that address, at its end. */
      fuzz_check (memcmp (r + len - (family == AF_INET ? 4 : 16), address,
                          family == AF_INET ? 4 : 16) == 0);
      fuzz_check (airlock_sinkhole_names_lookup (names, exchange.question, v4, v6));
      fuzz_check (memcmp (family == AF_INET ? v4 : v6, address, family == AF_INET ? 4 : 16) == 0);
      back = airlock_sinkhole_names_reverse (names, family, address);
      fuzz_check (back != NULL && g_ascii_strcasecmp (back, exchange.question) == 0);
    }
  airlock_sinkhole_dns_exchange_clear (&exchange);
}

static void
run_records (const guint8 *data, gsize size)
{
  g_autoptr (GBytes) bytes = g_bytes_new_static (data, size);
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockSinkholeLog) log = airlock_sinkhole_log_new_from_bytes (bytes, &error);
  g_autoptr (GString) again = NULL;
  g_autoptr (GBytes) again_bytes = NULL;
  g_autoptr (AirlockSinkholeLog) log2 = NULL;

  if (!log)
    {
      fuzz_check (error != NULL);
      fuzz_check_safe_text (error->message);
      return;
    }
  fuzz_check (error == NULL);
  fuzz_check (log->complete == (log->incomplete_reason == NULL));
  fuzz_check (log->records->len <= AIRLOCK_SINKHOLE_RECORDS_MAX);

  /* Written again, read again, written again: the same lines. */
  again = g_string_new (NULL);
  for (guint i = 0; i < log->records->len; i++)
    {
      const AirlockSinkholeRecord *record = g_ptr_array_index (log->records, i);
      g_autofree char *line = airlock_sinkhole_record_to_json (record);

      fuzz_check (line != NULL && strchr (line, '\n') == NULL);
      fuzz_check (record->client_bytes != NULL && record->server_bytes != NULL);
      if (record->name)
        fuzz_check (airlock_sinkhole_log_name_for_address (log, record->family, record->address)
                    != NULL);
      g_string_append_printf (again, "%s\n", line);
    }
  {
    g_autofree char *end = airlock_sinkhole_end_line_to_json (log->records_dropped, log->frames_refused,
                                                                 log->first_refused);

    g_string_append_printf (again, "%s\n", end);
  }
  again_bytes = g_bytes_new (again->str, again->len);
  log2 = airlock_sinkhole_log_new_from_bytes (again_bytes, &error);
  fuzz_check (log2 != NULL && log2->complete);
  fuzz_check (log2->records->len == log->records->len);
  fuzz_check (log2->records_dropped == log->records_dropped);
  for (guint i = 0; i < log->records->len; i++)
    {
      g_autofree char *a = airlock_sinkhole_record_to_json (g_ptr_array_index (log->records, i));
      g_autofree char *b = airlock_sinkhole_record_to_json (g_ptr_array_index (log2->records, i));

      fuzz_check (strcmp (a, b) == 0);
    }
}

FUZZ_DEFINE_INITIALIZE_GLIB_WARNINGS_ABORT ()

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  /* One table for the whole run, as the sinkhole keeps one per run: names
   * asked before must still answer the same (and it fills up, so a full
   * table's REFUSED is reached too). */
  static AirlockSinkholeNames *names;
  guint64 state = fuzz_input_hash (data, size);
  /* an exact copy, so ASan sees the input's real extent */
  g_autofree guint8 *copy = g_memdup2 (data, size);

  if (!names)
    names = airlock_sinkhole_names_new ();
  run_detect (copy, size, &state);
  run_dns (names, copy, size);
  run_records (copy, size);
  return 0;
}
