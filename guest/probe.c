/* probe: the negative controls, for x86_64 and aarch64.
 *
 * The supervisor runs this program as its own workload before the image, in
 * the same boot, so the same kernel, network and supervisor that judge the
 * image are first shown to see a known set of attempts.  Each attempt is a
 * control of probe-controls.h — the contract with the host, which expects
 * every one of them in the supervisor's records and in the capture:
 *
 *   control      family  proto  address        port  sends, when it can
 *   dns-udp      ipv4    udp    192.0.2.53     53    DNS query, A control-udp.airlock.test
 *   dns-tcp      ipv4    tcp    192.0.2.53     53    length-framed DNS query, A control-tcp.airlock.test
 *   discard-tcp  ipv4    tcp    192.0.2.9      9     nothing (connect only)
 *   discard-udp  ipv4    udp    192.0.2.9      9     "airlock negative control\n"
 *   http         ipv4    tcp    192.0.2.80     80    GET / HTTP/1.1, Host: control-http.airlock.test
 *   https        ipv4    tcp    192.0.2.80     443   TLS ClientHello, SNI control-https.airlock.test
 *   dns-udp      ipv6    udp    2001:db8::53   53    as above
 *   dns-tcp      ipv6    tcp    2001:db8::53   53
 *   discard-tcp  ipv6    tcp    2001:db8::9    9
 *   discard-udp  ipv6    udp    2001:db8::9    9
 *   http         ipv6    tcp    2001:db8::80   80
 *   https        ipv6    tcp    2001:db8::80   443
 *
 * Every attempt is made whatever the others did: a control that is missing
 * must mean the detector is blind, never that the probe gave up early.  A
 * TCP control is a non-blocking connect waited for at most CONNECT_WAIT_MS
 * (under QEMU's restrict=on user networking the SYN gets a RST at once and
 * the connect fails with ECONNREFUSED; the SYN is what the capture shows),
 * and its payload is sent only if the connect succeeded.  A UDP control
 * always sends its datagram.  Nothing waits for a reply: the attempt is the
 * point, and every wait is bounded, so the probe ends within seconds
 * whatever the network does.
 *
 * Output: one line per control, in the table's order,
 *   probe: CONTROL FAMILY PROTO ADDRESS PORT: RESULT
 * Exit status 0 whatever the network did; 1 when a socket could not be
 * created at all (a control could not even be attempted: the run proves
 * nothing); 2 for a bad command line.
 *
 * Test-only: `--skip CONTROL/FAMILY` (e.g. `--skip dns-udp/ipv6`, repeatable)
 * leaves that control out, printing "skipped", so a test can prove the host
 * notices a missing control.  Whoever starts the probe decides; nothing in
 * the image can.
 *
 * Static C, no GLib (guest code). */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe-controls.h"

#define CONNECT_WAIT_MS 1000
#define SEND_WAIT_MS 1000
#define MAX_SKIPS 16

/* Large enough for any payload below: a DNS query for a name of at most 253
 * bytes (plus the TCP length), the HTTP request, the ClientHello. */
#define PAYLOAD_MAX 1024

static const char *
family_name (int family)
{
  return family == AF_INET6 ? "ipv6" : "ipv4";
}

static const char *
protocol_name (int protocol)
{
  return protocol == IPPROTO_UDP ? "udp" : "tcp";
}

static int64_t
monotonic_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits at most @timeout_ms for @events on @fd, across EINTR.  Returns 1
 * ready, 0 timed out, or -errno. */
static int
wait_fd (int fd, short events, int timeout_ms)
{
  int64_t deadline = monotonic_ms () + timeout_ms;
  struct pollfd p = { .fd = fd, .events = events };

  for (;;)
    {
      int64_t left = deadline - monotonic_ms ();
      int r;

      if (left < 0)
        left = 0;
      r = poll (&p, 1, (int) left);
      if (r >= 0)
        return r;
      if (errno != EINTR)
        return -errno;
    }
}

/* ---- payloads ---------------------------------------------------------- */

static void
put_u16 (uint8_t *p, size_t v)
{
  p[0] = (uint8_t) (v >> 8);
  p[1] = (uint8_t) v;
}

/* A standard query (RD) for @name, type A, class IN, id @id, into @buf of
 * @size bytes.  Returns its length, or 0 when @name is not a valid DNS name
 * or does not fit (the table's names always do). */
