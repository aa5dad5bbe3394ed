/* libFuzzer harness for the DNS decoders (lib/evidence/dns.c).
 *
 * The input is used three ways: as one DNS message (as sent over UDP), as
 * a prefix of it (as a supervisor that copied fewer bytes would deliver
 * it), and as the byte stream of a TCP connection, fed whole, one byte at
 * a time (first 2 KiB) and in pseudo-random writes, with the default
 * message cap and a small one.  It is also framed as a single TCP message
 * and fed in random pieces.  Split points come from a hash of the input,
 * so a crash reproduces from the input file alone.
 *
 * Besides the sanitizers' findings, it aborts when an invariant breaks:
 *   - WELL_FORMED exactly when there is no reason; reasons are UTF-8;
 *     problem offsets lie inside the message;
 *   - at most QDCOUNT questions, none without a header; only the last can
 *     be incomplete, none when well-formed (then all QDCOUNT are there);
 *   - names are printable ASCII, complete ones end in '.';
 *   - a clipped prefix is never WELL_FORMED, TRUNCATED only when the full
 *     message is, CLIPPED when the full message is well-formed, and its
 *     complete questions are the full message's;
 *   - the TCP results do not depend on how the stream was split into
 *     writes, the kept bytes never exceed the cap, and a framed message
 *     reassembles to exactly the UDP parse of the same bytes;
 *   - a gap the supervisor reports keeps the messages before it, returns
 *     the one it cut as CLIPPED and stops the stream. */
#include "config.h"

#include "evidence/dns.h"
#include "fuzz-util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
check_query (const AirlockDnsQuery *q, const guint8 *data)
{
  fuzz_check (q != NULL && q->questions != NULL);
  fuzz_check (q->len <= q->wire_len);
  fuzz_check ((q->problem == AIRLOCK_DNS_WELL_FORMED) == (q->reason == NULL));
  fuzz_check (strcmp (airlock_dns_problem_to_string (q->problem), "invalid") != 0);
  if (q->reason != NULL)
    {
      fuzz_check (q->reason[0] != '\0');
      fuzz_check (g_utf8_validate (q->reason, -1, NULL));
    }
  fuzz_check (q->problem_offset <= q->wire_len);

  if (!q->have_header)
    fuzz_check (q->questions->len == 0);
  else
    {
      fuzz_check (q->len >= AIRLOCK_DNS_HEADER_SIZE);
      fuzz_check (q->id == ((data[0] << 8) | data[1]));
      fuzz_check (q->qdcount == ((data[4] << 8) | data[5]));
      fuzz_check (q->questions->len <= q->qdcount);
    }
  if (q->problem == AIRLOCK_DNS_WELL_FORMED)
    {
      fuzz_check (q->have_header);
      fuzz_check (q->questions->len == q->qdcount);
      fuzz_check (q->len == q->wire_len);
    }

  for (guint i = 0; i < q->questions->len; i++)
    {
      const AirlockDnsQuestion *question = q->questions->pdata[i];
      gsize name_len = strlen (question->name);

      fuzz_check (question->complete || i + 1 == q->questions->len);
      fuzz_check (question->complete || q->problem != AIRLOCK_DNS_WELL_FORMED);
      fuzz_check (question->offset >= AIRLOCK_DNS_HEADER_SIZE && question->offset <= q->len);
      /* at most 4 characters (\DDD) per octet of a 255-octet name */
      fuzz_check (name_len <= 4 * AIRLOCK_DNS_NAME_MAX);
      for (gsize j = 0; j < name_len; j++)
        fuzz_check (question->name[j] >= 0x21 && question->name[j] <= 0x7e);
      if (question->complete)
        fuzz_check (name_len > 0 && question->name[name_len - 1] == '.');
    }
}

static void
check_same_query (const AirlockDnsQuery *a, const AirlockDnsQuery *b)
{
  fuzz_check (a->problem == b->problem);
  fuzz_check (g_strcmp0 (a->reason, b->reason) == 0);
  fuzz_check (a->problem_offset == b->problem_offset);
  fuzz_check (a->have_header == b->have_header);
  fuzz_check (a->len == b->len && a->wire_len == b->wire_len);
  fuzz_check (a->questions->len == b->questions->len);
  for (guint i = 0; i < a->questions->len; i++)
    {
      const AirlockDnsQuestion *x = a->questions->pdata[i];
      const AirlockDnsQuestion *y = b->questions->pdata[i];

      fuzz_check (strcmp (x->name, y->name) == 0);
      fuzz_check (x->qtype == y->qtype && x->qclass == y->qclass);
      fuzz_check (x->offset == y->offset && x->complete == y->complete);
    }
}

