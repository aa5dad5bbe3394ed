/* Socket addresses as the traced process passed them, decoded on the host.
 *
 * The guest supervisor copies the sockaddr bytes out of the workload's
 * memory and sends them unchanged; every interpretation happens here, in
 * pure functions over (bytes, length) that a hostile workload fully
 * controls.  Nothing here trusts the length or the family field: each
 * decoder reads exactly the bytes Linux would read for that call, and
 * refuses exactly what Linux refuses, citing the kernel function that
 * decides (paths are relative to a Linux 6.1 source tree; the rules quoted
 * are unchanged in mainline).
 *
 * Byte order: sa_family, sin6_scope_id, the netlink, packet (except
 * sll_protocol) and vsock fields are native-endian in the kernel ABI.  Both
 * guest architectures (x86_64, aarch64 Linux) are little-endian, so these
 * are read as little-endian; ports, IPv6 flow info and sll_protocol are
 * big-endian (network order) on the wire and in the struct.  A big-endian
 * guest would need a flag here.
 *
 * Public (in <airlock.h>): an event carries its decoded addresses. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

#include <sys/socket.h>

G_BEGIN_DECLS

/* sizeof (struct sockaddr_storage): the most any call copies in
 * (net/socket.c move_addr_to_kernel). */
#define AIRLOCK_SOCKADDR_MAX 128
/* sizeof (((struct sockaddr_un *) 0)->sun_path) */
#define AIRLOCK_SOCKADDR_UNIX_PATH_MAX 108
/* struct sockaddr_ll's address bytes: sll_halen may exceed the 8 declared
 * ones as long as the address length covers them (net/packet/af_packet.c
 * packet_snd), so the bound is what fits in a sockaddr_storage. */
#define AIRLOCK_SOCKADDR_PACKET_ADDR_MAX (AIRLOCK_SOCKADDR_MAX - 12)

#define AIRLOCK_SOCKADDR_ERROR (airlock_sockaddr_error_quark ())
AIRLOCK_PUBLIC GQuark airlock_sockaddr_error_quark (void);

/* Why the kernel would refuse the address.  The message names the errno the
 * system call returns (EINVAL, EAFNOSUPPORT, EOPNOTSUPP, EISCONN). */
typedef enum {
  AIRLOCK_SOCKADDR_ERROR_TOO_LONG,      /* longer than the call accepts */
  AIRLOCK_SOCKADDR_ERROR_TOO_SHORT,     /* shorter than the family needs */
  AIRLOCK_SOCKADDR_ERROR_FAMILY,        /* a family this socket does not take */
  AIRLOCK_SOCKADDR_ERROR_INVALID,       /* a field the kernel checks and refuses */
  AIRLOCK_SOCKADDR_ERROR_NOT_SUPPORTED, /* this socket takes no address in this call */
} AirlockSockaddrError;

/* The call the address was passed to.  Calls differ in how they bound the
 * length (sendmsg clamps, the others refuse) and in what some families do
 * with it (UDP sendto takes AF_UNSPEC as AF_INET, connect takes it as
 * "disconnect"). */
typedef enum {
  AIRLOCK_SOCKADDR_CALL_CONNECT,  /* connect(2); also a send with MSG_FASTOPEN on TCP */
  AIRLOCK_SOCKADDR_CALL_BIND,     /* bind(2) */
  AIRLOCK_SOCKADDR_CALL_SENDTO,   /* sendto(2) with a non-NULL address */
  AIRLOCK_SOCKADDR_CALL_SENDMSG,  /* sendmsg(2), sendmmsg(2): msg_name, msg_namelen */
} AirlockSockaddrCall;

/* What the kernel does with the bytes. */
typedef enum {
  AIRLOCK_SOCKADDR_ADDRESS,     /* a destination (or local address for bind) */
  AIRLOCK_SOCKADDR_DISCONNECT,  /* connect() with AF_UNSPEC: dissolve the association */
  AIRLOCK_SOCKADDR_NO_ADDRESS,  /* the bytes are ignored: the send goes to the
                                 * connected peer (or fails without one) */
} AirlockSockaddrEffect;