static size_t
dns_query (uint8_t *buf, size_t size, uint16_t id, const char *name)
{
  size_t name_len = strlen (name);
  size_t n = 0;
  const char *label = name;

  /* Header 12, labels name_len + 2, type and class 4. */
  if (name_len == 0 || name_len > 253 || 12 + name_len + 2 + 4 > size)
    return 0;
  put_u16 (buf + n, id);
  n += 2;
  buf[n++] = 0x01;   /* QR=0, opcode QUERY, RD */
  buf[n++] = 0x00;
  put_u16 (buf + n, 1);   /* QDCOUNT */
  n += 2;
  memset (buf + n, 0, 6);   /* ANCOUNT, NSCOUNT, ARCOUNT */
  n += 6;
  while (*label)
    {
      const char *dot = strchr (label, '.');
      size_t len = dot ? (size_t) (dot - label) : strlen (label);

      if (len == 0 || len > 63)
        return 0;
      buf[n++] = (uint8_t) len;
      memcpy (buf + n, label, len);
      n += len;
      label += len + (dot ? 1 : 0);
    }
  buf[n++] = 0;
  put_u16 (buf + n, 1);   /* QTYPE A */
  n += 2;
  put_u16 (buf + n, 1);   /* QCLASS IN */
  n += 2;
  return n;
}

/* A TLS handshake record holding one ClientHello for @sni, into @buf of
 * @size bytes.  Returns its length, or 0 when it does not fit.
 *
 * Well-formed for TLS 1.2 and 1.3 (RFC 8446 §4.1.2): legacy_version 1.2,
 * supported_versions offering 1.3 and 1.2, the extensions 1.3 requires
 * (supported_groups, signature_algorithms, key_share — empty, which a 1.3
 * server answers with a HelloRetryRequest) and server_name, which is what
 * the capture reads.  The random and session id are fixed: nothing is ever
 * encrypted, and a fixed hello keeps the capture reproducible. */
static size_t
client_hello (uint8_t *buf, size_t size, const char *sni)
{
  static const uint8_t suites[] = {
    0x13, 0x01, 0x13, 0x02, 0x13, 0x03,   /* TLS 1.3 AES-128-GCM, AES-256-GCM, ChaCha20 */
    0xc0, 0x2b, 0xc0, 0x2f, 0xc0, 0x2c, 0xc0, 0x30,   /* ECDHE-{ECDSA,RSA}-AES-GCM */
    0xcc, 0xa9, 0xcc, 0xa8,   /* ECDHE-{ECDSA,RSA}-CHACHA20-POLY1305 */
  };
  static const uint8_t other_extensions[] = {
    0x00, 0x0a, 0x00, 0x06, 0x00, 0x04, 0x00, 0x1d, 0x00, 0x17,   /* groups: x25519, P-256 */
    0x00, 0x0b, 0x00, 0x02, 0x01, 0x00,   /* ec_point_formats: uncompressed */
    0x00, 0x0d, 0x00, 0x0a, 0x00, 0x08,   /* signature_algorithms: */
    0x04, 0x03, 0x08, 0x04, 0x04, 0x01, 0x05, 0x03,   /* ecdsa-p256, pss-rsae, pkcs1, ecdsa-p384 */
    0x00, 0x2b, 0x00, 0x05, 0x04, 0x03, 0x04, 0x03, 0x03,   /* supported_versions: 1.3, 1.2 */
    0x00, 0x33, 0x00, 0x02, 0x00, 0x00,   /* key_share: no share yet */
  };
  size_t sni_len = strlen (sni);
  size_t n = 0;
  size_t record_len_at, hello_len_at, extensions_len_at, hello_start, extensions_start;

  /* Record 5, hello header 4, version 2, random 32, session id 33, suites,
   * compression 2, extensions length 2, server_name 9 + name, the rest. */
  if (sni_len == 0 || sni_len > 255
      || 5 + 4 + 2 + 32 + 33 + 2 + sizeof suites + 2 + 2 + 9 + sni_len + sizeof other_extensions
             > size)
    return 0;

  buf[n++] = 0x16;   /* handshake */
  buf[n++] = 0x03;   /* record version TLS 1.0, as RFC 8446 §5.1 asks of a first hello */
  buf[n++] = 0x01;
  record_len_at = n;
  n += 2;
  hello_start = n;
  buf[n++] = 0x01;   /* ClientHello */
  hello_len_at = n;
  n += 3;
  buf[n++] = 0x03;   /* legacy_version TLS 1.2 */
  buf[n++] = 0x03;
  for (int i = 0; i < 32; i++)   /* random */
    buf[n++] = (uint8_t) (0xa0 + i);
  buf[n++] = 32;   /* legacy_session_id: 32 bytes, for 1.3 middlebox compatibility */
  for (int i = 0; i < 32; i++)
    buf[n++] = (uint8_t) (0x50 + i);
  put_u16 (buf + n, sizeof suites);
  n += 2;
  memcpy (buf + n, suites, sizeof suites);
  n += sizeof suites;
  buf[n++] = 1;   /* compression methods: null only */
  buf[n++] = 0;
  extensions_len_at = n;
  n += 2;
  extensions_start = n;
  put_u16 (buf + n, 0x0000);   /* server_name */
  put_u16 (buf + n + 2, sni_len + 5);   /* extension data */
  put_u16 (buf + n + 4, sni_len + 3);   /* server_name_list */
  buf[n + 6] = 0;   /* host_name */
  put_u16 (buf + n + 7, sni_len);
  n += 9;
  memcpy (buf + n, sni, sni_len);
  n += sni_len;
  memcpy (buf + n, other_extensions, sizeof other_extensions);
  n += sizeof other_extensions;

  put_u16 (buf + extensions_len_at, n - extensions_start);
  buf[hello_len_at] = 0;
  put_u16 (buf + hello_len_at + 1, n - hello_start - 4);
  put_u16 (buf + record_len_at, n - hello_start);
  return n;
}

