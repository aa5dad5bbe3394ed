/* The sinkhole: the network airlock serves the guest (docs/sinkhole.md).
 *
 * The guest's one NIC is a QEMU `-netdev stream` socket whose far end is
 * `airlock-sinkhole` (sinkhole/), a process of airlock's in a network
 * namespace of its own that holds nothing but a loopback and one tap
 * device.  The process relays frames between QEMU and the tap (writing the
 * capture as it does), and the kernel's own TCP/IP stack in that namespace
 * answers them: nftables redirects every TCP connection and UDP datagram the
 * guest sends, to any address and port, IPv4 and IPv6, to the process's
 * listeners.  There is no route anywhere else, by construction.
 *
 * What the guest asked for comes back as records (one JSON object per line,
 * written by the process, read here): DNS questions and the answers handed
 * out, TCP connections with the first bytes each side sent and what the
 * client's bytes are (HTTP, TLS, SSH, raw), UDP datagrams and ICMP echoes.
 *
 * This header is the pure part, shared by the process and the library:
 * the stable name → address allocation, the DNS answerer, protocol
 * detection and the record format.  Every function here takes bytes the
 * guest wrote: bounded, never trusting a length.
 *
 * Public (in <airlock.h>): a run record and a bundle carry its records. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

#include <sys/socket.h>

G_BEGIN_DECLS

/* Bytes of each side of a TCP connection kept in its record. */
#define AIRLOCK_SINKHOLE_FIRST_BYTES_MAX 16384
/* Bytes of one UDP datagram kept in its record. */
#define AIRLOCK_SINKHOLE_DATAGRAM_BYTES_MAX 2048
/* Records one run may hold; past it the log says so (records_dropped). */
#define AIRLOCK_SINKHOLE_RECORDS_MAX 16384
/* Distinct names handed out in one run; past it a query gets REFUSED. */
#define AIRLOCK_SINKHOLE_NAMES_MAX 16384
/* Bytes of a record file the library reads (the process writes less). */
#define AIRLOCK_SINKHOLE_LOG_MAX (64u << 20)

/* The ranges names are handed out from: never a real destination.
 * 198.18.0.0/15 is for benchmarking (RFC 2544), 2001:db8::/32 for
 * documentation (RFC 3849). */
#define AIRLOCK_SINKHOLE_V4_PREFIX "198.18.0.0/15"
#define AIRLOCK_SINKHOLE_V6_PREFIX "2001:db8:a1::/64"

/* ---- names → addresses ------------------------------------------------ */

typedef struct _AirlockSinkholeNames AirlockSinkholeNames;

AIRLOCK_PUBLIC AirlockSinkholeNames *airlock_sinkhole_names_new (void);
AIRLOCK_PUBLIC void airlock_sinkhole_names_free (AirlockSinkholeNames *names);

/* The addresses handed out for @name (presentation form as
 * airlock_dns_parse_query() writes it, "example.com."; compared without
 * regard to ASCII case).  Stable: the same name gets the same addresses in
 * every run and on every arch (a hash of the lowercased name into the two
 * ranges above, probing on a collision, so only a collision within one run
 * moves an address).  198.18.0.0/24 and 2001:db8:a1::/112 are never handed
 * out (left for the sinkhole's own addresses), nor an IPv4 address ending
 * in .0 or .255.  FALSE when the table is full (NAMES_MAX). */
AIRLOCK_PUBLIC gboolean airlock_sinkhole_names_lookup (AirlockSinkholeNames *names, const char *name,
                                                       guint8 ret_v4[4], guint8 ret_v6[16]);

/* The name @address (4 or 16 bytes by @family) was handed out for in this
 * table, as it was first asked, or NULL.  Owned by @names. */
AIRLOCK_PUBLIC const char *airlock_sinkhole_names_reverse (AirlockSinkholeNames *names, int family,
                                                           const guint8 *address);

/* ---- DNS --------------------------------------------------------------- */

typedef struct {
  char *question;       /* presentation form, "example.com.", or NULL when none decoded */
  guint16 qtype;        /* 1 A, 28 AAAA, … */
  guint16 rcode;        /* 0 NOERROR, 1 FORMERR, 3 NXDOMAIN, 4 NOTIMP, 5 REFUSED */
  GPtrArray *answers;   /* char *: the addresses answered, as text; never NULL */
} AirlockSinkholeDnsExchange;

