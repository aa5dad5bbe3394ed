/* DNS query decoding and TCP reassembly (see dns.h).
 *
 * Everything here reads bytes the workload wrote.  Every read is preceded
 * by a check against the bytes present (need()), written so that no
 * offset plus a wire length can overflow; every loop is bounded by the
 * message length or by a fixed cap (labels per name, pointers per name),
 * so a hostile message costs time linear in its size. */
#include "config.h"

#include "dns.h"

#include <string.h>

/* A legitimate name has at most 127 labels, and a compressing encoder
 * needs at most one pointer per label: more is a pathological chain, and
 * capping it keeps each name O(1) whatever the message. */
#define DNS_MAX_POINTERS_PER_NAME (AIRLOCK_DNS_NAME_MAX / 2)

typedef struct {
  const guint8 *msg;
  gsize len;        /* bytes present */
  gsize wire_len;   /* bytes the workload sent (>= len) */
  AirlockDnsQuery *query;
} DnsParser;

static guint16
get_be16 (const guint8 *p)
{
  return (guint16) ((p[0] << 8) | p[1]);
}

const char *
airlock_dns_problem_to_string (AirlockDnsProblem problem)
{
  switch (problem)
    {
    case AIRLOCK_DNS_WELL_FORMED:
      return "well-formed";
    case AIRLOCK_DNS_TRUNCATED:
      return "truncated";
    case AIRLOCK_DNS_CLIPPED:
      return "clipped";
    case AIRLOCK_DNS_POINTER_OUT_OF_BOUNDS:
      return "pointer-out-of-bounds";
    case AIRLOCK_DNS_POINTER_FORWARD:
      return "pointer-forward";
    case AIRLOCK_DNS_POINTER_LOOP:
      return "pointer-loop";
    case AIRLOCK_DNS_RESERVED_LABEL_TYPE:
      return "reserved-label-type";
    case AIRLOCK_DNS_NAME_TOO_LONG:
      return "name-too-long";
    case AIRLOCK_DNS_TRAILING_BYTES:
      return "trailing-bytes";
    case AIRLOCK_DNS_OVERSIZE:
      return "oversize";
    default:
      return "invalid";
    }
}

static void
question_free (gpointer data)
{
  AirlockDnsQuestion *question = data;

  g_free (question->name);
  g_free (question);
}

void
airlock_dns_query_free (AirlockDnsQuery *query)
{
  if (query == NULL)
    return;

  g_ptr_array_unref (query->questions);
  g_free (query->reason);
  g_free (query);
}

static void query_set_problem (AirlockDnsQuery *query, AirlockDnsProblem problem, gsize offset,
                               const char *format, ...) G_GNUC_PRINTF (4, 5);

/* Records @problem, replacing any earlier one (callers that want the first
 * problem to win check query->problem first). */
static void
query_set_problem (AirlockDnsQuery *query, AirlockDnsProblem problem, gsize offset,
                   const char *format, ...)
{
  va_list args;

  g_assert (problem != AIRLOCK_DNS_WELL_FORMED);

  g_free (query->reason);
  va_start (args, format);
  query->reason = g_strdup_vprintf (format, args);
  va_end (args);
  query->problem = problem;
  query->problem_offset = offset;
}

/* Whether @n bytes at @pos are present.  If not, records why: the message
 * the workload sent really ends there (TRUNCATED), or the supervisor did
 * not copy that far (CLIPPED).  @what names the structure being read. */
static gboolean
need (DnsParser *p, gsize pos, gsize n, const char *what, gsize what_offset)
{
  g_assert (pos <= p->len);

  if (n <= p->len - pos)
    return TRUE;
  if (n <= p->wire_len - pos)
    query_set_problem (p->query, AIRLOCK_DNS_CLIPPED, pos,
                       "%s at byte %" G_GSIZE_FORMAT " needs bytes past the %" G_GSIZE_FORMAT
                       " the supervisor copied of the %" G_GSIZE_FORMAT " sent",
                       what, what_offset, p->len, p->wire_len);
  else
    query_set_problem (p->query, AIRLOCK_DNS_TRUNCATED, pos,
                       "the message ends at byte %" G_GSIZE_FORMAT ", inside %s at byte %"
                       G_GSIZE_FORMAT,
                       p->wire_len, what, what_offset);
  return FALSE;
}

/* One label in presentation form, as dig prints it (BIND's
 * dns_name_totext): the characters that delimit or quote in zone files
 * behind a backslash, every byte outside printable ASCII as \DDD. */
