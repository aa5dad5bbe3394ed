/* The sinkhole's DNS: one reply to one message the guest sent (see
 * sinkhole.h).
 *
 * The question is decoded by the project's own DNS parser
 * (evidence/dns.h), the one the supervisor's records already go through,
 * so the sinkhole and the supervisor read a guest's query the same way.
 * The reply is written by hand: it is one header, the question copied
 * byte for byte, and at most one answer record, about a hundred lines;
 * no packaged library serves a DNS *server* answer simply (ldns could
 * build one, but would be a new dependency for this). */
#include "config.h"

#include "sinkhole.h"
#include "evidence/dns.h"

#include <arpa/inet.h>
#include <string.h>

#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_AA 0x0400
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_OPCODE(flags) (((flags) >> 11) & 0xf)

#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_CLASS_IN 1

#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_NOTIMP 4
#define DNS_RCODE_REFUSED 5

/* Short, so a client that caches never outlives the run's table by much;
 * the addresses are stable anyway. */
#define DNS_ANSWER_TTL 60

static void
put16 (GByteArray *out, guint16 v)
{
  guint8 b[2] = { v >> 8, v & 0xff };

  g_byte_array_append (out, b, 2);
}

static void
put32 (GByteArray *out, guint32 v)
{
  put16 (out, v >> 16);
  put16 (out, v & 0xffff);
}

/* The length of the question at @offset in wire form (its name and the
 * type and class), or 0 when it cannot be copied: only an uncompressed
 * name can, and the one question a message the sinkhole answers has one
 * (nothing but the header comes before it to point at). */
static gsize
question_wire_len (const guint8 *msg, gsize len, gsize offset)
{
  gsize at = offset;

  while (at < len && msg[at] != 0)
    {
      if (msg[at] > AIRLOCK_DNS_LABEL_MAX)
        return 0;
      at += 1 + msg[at];
    }
  if (at >= len || len - at - 1 < 4)
    return 0;
  return at + 1 + 4 - offset;
}

GBytes *
airlock_sinkhole_dns_answer (AirlockSinkholeNames *names, const guint8 *query, gsize len,
                             AirlockSinkholeDnsExchange *ret_exchange)
{
  g_autoptr (AirlockDnsQuery) q = NULL;
  g_autoptr (GByteArray) out = NULL;
  AirlockDnsQuestion *first = NULL;
  guint16 rcode = DNS_RCODE_NOERROR;
  gsize question_len = 0;
  guint8 v4[4], v6[16];
  gboolean answer = FALSE;

  g_return_val_if_fail (names != NULL, NULL);
  g_return_val_if_fail (query != NULL || len == 0, NULL);
  g_return_val_if_fail (ret_exchange != NULL, NULL);

  memset (ret_exchange, 0, sizeof *ret_exchange);
  ret_exchange->answers = g_ptr_array_new_with_free_func (g_free);

  q = airlock_dns_parse_query (query, len, len);
  if (q->questions->len > 0)
    {
      first = g_ptr_array_index (q->questions, 0);
      if (first->complete)
        {
          ret_exchange->question = g_strdup (first->name);
          ret_exchange->qtype = first->qtype;
        }
      else
        first = NULL;
    }

  /* Nothing to answer: too short to echo an ID, or itself a response
   * (answering responses would let two resolvers loop).  Recorded as
   * FORMERR: a message the sinkhole did not answer. */
  if (!q->have_header || (q->flags & DNS_FLAG_QR))
    {
      ret_exchange->rcode = DNS_RCODE_FORMERR;
      return NULL;
    }

  /* The question goes back as it came, byte for byte: a client that
   * randomises the case of its question (DNS 0x20) checks the echo. */
  if (q->qdcount == 1 && first)
    question_len = question_wire_len (query, len, first->offset);

  if (DNS_OPCODE (q->flags) != 0)
    rcode = DNS_RCODE_NOTIMP;
  else if (q->problem != AIRLOCK_DNS_WELL_FORMED || q->qdcount != 1 || question_len == 0)
    rcode = DNS_RCODE_FORMERR;
  else if (first->qclass != DNS_CLASS_IN)
    rcode = DNS_RCODE_REFUSED;
  else if (first->qtype == DNS_TYPE_A || first->qtype == DNS_TYPE_AAAA)
    {
      if (airlock_sinkhole_names_lookup (names, first->name, v4, v6))
        answer = TRUE;
      else
        rcode = DNS_RCODE_REFUSED;
    }

  out = g_byte_array_sized_new (AIRLOCK_DNS_HEADER_SIZE + (guint) question_len + 32);
  put16 (out, q->id);
  /* An authority for every name, with recursion "available" so that stub
   * resolvers that check RA take the answer. */
  put16 (out, DNS_FLAG_QR | (q->flags & 0x7800) | DNS_FLAG_AA | (q->flags & DNS_FLAG_RD)
                | DNS_FLAG_RA | rcode);
  put16 (out, question_len ? 1 : 0);
  put16 (out, answer ? 1 : 0);
  put16 (out, 0);
  /* No OPT record: a reply without EDNS is always understood, and one
   * answer fits in 512 bytes. */
  put16 (out, 0);
  if (question_len)
    g_byte_array_append (out, query + first->offset, (guint) question_len);

  if (answer)
    {
      gboolean is_a = first->qtype == DNS_TYPE_A;
      char text[INET6_ADDRSTRLEN];

      /* The name: a pointer to the question's, at offset 12. */
      put16 (out, 0xc000 | AIRLOCK_DNS_HEADER_SIZE);
      put16 (out, first->qtype);
      put16 (out, DNS_CLASS_IN);
      put32 (out, DNS_ANSWER_TTL);
      put16 (out, is_a ? 4 : 16);
      g_byte_array_append (out, is_a ? v4 : v6, is_a ? 4 : 16);
      inet_ntop (is_a ? AF_INET : AF_INET6, is_a ? (const void *) v4 : (const void *) v6, text,
                 sizeof text);
      g_ptr_array_add (ret_exchange->answers, g_strdup (text));
    }

  ret_exchange->rcode = rcode;
  return g_byte_array_free_to_bytes (g_steal_pointer (&out));
}