AIRLOCK_PUBLIC void airlock_sinkhole_dns_exchange_clear (AirlockSinkholeDnsExchange *exchange);

/* Answers one DNS message the guest sent (UDP payload, or one TCP message
 * without its length prefix).  A standard query with one question of class
 * IN: A and AAAA get the name's addresses (TTL 60), any other type an empty
 * NOERROR answer; a malformed or non-query message gets FORMERR or NOTIMP
 * when its header decoded, no answer when it did not.  The reply echoes the
 * ID, the question and RD.  Returns the reply (NULL: send nothing) and fills
 * @ret_exchange for the record. */
AIRLOCK_PUBLIC GBytes *airlock_sinkhole_dns_answer (AirlockSinkholeNames *names, const guint8 *query,
                                                    gsize len, AirlockSinkholeDnsExchange *ret_exchange);

/* ---- protocol detection ------------------------------------------------ */

typedef enum {
  AIRLOCK_SINKHOLE_PROTOCOL_NONE,   /* no client bytes */
  AIRLOCK_SINKHOLE_PROTOCOL_RAW,    /* bytes that are none of the below */
  AIRLOCK_SINKHOLE_PROTOCOL_HTTP,
  AIRLOCK_SINKHOLE_PROTOCOL_TLS,
  AIRLOCK_SINKHOLE_PROTOCOL_SSH,
  AIRLOCK_SINKHOLE_PROTOCOL_DNS,    /* DNS over TCP */
} AirlockSinkholeProtocol;

typedef struct {
  AirlockSinkholeProtocol protocol;
  /* HTTP/1.x request head: every string escaped like guest strings
   * (airlock_evidence_escape_bytes), NULL when absent. */
  char *http_method, *http_path, *http_version, *http_host, *http_user_agent;
  /* TLS ClientHello: SNI, ALPN protocol names in order (char *, never NULL
   * once TLS), and the highest version offered ("1.3" from
   * supported_versions, else the legacy_version: "1.2", "1.1", "1.0"). */
  char *tls_sni;
  GPtrArray *tls_alpn;
  char *tls_version;
  char *ssh_banner;     /* "SSH-2.0-OpenSSH_9.2p1 Debian-2", without CR LF */
  GPtrArray *dns_questions;  /* char *: names asked over TCP */
} AirlockSinkholeDetected;

AIRLOCK_PUBLIC void airlock_sinkhole_detected_clear (AirlockSinkholeDetected *detected);

typedef enum {
  AIRLOCK_SINKHOLE_DETECT_NEED_MORE,  /* could still be a known protocol: wait for more bytes */
  AIRLOCK_SINKHOLE_DETECT_DONE,       /* @ret_detected is final for these bytes */
} AirlockSinkholeDetectResult;

/* Detects what the first @len bytes a client sent are (@port is the
 * destination port, a hint only: detection is by content).  Call again
 * with more bytes while NEED_MORE; at the end of the bytes (the connection
 * went quiet, closed, or FIRST_BYTES_MAX was reached) call with @final TRUE,
 * which always returns DONE. */
AIRLOCK_PUBLIC AirlockSinkholeDetectResult airlock_sinkhole_detect (const guint8 *data, gsize len, guint16 port,
                                                                    gboolean final,
                                                                    AirlockSinkholeDetected *ret_detected);

AIRLOCK_PUBLIC const char *airlock_sinkhole_protocol_to_string (AirlockSinkholeProtocol protocol);

/* ---- records ----------------------------------------------------------- */

#define AIRLOCK_SINKHOLE_ERROR (airlock_sinkhole_error_quark ())
AIRLOCK_PUBLIC GQuark airlock_sinkhole_error_quark (void);

typedef enum {
  AIRLOCK_SINKHOLE_ERROR_INVALID,   /* a line that is not a record (the message says why) */
  AIRLOCK_SINKHOLE_ERROR_TOO_LARGE, /* more bytes than LOG_MAX, more records than RECORDS_MAX */
} AirlockSinkholeError;

typedef enum {
  AIRLOCK_SINKHOLE_RECORD_DNS,
  AIRLOCK_SINKHOLE_RECORD_TCP,
  AIRLOCK_SINKHOLE_RECORD_UDP,
  AIRLOCK_SINKHOLE_RECORD_ICMP,
} AirlockSinkholeRecordKind;