static void
append_label (GString *out, const guint8 *label, gsize len)
{
  for (gsize i = 0; i < len; i++)
    {
      guint8 c = label[i];

      switch (c)
        {
        case '.':
        case '\\':
        case '"':
        case '(':
        case ')':
        case ';':
        case '@':
        case '$':
          g_string_append_c (out, '\\');
          g_string_append_c (out, (char) c);
          break;
        default:
          if (c < 0x21 || c > 0x7e)
            g_string_append_printf (out, "\\%03u", c);
          else
            g_string_append_c (out, (char) c);
          break;
        }
    }
}

/* Reads the name at *@pos into @out (presentation form).  On success,
 * advances *@pos past the name as it sits in place (up to and including
 * its first compression pointer) and returns TRUE; otherwise records the
 * problem, leaves in @out the labels read so far and returns FALSE.
 *
 * Compression (RFC 1035 §4.1.4) points at a prior occurrence.  So each
 * pointer must point before itself, and every pointer after the first
 * before the previous target: targets strictly decrease, which is what
 * every encoder writes and what makes loops impossible to follow. */
static gboolean
read_name (DnsParser *p, gsize *pos, GString *out, const char *what)
{
  gsize cursor = *pos;
  gsize end = 0;
  gboolean jumped = FALSE;
  gsize last_target = 0;
  guint pointers = 0;
  gsize wire = 0;          /* uncompressed octets so far, root excluded */
  guint labels = 0;

  for (;;)
    {
      guint8 b;

      if (!need (p, cursor, 1, what, *pos))
        return FALSE;
      b = p->msg[cursor];

      switch (b & 0xc0)
        {
        case 0x00:
          if (b == 0)
            {
              if (labels == 0)
                g_string_append_c (out, '.');
              *pos = jumped ? end : cursor + 1;
              return TRUE;
            }
          /* +1 for this length byte, +1 for the root label still to come */
          if (wire + 1 + b + 1 > AIRLOCK_DNS_NAME_MAX)
            {
              query_set_problem (p->query, AIRLOCK_DNS_NAME_TOO_LONG, cursor,
                                 "%s at byte %" G_GSIZE_FORMAT " is longer than %d octets: "
                                 "the label at byte %" G_GSIZE_FORMAT " makes it %"
                                 G_GSIZE_FORMAT,
                                 what, *pos, AIRLOCK_DNS_NAME_MAX, cursor,
                                 wire + 1 + b + 1);
              return FALSE;
            }
          if (!need (p, cursor + 1, b, what, *pos))
            return FALSE;
          append_label (out, p->msg + cursor + 1, b);
          g_string_append_c (out, '.');
          wire += 1 + (gsize) b;
          labels++;
          cursor += 1 + (gsize) b;
          break;

        case 0xc0:
          {
            gsize target;

            if (!need (p, cursor, 2, what, *pos))
              return FALSE;
            target = ((gsize) (b & 0x3f) << 8) | p->msg[cursor + 1];

            if (target < AIRLOCK_DNS_HEADER_SIZE)
              {
                query_set_problem (p->query, AIRLOCK_DNS_POINTER_OUT_OF_BOUNDS, cursor,
                                   "the compression pointer at byte %" G_GSIZE_FORMAT
                                   " (in %s at byte %" G_GSIZE_FORMAT ") points into the "
                                   "header, at byte %" G_GSIZE_FORMAT,
                                   cursor, what, *pos, target);
                return FALSE;
              }
            if (target >= p->len)
              {
                if (target < p->wire_len)
                  query_set_problem (p->query, AIRLOCK_DNS_CLIPPED, cursor,
                                     "the compression pointer at byte %" G_GSIZE_FORMAT
                                     " (in %s at byte %" G_GSIZE_FORMAT ") points at byte %"
                                     G_GSIZE_FORMAT ", past the %" G_GSIZE_FORMAT
                                     " bytes the supervisor copied",
                                     cursor, what, *pos, target, p->len);
                else
                  query_set_problem (p->query, AIRLOCK_DNS_POINTER_OUT_OF_BOUNDS, cursor,
                                     "the compression pointer at byte %" G_GSIZE_FORMAT
                                     " (in %s at byte %" G_GSIZE_FORMAT ") points at byte %"
                                     G_GSIZE_FORMAT ", past the end of the %" G_GSIZE_FORMAT
                                     "-byte message",
                                     cursor, what, *pos, target, p->wire_len);
                return FALSE;
              }
            if (target >= cursor)
              {
                query_set_problem (p->query, AIRLOCK_DNS_POINTER_FORWARD, cursor,
                                   "the compression pointer at byte %" G_GSIZE_FORMAT
                                   " (in %s at byte %" G_GSIZE_FORMAT ") points forward, at "
                                   "byte %" G_GSIZE_FORMAT,
                                   cursor, what, *pos, target);
                return FALSE;
              }
            if (jumped && target >= last_target)
              {
                query_set_problem (p->query, AIRLOCK_DNS_POINTER_LOOP, cursor,
                                   "the compression pointer at byte %" G_GSIZE_FORMAT
                                   " (in %s at byte %" G_GSIZE_FORMAT ") points at byte %"
                                   G_GSIZE_FORMAT ", not before the previous target %"
                                   G_GSIZE_FORMAT ": a loop",
                                   cursor, what, *pos, target, last_target);
                return FALSE;
              }
            if (++pointers > DNS_MAX_POINTERS_PER_NAME)
              {
                query_set_problem (p->query, AIRLOCK_DNS_POINTER_LOOP, cursor,
                                   "%s at byte %" G_GSIZE_FORMAT " follows more than %d "
                                   "compression pointers (one per label is the most an "
                                   "encoder needs)",
                                   what, *pos, DNS_MAX_POINTERS_PER_NAME);
                return FALSE;
              }
            if (!jumped)
              end = cursor + 2;
            jumped = TRUE;
            last_target = target;
            cursor = target;
            break;
          }

        default:
          query_set_problem (p->query, AIRLOCK_DNS_RESERVED_LABEL_TYPE, cursor,
                             "%s at byte %" G_GSIZE_FORMAT " has length byte 0x%02x at byte %"
                             G_GSIZE_FORMAT ": label type %s is reserved, and a label "
                             "holds at most %d octets",
                             what, *pos, b, cursor, (b & 0xc0) == 0x40 ? "01" : "10",
                             AIRLOCK_DNS_LABEL_MAX);
          return FALSE;
        }
    }
}