typedef struct {
  AirlockSockaddrEffect effect;
  /* The family the kernel reads the bytes as: AF_INET for an AF_UNSPEC
   * sockaddr_in that UDP sendto() accepts, AF_PACKET for any sockaddr a
   * packet socket sends to, the family field itself otherwise (including
   * families this file does not know: then only .bytes is meaningful). */
  guint16 family;
  guint16 family_field;         /* sa_family exactly as written */
  gsize len;                    /* address bytes the kernel took, after clamping */
  guint8 bytes[AIRLOCK_SOCKADDR_MAX]; /* those bytes, as given; zero beyond len */
  union {
    struct {
      gboolean is_v4;           /* sockaddr_in (or AF_UNSPEC read as one) */
      guint8 addr[16];          /* IPv4 in the first 4 bytes; IPv6 all 16 */
      guint16 port;             /* host order; for raw sockets the protocol */
      guint32 flowinfo;         /* IPv6: sin6_flowinfo, host order */
      gboolean has_scope_id;    /* IPv6: the address was at least 28 bytes */
      guint32 scope_id;         /* IPv6: sin6_scope_id (0 without one) */
      gboolean v4_mapped;       /* IPv6 ::ffff:a.b.c.d: goes out as IPv4 */
      guint8 v4[4];             /* the IPv4 address: is_v4, or embedded when v4_mapped */
    } inet;
    struct {
      /* Filesystem name: the bytes before the first NUL (the kernel stops
       * there, net/unix/af_unix.c unix_mkname_bsd).  Abstract name: every
       * byte after the leading NUL up to the address length, embedded and
       * trailing NULs included (the kernel compares all of them,
       * unix_find_abstract). */
      guint8 path[AIRLOCK_SOCKADDR_UNIX_PATH_MAX];
      gsize path_len;
      gboolean abstract;
      gboolean unnamed;         /* only sun_family: bind() autobinds */
      gboolean unterminated;    /* filesystem name with no NUL before the end */
    } un;
    struct {
      guint32 pid;
      guint32 groups;
    } nl;
    struct {
      guint16 protocol;         /* host order (sll_protocol is big-endian) */
      gint32 ifindex;
      guint16 hatype;
      guint8 pkttype;
      guint8 halen;
      guint8 addr[AIRLOCK_SOCKADDR_PACKET_ADDR_MAX];  /* halen bytes */
    } ll;
    struct {
      guint32 cid;
      guint32 port;
      guint8 flags;
    } vm;
  };
} AirlockSockaddr;

/* Decodes @len bytes as an address of the family its own sa_family names,
 * as connect(2) on a socket of that family reads it: more than 128 bytes,
 * fewer than the 2 of sa_family, or fewer than the family needs is an error;
 * AF_UNSPEC is DISCONNECT; a family this file does not know decodes to its
 * raw bytes.  One exception, so every address a process can name is
 * decodable: a lone AF_UNIX family (2 bytes) is the unnamed address
 * (bind() autobinds; connect() refuses it, see decode_for_socket()).
 *
 * Use airlock_sockaddr_decode_for_socket() when the socket and call are
 * known: the socket, not the bytes, decides how they are read.
 *
 * AF_PACKET, which cannot connect, is read as sendto(2) reads it.
 *
 * @len is the address length the process passed (addrlen, msg_namelen),
 * converted without sign extension: a negative int is then above 128 and
 * refused, as the kernel refuses it.  @bytes must hold MIN (@len, 128)
 * bytes; nothing past them is read.
 *
 * Returns TRUE and fills @ret, or FALSE with @error set
 * (AIRLOCK_SOCKADDR_ERROR) and @ret untouched.  @bytes may be NULL when
 * @len is 0. */
AIRLOCK_PUBLIC gboolean airlock_sockaddr_decode (const guint8 *bytes, gsize len, AirlockSockaddr *ret,
                                                 GError **error);

