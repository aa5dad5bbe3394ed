/* The net-* behaviours: clients that do the real thing against whatever
 * answers the VM's network, one per protocol airlock's sinkhole detects
 * (issue 20), each through the resolver path a program takes: a DNS query
 * to /etc/resolv.conf's nameserver, then the answered address.
 *
 *   net-http    [-6] [NAME [PORT [PATH]]]   GET PATH with Host and User-Agent, read until close
 *   net-tls     [-6] [NAME [PORT]]          a TLS 1.3 ClientHello, SNI NAME, ALPN h2,http/1.1
 *   net-dns-tcp [NAME [NAMESERVER]]         A then AAAA for NAME over one TCP/53 connection
 *   net-raw     [-6] [NAME [PORT [BYTES]]]  BYTES (\xNN, \r, \n, \\ escapes) on a TCP connection
 *   net-udp     [-6] [NAME [PORT [TEXT]]]   one datagram
 *   net-ssh     [-6] [NAME [PORT]]          an SSH-2.0 identification line, the server's read
 *
 * -6 asks AAAA and connects over IPv6 (default: A, IPv4).  NAME may be an
 * address literal, which skips the query.  The default names are under
 * .test (RFC 6761), which no real resolver answers: a program run by
 * mistake outside a VM resolves nothing and so reaches nobody.
 *
 * Every step prints a line and every wait is bounded (NETCLIENT_WAIT_MS),
 * so a network that never answers costs a few seconds.  Exit status:
 *   0  the exchange happened: the name resolved, the connection was
 *      accepted (or the datagram sent) and the client's bytes went out;
 *      what came back, if anything, is printed but not required (a
 *      sinkhole may answer or close);
 *   3  NET_NO_ANSWER: no address for the name (no reply within the wait,
 *      or a reply without one: NXDOMAIN under restrict=on's silence, say);
 *   4  NET_NOT_ACCEPTED: the connection was refused or timed out, or the
 *      bytes could not be sent;
 *   1  the program could not run (no socket, a bad argument);
 *   2  usage.
 * So a test tells "the network answered" (0) from "refused" (3, 4).
 *
 * Unlike the behaviours of behaviours.h's first list, what these record
 * depends on the network's answers (the address handed out), so
 * tests/vm/test-supervisor.c does not hold them to exact records; the
 * sinkhole's VM tests (tests/vm/sinkhole.sh) check them instead. */
#define _GNU_SOURCE

#include "testprog.h"
#include "netclient.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NET_NO_ANSWER 3
#define NET_NOT_ACCEPTED 4
#define NET_USAGE 2

/* What a response or a reply is read into: the sinkhole keeps 16 KiB of
 * each side, and so does a client here. */
#define RESPONSE_MAX 16384
/* Lines of a response printed (each at most LINE_MAX bytes, escaped). */
#define RESPONSE_LINES 24
#define LINE_MAX_PRINTED 200

typedef struct {
  int family;            /* AF_INET (default) or AF_INET6 (-6) */
  const char *name;
  unsigned port;
  const char *extra;     /* the path, bytes or text; NULL: the command's default */
} net_target;

static const char *
errno_name (int err)
{
  const char *name = strerrorname_np (err);

  return name ? name : "?";
}

/* Parses "[-4|-6] [NAME [PORT [EXTRA]]]" after argv[0].  Returns 0, or
 * NET_USAGE with the reason printed. */
static int
parse_target (int argc, char **argv, const char *default_name, unsigned default_port,
              net_target *ret)
{
  int i = 1;

  *ret = (net_target) { AF_INET, default_name, default_port, NULL };
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++)
    {
      if (strcmp (argv[i], "-6") == 0)
        ret->family = AF_INET6;
      else if (strcmp (argv[i], "-4") == 0)
        ret->family = AF_INET;
      else
        {
          say ("unknown option '%s' (usage: %s [-4|-6] [NAME [PORT [...]]])", argv[i],
               testprog_command);
          return NET_USAGE;
        }
    }
  if (i < argc)
    ret->name = argv[i++];
  if (i < argc)
    {
      char *end;
      unsigned long port = strtoul (argv[i], &end, 10);

      if (*end || port == 0 || port > 65535)
        {
          say ("'%s' is not a port", argv[i]);
          return NET_USAGE;
        }
      ret->port = (unsigned) port;
      i++;
    }
  if (i < argc)
    ret->extra = argv[i++];
  if (i < argc)
    {
      say ("unexpected argument '%s'", argv[i]);
      return NET_USAGE;
    }
  return 0;
}