static void
parse_header (DnsParser *p)
{
  const guint8 *h = p->msg;
  AirlockDnsQuery *q = p->query;

  q->have_header = TRUE;
  q->id = get_be16 (h);
  q->flags = get_be16 (h + 2);
  q->qdcount = get_be16 (h + 4);
  q->ancount = get_be16 (h + 6);
  q->nscount = get_be16 (h + 8);
  q->arcount = get_be16 (h + 10);
}

static gboolean
parse_questions (DnsParser *p, gsize *pos)
{
  AirlockDnsQuery *q = p->query;

  for (guint i = 0; i < q->qdcount; i++)
    {
      g_autoptr (GString) name = g_string_new (NULL);
      AirlockDnsQuestion *question = g_new0 (AirlockDnsQuestion, 1);
      gboolean ok;

      question->offset = *pos;
      ok = read_name (p, pos, name, "the name of a question")
           && need (p, *pos, 4, "the type and class of a question", question->offset);
      if (ok)
        {
          question->qtype = get_be16 (p->msg + *pos);
          question->qclass = get_be16 (p->msg + *pos + 2);
          *pos += 4;
        }
      question->complete = ok;
      question->name = g_string_free (g_steal_pointer (&name), FALSE);
      g_ptr_array_add (q->questions, question);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

/* Answer, authority and additional records: only their extent matters
 * here (name, type, class, TTL, RDLENGTH, RDATA). */
static gboolean
skip_records (DnsParser *p, gsize *pos)
{
  AirlockDnsQuery *q = p->query;
  guint total = (guint) q->ancount + q->nscount + q->arcount;

  for (guint i = 0; i < total; i++)
    {
      g_autoptr (GString) ignored = g_string_new (NULL);
      gsize start = *pos;
      guint16 rdlength;

      if (!read_name (p, pos, ignored, "the owner name of a record")
          || !need (p, *pos, 10, "the fixed fields of a record", start))
        return FALSE;
      rdlength = get_be16 (p->msg + *pos + 8);
      *pos += 10;
      if (!need (p, *pos, rdlength, "the data of a record", start))
        return FALSE;
      *pos += rdlength;
    }
  return TRUE;
}

AirlockDnsQuery *
airlock_dns_parse_query (const guint8 *msg, gsize len, gsize wire_len)
{
  AirlockDnsQuery *query = g_new0 (AirlockDnsQuery, 1);
  DnsParser p = { msg, len, MAX (len, wire_len), query };
  gsize pos = 0;

  query->questions = g_ptr_array_new_with_free_func (question_free);
  query->len = p.len;
  query->wire_len = p.wire_len;
  g_return_val_if_fail (msg != NULL || len == 0, query);

  if (!need (&p, 0, AIRLOCK_DNS_HEADER_SIZE, "the 12-byte header", 0))
    return query;
  parse_header (&p);
  pos = AIRLOCK_DNS_HEADER_SIZE;

  if (!parse_questions (&p, &pos) || !skip_records (&p, &pos))
    return query;

  if (pos < p.wire_len)
    query_set_problem (query, AIRLOCK_DNS_TRAILING_BYTES, pos,
                       "%" G_GSIZE_FORMAT " bytes follow, from byte %" G_GSIZE_FORMAT ", the "
                       "%u questions and %u records the header counts",
                       p.wire_len - pos, pos, query->qdcount,
                       (guint) query->ancount + query->nscount + query->arcount);
  return query;
}

/* ---- TCP reassembly ---- */

struct _AirlockDnsTcpStream {
  gsize max_message;
  guint8 prefix[2];
  guint prefix_have;       /* 0, 1 or 2 bytes of the length prefix */
  gsize msg_len;           /* declared by the prefix */
  gsize body_seen;         /* body bytes consumed, kept or skipped */
  GByteArray *body;        /* kept body bytes: at most max_message */
  guint64 offset;          /* stream bytes consumed */
  guint64 msg_offset;      /* of the current message's length prefix */
  gboolean finished;
  char *stop_reason;       /* non-NULL once a gap stopped the stream */
  guint64 ignored;
};

AirlockDnsTcpStream *
airlock_dns_tcp_stream_new (gsize max_message)
{
  AirlockDnsTcpStream *stream;

  g_return_val_if_fail (max_message <= AIRLOCK_DNS_TCP_MESSAGE_MAX, NULL);

  stream = g_new0 (AirlockDnsTcpStream, 1);
  stream->max_message = max_message == 0 ? AIRLOCK_DNS_TCP_MESSAGE_MAX : max_message;
  stream->body = g_byte_array_new ();
  return stream;
}

void
airlock_dns_tcp_stream_free (AirlockDnsTcpStream *stream)
{
  if (stream == NULL)
    return;

  g_byte_array_unref (stream->body);
  g_free (stream->stop_reason);
  g_free (stream);
}

static GPtrArray *
query_array_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_dns_query_free);
}

