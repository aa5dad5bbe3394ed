/* Internals of the capture analysis: one frame decoded into its layers
 * (decode.c) and the first-payload parsers for TLS and HTTP (payload.c).
 * Pure functions over bytes the guest wrote; capture.c and its parts turn their results
 * into flows, and the sinkhole's protocol detection (sinkhole/detect.c)
 * into what a connection's client said. */
#pragma once

#include "flows.h"

G_BEGIN_DECLS

#define NET_ETHERTYPE_IPV4 0x0800
#define NET_ETHERTYPE_ARP 0x0806
#define NET_ETHERTYPE_VLAN 0x8100
#define NET_ETHERTYPE_QINQ 0x88a8
#define NET_ETHERTYPE_IPV6 0x86dd

#define NET_TCP_FIN 0x01
#define NET_TCP_SYN 0x02
#define NET_TCP_RST 0x04
#define NET_TCP_ACK 0x10

typedef struct {
  guint8 dst_mac[6];
  guint8 src_mac[6];
  gboolean vlan;            /* one 802.1Q tag was removed */
  guint16 ethertype;        /* after the tag */

  /* an Ethernet/IPv4 ARP packet: its operation and the sender's and
   * target's hardware and protocol addresses */
  gboolean arp;
  guint16 arp_op;
  guint8 arp_sha[6];
  guint8 arp_spa[4];
  guint8 arp_tha[6];
  guint8 arp_tpa[4];

  /* IP: family 0 when the frame is not IP or its header did not decode */
  int family;
  guint8 src[16];
  /* The destination the guest meant: the IPv6 header's, or the final one
   * a routing header with segments left names. */
  guint8 dst[16];
  int protocol;             /* -1 when the extension chain did not end */
  gboolean ip_options;      /* IPv4 options or IPv6 extension headers */
  gboolean fragment;        /* one piece of a fragmented datagram */
  gboolean later_fragment;  /* … not the first one: no transport header */
  guint32 fragment_id;

  /* transport: have_transport when its header decoded */
  gboolean have_transport;
  guint16 src_port;
  guint16 dst_port;
  guint32 tcp_seq;
  guint8 tcp_flags;
  guint8 icmp_type;
  guint8 icmp_code;
  guint32 icmp_rest;        /* the 4 bytes after type, code and checksum */
  const guint8 *icmp_body;  /* after type, code, checksum, and the 4 bytes that follow */
  gsize icmp_body_len;
  const guint8 *payload;    /* TCP / UDP payload as captured */
  gsize payload_len;
  gsize payload_wire_len;   /* … as sent (>= payload_len when clipped) */

  /* The first problem: problem_set, its kind and a sentence. */
  gboolean problem_set;
  AirlockCaptureAnomalyKind problem;
  char reason[160];
} NetPacket;

/* Decodes one Ethernet frame: @caplen bytes captured of @origlen sent.
 * Never fails: a layer that does not decode sets the packet's problem and
 * stops there, with the layers before it filled. */
void net_decode_frame (const guint8 *frame, gsize caplen, gsize origlen, NetPacket *pkt);

typedef enum {
  NET_PAYLOAD_NEED_MORE,  /* could still be one: give more bytes */
  NET_PAYLOAD_NONE,       /* is not one, or carries no name */
  NET_PAYLOAD_FOUND,
} NetPayloadResult;

/* What a TLS ClientHello offers.  Strings escaped
 * (airlock_evidence_escape_bytes). */
typedef struct {
  char *sni;                /* the first host_name of server_name, or NULL */
  GPtrArray *alpn;          /* char *: the ALPN protocol names in order; NULL
                             * without the extension */
  /* As sent: 0x0303 for TLS 1.2 and 1.3 alike (RFC 8446 §4.1.2), … */
  guint16 legacy_version;
  /* … since 1.3 is offered in supported_versions: the highest there,
   * GREASE aside; 0 without the extension. */
  guint16 highest_supported_version;
  gboolean malformed;       /* the body stopped parsing: what follows is missing */
} NetTlsClientHello;

void net_tls_client_hello_clear (NetTlsClientHello *hello);

/* The TLS ClientHello at the start of @data (handshake records, the
 * handshake message possibly spread over several): NEED_MORE while the
 * bytes may still become one, NONE when they are none, FOUND once the
 * whole message is present, with @ret_hello filled as far as its body
 * parses (always initialized; clear it whatever the result). */
NetPayloadResult net_tls_client_hello_parse (const guint8 *data, gsize len,
                                             NetTlsClientHello *ret_hello);

/* The server_name (host_name, type 0) of a TLS ClientHello at the start of
 * @data (as above).  FOUND sets *@ret_name (escaped; transfer full); a
 * whole ClientHello without one is NONE. */
NetPayloadResult net_tls_client_hello_sni (const guint8 *data, gsize len, char **ret_name);

/* An HTTP/1.x request head.  Strings escaped, surrounding blanks removed
 * from header values. */
typedef struct {
  char *method;             /* one of the methods payload.c knows */
  char *path;               /* the request target, or NULL */
  char *version;            /* what follows the target ("HTTP/1.1"), or NULL */
  char *host;               /* the first Host header, or NULL */
  char *user_agent;         /* the first User-Agent header, or NULL */
} NetHttpRequest;

void net_http_request_clear (NetHttpRequest *request);

/* The HTTP/1.x request head at the start of @data (a method, a space, …;
 * lines end in CRLF or LF, header names compared without regard to ASCII
 * case): NONE when it does not start like one, NEED_MORE until the empty
 * line that ends it, FOUND then.  @ret_request is always initialized and
 * holds what the complete lines so far say (the method as soon as it is
 * known); clear it whatever the result. */
NetPayloadResult net_http_request_head (const guint8 *data, gsize len,
                                        NetHttpRequest *ret_request);

/* The Host header of an HTTP/1.x request at the start of @data (a method,
 * a space, …).  FOUND sets *@ret_host (escaped, surrounding blanks
 * removed; transfer full) as soon as its line is whole; a head that ends
 * without one is NONE. */
NetPayloadResult net_http_request_host (const guint8 *data, gsize len, char **ret_host);

G_END_DECLS
