/* egress-probe: the `egress` sample image's entrypoint.  It does what a
 * program that "phones home" does, in the three ways a network trace must
 * show, and prints one line per step:
 *
 *   1. a DNS query for example.com (A, over UDP to the first nameserver of
 *      /etc/resolv.conf, 10.0.2.3 without one);
 *   2. TCP to the address the answer gave, port 80, with an HTTP GET whose
 *      Host is example.com;
 *   3. TCP to the same address, port 443, with a TLS ClientHello whose SNI
 *      is example.com.
 *
 * Inside airlock the answer is the sinkhole's (docs/sinkhole.md): an
 * address of 198.18.0.0/15 handed out for example.com, so the host's
 * records tie both connections to the name.  Without an answer the probe
 * connects to 198.51.100.80, a documentation address (TEST-NET-2, RFC
 * 5737): run by mistake outside a VM, it reaches nobody.
 * The DNS query is hand-written because static glibc's getaddrinfo needs NSS
 * modules the image does not carry.  Every wait is a poll() of at most
 * TIMEOUT_MS: the probe never blocks forever, whatever the network does.
 * Exit status 0 whatever happened (the outcome is the point); 1 only when
 * the program itself cannot run (a socket cannot even be created).
 * Static C, no GLib (guest code). */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TIMEOUT_MS 2000
#define PROBE_NAME "example.com"
#define PROBE_ADDR "198.51.100.80"
#define DEFAULT_RESOLVER "10.0.2.3"

/* Where the connections go: the DNS answer's first A record, else
 * PROBE_ADDR. */
static char target[INET_ADDRSTRLEN] = PROBE_ADDR;

/* The first IPv4 "nameserver" of /etc/resolv.conf into @out. */
static void
find_resolver (char *out, size_t size)
{
  FILE *f = fopen ("/etc/resolv.conf", "re");
  char line[256];
  char addr[64];
  struct in_addr unused;

  snprintf (out, size, "%s", DEFAULT_RESOLVER);
  if (!f)
    return;
  while (fgets (line, sizeof line, f))
    if (sscanf (line, " nameserver %63s", addr) == 1 && inet_pton (AF_INET, addr, &unused) == 1)
      {
        snprintf (out, size, "%s", addr);
        break;
      }
  fclose (f);
}

/* Waits for @events on @fd; 1 ready, 0 timeout, -errno. */
static int
wait_fd (int fd, short events)
{
  struct pollfd p = { .fd = fd, .events = events };
  int r;

  do
    r = poll (&p, 1, TIMEOUT_MS);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  return r;
}

/* A DNS query for NAME/A/IN with id @id into @buf; returns its length. */
static size_t
dns_query (uint8_t *buf, uint16_t id, const char *name)
{
  size_t n = 0;
  const char *label = name;

  buf[n++] = id >> 8;
  buf[n++] = id & 0xff;
  buf[n++] = 0x01; /* RD */
  buf[n++] = 0x00;
  buf[n++] = 0; buf[n++] = 1; /* QDCOUNT */
  memset (buf + n, 0, 6);
  n += 6;
  while (*label)
    {
      const char *dot = strchr (label, '.');
      size_t len = dot ? (size_t) (dot - label) : strlen (label);

      buf[n++] = (uint8_t) len;
      memcpy (buf + n, label, len);
      n += len;
      label += len + (dot ? 1 : 0);
    }
  buf[n++] = 0;
  buf[n++] = 0; buf[n++] = 1; /* QTYPE A */
  buf[n++] = 0; buf[n++] = 1; /* QCLASS IN */
  return n;
}

/* Prints the A records of the answer in @buf (length @len). */
static void
print_dns_answer (const uint8_t *buf, size_t len, uint16_t id)
{
  size_t pos = 12;
  unsigned qd, an, found = 0;

  if (len < 12 || ((buf[0] << 8) | buf[1]) != id)
    {
      printf ("dns: malformed or foreign answer (%zu bytes)\n", len);
      return;
    }
  qd = (buf[4] << 8) | buf[5];
  an = (buf[6] << 8) | buf[7];
  /* Skip the questions: names, then type and class. */
  for (unsigned i = 0; i < qd; i++)
    {
      while (pos < len && buf[pos] != 0 && (buf[pos] & 0xc0) != 0xc0)
        pos += buf[pos] + 1;
      pos += pos < len && (buf[pos] & 0xc0) == 0xc0 ? 2 : 1;
      pos += 4;
    }
  for (unsigned i = 0; i < an && pos < len; i++)
    {
      unsigned type, rdlen;

      while (pos < len && buf[pos] != 0 && (buf[pos] & 0xc0) != 0xc0)
        pos += buf[pos] + 1;
      pos += pos < len && (buf[pos] & 0xc0) == 0xc0 ? 2 : 1;
      if (pos + 10 > len)
        break;
      type = (buf[pos] << 8) | buf[pos + 1];
      rdlen = (buf[pos + 8] << 8) | buf[pos + 9];
      pos += 10;
      if (pos + rdlen > len)
        break;
      if (type == 1 && rdlen == 4)
        {
          printf ("dns: %s A %u.%u.%u.%u\n", PROBE_NAME, buf[pos], buf[pos + 1], buf[pos + 2],
                  buf[pos + 3]);
          if (found++ == 0)
            inet_ntop (AF_INET, buf + pos, target, sizeof target);
        }
      pos += rdlen;
    }
  if (!found)
    printf ("dns: answer with rcode %u and no A record\n", buf[3] & 0x0f);
}