static const char *
qtype_name (unsigned qtype)
{
  return qtype == DNS_TYPE_AAAA ? "AAAA" : "A";
}

/* Fills @ep with @address (4 or 16 bytes by @family) and @port. */
static void
endpoint_from_bytes (net_endpoint *ep, int family, const uint8_t *address, unsigned port)
{
  memset (ep, 0, sizeof *ep);
  if (family == AF_INET)
    {
      struct sockaddr_in *sin = (struct sockaddr_in *) &ep->sa;

      sin->sin_family = AF_INET;
      sin->sin_port = htons (port);
      memcpy (&sin->sin_addr, address, 4);
      ep->len = sizeof *sin;
    }
  else
    {
      struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &ep->sa;

      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons (port);
      memcpy (&sin6->sin6_addr, address, 16);
      ep->len = sizeof *sin6;
    }
}

/* Says what a reply to @qtype for @name came to; 0 when it held an address
 * (put in @ret_answer), NET_NO_ANSWER otherwise. */
static int
report_answer (const char *how, const char *name, unsigned qtype, unsigned id,
               const uint8_t *reply, long reply_len, dns_answer *ret_answer)
{
  char text[INET6_ADDRSTRLEN];
  int r;

  if (reply_len < 0)
    {
      say ("%s %s %s: no answer: %s", how, name, qtype_name (qtype),
           reply_len == -ETIMEDOUT ? "nothing within the wait" : errno_name ((int) -reply_len));
      return NET_NO_ANSWER;
    }
  r = dns_parse_answer (reply, (size_t) reply_len, id, qtype, ret_answer);
  if (r == -EBADMSG)
    {
      say ("%s %s %s: a malformed reply (%ld bytes)", how, name, qtype_name (qtype), reply_len);
      return NET_NO_ANSWER;
    }
  if (r == -ENODATA)
    {
      say ("%s %s %s: rcode %u, %u answers, no %s record", how, name, qtype_name (qtype),
           ret_answer->rcode, ret_answer->answers, qtype_name (qtype));
      return NET_NO_ANSWER;
    }
  inet_ntop (ret_answer->family, ret_answer->address, text, sizeof text);
  say ("%s %s %s: answered %s", how, name, qtype_name (qtype), text);
  return 0;
}

/* The endpoint for @t: its literal address, or the answer of a query over
 * UDP to the nameserver.  0 or NET_NO_ANSWER / TESTPROG_FAILED, said. */
static int
resolve (const net_target *t, net_endpoint *ret)
{
  uint8_t query[512], reply[1500];
  unsigned qtype = t->family == AF_INET6 ? DNS_TYPE_AAAA : DNS_TYPE_A;
  unsigned id = 0x4e00 | (t->family == AF_INET6 ? 0x66 : 0x44);
  net_endpoint ns;
  dns_answer answer;
  char ns_text[INET6_ADDRSTRLEN];
  long qlen, n;
  int from_default;

  if (endpoint_from_text (ret, t->name, t->port) == 0)
    {
      say ("%s is an address: no query", t->name);
      return 0;
    }
  qlen = dns_build_query (query, sizeof query, t->name, qtype, id);
  if (qlen < 0)
    {
      say ("'%s' is not a name a query can carry", t->name);
      return TESTPROG_FAILED;
    }
  from_default = find_nameserver (&ns);
  endpoint_address_text (&ns, ns_text, sizeof ns_text);
  say ("nameserver %s (%s)", ns_text, from_default ? "none in /etc/resolv.conf: the default"
                                                   : "from /etc/resolv.conf");
  n = dns_exchange_udp (&ns, query, (size_t) qlen, id, reply, sizeof reply);
  if (report_answer ("query over udp", t->name, qtype, id, reply, n, &answer) != 0)
    return NET_NO_ANSWER;
  endpoint_from_bytes (ret, answer.family, answer.address, t->port);
  return 0;
}

/* Connects a stream to @ep; the socket, or -(the exit status), said. */
static int
connect_stream (const net_endpoint *ep)
{
  char text[INET6_ADDRSTRLEN];
  int setup_failed;
  int fd = connect_endpoint (ep, SOCK_STREAM, &setup_failed);

  endpoint_address_text (ep, text, sizeof text);
  if (fd >= 0)
    {
      say ("connect %s port %u: accepted", text, endpoint_port (ep));
      return fd;
    }
  if (setup_failed)
    {
      say ("socket: %s", errno_name (-fd));
      return -TESTPROG_FAILED;
    }
  say ("connect %s port %u: not accepted: %s", text, endpoint_port (ep),
       fd == -ETIMEDOUT ? "nothing within the wait" : errno_name (-fd));
  return -NET_NOT_ACCEPTED;
}

