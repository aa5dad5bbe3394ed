/* DNS queries the workload sent, decoded on the host from the raw bytes the
 * supervisor copied (UDP datagrams to port 53, and the byte stream of TCP
 * connections to port 53).
 *
 * A hostile workload writes these bytes.  Parsing never fails: a message
 * that is not well-formed DNS is still a record (the workload tried to send
 * it), so the result carries the questions decoded before the first
 * problem plus that problem and where it is.  Every name is made printable
 * the way dig(1) prints it.  Nothing here trusts a count or a length: reads
 * are checked against the bytes present, compression pointers must move
 * strictly backwards, and names and messages are bounded.
 *
 * Public (in <airlock.h>): an event carries its DNS questions. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

G_BEGIN_DECLS

#define AIRLOCK_DNS_HEADER_SIZE 12
/* RFC 1035 §2.3.4: a name is at most 255 octets in wire form (uncompressed,
 * length bytes and the root label included); a label at most 63. */
#define AIRLOCK_DNS_NAME_MAX 255
#define AIRLOCK_DNS_LABEL_MAX 63
/* A TCP message is a 2-byte big-endian length and that many bytes
 * (RFC 1035 §4.2.2). */
#define AIRLOCK_DNS_TCP_MESSAGE_MAX 65535

/* The first problem found; every value but WELL_FORMED means malformed. */
typedef enum {
  AIRLOCK_DNS_WELL_FORMED = 0,
  AIRLOCK_DNS_TRUNCATED,             /* ends inside the header, a name, a question or a
                                      * record: a count (QDCOUNT, …) larger than the
                                      * message, or a TCP connection ending mid-message */
  AIRLOCK_DNS_CLIPPED,               /* the parse needed bytes the supervisor did not copy */
  AIRLOCK_DNS_POINTER_OUT_OF_BOUNDS, /* a compression pointer past the end, or into the header */
  AIRLOCK_DNS_POINTER_FORWARD,       /* a pointer to itself or to a later offset */
  AIRLOCK_DNS_POINTER_LOOP,          /* a pointer that does not move before the previous
                                      * target: a loop (no encoder writes one otherwise) */
  AIRLOCK_DNS_RESERVED_LABEL_TYPE,   /* length byte 0x40–0xbf: label types 01 and 10 are
                                      * reserved, and a label longer than 63 octets can
                                      * only be written as one of them */
  AIRLOCK_DNS_NAME_TOO_LONG,         /* more than 255 octets */
  AIRLOCK_DNS_TRAILING_BYTES,        /* bytes after the records the counts describe (a
                                      * QDCOUNT, …, smaller than the message) */
  AIRLOCK_DNS_OVERSIZE,              /* TCP: longer than the stream's message cap */
} AirlockDnsProblem;

typedef struct {
  /* Presentation form, absolute ("example.com.", "." for the root), as dig
   * writes it: bytes outside 0x21–0x7e as \DDD (decimal), and . " ( ) ; @ $
   * and \ inside a label behind a backslash.  Printable ASCII only. */
  char *name;
  guint16 qtype;
  guint16 qclass;
  gsize offset;       /* of the question in the message */
  /* FALSE when the message's problem cut this question short: @name holds
   * the labels read before it (possibly none), qtype/qclass may be 0. */
  gboolean complete;
} AirlockDnsQuestion;

typedef struct {
  gboolean have_header; /* the 12-byte header was present */
  guint16 id;
  guint16 flags;        /* QR, opcode, AA, TC, RD, RA, Z, rcode as sent */
  guint16 qdcount;
  guint16 ancount;
  guint16 nscount;
  guint16 arcount;
  GPtrArray *questions; /* AirlockDnsQuestion *, in message order */
  AirlockDnsProblem problem;
  char *reason;         /* a sentence naming the problem and its byte offset;
                         * NULL when WELL_FORMED */
  gsize problem_offset; /* byte in the message where the problem is */
  gsize len;            /* bytes parsed (what the supervisor copied) */
  gsize wire_len;       /* bytes the workload sent */
  guint64 stream_offset; /* TCP: offset of the length prefix in the stream */
} AirlockDnsQuery;