/* A prefix of @len bytes of the message @full was parsed from. */
static void
check_clipped (const AirlockDnsQuery *clipped, const AirlockDnsQuery *full, gsize len,
               gsize size)
{
  if (len == size)
    {
      check_same_query (clipped, full);
      return;
    }
  /* The prefix parse reads the same bytes as the full one until it runs
   * out; it can only call the message truncated when a structure it
   * started reaches past everything that was sent. */
  fuzz_check (clipped->problem != AIRLOCK_DNS_WELL_FORMED);
  if (clipped->problem == AIRLOCK_DNS_TRUNCATED)
    fuzz_check (full->problem == AIRLOCK_DNS_TRUNCATED);
  if (full->problem == AIRLOCK_DNS_WELL_FORMED)
    fuzz_check (clipped->problem == AIRLOCK_DNS_CLIPPED);
  fuzz_check (clipped->questions->len <= full->questions->len);
  for (guint i = 0; i < clipped->questions->len; i++)
    {
      const AirlockDnsQuestion *x = clipped->questions->pdata[i];
      const AirlockDnsQuestion *y;

      if (!x->complete)
        continue;
      fuzz_check (i < full->questions->len);
      y = full->questions->pdata[i];
      fuzz_check (y->complete);
      fuzz_check (strcmp (x->name, y->name) == 0);
      fuzz_check (x->qtype == y->qtype && x->qclass == y->qclass);
    }
}

typedef struct {
  GPtrArray *queries;     /* AirlockDnsQuery * */
  AirlockDnsQuery *last;  /* from finish(), or NULL */
} StreamResult;

static void
stream_result_clear (StreamResult *r)
{
  g_ptr_array_unref (r->queries);
  airlock_dns_query_free (r->last);
}

static StreamResult
run_stream (const guint8 *data, gsize size, gsize cap, FuzzFeed mode, guint64 seed)
{
  AirlockDnsTcpStream *stream = airlock_dns_tcp_stream_new (cap);
  StreamResult r = { g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_dns_query_free),
                     NULL };
  guint64 rng = seed;
  gsize pos = 0;

  while (pos < size)
    {
      gsize n = fuzz_feed_next (mode, pos, size, &rng);
      GPtrArray *queries;

      queries = airlock_dns_tcp_stream_feed (stream, data + pos, n);
      fuzz_check (queries != NULL);
      fuzz_check (airlock_dns_tcp_stream_get_buffered (stream)
                  <= (cap == 0 ? AIRLOCK_DNS_TCP_MESSAGE_MAX : cap));
      g_ptr_array_extend_and_steal (r.queries, queries);
      pos += n;
    }
  r.last = airlock_dns_tcp_stream_finish (stream);
  airlock_dns_tcp_stream_free (stream);
  return r;
}

static void
check_stream (const StreamResult *r, const guint8 *data, gsize size, gsize cap)
{
  guint64 offset = 0;

  for (guint i = 0; i < r->queries->len; i++)
    {
      const AirlockDnsQuery *q = r->queries->pdata[i];
      gsize msg_len = q->wire_len;

      fuzz_check (q->stream_offset == offset);
      fuzz_check (offset + 2 + msg_len <= size);
      fuzz_check ((gsize) ((data[offset] << 8) | data[offset + 1]) == msg_len);
      check_query (q, data + offset + 2);
      if (cap != 0 && msg_len > cap)
        fuzz_check (q->problem == AIRLOCK_DNS_OVERSIZE && q->len == cap);
      else
        fuzz_check (q->problem != AIRLOCK_DNS_OVERSIZE && q->len == msg_len);
      offset += 2 + msg_len;
    }
  if (r->last != NULL)
    {
      fuzz_check (r->last->problem == AIRLOCK_DNS_TRUNCATED);
      fuzz_check (r->last->stream_offset == offset);
      fuzz_check (offset < size);
    }
  else
    fuzz_check (offset == size);
}

static void
check_same_stream (const StreamResult *a, const StreamResult *b)
{
  fuzz_check (a->queries->len == b->queries->len);
  for (guint i = 0; i < a->queries->len; i++)
    {
      const AirlockDnsQuery *x = a->queries->pdata[i];
      const AirlockDnsQuery *y = b->queries->pdata[i];

      check_same_query (x, y);
      fuzz_check (x->stream_offset == y->stream_offset);
    }
  fuzz_check ((a->last == NULL) == (b->last == NULL));
  if (a->last != NULL)
    check_same_query (a->last, b->last);
}

/* The same stream with the supervisor missing @gap bytes at @at: the
 * messages that ended before the gap are the ones @whole found, the one
 * under way (if any) comes out CLIPPED, and nothing after it. */