/* Sends @len bytes of @what; 0, or NET_NOT_ACCEPTED said. */
static int
send_said (int fd, const char *what, const void *buf, size_t len)
{
  int r = send_all (fd, buf, len);

  if (r < 0)
    {
      say ("send %s: %s", what, r == -ETIMEDOUT ? "no room within the wait" : errno_name (-r));
      return NET_NOT_ACCEPTED;
    }
  say ("sent %s (%zu bytes)", what, len);
  return 0;
}

/* One line of bytes as text: printable ASCII as is, the rest \xNN. */
static void
escape_line (const uint8_t *p, size_t len, char *out, size_t size)
{
  size_t o = 0;

  for (size_t i = 0; i < len && o + 5 < size; i++)
    {
      if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
        out[o++] = (char) p[i];
      else
        o += (size_t) snprintf (out + o, size - o, "\\x%02x", p[i]);
    }
  out[o] = '\0';
}

/* Prints what came back, a line per line (at most RESPONSE_LINES). */
static void
say_received (const uint8_t *buf, size_t len)
{
  size_t pos = 0;
  unsigned lines = 0;
  char text[LINE_MAX_PRINTED * 4 + 8];

  while (pos < len && lines < RESPONSE_LINES)
    {
      const uint8_t *nl = memchr (buf + pos, '\n', len - pos);
      size_t end = nl ? (size_t) (nl - buf) : len;
      size_t line_len = end - pos;

      if (line_len > 0 && buf[end - 1] == '\r' && nl)
        line_len--;
      escape_line (buf + pos, line_len < LINE_MAX_PRINTED ? line_len : LINE_MAX_PRINTED, text,
                   sizeof text);
      say ("< %s%s", text, line_len > LINE_MAX_PRINTED ? "..." : "");
      pos = end + 1;
      lines++;
    }
  if (pos < len)
    say ("< ... (%zu more bytes)", len - pos);
}

/* Reads the rest of a stream after the client's bytes, says how it ended. */
static void
read_response (int fd)
{
  static uint8_t buf[RESPONSE_MAX];
  size_t len;
  int r = read_until_close (fd, buf, sizeof buf, &len);

  say ("received %zu bytes, then %s", len,
       r == 0 ? "the server closed" : r == 1 ? "stopped reading at the limit"
       : r == -ETIMEDOUT ? "nothing more within the wait" : errno_name (-r));
  say_received (buf, len);
}

int
behaviour_net_http (int argc, char **argv)
{
  char request[2048], host[300];
  net_target t;
  net_endpoint ep;
  int fd, r, n;

  if ((r = parse_target (argc, argv, "http.airlock.test", 80, &t)) != 0)
    return r;
  /* Host carries the port only when it is not the scheme's (RFC 9110, 7.2). */
  if (t.port == 80)
    snprintf (host, sizeof host, "%s", t.name);
  else
    snprintf (host, sizeof host, "%s:%u", t.name, t.port);
  n = snprintf (request, sizeof request,
                "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: airlock-net-http/1\r\n"
                "Accept: */*\r\nConnection: close\r\n\r\n",
                t.extra ? t.extra : "/sinkhole/net-http?probe=1", host);
  if (n < 0 || (size_t) n >= sizeof request)
    {
      say ("the request does not fit in %zu bytes", sizeof request);
      return TESTPROG_FAILED;
    }
  if ((r = resolve (&t, &ep)) != 0)
    return r;
  if ((fd = connect_stream (&ep)) < 0)
    return -fd;
  if ((r = send_said (fd, "the GET request", request, (size_t) n)) == 0)
    read_response (fd);
  close (fd);
  return r;
}

