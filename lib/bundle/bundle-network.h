/* The sinkhole's records in a bundle (network.jsonl, docs/bundle.md): what
 * people read of them — summary.md, `airlock show`, the `airlock run`
 * report, all from one AirlockNetworkReport so they say the same — what
 * `airlock verify` holds them against (the capture, net.pcap), and what
 * `airlock replay` compares.
 *
 * The record file is the sinkhole process's, byte for byte as it wrote it:
 * the bundle neither rewrites nor re-serialises it, so its digest is the
 * file's and a reader made later reads exactly what the run read.
 *
 * Public (in <airlock.h>): `airlock show` and `verify` print it. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

#include "../net/flows.h"
#include "../sinkhole/sinkhole.h"

G_BEGIN_DECLS

#define AIRLOCK_BUNDLE_NETWORK_FILE "network.jsonl"

/* One connection, datagram or echo request the sinkhole took in (a tcp,
 * udp or icmp record).  Every string is safe to print (no control or
 * disguising characters, valid UTF-8): the writer's escaping is kept, and
 * a file edited by someone else is escaped here. */
typedef struct {
  guint line;             /* its line in network.jsonl, from 1 */
  AirlockSinkholeRecordKind kind;
  char *key;              /* "inet/stream/tcp 198.18.243.18:80": the capture's flow key */
  /* The name the sinkhole's DNS handed the address out for, without the
   * final dot ("example.com"), or NULL. */
  char *name;
  char *address;          /* "198.18.243.18", "2001:db8:a1::7" */
  guint16 port;           /* 0 for icmp */
  /* tcp: what the client's first bytes are ("http", "tls", "ssh", "dns",
   * "raw", "none"); "udp"; "icmp". */
  const char *protocol;
  /* What those bytes said: "GET / Host: example.com User-Agent: curl/8",
   * "SNI example.com ALPN h2,http/1.1 TLS 1.3", the SSH banner, the names
   * asked over TCP, the first raw bytes; NULL when nothing. */
  char *detail;
  guint64 bytes_in, bytes_out;
  char *response;         /* "closed", "fixture NAME:PORT", or NULL */
  gint64 time_us, end_us;
  gboolean control;       /* to a negative control's destination */
} AirlockNetworkConnection;

/* One DNS query the sinkhole answered (a dns record). */
typedef struct {
  guint line;
  char *question;         /* "example.com.", or NULL when none decoded */
  char *qtype;            /* "A", "AAAA", "MX", "TYPE99"; NULL without a question */
  /* The addresses answered ("198.18.243.18"); else what the answer was:
   * "no address" (NOERROR, a type other than A/AAAA), "FORMERR", "NOTIMP",
   * "NXDOMAIN", "REFUSED", "rcode N". */
  char *answer;
  const char *transport;  /* "udp", "tcp" */
  char *server;           /* the address the query was sent to, "10.0.2.3" */
  guint16 port;
  gint64 time_us;
  gboolean control;       /* to a negative control's destination */
} AirlockNetworkLookup;

typedef struct {
  GPtrArray *lookups;       /* AirlockNetworkLookup *, in file order */
  GPtrArray *connections;   /* AirlockNetworkConnection *, in file order */
  guint n_controls;         /* of both, those to a negative control's destination */
  /* From the process's final line, or why there is none (safe). */
  gboolean complete;
  char *incomplete_reason;
  guint64 records_dropped, frames_refused;
  char *first_refused;
} AirlockNetworkReport;

/* The report of @log.  @control_keys (char *, flow keys of the negative
 * controls' destinations, or NULL) marks what was the controls' rather
 * than the workload's.  Never NULL; transfer full. */
AIRLOCK_PUBLIC AirlockNetworkReport *airlock_network_report_new (const AirlockSinkholeLog *log,
                                                                 GPtrArray *control_keys);
AIRLOCK_PUBLIC void airlock_network_report_free (AirlockNetworkReport *report);

/* The connection's name, else its address: what a column or a replay key
 * shows for where it went.  Borrowed. */
AIRLOCK_PUBLIC const char *airlock_network_connection_destination (const AirlockNetworkConnection *c);

/* What of @log the capture contradicts, re-derived from the raw frames
 * (lib/net/flows.h): each tcp, udp, icmp and dns record must be traffic
 * the capture holds (records to a destination at most its SYNs, datagrams
 * or echo requests, a DNS question among the names the capture decoded
 * for that flow), and every connection the capture shows the network took
 * (AirlockFlow.taken) must have its record.  Returns one message per
 * contradiction (char *, naming the record by its line, or the capture's
 * flow); empty when they agree, and when the capture's analysis reached a
 * cap (a LIMIT anomaly: what it lacks proves nothing).  The second
 * direction only when @log is whole (its final line, nothing dropped).
 * Transfer full. */
AIRLOCK_PUBLIC GPtrArray *airlock_network_check_capture (const AirlockSinkholeLog *log, AirlockCapture *capture);

/* What `airlock replay` compares of a run's network, one string per record
 * (its multiset): "dns udp example.com. A", "tcp example.com:443 tls",
 * "udp 198.51.100.7:9999", "icmp example.com" — names and destinations,
 * not times, ports of the guest or bytes.  Transfer full (char *). */
AIRLOCK_PUBLIC GPtrArray *airlock_network_replay_keys (const AirlockNetworkReport *report);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockNetworkReport, airlock_network_report_free)

G_END_DECLS