static void
check_gap (const guint8 *data, gsize size, const StreamResult *whole, gsize at, gsize gap)
{
  AirlockDnsTcpStream *stream = airlock_dns_tcp_stream_new (0);
  GPtrArray *before = airlock_dns_tcp_stream_feed (stream, data, at);
  GPtrArray *during = airlock_dns_tcp_stream_feed_gap (stream, gap);
  /* (data is NULL for an empty input: no arithmetic on it then) */
  GPtrArray *after = airlock_dns_tcp_stream_feed (stream, at < size ? data + at : NULL,
                                                  size - at);
  gsize boundary = 0;
  guint complete = 0;

  for (guint i = 0; i < whole->queries->len; i++)
    {
      const AirlockDnsQuery *q = whole->queries->pdata[i];

      if (q->stream_offset + 2 + q->wire_len > at)
        break;
      boundary = q->stream_offset + 2 + q->wire_len;
      complete++;
    }
  fuzz_check (before->len == complete);
  for (guint i = 0; i < complete; i++)
    check_same_query (before->pdata[i], whole->queries->pdata[i]);

  if (gap == 0)
    {
      fuzz_check (during->len == 0);
      fuzz_check (airlock_dns_tcp_stream_get_stop_reason (stream) == NULL);
    }
  else
    {
      fuzz_check (during->len == (at > boundary ? 1u : 0u));
      if (during->len == 1)
        {
          const AirlockDnsQuery *q = during->pdata[0];

          fuzz_check (q->problem == AIRLOCK_DNS_CLIPPED);
          fuzz_check (q->stream_offset == boundary);
        }
      fuzz_check (after->len == 0);
      fuzz_check (airlock_dns_tcp_stream_get_stop_reason (stream) != NULL);
      fuzz_check (airlock_dns_tcp_stream_get_ignored (stream) == gap + (size - at));
      fuzz_check (airlock_dns_tcp_stream_finish (stream) == NULL);
    }

  g_ptr_array_unref (before);
  g_ptr_array_unref (during);
  g_ptr_array_unref (after);
  airlock_dns_tcp_stream_free (stream);
}

/* Framed as one TCP message and fed in random pieces: one query, the same
 * as the UDP parse. */
static void
check_framed (const guint8 *data, gsize size, const AirlockDnsQuery *udp, guint64 seed)
{
  g_autofree guint8 *framed = NULL;
  StreamResult r;

  if (size > AIRLOCK_DNS_TCP_MESSAGE_MAX)
    return;
  framed = g_malloc (size + 2);
  framed[0] = (guint8) (size >> 8);
  framed[1] = (guint8) size;
  if (size > 0)
    memcpy (framed + 2, data, size);
  r = run_stream (framed, size + 2, 0, FUZZ_FEED_RANDOM, seed);
  fuzz_check (r.queries->len == 1);
  fuzz_check (r.last == NULL);
  check_same_query (r.queries->pdata[0], udp);
  stream_result_clear (&r);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  guint64 h = fuzz_input_hash (data, size);
  /* an exact copy, so ASan sees the message's real extent */
  g_autofree guint8 *msg = g_memdup2 (data, size);
  AirlockDnsQuery *full = airlock_dns_parse_query (msg, size, size);
  gsize clip_len = size == 0 ? 0 : (gsize) (h % (size + 1));
  AirlockDnsQuery *clipped = airlock_dns_parse_query (msg, clip_len, size);
  gsize small_cap = 1 + (gsize) ((h >> 16) % 600);
  StreamResult whole, bytes, random, small_whole, small_random;

  check_query (full, msg);
  check_query (clipped, msg);
  check_clipped (clipped, full, clip_len, size);

  whole = run_stream (msg, size, 0, FUZZ_FEED_WHOLE, h);
  bytes = run_stream (msg, size, 0, FUZZ_FEED_BYTES, h);
  random = run_stream (msg, size, 0, FUZZ_FEED_RANDOM, h);
  small_whole = run_stream (msg, size, small_cap, FUZZ_FEED_WHOLE, h);
  small_random = run_stream (msg, size, small_cap, FUZZ_FEED_RANDOM, h ^ 0x5555);
  check_stream (&whole, msg, size, 0);
  check_stream (&small_whole, msg, size, small_cap);
  check_same_stream (&whole, &bytes);
  check_same_stream (&whole, &random);
  check_same_stream (&small_whole, &small_random);

  check_gap (msg, size, &whole, size == 0 ? 0 : (gsize) ((h >> 24) % (size + 1)),
             (gsize) ((h >> 40) % 3));
  check_framed (msg, size, full, h ^ 0xaaaa);

  stream_result_clear (&whole);
  stream_result_clear (&bytes);
  stream_result_clear (&random);
  stream_result_clear (&small_whole);
  stream_result_clear (&small_random);
  airlock_dns_query_free (full);
  airlock_dns_query_free (clipped);
  return 0;
}
