/* What the guest's NIC sent, from the pcap QEMU wrote on the host.
 *
 * QEMU's `-object filter-dump` records every frame the guest's virtio-net
 * NIC sends or receives.  The guest controls every byte inside those
 * frames, so everything here is decoded with bounds checks and caps, and a
 * frame that does not decode is counted, never trusted.  The result is
 * what the release gate cross-checks against the supervisor's records:
 *
 *   - flows: one per destination the guest sent to, keyed by (family,
 *     protocol, address, port) exactly as lib/evidence keys the
 *     supervisor's attempts, with what crossed the wire (SYNs, datagrams,
 *     echo requests, DNS query names, TLS SNI, HTTP Host);
 *   - housekeeping: what the guest's kernel sends on its own (ARP,
 *     neighbour discovery, MLD, IGMP, ICMP errors about packets sent to
 *     the guest), counted by kind and never taken as egress;
 *   - anomalies: frames that no flow, QEMU or the guest kernel's
 *     housekeeping explains, or that did not decode, by kind, with the
 *     first frame and reason (airlock_capture_get_anomalies()).
 *
 * Direction is decided by the Ethernet and IP addresses (a pcap records no
 * direction): a frame whose source MAC is the guest's NIC was sent by the
 * guest; a frame from QEMU's MAC and addresses to the guest came from QEMU
 * (its gateway, its DNS server, or the far end it emulates) and is a
 * reply.  Replies are attached to the flow they answer (the flow keyed by
 * their source) and create none.  Any other frame can only be the guest
 * sending under a forged source: it is taken as the guest's (egress) and
 * is also an anomaly (FOREIGN_MAC).
 *
 * Every IP packet the guest sends ends up in a flow or in housekeeping:
 * when its transport header is malformed or missing (a fragment whose first
 * fragment was not seen, an IPv6 extension chain that does not parse), it
 * still makes a flow, with port 0 (and protocol IPPROTO_RAW when even the
 * protocol is unknown), so a guest cannot hide egress by malforming it.
 *
 * Public (in <airlock.h>): a run record and a bundle carry its flows. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

#include <sys/socket.h>

G_BEGIN_DECLS

/* Caps on what one capture may hold (each overflow is an anomaly of kind
 * LIMIT, so the gate can treat the capture as incomplete). */
#define AIRLOCK_CAPTURE_FLOWS_MAX 65536
/* TCP connections (guest source address and port, per flow) reassembled
 * at once, over all flows. */
#define AIRLOCK_CAPTURE_CONNECTIONS_MAX 1024
/* Bytes of a connection's first client payload kept to find a TLS
 * ClientHello or an HTTP request head. */
#define AIRLOCK_CAPTURE_FIRST_PAYLOAD_MAX 32768
/* Distinct names (DNS, SNI, HTTP Host) kept per flow. */
#define AIRLOCK_CAPTURE_NAMES_MAX 256
/* IPv6 extension headers walked before the packet counts as malformed. */
#define AIRLOCK_CAPTURE_IPV6_EXTENSIONS_MAX 8
/* IP fragment trains remembered so later fragments find their flow. */
#define AIRLOCK_CAPTURE_FRAGMENTS_MAX 4096

/* The link as QEMU's user network (slirp) sets it up, per lib/vm/domain-xml.c's
 * -netdev and guest/network.c's configure_network(): the guest's NIC
 * MAC and static addresses, its link-local address (EUI-64 of the MAC,
 * the kernel's default), and the addresses QEMU answers as.  Every frame
 * is judged against these (see airlock_capture_get_anomalies()). */
typedef struct {
  guint8 mac[6];
  guint8 ipv4[4];           /* 10.0.2.15, on 10.0.2.0/24 */
  guint8 ipv6[16];          /* fec0::15, on fec0::/64 */
  guint8 link_local[16];    /* fe80::5054:ff:fe…, from @mac */
  guint8 gateway4[4];       /* QEMU: 10.0.2.2 */
  guint8 dns4[4];           /* QEMU: 10.0.2.3 */
  /* The capture was written by airlock's sinkhole (sinkhole/),
   * which passes on and captures only frames from the guest whose source
   * MAC is the guest's (others are refused and recorded in its records):
   * every other frame in the capture is the network's, whatever its
   * addresses.  FALSE: QEMU's user network wrote it (filter-dump), and a
   * frame is QEMU's only by QEMU's MACs and addresses. */
  gboolean sinkhole;
} AirlockCaptureGuest;