/* Decodes @len bytes passed to @call on a socket of (@sock_family,
 * @sock_type, @sock_protocol), following what that socket's kernel code
 * accepts.  Notably:
 *   - sendmsg clamps msg_namelen to 128 and treats 0 as "no address";
 *     connect, bind and sendto refuse more than 128 (net/socket.c);
 *   - a UDP or raw IPv4 socket sends to an AF_UNSPEC sockaddr_in as if it
 *     were AF_INET (udp_sendmsg, raw_sendmsg), a raw IPv6 socket likewise
 *     (rawv6_sendmsg): the result is then an inet address whose
 *     family_field is 0;
 *   - a UDP IPv6 socket connects and sends to an AF_INET sockaddr_in (dual
 *     stack), and to a v4-mapped IPv6 address over IPv4;
 *   - the address of a send on a TCP socket is ignored (NO_ADDRESS) unless
 *     the send carries MSG_FASTOPEN: decode those with CALL_CONNECT;
 *   - a packet socket reads any sockaddr as sockaddr_ll (packet_snd checks
 *     no family).
 * State the decoder cannot see (IPV6_V6ONLY, whether the socket is
 * connected, routing, privileges) can still make the call fail: a
 * successful decode says which address the kernel would use, not that the
 * call succeeds.  Sockets this file has no rules for (SCTP, DCCP, other
 * families) fall back to airlock_sockaddr_decode().  @sock_type may carry
 * SOCK_NONBLOCK / SOCK_CLOEXEC.
 *
 * Returns like airlock_sockaddr_decode(). */
AIRLOCK_PUBLIC gboolean airlock_sockaddr_decode_for_socket (int sock_family, int sock_type, int sock_protocol,
                                                            AirlockSockaddrCall call, const guint8 *bytes,
                                                            gsize len, AirlockSockaddr *ret, GError **error);

/* A one-line description for people: "192.0.2.1:80", "[2001:db8::1%2]:443",
 * "[::ffff:192.0.2.1]:53 (v4-mapped 192.0.2.1)", "unix:/run/x",
 * "unix:@name", "netlink:pid=0,groups=0x0", "vsock:2:1024", … Bytes of
 * names are escaped like every guest string (airlock_evidence_escape_bytes):
 * valid UTF-8, no control characters, unambiguous.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_sockaddr_to_string (const AirlockSockaddr *sa);

/* The attempt key: a canonical string for (socket family, type, protocol,
 * address, port), e.g. "inet/stream/tcp 192.0.2.1:9" and
 * "inet/dgram/udp 192.0.2.1:9".  Equal keys mean the same kind of attempt
 * at the same destination; nothing that tells two destinations apart is
 * left out (IPv6 scope ids, abstract-name NULs, v4-mapped vs plain IPv4
 * stay distinct).  Canonical: SOCK_NONBLOCK / SOCK_CLOEXEC are masked off,
 * protocol 0 on an inet stream / datagram socket is written as the protocol
 * the kernel picks (tcp / udp), a unix SOCK_RAW socket as the SOCK_DGRAM it
 * becomes.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_attempt_key (int family, int type, int protocol, const AirlockSockaddr *sa);

/* The socket part of an attempt key, "inet/stream/tcp", canonical exactly
 * as airlock_attempt_key() writes it (flags masked, default protocols
 * named).  Transfer full. */
AIRLOCK_PUBLIC char *airlock_socket_triple_to_string (int family, int type, int protocol);

/* "inet6", "unix", …; "family-N" for others.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_socket_family_to_string (int family);

/* The transport an inet socket of @type and @protocol speaks: "tcp",
 * "udp", "icmp", "icmpv6" (protocol 0 on a stream or datagram socket is
 * TCP or UDP), NULL for anything else (static). */
AIRLOCK_PUBLIC const char *airlock_inet_protocol_name (int protocol, int type);

/* The address of an inet sockaddr alone, as a packet carries it:
 * "192.0.2.1", "2001:db8::1" (no brackets, port or scope id); NULL for any
 * other family.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_sockaddr_inet_address (const AirlockSockaddr *sa);

G_END_DECLS
