/* The negative controls: what guest/probe.c attempts, and what the host's
 * verdict code must find both in the supervisor's records and in the capture.
 *
 * This table is the contract between the probe (static C, no GLib) and the
 * host (lib/, GLib): both include this one header, so the probe cannot make
 * an attempt the host does not expect, nor the host expect one the probe
 * never makes.  Plain C data only: no pointers to anything but string
 * literals, no host-side types.
 *
 * A control is matched as the exact tuple (family, protocol, address, port):
 * TCP/9 and UDP/9 are two controls, and every tuple below is distinct.  The
 * addresses are documentation addresses (TEST-NET-1, RFC 5737; RFC 3849), so
 * an attempt that escaped by mistake reaches nobody, and the names end in
 * .test (RFC 6761), which no resolver answers.  One address per service, the
 * same last digits in both families:
 *
 *   control      family  proto  address        port  carries
 *   dns-udp      ipv4    udp    192.0.2.53     53    DNS query (A) for control-udp.airlock.test
 *   dns-tcp      ipv4    tcp    192.0.2.53     53    DNS query (A), 2-byte length framed, for control-tcp.airlock.test
 *   discard-tcp  ipv4    tcp    192.0.2.9      9     nothing (connect only)
 *   discard-udp  ipv4    udp    192.0.2.9      9     one datagram, PROBE_DISCARD_PAYLOAD
 *   http         ipv4    tcp    192.0.2.80     80    GET / with Host: control-http.airlock.test
 *   https        ipv4    tcp    192.0.2.80     443   TLS ClientHello with SNI control-https.airlock.test
 *   (the same six over ipv6 to 2001:db8::53, 2001:db8::9 and 2001:db8::80)
 *
 * What the capture can show depends on the network, not on the probe: under
 * QEMU's restrict=on user networking a TCP SYN is answered with a RST, so a
 * TCP control is seen as its SYN and its payload is never sent; UDP
 * datagrams leave the guest with their payload.  The payload columns say what
 * the probe sends when it can.
 */
#ifndef AIRLOCK_PROBE_CONTROLS_H
#define AIRLOCK_PROBE_CONTROLS_H

#include <netinet/in.h>
#include <sys/socket.h>

/* What a control sends once its socket can carry data. */
enum probe_payload {
  PROBE_PAYLOAD_NONE,     /* TCP: connect only */
  PROBE_PAYLOAD_DNS,      /* a DNS query for host_name (TCP: with its 2-byte length) */
  PROBE_PAYLOAD_DISCARD,  /* PROBE_DISCARD_PAYLOAD */
  PROBE_PAYLOAD_HTTP,     /* "GET / HTTP/1.1" with Host: host_name */
  PROBE_PAYLOAD_TLS,      /* a TLS ClientHello record with SNI host_name */
};

/* The UDP/9 datagram's bytes. */
#define PROBE_DISCARD_PAYLOAD "airlock negative control\n"

struct probe_control {
  const char *name;        /* the control, as the probe prints it: "dns-udp" */
  int family;              /* AF_INET or AF_INET6 */
  int protocol;            /* IPPROTO_TCP or IPPROTO_UDP */
  const char *address;     /* numeric, as inet_pton() reads it */
  unsigned short port;     /* host byte order */
  enum probe_payload payload;
  const char *host_name;   /* the DNS name, HTTP Host or SNI it carries; NULL for none */
};

#define PROBE_DNS_UDP_NAME "control-udp.airlock.test"
#define PROBE_DNS_TCP_NAME "control-tcp.airlock.test"
#define PROBE_HTTP_HOST "control-http.airlock.test"
#define PROBE_TLS_SNI "control-https.airlock.test"

/* In the order the probe makes them: IPv4 first, then IPv6. */
static const struct probe_control probe_controls[] = {
  { "dns-udp", AF_INET, IPPROTO_UDP, "192.0.2.53", 53, PROBE_PAYLOAD_DNS, PROBE_DNS_UDP_NAME },
  { "dns-tcp", AF_INET, IPPROTO_TCP, "192.0.2.53", 53, PROBE_PAYLOAD_DNS, PROBE_DNS_TCP_NAME },
  { "discard-tcp", AF_INET, IPPROTO_TCP, "192.0.2.9", 9, PROBE_PAYLOAD_NONE, NULL },
  { "discard-udp", AF_INET, IPPROTO_UDP, "192.0.2.9", 9, PROBE_PAYLOAD_DISCARD, NULL },
  { "http", AF_INET, IPPROTO_TCP, "192.0.2.80", 80, PROBE_PAYLOAD_HTTP, PROBE_HTTP_HOST },
  { "https", AF_INET, IPPROTO_TCP, "192.0.2.80", 443, PROBE_PAYLOAD_TLS, PROBE_TLS_SNI },
  { "dns-udp", AF_INET6, IPPROTO_UDP, "2001:db8::53", 53, PROBE_PAYLOAD_DNS, PROBE_DNS_UDP_NAME },
  { "dns-tcp", AF_INET6, IPPROTO_TCP, "2001:db8::53", 53, PROBE_PAYLOAD_DNS, PROBE_DNS_TCP_NAME },
  { "discard-tcp", AF_INET6, IPPROTO_TCP, "2001:db8::9", 9, PROBE_PAYLOAD_NONE, NULL },
  { "discard-udp", AF_INET6, IPPROTO_UDP, "2001:db8::9", 9, PROBE_PAYLOAD_DISCARD, NULL },
  { "http", AF_INET6, IPPROTO_TCP, "2001:db8::80", 80, PROBE_PAYLOAD_HTTP, PROBE_HTTP_HOST },
  { "https", AF_INET6, IPPROTO_TCP, "2001:db8::80", 443, PROBE_PAYLOAD_TLS, PROBE_TLS_SNI },
};

#define PROBE_N_CONTROLS (sizeof probe_controls / sizeof probe_controls[0])

#endif /* AIRLOCK_PROBE_CONTROLS_H */