/* The bytes control @index sends, into @buf of @size bytes.  Returns their
 * length: 0 for a connect-only control or a payload that does not fit. */
static size_t
control_payload (size_t index, uint8_t *buf, size_t size)
{
  const struct probe_control *c = &probe_controls[index];
  size_t n;
  int len;

  switch (c->payload)
    {
    case PROBE_PAYLOAD_NONE:
      return 0;
    case PROBE_PAYLOAD_DNS:
      if (c->protocol == IPPROTO_UDP)
        return dns_query (buf, size, (uint16_t) (0xa100 + index), c->host_name);
      /* TCP: the 2-byte length first (RFC 1035 §4.2.2), in the same send so
       * one segment carries the whole query. */
      if (size < 2)
        return 0;
      n = dns_query (buf + 2, size - 2, (uint16_t) (0xa100 + index), c->host_name);
      if (n == 0)
        return 0;
      put_u16 (buf, n);
      return n + 2;
    case PROBE_PAYLOAD_DISCARD:
      n = strlen (PROBE_DISCARD_PAYLOAD);
      if (n > size)
        return 0;
      memcpy (buf, PROBE_DISCARD_PAYLOAD, n);
      return n;
    case PROBE_PAYLOAD_HTTP:
      len = snprintf ((char *) buf, size, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", c->host_name);
      return len > 0 && (size_t) len < size ? (size_t) len : 0;
    case PROBE_PAYLOAD_TLS:
      return client_hello (buf, size, c->host_name);
    }
  return 0;
}

/* ---- attempts ---------------------------------------------------------- */

/* Fills @ss from control @c's address; its length, or 0 if unparsable. */
static socklen_t
control_sockaddr (const struct probe_control *c, struct sockaddr_storage *ss)
{
  memset (ss, 0, sizeof *ss);
  if (c->family == AF_INET6)
    {
      struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) ss;

      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons (c->port);
      if (inet_pton (AF_INET6, c->address, &sin6->sin6_addr) != 1)
        return 0;
      return sizeof *sin6;
    }
  else
    {
      struct sockaddr_in *sin = (struct sockaddr_in *) ss;

      sin->sin_family = AF_INET;
      sin->sin_port = htons (c->port);
      if (inet_pton (AF_INET, c->address, &sin->sin_addr) != 1)
        return 0;
      return sizeof *sin;
    }
}

/* Sends @len bytes on the connected non-blocking @fd, waiting at most
 * SEND_WAIT_MS for room.  Returns 0 or -errno (-ETIMEDOUT on no room). */
static int
send_all (int fd, const uint8_t *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t n = send (fd, buf, len, MSG_NOSIGNAL);
      int r;

      if (n > 0)
        {
          buf += n;
          len -= (size_t) n;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
        return n == 0 ? -EPIPE : -errno;
      r = wait_fd (fd, POLLOUT, SEND_WAIT_MS);
      if (r == 0)
        return -ETIMEDOUT;
      if (r < 0)
        return r;
    }
  return 0;
}

/* Attempts control @index, describing what happened in @result.  Returns 0,
 * or -errno when its socket could not be created. */