/* Parses the kept bytes of the current message, which the workload sent
 * @sent bytes of, and starts the next message. */
static AirlockDnsQuery *
stream_take_message (AirlockDnsTcpStream *stream, gsize sent)
{
  AirlockDnsQuery *query = airlock_dns_parse_query (stream->body->data, stream->body->len, sent);

  query->stream_offset = stream->msg_offset;
  stream->prefix_have = 0;
  stream->msg_len = 0;
  stream->body_seen = 0;
  g_byte_array_set_size (stream->body, 0);
  return query;
}

/* The current message is complete. */
static AirlockDnsQuery *
stream_complete_message (AirlockDnsTcpStream *stream)
{
  gsize msg_len = stream->msg_len;
  guint64 msg_offset = stream->msg_offset;
  AirlockDnsQuery *query = stream_take_message (stream, msg_len);

  if (msg_len > stream->max_message)
    query_set_problem (query, AIRLOCK_DNS_OVERSIZE, 0,
                       "the message at stream byte %" G_GUINT64_FORMAT " declares %"
                       G_GSIZE_FORMAT " bytes, more than the %" G_GSIZE_FORMAT " kept; its "
                       "questions are those in the kept bytes",
                       msg_offset, msg_len, stream->max_message);
  return query;
}

GPtrArray *
airlock_dns_tcp_stream_feed (AirlockDnsTcpStream *stream, const guint8 *data, gsize len)
{
  GPtrArray *queries = query_array_new ();

  g_return_val_if_fail (stream != NULL, queries);
  g_return_val_if_fail (data != NULL || len == 0, queries);
  g_return_val_if_fail (!stream->finished, queries);

  if (stream->stop_reason != NULL)
    {
      stream->ignored += len;
      stream->offset += len;
      return queries;
    }

  while (len > 0)
    {
      gsize n, keep;

      if (stream->prefix_have < 2)
        {
          if (stream->prefix_have == 0)
            stream->msg_offset = stream->offset;
          stream->prefix[stream->prefix_have++] = *data;
          data++;
          len--;
          stream->offset++;
          if (stream->prefix_have == 2)
            {
              stream->msg_len = get_be16 (stream->prefix);
              if (stream->msg_len == 0)
                g_ptr_array_add (queries, stream_complete_message (stream));
            }
          continue;
        }

      /* Body bytes: keep what fits under the cap, count the rest. */
      n = MIN (len, stream->msg_len - stream->body_seen);
      keep = stream->body->len < stream->max_message
             ? MIN (n, stream->max_message - stream->body->len) : 0;
      if (keep > 0)
        g_byte_array_append (stream->body, data, (guint) keep);
      stream->body_seen += n;
      data += n;
      len -= n;
      stream->offset += n;
      if (stream->body_seen == stream->msg_len)
        g_ptr_array_add (queries, stream_complete_message (stream));
    }
  return queries;
}