/* Fills @guest with @mac, QEMU user networking's default guest addresses
 * (10.0.2.15, fec0::15), the link-local address the kernel derives from
 * @mac, and QEMU's own addresses (10.0.2.2, 10.0.2.3). */
AIRLOCK_PUBLIC void airlock_capture_guest_init (AirlockCaptureGuest *guest, const guint8 mac[6]);

typedef struct {
  int family;            /* AF_INET or AF_INET6 */
  /* The socket type the key names: SOCK_STREAM for TCP, SOCK_DGRAM for UDP
   * and for ICMP / ICMPv6 (ping sockets), SOCK_RAW for other protocols. */
  int type;
  int protocol;          /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, …; IPPROTO_RAW when unknown */
  guint8 address[16];    /* the guest's destination; IPv4 in the first 4 bytes */
  /* "192.0.2.1", "2001:db8::1": the address part of
   * airlock_sockaddr_to_string() (IPv6 without brackets or scope: a packet
   * carries no scope id). */
  char *address_text;
  guint16 port;          /* destination port; 0 for protocols without one */
  char *key;             /* airlock_capture_flow_key() of the above */

  guint64 first_record;  /* pcap record of the first packet */
  gint64 first_time_us;  /* capture times of the first and last packet from the guest */
  gint64 last_time_us;
  guint64 packets;       /* frames from the guest */
  guint64 bytes;         /* their length on the wire (Ethernet header included) */
  guint64 reply_packets; /* frames from QEMU answering this flow */
  guint64 reply_bytes;

  guint64 syns;          /* TCP: SYN without ACK (a connection attempt) */
  gboolean rst_seen;     /* TCP: a RST came back */
  /* TCP: connections the far end is seen to have taken: it sent bytes or a
   * FIN on them.  A listener's kernel sends neither on a connection its
   * process has not accepted (one still queued when the listener closes
   * gets a RST), so on the sinkhole network each of these is a connection
   * the sinkhole accepted and recorded.  Counted once per connection (the
   * guest's address and port, a new SYN starting a new one); only for
   * connections the analysis tracks (AIRLOCK_CAPTURE_CONNECTIONS_MAX). */
  guint64 taken;
  guint64 datagrams;     /* UDP datagrams (a fragmented one counts once) */
  guint64 echo_requests; /* ICMP / ICMPv6 echo requests */
  guint64 echo_replies;  /* … and replies that came back */
  guint64 fragments;     /* IP fragments (the first included) */
  guint64 ip_options;    /* IPv4 packets with options, IPv6 with extension headers */
  guint64 malformed;     /* packets whose transport header did not decode */

  /* Distinct names, in order of first appearance, at most
   * AIRLOCK_CAPTURE_NAMES_MAX each (char *).  DNS names are presentation
   * form ("example.com."), from queries over UDP/53 and TCP/53 (TCP
   * reassembled in order per connection; a gap stops the stream).  SNI and
   * HTTP Host come from the first client payload of each TCP connection
   * and are escaped like every guest string (airlock_evidence_escape_bytes). */
  GPtrArray *dns_names;
  guint64 dns_malformed; /* DNS messages with a problem (their questions still count) */
  GPtrArray *sni;
  GPtrArray *http_hosts;
} AirlockFlow;

typedef enum {
  AIRLOCK_HOUSEKEEPING_ARP,
  AIRLOCK_HOUSEKEEPING_ROUTER_SOLICITATION,
  AIRLOCK_HOUSEKEEPING_ROUTER_ADVERTISEMENT,
  AIRLOCK_HOUSEKEEPING_NEIGHBOUR_SOLICITATION,
  AIRLOCK_HOUSEKEEPING_NEIGHBOUR_ADVERTISEMENT,
  AIRLOCK_HOUSEKEEPING_REDIRECT,
  AIRLOCK_HOUSEKEEPING_MLD_QUERY,
  AIRLOCK_HOUSEKEEPING_MLD_REPORT,      /* MLDv1 report (131) */
  AIRLOCK_HOUSEKEEPING_MLD_DONE,
  AIRLOCK_HOUSEKEEPING_MLDV2_REPORT,    /* 143 */
  AIRLOCK_HOUSEKEEPING_IGMP,
  /* ICMP / ICMPv6 errors (unreachable, time exceeded, …) quoting a packet
   * that was addressed to the guest: the kernel answering a reply that
   * came too late.  An error quoting anything else is a flow. */
  AIRLOCK_HOUSEKEEPING_ICMP_ERROR,
  AIRLOCK_HOUSEKEEPING_ICMPV6_ERROR,
  AIRLOCK_HOUSEKEEPING_N_KINDS,
} AirlockHousekeepingKind;