int
behaviour_net_tls (int argc, char **argv)
{
  static const char *const alpn[] = { "h2", "http/1.1", NULL };
  uint8_t hello[1024], reply[RESPONSE_MAX];
  net_target t;
  net_endpoint ep;
  long len, n;
  int fd, r;

  if ((r = parse_target (argc, argv, "tls.airlock.test", 443, &t)) != 0)
    return r;
  if (t.extra)
    {
      say ("unexpected argument '%s'", t.extra);
      return NET_USAGE;
    }
  /* The SNI is the name even when the target is given as an address. */
  if ((len = tls_client_hello (hello, sizeof hello, t.name, alpn)) < 0)
    {
      say ("'%s' cannot be a server name", t.name);
      return TESTPROG_FAILED;
    }
  if ((r = resolve (&t, &ep)) != 0)
    return r;
  if ((fd = connect_stream (&ep)) < 0)
    return -fd;
  if ((r = send_said (fd, "a TLS 1.3 ClientHello, ALPN h2,http/1.1", hello, (size_t) len)) != 0)
    {
      close (fd);
      return r;
    }
  n = read_some (fd, reply, sizeof reply);
  if (n > 0)
    say ("the server answered %ld bytes: %s", n, tls_describe_reply (reply, (size_t) n));
  else
    say ("the server answered nothing: %s", n == 0 ? "it closed"
         : n == -ETIMEDOUT ? "nothing within the wait" : errno_name ((int) -n));
  close (fd);
  return TESTPROG_OK;
}

int
behaviour_net_dns_tcp (int argc, char **argv)
{
  static const unsigned qtypes[] = { DNS_TYPE_A, DNS_TYPE_AAAA };
  const char *name = argc > 1 ? argv[1] : "dns-tcp.airlock.test";
  uint8_t query[512], reply[4096];
  char ns_text[INET6_ADDRSTRLEN];
  net_endpoint ns;
  int fd, status = TESTPROG_OK;

  if (argc > 3)
    {
      say ("usage: %s [NAME [NAMESERVER]]", testprog_command);
      return NET_USAGE;
    }
  if (argc > 2)
    {
      if (endpoint_from_text (&ns, argv[2], 53) < 0)
        {
          say ("'%s' is not an address", argv[2]);
          return NET_USAGE;
        }
      say ("nameserver %s (given)", argv[2]);
    }
  else
    {
      int from_default = find_nameserver (&ns);

      say ("nameserver %s (%s)", endpoint_address_text (&ns, ns_text, sizeof ns_text),
           from_default ? "none in /etc/resolv.conf: the default" : "from /etc/resolv.conf");
    }
  if ((fd = connect_stream (&ns)) < 0)
    return -fd;
  /* Both questions on one connection, one after the other (RFC 7766): a
   * resolver with a connection open reuses it. */
  for (size_t i = 0; i < sizeof qtypes / sizeof qtypes[0]; i++)
    {
      unsigned id = 0x7c00 + (unsigned) i;
      long qlen = dns_build_query (query, sizeof query, name, qtypes[i], id);
      long n;
      dns_answer answer;

      if (qlen < 0)
        {
          say ("'%s' is not a name a query can carry", name);
          close (fd);
          return TESTPROG_FAILED;
        }
      n = dns_exchange_tcp (fd, query, (size_t) qlen, reply, sizeof reply);
      if (report_answer ("query over tcp", name, qtypes[i], id, reply, n, &answer) != 0)
        status = NET_NO_ANSWER;
      if (n < 0 && n != -ETIMEDOUT)
        break;   /* the connection is gone: no second question on it */
    }
  close (fd);
  return status;
}

static int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Decodes the escapes \xNN, \r, \n, \0 and \\ of @text into @out; the
 * length, or -1 for a bad escape or when it does not fit. */
static long
unescape (const char *text, uint8_t *out, size_t size)
{
  size_t n = 0;

  for (const char *p = text; *p; p++)
    {
      if (n >= size)
        return -1;
      if (*p != '\\')
        {
          out[n++] = (uint8_t) *p;
          continue;
        }
      switch (*++p)
        {
        case 'r': out[n++] = '\r'; break;
        case 'n': out[n++] = '\n'; break;
        case '0': out[n++] = 0; break;
        case '\\': out[n++] = '\\'; break;
        case 'x':
          if (hex_value (p[1]) < 0 || hex_value (p[2]) < 0)
            return -1;
          out[n++] = (uint8_t) (hex_value (p[1]) << 4 | hex_value (p[2]));
          p += 2;
          break;
        default:
          return -1;
        }
    }
  return (long) n;
}

/* Bytes no protocol detector takes for anything: a tag, every kind of
 * byte a text-only record would lose (NUL, controls, high bytes), CR LF. */
#define RAW_DEFAULT "AIRLOCK-RAW \\x00\\x01\\x02\\x7f\\x80\\xfe\\xff\\r\\n"