/* Parses the DNS message the workload sent: @wire_len bytes, of which the
 * supervisor copied the first @len (@wire_len < @len is taken as @len).
 * When the parse needs a byte past @len but within @wire_len, the problem
 * is CLIPPED rather than TRUNCATED: the workload did not send a short
 * message, the record is just incomplete.
 *
 * Questions come first: each QDCOUNT question is decoded.  Answer,
 * authority and additional records (an EDNS OPT record is common in a
 * query) are walked only to check that the counts describe the message
 * exactly.  Never returns NULL.  Transfer full. */
AIRLOCK_PUBLIC AirlockDnsQuery *airlock_dns_parse_query (const guint8 *msg, gsize len, gsize wire_len);
AIRLOCK_PUBLIC void airlock_dns_query_free (AirlockDnsQuery *query);

/* "truncated", "pointer-loop", …: stable short names. */
AIRLOCK_PUBLIC const char *airlock_dns_problem_to_string (AirlockDnsProblem problem);

/* Reassembles the DNS messages of one TCP connection to port 53 from the
 * successive payloads the workload wrote (several messages per write, a
 * message or its length prefix split across writes).  Memory is bounded:
 * at most @max_message bytes of a message are kept; the rest of a longer
 * message is counted and skipped, so framing survives and the message is
 * reported OVERSIZE with the questions its kept bytes hold. */
typedef struct _AirlockDnsTcpStream AirlockDnsTcpStream;

/* @max_message: 0 for AIRLOCK_DNS_TCP_MESSAGE_MAX (every message the
 * framing can express); otherwise at most that. */
AIRLOCK_PUBLIC AirlockDnsTcpStream *airlock_dns_tcp_stream_new (gsize max_message);
AIRLOCK_PUBLIC void airlock_dns_tcp_stream_free (AirlockDnsTcpStream *stream);

/* Feeds the next @len bytes written to the connection.  Returns the
 * messages they completed, parsed (element type AirlockDnsQuery *, possibly
 * none).  Transfer full. */
AIRLOCK_PUBLIC GPtrArray *airlock_dns_tcp_stream_feed (AirlockDnsTcpStream *stream, const guint8 *data,
                                                       gsize len);
/* The supervisor did not copy the next @len bytes of the connection.
 * Framing cannot be trusted after a gap, so the stream stops: the message
 * under way (if any) is returned CLIPPED and later bytes are counted, not
 * parsed.  Returns like feed(). */
AIRLOCK_PUBLIC GPtrArray *airlock_dns_tcp_stream_feed_gap (AirlockDnsTcpStream *stream, gsize len);
/* The connection ended.  Returns the message it ended in the middle of
 * (TRUNCATED, with the questions its bytes hold), or NULL when it ended on a
 * message boundary or the stream had stopped.  Feeding afterwards is a
 * programmer error.  Transfer full. */
AIRLOCK_PUBLIC AirlockDnsQuery *airlock_dns_tcp_stream_finish (AirlockDnsTcpStream *stream);

/* Bytes of the current message held right now (for tests: never more than
 * the cap). */
AIRLOCK_PUBLIC gsize airlock_dns_tcp_stream_get_buffered (AirlockDnsTcpStream *stream);
/* Bytes fed (and gaps) after the stream stopped. */
AIRLOCK_PUBLIC guint64 airlock_dns_tcp_stream_get_ignored (AirlockDnsTcpStream *stream);
/* Why the stream stopped (a gap), or NULL while it is parsing. */
AIRLOCK_PUBLIC const char *airlock_dns_tcp_stream_get_stop_reason (AirlockDnsTcpStream *stream);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockDnsQuery, airlock_dns_query_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockDnsTcpStream, airlock_dns_tcp_stream_free)

G_END_DECLS