typedef struct {
  AirlockHousekeepingKind kind;
  guint64 count;         /* frames of this kind from the guest */
  guint64 replies;       /* … and from QEMU */
} AirlockHousekeeping;

typedef enum {
  AIRLOCK_CAPTURE_ANOMALY_CLIPPED,    /* the frame was longer than the snapshot length and
                                       * a header ran past what was captured */
  AIRLOCK_CAPTURE_ANOMALY_ETHERNET,   /* shorter than an Ethernet header */
  AIRLOCK_CAPTURE_ANOMALY_VLAN,       /* a cut or nested 802.1Q tag */
  AIRLOCK_CAPTURE_ANOMALY_NON_IP,     /* an EtherType that is not IPv4, IPv6 or ARP */
  AIRLOCK_CAPTURE_ANOMALY_ARP,
  AIRLOCK_CAPTURE_ANOMALY_IPV4,
  AIRLOCK_CAPTURE_ANOMALY_IPV6,       /* header or extension chain */
  AIRLOCK_CAPTURE_ANOMALY_TCP,
  AIRLOCK_CAPTURE_ANOMALY_UDP,
  AIRLOCK_CAPTURE_ANOMALY_ICMP,
  AIRLOCK_CAPTURE_ANOMALY_ICMPV6,
  AIRLOCK_CAPTURE_ANOMALY_FRAGMENT,   /* a fragment whose first fragment was not seen */
  /* A source MAC that is neither the guest's nor QEMU's own for the
   * frame's addresses (QEMU's MAC to a destination QEMU never sends to). */
  AIRLOCK_CAPTURE_ANOMALY_FOREIGN_MAC,
  AIRLOCK_CAPTURE_ANOMALY_IGMP,       /* a cut IGMP header */
  /* An IP packet from the guest's MAC whose source address is not one of
   * the guest's own. */
  AIRLOCK_CAPTURE_ANOMALY_FOREIGN_SOURCE,
  /* ARP or neighbour discovery about an address that is not the guest's
   * own (or not on its link), a link-layer option naming another MAC, or
   * a message only a router sends (router advertisement, redirect, MLD
   * query). */
  AIRLOCK_CAPTURE_ANOMALY_NEIGHBOUR,
  /* MLD or IGMP naming a group the guest's kernel does not join for its
   * own addresses, or with sources. */
  AIRLOCK_CAPTURE_ANOMALY_MULTICAST,
  AIRLOCK_CAPTURE_ANOMALY_VLAN_TAG,   /* an 802.1Q tag: the guest has no VLAN interface */
  AIRLOCK_CAPTURE_ANOMALY_LIMIT,      /* a cap above was reached: the analysis is incomplete */
  AIRLOCK_CAPTURE_ANOMALY_N_KINDS,
} AirlockCaptureAnomalyKind;

typedef struct {
  AirlockCaptureAnomalyKind kind;
  guint64 count;
  guint64 from_guest;    /* how many of them the guest sent */
  guint64 first_record;  /* pcap record index, 0 for the first */
  guint64 first_frame;   /* … as Wireshark and tcpdump number it: first_record + 1 */
  /* "frame 8 at offset 1234 (from the guest): IPv4 header length 4 is
   * below 20"; guest bytes never appear in it unescaped. */
  char *first_reason;
} AirlockCaptureAnomaly;

typedef struct _AirlockCapture AirlockCapture;

/* Reads the pcap in @pcap and sorts what the guest described by @guest
 * sent into flows, housekeeping and anomalies.  Malformed packets never
 * fail the analysis (they are anomalies); a malformed pcap file does:
 * returns NULL with @error set (AIRLOCK_PCAP_ERROR, naming the byte offset).
 * Transfer full. */