typedef struct {
  AirlockSinkholeRecordKind kind;
  gint64 time_us;         /* since the sinkhole started */
  gint64 end_us;          /* TCP: when it closed (or the run ended); else = time_us */
  int family;             /* AF_INET, AF_INET6 */
  guint8 address[16];     /* the destination the guest sent to (IPv4 in the first 4 bytes) */
  char *address_text;     /* "198.18.3.7", "2001:db8:a1::37" */
  guint16 port;           /* destination port (0 for ICMP) */
  guint16 client_port;    /* the guest's source port (0 for ICMP) */
  /* The name this address was handed out for by the sinkhole's DNS, or
   * NULL. */
  char *name;

  /* DNS (transport "udp" or "tcp"; a query over TCP is also a TCP record) */
  char *dns_transport;
  AirlockSinkholeDnsExchange dns;

  /* TCP */
  AirlockSinkholeDetected detected;
  GBytes *client_bytes;   /* the first bytes the guest sent (≤ FIRST_BYTES_MAX), never NULL */
  GBytes *server_bytes;   /* the first bytes the sinkhole sent, never NULL */
  guint64 bytes_in;       /* all bytes from the guest */
  guint64 bytes_out;      /* all bytes to the guest */
  char *response;         /* "closed", or "fixture NAME:PORT" (what answered) */

  /* UDP: the datagram (≤ DATAGRAM_BYTES_MAX kept, bytes_in counts all);
   * ICMP: an echo request (answered). */
} AirlockSinkholeRecord;

AIRLOCK_PUBLIC void airlock_sinkhole_record_free (AirlockSinkholeRecord *record);

/* One JSON object, no newline (members as in docs/sinkhole.md; bytes as
 * base64).  Transfer full. */
AIRLOCK_PUBLIC char *airlock_sinkhole_record_to_json (const AirlockSinkholeRecord *record);

/* The process's final line, {"end":true,"records_dropped":N}, no newline.
 * Transfer full. */
AIRLOCK_PUBLIC char *airlock_sinkhole_end_line_to_json (guint64 records_dropped, guint64 frames_refused,
                                                        const char *first_refused);

typedef struct {
  GPtrArray *records;      /* AirlockSinkholeRecord *, in the order written */
  guint64 records_dropped; /* past RECORDS_MAX, from the process's last line */
  /* Frames from the guest the process refused (not passed on, not in the
   * capture): a source MAC that is not the guest's NIC's, which only a
   * workload forging frames sends.  The first one's description. */
  guint64 frames_refused;
  char *first_refused;
  gboolean complete;       /* the process wrote its final line ("end") */
  char *incomplete_reason; /* why not, or NULL */
  /* Private: address (family byte + address bytes, GBytes) → name (borrowed
   * from a record), built by airlock_sinkhole_log_new_from_bytes() for
   * airlock_sinkhole_log_name_for_address(); NULL in a log made otherwise,
   * which is then searched record by record. */
  GHashTable *names_by_address;
} AirlockSinkholeLog;

/* Reads a record file the process wrote (JSON lines, the last {"end":…}).
 * A line that does not parse fails the whole read (the file is the
 * process's, not the guest's: damage means tampering or a bug), with
 * AIRLOCK_SINKHOLE_ERROR naming the line and the reason; so does a file
 * over LOG_MAX bytes or RECORDS_MAX records.  A file without its final
 * line reads as the records it holds, complete FALSE: also when its last
 * line has no newline and does not parse (the process died writing it).
 * Transfer full. */
AIRLOCK_PUBLIC AirlockSinkholeLog *airlock_sinkhole_log_new_from_bytes (GBytes *bytes, GError **error);
AIRLOCK_PUBLIC void airlock_sinkhole_log_free (AirlockSinkholeLog *log);

/* The name the sinkhole's DNS handed @address out for in this run, or NULL. */
AIRLOCK_PUBLIC const char *airlock_sinkhole_log_name_for_address (const AirlockSinkholeLog *log, int family,
                                                                  const guint8 *address);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockSinkholeNames, airlock_sinkhole_names_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockSinkholeLog, airlock_sinkhole_log_free)

/* An HTTP Host names a host and maybe a port ("pypi.org:8080"): the host,
 * which is what the verdict and a suggested policy compare.  A bracketed
 * IPv6 literal, or a "port" that is not all digits, is kept whole.
 * Transfer full. */
AIRLOCK_PUBLIC char *airlock_sinkhole_host_without_port (const char *host);

G_END_DECLS