int
behaviour_net_raw (int argc, char **argv)
{
  uint8_t bytes[1024], reply[RESPONSE_MAX];
  char hex[3 * 64 + 1];
  net_target t;
  net_endpoint ep;
  long len, n;
  int fd, r;

  if ((r = parse_target (argc, argv, "raw.airlock.test", 4444, &t)) != 0)
    return r;
  if ((len = unescape (t.extra ? t.extra : RAW_DEFAULT, bytes, sizeof bytes)) <= 0)
    {
      say ("'%s' is not bytes to send (escapes: \\xNN \\r \\n \\0 \\\\)", t.extra);
      return NET_USAGE;
    }
  if ((r = resolve (&t, &ep)) != 0)
    return r;
  if ((fd = connect_stream (&ep)) < 0)
    return -fd;
  for (long i = 0; i < len && i < 64; i++)
    snprintf (hex + 3 * i, sizeof hex - 3 * (size_t) i, "%02x%s", bytes[i], i + 1 < len ? " " : "");
  say ("bytes: %s%s", hex, len > 64 ? " ..." : "");
  if ((r = send_said (fd, "the raw bytes", bytes, (size_t) len)) != 0)
    {
      close (fd);
      return r;
    }
  n = read_some (fd, reply, sizeof reply);
  if (n > 0)
    {
      say ("the server answered %ld bytes", n);
      say_received (reply, (size_t) n);
    }
  else
    say ("the server answered nothing: %s", n == 0 ? "it closed"
         : n == -ETIMEDOUT ? "nothing within the wait" : errno_name ((int) -n));
  close (fd);
  return TESTPROG_OK;
}

int
behaviour_net_udp (int argc, char **argv)
{
  uint8_t reply[2048];
  char text[INET6_ADDRSTRLEN];
  const char *payload;
  net_target t;
  net_endpoint ep;
  long n;
  int fd, r;

  if ((r = parse_target (argc, argv, "udp.airlock.test", 9999, &t)) != 0)
    return r;
  payload = t.extra ? t.extra : "airlock net-udp datagram";
  if ((r = resolve (&t, &ep)) != 0)
    return r;
  fd = socket (ep.sa.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    {
      say ("socket: %s", errno_name (errno));
      return TESTPROG_FAILED;
    }
  endpoint_address_text (&ep, text, sizeof text);
  if (sendto (fd, payload, strlen (payload), 0, (struct sockaddr *) &ep.sa, ep.len) < 0)
    {
      say ("sendto %s port %u: %s", text, t.port, errno_name (errno));
      close (fd);
      return NET_NOT_ACCEPTED;
    }
  say ("sendto %s port %u: sent '%s' (%zu bytes)", text, t.port, payload, strlen (payload));
  n = read_some (fd, reply, sizeof reply);
  if (n >= 0)
    {
      say ("a datagram came back: %ld bytes", n);
      say_received (reply, (size_t) n);
    }
  else
    say ("no datagram came back: %s", n == -ETIMEDOUT ? "nothing within the wait"
                                                      : errno_name ((int) -n));
  close (fd);
  return TESTPROG_OK;
}

int
behaviour_net_ssh (int argc, char **argv)
{
  /* RFC 4253, 4.2: "SSH-2.0-softwareversion SP comments" CR LF, sent by
   * both sides as soon as the connection is up. */
  static const char banner[] = "SSH-2.0-airlock_net-ssh_1 sinkhole-probe\r\n";
  uint8_t reply[512];
  net_target t;
  net_endpoint ep;
  long n;
  int fd, r;

  if ((r = parse_target (argc, argv, "ssh.airlock.test", 22, &t)) != 0)
    return r;
  if (t.extra)
    {
      say ("unexpected argument '%s'", t.extra);
      return NET_USAGE;
    }
  if ((r = resolve (&t, &ep)) != 0)
    return r;
  if ((fd = connect_stream (&ep)) < 0)
    return -fd;
  if ((r = send_said (fd, "the SSH-2.0 identification line", banner, sizeof banner - 1)) != 0)
    {
      close (fd);
      return r;
    }
  n = read_some (fd, reply, sizeof reply);
  if (n > 0)
    {
      say ("the server answered %ld bytes%s", n,
           n >= 4 && memcmp (reply, "SSH-", 4) == 0 ? ", an SSH identification line" : "");
      say_received (reply, (size_t) n);
    }
  else
    say ("the server answered nothing: %s", n == 0 ? "it closed"
         : n == -ETIMEDOUT ? "nothing within the wait" : errno_name ((int) -n));
  close (fd);
  return TESTPROG_OK;
}