static void
probe_dns (void)
{
  char resolver[64];
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (53) };
  uint8_t query[512], answer[1500];
  const uint16_t id = 0x4a1c;
  size_t qlen;
  ssize_t n;
  int fd, r;

  find_resolver (resolver, sizeof resolver);
  inet_pton (AF_INET, resolver, &sin.sin_addr);
  fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    {
      printf ("dns: socket: %s\n", strerror (errno));
      return;
    }
  qlen = dns_query (query, id, PROBE_NAME);
  if (sendto (fd, query, qlen, 0, (struct sockaddr *) &sin, sizeof sin) < 0)
    {
      printf ("dns: query for %s to %s:53: %s\n", PROBE_NAME, resolver, strerror (errno));
      close (fd);
      return;
    }
  printf ("dns: query for %s sent to %s:53\n", PROBE_NAME, resolver);
  r = wait_fd (fd, POLLIN);
  if (r <= 0)
    printf ("dns: no answer: %s\n", r == 0 ? "timed out" : strerror (-r));
  else if ((n = recv (fd, answer, sizeof answer, 0)) < 0)
    printf ("dns: recv: %s\n", strerror (errno));
  else
    print_dns_answer (answer, (size_t) n, id);
  close (fd);
}

/* Connects to target:@port within TIMEOUT_MS; the socket or -1 (the
 * reason printed under @tag). */
static int
connect_with_timeout (const char *tag, uint16_t port)
{
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (port) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int err = 0, r;
  socklen_t errlen = sizeof err;

  if (fd < 0)
    {
      printf ("%s: socket: %s\n", tag, strerror (errno));
      return -1;
    }
  inet_pton (AF_INET, target, &sin.sin_addr);
  if (connect (fd, (struct sockaddr *) &sin, sizeof sin) == 0)
    return fd;
  if (errno != EINPROGRESS)
    {
      printf ("%s: connect %s:%u: %s\n", tag, target, port, strerror (errno));
      close (fd);
      return -1;
    }
  r = wait_fd (fd, POLLOUT);
  if (r <= 0)
    {
      printf ("%s: connect %s:%u: %s\n", tag, target, port, r == 0 ? "timed out" : strerror (-r));
      close (fd);
      return -1;
    }
  if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0)
    err = errno;
  if (err)
    {
      printf ("%s: connect %s:%u: %s\n", tag, target, port, strerror (err));
      close (fd);
      return -1;
    }
  return fd;
}

/* Sends @req, then reads what comes back within TIMEOUT_MS into @reply
 * (at most @cap bytes); the number of bytes read, or -1 (reason printed). */
static ssize_t
exchange (const char *tag, int fd, const void *req, size_t len, uint8_t *reply, size_t cap)
{
  ssize_t n;
  int r;

  n = send (fd, req, len, MSG_NOSIGNAL);
  if (n < 0 || (size_t) n != len)
    {
      printf ("%s: send: %s\n", tag, n < 0 ? strerror (errno) : "short write");
      return -1;
    }
  printf ("%s: sent %zu bytes\n", tag, len);
  r = wait_fd (fd, POLLIN);
  if (r <= 0)
    {
      printf ("%s: no reply: %s\n", tag, r == 0 ? "timed out" : strerror (-r));
      return -1;
    }
  n = recv (fd, reply, cap, 0);
  if (n < 0)
    printf ("%s: recv: %s\n", tag, strerror (errno));
  return n;
}

static void
probe_http (void)
{
  static const char request[] = "GET / HTTP/1.1\r\nHost: " PROBE_NAME "\r\n"
                                "User-Agent: airlock-egress-probe\r\nConnection: close\r\n\r\n";
  uint8_t reply[1024];
  ssize_t n;
  int fd = connect_with_timeout ("http", 80);

  if (fd < 0)
    return;
  printf ("http: connected to %s:80\n", target);
  n = exchange ("http", fd, request, sizeof request - 1, reply, sizeof reply - 1);
  if (n == 0)
    printf ("http: closed without a reply\n");
  else if (n > 0)
    {
      reply[n] = '\0';
      reply[strcspn ((char *) reply, "\r\n")] = '\0';
      printf ("http: reply '%s'\n", (char *) reply);
    }
  close (fd);
}

