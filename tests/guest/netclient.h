/* The client side of a network, for guest programs that talk to whatever
 * answers the VM's NIC (airlock's sinkhole, docs: issue 20): a resolver
 * that asks /etc/resolv.conf's nameserver itself, connects and reads that
 * never wait longer than NETCLIENT_WAIT_MS, and the first bytes of the
 * protocols a sinkhole detects (a TLS 1.3 ClientHello).
 *
 * Used by the net-* behaviours of the multi-call test program (net.c) and
 * by the `rpc` sample's update check (images/sample/rpc-server.c).  Static
 * C, no GLib, nothing printed: every function returns -errno (or a count)
 * and the caller says what happened.
 *
 * The resolver is ours rather than libc's because the programs are static:
 * static glibc's getaddrinfo needs NSS modules no image here carries, and a
 * test must know exactly which query was sent. */
#ifndef NETCLIENT_H
#define NETCLIENT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Every wait (an answer, a connect, the next bytes) ends after this long:
 * a network that says nothing must not hold a program, or a VM test, for
 * longer than a few of these. */
#define NETCLIENT_WAIT_MS 2000

#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28

/* Where a run's nameserver is when /etc/resolv.conf names none: QEMU's
 * user-mode resolver, what the supervisor writes today. */
#define NETCLIENT_DEFAULT_NAMESERVER "10.0.2.3"

/* An address with its port, IPv4 or IPv6. */
typedef struct {
  struct sockaddr_storage sa;
  socklen_t len;
} net_endpoint;

/* Fills @ep from the literal @text (IPv4 or IPv6) and @port; -EINVAL when
 * @text is not an address literal. */
int endpoint_from_text (net_endpoint *ep, const char *text, unsigned port);

/* @ep's port, in host order. */
unsigned endpoint_port (const net_endpoint *ep);

/* Writes @ep's address (no port) to @buf, which holds INET6_ADDRSTRLEN. */
const char *endpoint_address_text (const net_endpoint *ep, char *buf, size_t size);

/* The first "nameserver" of /etc/resolv.conf that is an address literal,
 * port 53, into @ret; NETCLIENT_DEFAULT_NAMESERVER when there is none or
 * the file cannot be read.  Returns 0 when the file named it, 1 when the
 * default was used. */
int find_nameserver (net_endpoint *ret);

/* A standard query (RD set) for @name, type @qtype, class IN, with @id:
 * written to @buf (room for @size bytes).  Returns its length, or -EINVAL
 * when @name is not a valid name (a label empty or over 63 bytes, the
 * whole over 253) or does not fit. */
long dns_build_query (uint8_t *buf, size_t size, const char *name, unsigned qtype, unsigned id);

/* What one answer said. */
typedef struct {
  unsigned rcode;     /* 0 NOERROR, 3 NXDOMAIN, … */
  unsigned answers;   /* ANCOUNT */
  int family;         /* AF_INET or AF_INET6 once an address of the asked type was found, else 0 */
  uint8_t address[16];
} dns_answer;

/* Reads the reply @msg (@len bytes, without a TCP length prefix) to the
 * query with @id and @qtype: the first A (or AAAA) record among the
 * answers.  Every length is checked against @len.  Returns 0 when an
 * address was found; -ENODATA for a well-formed reply without one (see
 * @ret->rcode); -EBADMSG when it is not a reply to that query or is
 * malformed. */
int dns_parse_answer (const uint8_t *msg, size_t len, unsigned id, unsigned qtype, dns_answer *ret);

/* Sends the query @query (@len bytes) to @server over UDP and waits for
 * the reply to @id (others are skipped) at most NETCLIENT_WAIT_MS in all.
 * The reply goes to @reply (@size bytes); returns its length, -ETIMEDOUT
 * when none came, -errno when a call failed. */
long dns_exchange_udp (const net_endpoint *server, const uint8_t *query, size_t len, unsigned id,
                       uint8_t *reply, size_t size);

/* The same over a connected TCP socket @fd: the query with its 2-byte
 * length prefix, then one message of the reply read whole.  Several
 * queries may follow on the same socket (RFC 7766). */
long dns_exchange_tcp (int fd, const uint8_t *query, size_t len, uint8_t *reply, size_t size);

/* socket() and a non-blocking connect() to @ep of @type (SOCK_STREAM or
 * SOCK_DGRAM), completed within NETCLIENT_WAIT_MS.  Returns the socket
 * (non-blocking, close-on-exec) or -errno: -ECONNREFUSED, -ETIMEDOUT, …;
 * @ret_setup_failed (may be NULL) is set to 1 when socket() itself failed
 * and to 0 otherwise, so a caller can tell "cannot run" from "refused". */
int connect_endpoint (const net_endpoint *ep, int type, int *ret_setup_failed);

/* Writes all of @buf to the stream @fd (waiting for room at most
 * NETCLIENT_WAIT_MS each time); 0 or -errno. */
int send_all (int fd, const void *buf, size_t len);

/* Reads from @fd into @buf (at most @size bytes) until the peer closes,
 * @size is reached, or NETCLIENT_WAIT_MS pass without a byte.  @ret_len
 * gets the count read in every case.  Returns 0 when the peer closed, 1
 * when @buf filled, -ETIMEDOUT when it went quiet, -errno (-ECONNRESET)
 * when the read failed. */
int read_until_close (int fd, uint8_t *buf, size_t size, size_t *ret_len);

/* Waits for the first bytes from @fd (at most NETCLIENT_WAIT_MS) and
 * reads what is there.  Returns the count, 0 when the peer closed,
 * -ETIMEDOUT, or -errno. */
long read_some (int fd, uint8_t *buf, size_t size);

/* A TLS 1.3 ClientHello as a record of its own, as a browser or curl
 * sends it first: SNI @server_name, ALPN @alpn (a NULL-terminated list,
 * e.g. "h2", "http/1.1"; NULL for none), supported_versions TLS 1.3 and
 * 1.2, an X25519 key share.  The random, session id and key share are
 * fixed bytes: nothing is ever encrypted with them (the connection ends
 * after the server's first answer), and fixed bytes keep two runs'
 * records equal.  Written to @buf (@size bytes); returns the length or
 * -EINVAL when a name is too long or it does not fit. */
long tls_client_hello (uint8_t *buf, size_t size, const char *server_name, const char *const *alpn);

/* What the first bytes of a TLS server's answer are: "ServerHello",
 * "HelloRetryRequest", "alert", "other TLS handshake" or "not TLS". */
const char *tls_describe_reply (const uint8_t *buf, size_t len);

/* The status code of an HTTP/1.x response that starts @buf, or -EBADMSG. */
int http_status (const uint8_t *buf, size_t len);

/* The body of the HTTP response in @buf (after the blank line that ends
 * its head) into @ret_body; -EBADMSG when the head has no end. */
int http_body (const uint8_t *buf, size_t len, const uint8_t **ret_body, size_t *ret_len);

#endif /* NETCLIENT_H */
