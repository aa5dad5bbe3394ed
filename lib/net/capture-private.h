/* The capture analysis's own state, shared by the files that make it
 * (see flows.h for what it computes):
 *
 *   capture.c       the capture: pcap records in, who sent each frame, the getters
 *   flow-names.c    the names a flow is known by: DNS questions, SNI, HTTP Host
 *   flow-table.c    flow keys, the flow table, fragment trains, the guest's egress
 *   reassembly.c    a TCP connection's client bytes in order: DNS over TCP/53, the first payload
 *   replies.c       QEMU's frames, matched to the flow they answer
 *   housekeeping.c  the guest kernel's own link traffic (ARP, ND, MLD, IGMP, ICMP errors)
 *                   and whether a frame not from the guest's MAC is QEMU's
 *   anomalies.c     what the capture holds against the guest, each kind once with a count
 *
 * Everything the guest controls is bounded: the number of flows, of TCP
 * connections reassembled, of fragment trains remembered, of names kept
 * per flow, and the bytes kept per connection (the first payload up to
 * AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX, a DNS message up to the TCP framing's
 * 64 KiB).  Reaching a cap is an anomaly of kind LIMIT, never a silent
 * drop. */
#pragma once

#include "flows.h"
#include "net-private.h"
#include "pcap.h"
#include "evidence/dns.h"

G_BEGIN_DECLS

#define ICMP_ECHO_REPLY 0
#define ICMP_UNREACHABLE 3
#define ICMP_SOURCE_QUENCH 4
#define ICMP_ECHO_REQUEST 8
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAMETER_PROBLEM 12
#define ICMPV6_ERROR_MAX 4          /* types 1–4: unreachable … parameter problem */
#define ICMPV6_ECHO_REQUEST 128
#define ICMPV6_ECHO_REPLY 129
#define ICMPV6_MLD_QUERY 130
#define ICMPV6_MLD_REPORT 131
#define ICMPV6_MLD_DONE 132
#define ICMPV6_ROUTER_SOLICITATION 133
#define ICMPV6_ROUTER_ADVERTISEMENT 134
#define ICMPV6_NEIGHBOUR_SOLICITATION 135
#define ICMPV6_NEIGHBOUR_ADVERTISEMENT 136
#define ICMPV6_REDIRECT 137
#define ICMPV6_MLDV2_REPORT 143
#define DNS_PORT 53

/* One TCP connection of a flow, client (guest) to server, reassembled in
 * order: bytes reach the DNS stream and the first-payload buffer only when
 * they continue exactly where the last ones ended. */
typedef struct {
  gboolean have_isn;
  guint32 isn;
  gboolean have_next;
  guint32 next_seq;
  gboolean stopped;          /* after a gap: later bytes are not parsed */
  AirlockDnsTcpStream *dns;  /* connections to port 53 */
  GByteArray *first;         /* the first payload, while a name may still be found in it */
  gboolean tls_done;
  gboolean http_done;
  gboolean taken;            /* the far end sent bytes or a FIN on it (AirlockFlow.taken) */
} TcpConnection;

typedef struct {
  AirlockFlow flow;          /* first: the public part */
  GHashTable *connections;   /* GBytes (guest address + port) → TcpConnection */
} FlowState;

struct _AirlockCapture {
  AirlockCaptureGuest guest;
  GPtrArray *flows;          /* FlowState *, as AirlockFlow * */
  GHashTable *flow_index;    /* key (owned by the flow) → FlowState */
  GHashTable *fragments;     /* GBytes (family, protocol, src, dst, id) → FlowState */
  guint connections;
  AirlockHousekeeping housekeeping[AIRLOCK_HOUSEKEEPING_N_KINDS];
  GPtrArray *housekeeping_list;
  AirlockCaptureAnomaly anomalies[AIRLOCK_CAPTURE_ANOMALY_N_KINDS];
  GPtrArray *anomaly_list;
  guint64 frames;
  guint64 guest_frames;
  guint64 unmatched_replies;

  /* the record being analysed */
  const AirlockPcapRecord *record;
  gboolean from_guest;
};

/* anomalies.c: counts one anomaly of @kind against the record being
 * analysed; the first of each kind keeps @reason, with the frame's number
 * and offset. */
void net_capture_note_anomaly (AirlockCapture *capture, AirlockCaptureAnomalyKind kind,
                               const char *reason);

/* housekeeping.c: counts the record being analysed as housekeeping of
 * @kind, sent by the guest or (a reply) by QEMU. */
void net_capture_note_housekeeping (AirlockCapture *capture, AirlockHousekeepingKind kind);
/* The housekeeping kind of this IP packet, or -1 when it is not
 * housekeeping. */
int net_housekeeping_kind (const AirlockCapture *capture, const NetPacket *pkt);
/* Whether a frame whose source MAC is not the guest's is QEMU's own; when
 * not, @why says what gave it away. */
gboolean net_is_qemu_frame (const AirlockCapture *capture, const NetPacket *pkt, char *why,
                            gsize why_size);
/* The guest's ARP, link housekeeping and IP source addresses must be its
 * own: what is not is noted as an anomaly. */
void net_judge_guest_arp (AirlockCapture *capture, const NetPacket *pkt);
void net_judge_guest_housekeeping (AirlockCapture *capture, const NetPacket *pkt,
                                   AirlockHousekeepingKind kind);
void net_judge_guest_source (AirlockCapture *capture, const NetPacket *pkt);

/* flow-table.c */
void net_flow_state_free (FlowState *state);
/* Adds @name to @names unless there already, or a LIMIT anomaly when the
 * flow holds AIRLOCK_CAPTURE_NAMES_MAX. */
void net_flow_add_name (AirlockCapture *capture, GPtrArray *names, const char *name);
void net_flow_add_dns_query (AirlockCapture *capture, FlowState *state,
                             const AirlockDnsQuery *query);
/* … each of @queries, and unrefs it. */
void net_flow_add_dns_queries (AirlockCapture *capture, FlowState *state, GPtrArray *queries);
/* The flow of that destination, or NULL. */
FlowState *net_flow_lookup (AirlockCapture *capture, int family, int protocol,
                            const guint8 *address, guint16 port);
/* The flow @pkt is addressed to, made if new; NULL (a LIMIT anomaly) when
 * the table is full. */
FlowState *net_flow_get (AirlockCapture *capture, const NetPacket *pkt, int protocol,
                         guint16 port);
/* An IP packet from the guest that is not housekeeping: counted in its
 * flow, its DNS questions and first payloads read. */
void net_capture_egress (AirlockCapture *capture, const NetPacket *pkt);

/* reassembly.c */
void net_tcp_connection_free (TcpConnection *conn);
/* A TCP segment from the guest on @state's flow. */
void net_track_tcp (AirlockCapture *capture, FlowState *state, const NetPacket *pkt);
/* The capture ended with @conn open: a DNS message it ended inside, and a
 * first payload that never completed, are read as they are. */
void net_tcp_connection_close (AirlockCapture *capture, FlowState *state, TcpConnection *conn);

/* replies.c: a frame from QEMU; it answers the flow keyed by its source. */
void net_capture_reply (AirlockCapture *capture, const NetPacket *pkt);

G_END_DECLS