AIRLOCK_PUBLIC AirlockCapture *airlock_capture_analyse (GBytes *pcap, const AirlockCaptureGuest *guest,
                                                        GError **error);
AIRLOCK_PUBLIC void airlock_capture_free (AirlockCapture *capture);

/* AirlockFlow *, in order of their first packet.  Transfer none. */
AIRLOCK_PUBLIC GPtrArray *airlock_capture_get_flows (AirlockCapture *capture);
/* The flow with this key, or NULL.  Transfer none. */
AIRLOCK_PUBLIC const AirlockFlow *airlock_capture_lookup_flow (AirlockCapture *capture, const char *key);
/* AirlockHousekeeping *, one per kind seen, in AirlockHousekeepingKind
 * order.  Transfer none. */
AIRLOCK_PUBLIC GPtrArray *airlock_capture_get_housekeeping (AirlockCapture *capture);
/* Capture anomalies: AirlockCaptureAnomaly *, one per kind seen, in kind
 * order; empty when every frame was judged and explained.  Transfer none.
 *
 * Every captured frame is one of:
 *   - the guest's egress: an IP packet from the guest's MAC and addresses,
 *     which makes (or joins) a flow the verdict matches to a record;
 *   - QEMU's own: from QEMU's MAC *and* its addresses (slirp's 52:55:…
 *     with 10.0.2.2 / 10.0.2.3 for ARP and IPv4, 52:56: and the low four
 *     bytes of the IPv6 source for IPv6), to the guest's MAC and
 *     addresses: ARP answers, replies, neighbour discovery;
 *   - the guest kernel's link housekeeping for its own addresses: ARP from
 *     its MAC and IPv4 about an on-link address; neighbour solicitations
 *     from its addresses for an on-link target (or for its own, from ::);
 *     advertisements of its own addresses; router solicitations; MLD
 *     reports of the solicited-node groups of its own addresses; ICMP
 *     errors about packets sent to it;
 * and anything else is an anomaly with the frame that showed it: a spoofed
 * or unknown source MAC, a foreign source address, ARP / ND / MLD / IGMP
 * about foreign addresses or groups, an unknown EtherType or a VLAN tag, a
 * frame that does not decode, and a cap reached (LIMIT: frames past it
 * were not judged).  A gate must not pass a run with any anomaly: each
 * names its first frame (first_frame, first_reason). */
AIRLOCK_PUBLIC GPtrArray *airlock_capture_get_anomalies (AirlockCapture *capture);
/* The anomaly seen first in the capture (the lowest first_record), or NULL
 * when there is none: what a verdict names.  Transfer none. */
AIRLOCK_PUBLIC const AirlockCaptureAnomaly *airlock_capture_get_first_anomaly (AirlockCapture *capture);
/* Records in the file; of them, frames the guest sent. */
AIRLOCK_PUBLIC guint64 airlock_capture_get_frames (AirlockCapture *capture);
AIRLOCK_PUBLIC guint64 airlock_capture_get_guest_frames (AirlockCapture *capture);
/* Frames from QEMU that answer no flow and are no housekeeping. */
AIRLOCK_PUBLIC guint64 airlock_capture_get_unmatched_replies (AirlockCapture *capture);

/* The key of a flow, spelled as lib/evidence spells an attempt key
 * (airlock_attempt_key()): "inet/stream/tcp 192.0.2.1:9",
 * "inet6/dgram/udp [2001:db8::1]:53", "inet/dgram/icmp 192.0.2.1:0".
 * @address holds 4 bytes for AF_INET, 16 for AF_INET6; the socket type is
 * the one AirlockFlow.type documents.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_capture_flow_key (int family, int protocol, const guint8 *address, guint16 port);

/* "arp", "neighbour-solicitation", "mldv2-report", …: stable short names. */
AIRLOCK_PUBLIC const char *airlock_housekeeping_kind_to_string (AirlockHousekeepingKind kind);
/* "ipv4", "clipped", "limit", …: stable short names. */
AIRLOCK_PUBLIC const char *airlock_capture_anomaly_kind_to_string (AirlockCaptureAnomalyKind kind);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockCapture, airlock_capture_free)

G_END_DECLS