/* A minimal TLS 1.2 ClientHello with the server_name extension; enough for
 * any server (and any trace) to see which name is asked for.  The random is
 * fixed: nothing is ever encrypted with it. */
static size_t
client_hello (uint8_t *buf, const char *name)
{
  static const uint8_t suites[] = {
    0xc0, 0x2f, 0xc0, 0x2b, 0xc0, 0x30, 0xc0, 0x2c, 0xcc, 0xa8, 0xcc, 0xa9, 0x00, 0x9c, 0x00, 0x2f,
  };
  static const uint8_t other_ext[] = {
    0x00, 0x0a, 0x00, 0x06, 0x00, 0x04, 0x00, 0x17, 0x00, 0x1d,       /* groups: P-256, x25519 */
    0x00, 0x0b, 0x00, 0x02, 0x01, 0x00,                               /* point formats */
    0x00, 0x0d, 0x00, 0x08, 0x00, 0x06, 0x04, 0x03, 0x08, 0x04, 0x04, 0x01, /* sig algs */
  };
  size_t name_len = strlen (name);
  size_t n = 0, hs_len_at, rec_len_at, ext_len_at, body_start, ext_start;

  buf[n++] = 0x16; buf[n++] = 0x03; buf[n++] = 0x01; /* handshake record, TLS 1.0 */
  rec_len_at = n; n += 2;
  body_start = n;
  buf[n++] = 0x01; /* ClientHello */
  hs_len_at = n; n += 3;
  buf[n++] = 0x03; buf[n++] = 0x03; /* TLS 1.2 */
  for (int i = 0; i < 32; i++)
    buf[n++] = (uint8_t) (0xa0 + i);
  buf[n++] = 0; /* no session id */
  buf[n++] = 0; buf[n++] = sizeof suites;
  memcpy (buf + n, suites, sizeof suites);
  n += sizeof suites;
  buf[n++] = 1; buf[n++] = 0; /* null compression */
  ext_len_at = n; n += 2;
  ext_start = n;
  buf[n++] = 0; buf[n++] = 0; /* server_name */
  buf[n++] = (uint8_t) ((name_len + 5) >> 8); buf[n++] = (uint8_t) (name_len + 5);
  buf[n++] = (uint8_t) ((name_len + 3) >> 8); buf[n++] = (uint8_t) (name_len + 3);
  buf[n++] = 0; /* host_name */
  buf[n++] = (uint8_t) (name_len >> 8); buf[n++] = (uint8_t) name_len;
  memcpy (buf + n, name, name_len);
  n += name_len;
  memcpy (buf + n, other_ext, sizeof other_ext);
  n += sizeof other_ext;
  buf[ext_len_at] = (uint8_t) ((n - ext_start) >> 8);
  buf[ext_len_at + 1] = (uint8_t) (n - ext_start);
  buf[hs_len_at] = 0;
  buf[hs_len_at + 1] = (uint8_t) ((n - body_start - 4) >> 8);
  buf[hs_len_at + 2] = (uint8_t) (n - body_start - 4);
  buf[rec_len_at] = (uint8_t) ((n - body_start) >> 8);
  buf[rec_len_at + 1] = (uint8_t) (n - body_start);
  return n;
}

static void
probe_tls (void)
{
  uint8_t hello[512], reply[1024];
  size_t len = client_hello (hello, PROBE_NAME);
  ssize_t n;
  int fd = connect_with_timeout ("https", 443);

  if (fd < 0)
    return;
  printf ("https: connected to %s:443\n", target);
  n = exchange ("https", fd, hello, len, reply, sizeof reply);
  if (n == 0)
    printf ("https: closed without a reply\n");
  else if (n >= 6 && reply[0] == 0x16 && reply[5] == 0x02)
    printf ("https: ServerHello (%zd bytes)\n", n);
  else if (n >= 7 && reply[0] == 0x15)
    printf ("https: TLS alert %u\n", reply[6]);
  else if (n > 0)
    printf ("https: %zd bytes of something else than TLS\n", n);
  close (fd);
}

int
main (void)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  printf ("egress-probe: %s (%s without an answer), ports 53/udp, 80/tcp, 443/tcp\n", PROBE_NAME,
          PROBE_ADDR);
  probe_dns ();
  probe_http ();
  probe_tls ();
  printf ("egress-probe: done\n");
  return 0;
}