GPtrArray *
airlock_dns_tcp_stream_feed_gap (AirlockDnsTcpStream *stream, gsize len)
{
  GPtrArray *queries = query_array_new ();
  guint64 gap_offset;

  g_return_val_if_fail (stream != NULL, queries);
  g_return_val_if_fail (!stream->finished, queries);

  gap_offset = stream->offset;
  stream->offset += len;
  if (stream->stop_reason != NULL)
    {
      stream->ignored += len;
      return queries;
    }
  if (len == 0)
    return queries;

  stream->ignored += len;
  stream->stop_reason = g_strdup_printf ("the supervisor did not copy %" G_GSIZE_FORMAT
                                         " bytes at stream byte %" G_GUINT64_FORMAT ": "
                                         "message boundaries after them are unknown",
                                         len, gap_offset);
  if (stream->prefix_have > 0)
    {
      guint64 msg_offset = stream->msg_offset;
      gsize msg_len = stream->msg_len;
      gboolean have_len = stream->prefix_have == 2;
      AirlockDnsQuery *query = stream_take_message (stream, have_len ? msg_len : 0);

      query_set_problem (query, AIRLOCK_DNS_CLIPPED, query->len,
                         "the supervisor did not copy %" G_GSIZE_FORMAT " bytes at stream "
                         "byte %" G_GUINT64_FORMAT ", inside the message whose length "
                         "prefix is at stream byte %" G_GUINT64_FORMAT,
                         len, gap_offset, msg_offset);
      g_ptr_array_add (queries, query);
    }
  return queries;
}

AirlockDnsQuery *
airlock_dns_tcp_stream_finish (AirlockDnsTcpStream *stream)
{
  AirlockDnsQuery *query;
  guint64 msg_offset;
  gsize msg_len, seen;

  g_return_val_if_fail (stream != NULL, NULL);
  g_return_val_if_fail (!stream->finished, NULL);

  stream->finished = TRUE;
  if (stream->stop_reason != NULL || stream->prefix_have == 0)
    return NULL;

  msg_offset = stream->msg_offset;
  if (stream->prefix_have == 1)
    {
      query = stream_take_message (stream, 0);
      query_set_problem (query, AIRLOCK_DNS_TRUNCATED, 0,
                         "the connection ended after 1 byte of the 2-byte length prefix at "
                         "stream byte %" G_GUINT64_FORMAT,
                         msg_offset);
      return query;
    }

  msg_len = stream->msg_len;
  seen = stream->body_seen;
  query = stream_take_message (stream, seen);
  query_set_problem (query, AIRLOCK_DNS_TRUNCATED, seen,
                     "the connection ended after %" G_GSIZE_FORMAT " of the %" G_GSIZE_FORMAT
                     " bytes the length prefix at stream byte %" G_GUINT64_FORMAT " declares",
                     seen, msg_len, msg_offset);
  return query;
}

gsize
airlock_dns_tcp_stream_get_buffered (AirlockDnsTcpStream *stream)
{
  g_return_val_if_fail (stream != NULL, 0);
  return stream->body->len;
}

guint64
airlock_dns_tcp_stream_get_ignored (AirlockDnsTcpStream *stream)
{
  g_return_val_if_fail (stream != NULL, 0);
  return stream->ignored;
}

const char *
airlock_dns_tcp_stream_get_stop_reason (AirlockDnsTcpStream *stream)
{
  g_return_val_if_fail (stream != NULL, NULL);
  return stream->stop_reason;
}
