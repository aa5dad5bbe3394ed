/* Internals of the capture analysis: one frame decoded into its layers
 * (decode.c) and the first-payload parsers for TLS and HTTP (payload.c).
 * Pure functions over bytes the guest wrote; flows.c turns their results
 * into flows. */
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

/* The server_name (host_name, type 0) of a TLS ClientHello at the start of
 * @data (handshake records, the handshake message possibly spread over
 * several).  FOUND sets *@ret_name (escaped; transfer full). */
NetPayloadResult net_tls_client_hello_sni (const guint8 *data, gsize len, char **ret_name);

/* The Host header of an HTTP/1.x request at the start of @data (a method,
 * a space, …).  FOUND sets *@ret_host (escaped, surrounding blanks
 * removed; transfer full). */
NetPayloadResult net_http_request_host (const guint8 *data, gsize len, char **ret_host);

G_END_DECLS