static int
attempt_control (size_t index, char *result, size_t size)
{
  const struct probe_control *c = &probe_controls[index];
  struct sockaddr_storage ss;
  socklen_t ss_len = control_sockaddr (c, &ss);
  uint8_t payload[PAYLOAD_MAX];
  size_t payload_len = control_payload (index, payload, sizeof payload);
  int type = c->protocol == IPPROTO_UDP ? SOCK_DGRAM : SOCK_STREAM;
  int fd, r, err = 0;
  socklen_t err_len = sizeof err;
  ssize_t sent;

  /* Both are constant data: a failure here is a bug in the table. */
  if (ss_len == 0)
    {
      snprintf (result, size, "bad address in the controls table");
      return -EINVAL;
    }
  if (payload_len == 0 && c->payload != PROBE_PAYLOAD_NONE)
    {
      snprintf (result, size, "payload does not fit");
      return -EINVAL;
    }

  fd = socket (c->family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, c->protocol);
  if (fd < 0)
    {
      r = -errno;
      snprintf (result, size, "socket: %s", strerror (-r));
      return r;
    }

  if (c->protocol == IPPROTO_UDP)
    {
      /* A datagram to an address with no neighbour yet is queued by the
       * kernel, so a non-blocking sendto returns at once either way. */
      sent = sendto (fd, payload, payload_len, 0, (struct sockaddr *) &ss, ss_len);
      if (sent < 0)
        snprintf (result, size, "sendto: %s", strerror (errno));
      else
        snprintf (result, size, "sent %zd bytes", sent);
      close (fd);
      return 0;
    }

  if (connect (fd, (struct sockaddr *) &ss, ss_len) < 0)
    {
      if (errno != EINPROGRESS)
        err = errno;
      else
        {
          r = wait_fd (fd, POLLOUT, CONNECT_WAIT_MS);
          if (r == 0)
            err = ETIMEDOUT;
          else if (r < 0)
            err = -r;
          else if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &err, &err_len) < 0)
            err = errno;
        }
    }
  if (err)
    {
      if (err == ETIMEDOUT)
        snprintf (result, size, "connect: no answer within %d ms%s", CONNECT_WAIT_MS,
                  payload_len ? ", nothing sent" : "");
      else
        snprintf (result, size, "connect: %s%s", strerror (err),
                  payload_len ? ", nothing sent" : "");
      close (fd);
      return 0;
    }
  if (payload_len == 0)
    snprintf (result, size, "connected");
  else if ((r = send_all (fd, payload, payload_len)) < 0)
    snprintf (result, size, "connected, send: %s", strerror (-r));
  else
    snprintf (result, size, "connected, sent %zu bytes", payload_len);
  close (fd);
  return 0;
}

/* ---- command line ------------------------------------------------------ */

/* Whether control @index is named by one of @skips ("CONTROL/FAMILY"). */
static bool
is_skipped (size_t index, char **skips, int n_skips)
{
  const struct probe_control *c = &probe_controls[index];
  char key[64];

  snprintf (key, sizeof key, "%s/%s", c->name, family_name (c->family));
  for (int i = 0; i < n_skips; i++)
    if (strcmp (skips[i], key) == 0)
      return true;
  return false;
}

/* Whether @key names a control of the table. */
static bool
is_control (const char *key)
{
  char name[64];

  for (size_t i = 0; i < PROBE_N_CONTROLS; i++)
    {
      snprintf (name, sizeof name, "%s/%s", probe_controls[i].name,
                family_name (probe_controls[i].family));
      if (strcmp (key, name) == 0)
        return true;
    }
  return false;
}

int
main (int argc, char **argv)
{
  char *skips[MAX_SKIPS];
  int n_skips = 0;
  bool socket_failed = false;

  setvbuf (stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++)
    {
      /* An unknown control is an error rather than ignored: a test that
       * misspells one would otherwise "skip" nothing and pass. */
      if (strcmp (argv[i], "--skip") == 0 && i + 1 < argc && is_control (argv[i + 1])
          && n_skips < MAX_SKIPS)
        skips[n_skips++] = argv[++i];
      else
        {
          fprintf (stderr, "usage: probe [--skip CONTROL/FAMILY]...  (e.g. --skip dns-udp/ipv6)\n");
          return 2;
        }
    }

  for (size_t i = 0; i < PROBE_N_CONTROLS; i++)
    {
      const struct probe_control *c = &probe_controls[i];
      char result[160];

      if (is_skipped (i, skips, n_skips))
        snprintf (result, sizeof result, "skipped (--skip)");
      else if (attempt_control (i, result, sizeof result) < 0)
        socket_failed = true;
      printf ("probe: %s %s %s %s %u: %s\n", c->name, family_name (c->family),
              protocol_name (c->protocol), c->address, (unsigned) c->port, result);
    }
  return socket_failed ? 1 : 0;
}
