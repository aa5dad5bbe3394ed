/* The client side of a network for guest programs (netclient.h). */
#define _GNU_SOURCE

#include "netclient.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
endpoint_from_text (net_endpoint *ep, const char *text, unsigned port)
{
  struct sockaddr_in *sin = (struct sockaddr_in *) &ep->sa;
  struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &ep->sa;

  memset (ep, 0, sizeof *ep);
  if (inet_pton (AF_INET, text, &sin->sin_addr) == 1)
    {
      sin->sin_family = AF_INET;
      sin->sin_port = htons (port);
      ep->len = sizeof *sin;
      return 0;
    }
  if (inet_pton (AF_INET6, text, &sin6->sin6_addr) == 1)
    {
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons (port);
      ep->len = sizeof *sin6;
      return 0;
    }
  return -EINVAL;
}

unsigned
endpoint_port (const net_endpoint *ep)
{
  if (ep->sa.ss_family == AF_INET6)
    return ntohs (((const struct sockaddr_in6 *) &ep->sa)->sin6_port);
  return ntohs (((const struct sockaddr_in *) &ep->sa)->sin_port);
}

const char *
endpoint_address_text (const net_endpoint *ep, char *buf, size_t size)
{
  const void *addr = ep->sa.ss_family == AF_INET6
                       ? (const void *) &((const struct sockaddr_in6 *) &ep->sa)->sin6_addr
                       : (const void *) &((const struct sockaddr_in *) &ep->sa)->sin_addr;

  if (!inet_ntop (ep->sa.ss_family, addr, buf, size))
    snprintf (buf, size, "?");
  return buf;
}

int
find_nameserver (net_endpoint *ret)
{
  FILE *f = fopen ("/etc/resolv.conf", "re");
  char line[256], addr[INET6_ADDRSTRLEN + 1];

  if (f)
    {
      while (fgets (line, sizeof line, f))
        if (sscanf (line, " nameserver %46s", addr) == 1 && endpoint_from_text (ret, addr, 53) == 0)
          {
            fclose (f);
            return 0;
          }
      fclose (f);
    }
  endpoint_from_text (ret, NETCLIENT_DEFAULT_NAMESERVER, 53);
  return 1;
}

/* ---- waiting */

static long
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Waits for @events on @fd at most @timeout_ms: 1 ready, -ETIMEDOUT, -errno. */
static int
wait_fd (int fd, short events, long timeout_ms)
{
  struct pollfd p = { .fd = fd, .events = events };
  long deadline = now_ms () + timeout_ms;
  int r;

  for (;;)
    {
      long left = deadline - now_ms ();

      r = poll (&p, 1, left > 0 ? (int) left : 0);
      if (r > 0)
        return 1;
      if (r == 0)
        return -ETIMEDOUT;
      if (errno != EINTR)
        return -errno;
    }
}

/* ---- DNS */

long
dns_build_query (uint8_t *buf, size_t size, const char *name, unsigned qtype, unsigned id)
{
  size_t n = 12, name_len = strlen (name);
  const char *label = name;

  if (name_len == 0 || name_len > 253 || size < 12 + name_len + 2 + 4)
    return -EINVAL;
  buf[0] = (uint8_t) (id >> 8);
  buf[1] = (uint8_t) id;
  buf[2] = 0x01;   /* RD: what a stub resolver asks */
  buf[3] = 0x00;
  buf[4] = 0;
  buf[5] = 1;      /* QDCOUNT */
  memset (buf + 6, 0, 6);
  while (*label)
    {
      const char *dot = strchr (label, '.');
      size_t len = dot ? (size_t) (dot - label) : strlen (label);

      if (len == 0 || len > 63)
        return -EINVAL;
      buf[n++] = (uint8_t) len;
      memcpy (buf + n, label, len);
      n += len;
      label += len;
      if (*label == '.')
        label++;
    }
  buf[n++] = 0;
  buf[n++] = (uint8_t) (qtype >> 8);
  buf[n++] = (uint8_t) qtype;
  buf[n++] = 0;
  buf[n++] = 1;    /* QCLASS IN */
  return (long) n;
}

/* The position after the name at @pos: labels up to a zero byte or a
 * compression pointer (whose target is not followed: only its length
 * matters here).  -1 when the name runs past @len. */
static long
skip_name (const uint8_t *msg, size_t len, size_t pos)
{
  while (pos < len)
    {
      uint8_t b = msg[pos];

      if (b == 0)
        return (long) pos + 1;
      if ((b & 0xc0) == 0xc0)
        return pos + 2 <= len ? (long) pos + 2 : -1;
      if (b & 0xc0)
        return -1;   /* the extended label types no server sends */
      pos += 1u + b;
    }
  return -1;
}

int
dns_parse_answer (const uint8_t *msg, size_t len, unsigned id, unsigned qtype, dns_answer *ret)
{
  unsigned qd, an;
  long pos = 12;

  memset (ret, 0, sizeof *ret);
  if (len < 12 || ((unsigned) msg[0] << 8 | msg[1]) != (id & 0xffff) || !(msg[2] & 0x80))
    return -EBADMSG;
  ret->rcode = msg[3] & 0x0f;
  qd = (unsigned) msg[4] << 8 | msg[5];
  an = (unsigned) msg[6] << 8 | msg[7];
  ret->answers = an;
  for (unsigned i = 0; i < qd; i++)
    {
      pos = skip_name (msg, len, (size_t) pos);
      if (pos < 0 || (size_t) pos + 4 > len)
        return -EBADMSG;
      pos += 4;
    }
  for (unsigned i = 0; i < an; i++)
    {
      unsigned type, klass, rdlen;

      pos = skip_name (msg, len, (size_t) pos);
      if (pos < 0 || (size_t) pos + 10 > len)
        return -EBADMSG;
      type = (unsigned) msg[pos] << 8 | msg[pos + 1];
      klass = (unsigned) msg[pos + 2] << 8 | msg[pos + 3];
      rdlen = (unsigned) msg[pos + 8] << 8 | msg[pos + 9];
      pos += 10;
      if ((size_t) pos + rdlen > len)
        return -EBADMSG;
      if (type == qtype && klass == 1 && ((type == DNS_TYPE_A && rdlen == 4)
                                          || (type == DNS_TYPE_AAAA && rdlen == 16)))
        {
          ret->family = type == DNS_TYPE_A ? AF_INET : AF_INET6;
          memcpy (ret->address, msg + pos, rdlen);
          return 0;
        }
      pos += rdlen;   /* a CNAME, or another type: the next record */
    }
  return -ENODATA;
}

long
dns_exchange_udp (const net_endpoint *server, const uint8_t *query, size_t len, unsigned id,
                  uint8_t *reply, size_t size)
{
  long deadline = now_ms () + NETCLIENT_WAIT_MS;
  int fd = socket (server->sa.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  long r;

  if (fd < 0)
    return -errno;
  if (sendto (fd, query, len, 0, (const struct sockaddr *) &server->sa, server->len) < 0)
    {
      r = -errno;
      close (fd);
      return r;
    }
  for (;;)
    {
      ssize_t n;

      r = wait_fd (fd, POLLIN, deadline - now_ms ());
      if (r < 0)
        break;
      n = recv (fd, reply, size, 0);
      if (n < 0)
        {
          if (errno == EAGAIN || errno == EINTR)
            continue;
          r = -errno;
          break;
        }
      /* Another reply (a late one, or a stray datagram): not ours. */
      if (n >= 2 && ((unsigned) reply[0] << 8 | reply[1]) == (id & 0xffff))
        {
          r = n;
          break;
        }
    }
  close (fd);
  return r;
}

/* Reads exactly @len bytes, each wait bounded: 0, -ECONNRESET when the
 * peer closed first, -ETIMEDOUT, -errno. */
static int
read_exact (int fd, uint8_t *buf, size_t len)
{
  size_t have = 0;

  while (have < len)
    {
      ssize_t n;
      int r = wait_fd (fd, POLLIN, NETCLIENT_WAIT_MS);

      if (r < 0)
        return r;
      n = read (fd, buf + have, len - have);
      if (n == 0)
        return -ECONNRESET;
      if (n < 0)
        {
          if (errno == EAGAIN || errno == EINTR)
            continue;
          return -errno;
        }
      have += (size_t) n;
    }
  return 0;
}

long
dns_exchange_tcp (int fd, const uint8_t *query, size_t len, uint8_t *reply, size_t size)
{
  uint8_t msg[2 + 512];
  uint8_t prefix[2];
  size_t reply_len;
  int r;

  if (len > sizeof msg - 2)
    return -EMSGSIZE;
  /* The prefix and the message in one write, as stub resolvers do. */
  msg[0] = (uint8_t) (len >> 8);
  msg[1] = (uint8_t) len;
  memcpy (msg + 2, query, len);
  if ((r = send_all (fd, msg, len + 2)) < 0)
    return r;
  if ((r = read_exact (fd, prefix, 2)) < 0)
    return r;
  reply_len = (size_t) prefix[0] << 8 | prefix[1];
  if (reply_len > size)
    return -EMSGSIZE;
  if ((r = read_exact (fd, reply, reply_len)) < 0)
    return r;
  return (long) reply_len;
}

/* ---- streams */

int
connect_endpoint (const net_endpoint *ep, int type, int *ret_setup_failed)
{
  int fd = socket (ep->sa.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int err = 0, r;
  socklen_t errlen = sizeof err;

  if (ret_setup_failed)
    *ret_setup_failed = fd < 0;
  if (fd < 0)
    return -errno;
  if (connect (fd, (const struct sockaddr *) &ep->sa, ep->len) == 0)
    return fd;
  if (errno != EINPROGRESS)
    {
      r = -errno;
      close (fd);
      return r;
    }
  r = wait_fd (fd, POLLOUT, NETCLIENT_WAIT_MS);
  if (r < 0)
    {
      close (fd);
      return r;
    }
  if (getsockopt (fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0)
    err = errno;
  if (err)
    {
      close (fd);
      return -err;
    }
  return fd;
}

int
send_all (int fd, const void *buf, size_t len)
{
  const uint8_t *p = buf;

  while (len > 0)
    {
      ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
      int r;

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno != EAGAIN)
            return -errno;
          if ((r = wait_fd (fd, POLLOUT, NETCLIENT_WAIT_MS)) < 0)
            return r;
          continue;
        }
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

int
read_until_close (int fd, uint8_t *buf, size_t size, size_t *ret_len)
{
  size_t have = 0;
  int r = 1;

  while (have < size)
    {
      ssize_t n;

      if ((r = wait_fd (fd, POLLIN, NETCLIENT_WAIT_MS)) < 0)
        break;
      n = read (fd, buf + have, size - have);
      if (n == 0)
        {
          r = 0;
          break;
        }
      if (n < 0)
        {
          if (errno == EAGAIN || errno == EINTR)
            continue;
          r = -errno;
          break;
        }
      have += (size_t) n;
      r = 1;
    }
  *ret_len = have;
  return r;
}

long
read_some (int fd, uint8_t *buf, size_t size)
{
  for (;;)
    {
      ssize_t n;
      int r = wait_fd (fd, POLLIN, NETCLIENT_WAIT_MS);

      if (r < 0)
        return r;
      n = read (fd, buf, size);
      if (n >= 0)
        return n;
      if (errno != EAGAIN && errno != EINTR)
        return -errno;
    }
}

/* ---- TLS */

/* A writer that never runs past its buffer: once it would, it only counts,
 * and the caller sees the overflow at the end. */
typedef struct {
  uint8_t *buf;
  size_t size, n;
  int overflow;
} writer;

static void
put_bytes (writer *w, const void *data, size_t len)
{
  if (w->overflow || len > w->size - w->n)
    {
      w->overflow = 1;
      return;
    }
  memcpy (w->buf + w->n, data, len);
  w->n += len;
}

static void
put8 (writer *w, unsigned v)
{
  uint8_t b = (uint8_t) v;

  put_bytes (w, &b, 1);
}

static void
put16 (writer *w, unsigned v)
{
  put8 (w, v >> 8);
  put8 (w, v);
}

/* Starts a length field of @width bytes; returns where it is. */
static size_t
begin_length (writer *w, unsigned width)
{
  size_t at = w->n;

  for (unsigned i = 0; i < width; i++)
    put8 (w, 0);
  return at;
}

/* Fills the length field of @width bytes at @at with what was written since. */
static void
end_length (writer *w, size_t at, unsigned width)
{
  size_t len = w->n - at - width;

  if (w->overflow || len >> (8 * width))
    {
      w->overflow = 1;
      return;
    }
  for (unsigned i = 0; i < width; i++)
    w->buf[at + i] = (uint8_t) (len >> (8 * (width - 1 - i)));
}

long
tls_client_hello (uint8_t *buf, size_t size, const char *server_name, const char *const *alpn)
{
  /* TLS 1.3's three suites first, then the TLS 1.2 ones a client that
   * can fall back also offers. */
  static const uint16_t suites[] = {
    0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8,
  };
  static const uint16_t groups[] = { 0x001d /* x25519 */, 0x0017 /* P-256 */, 0x0018 /* P-384 */ };
  static const uint16_t sig_algs[] = {
    0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601, 0x0807,
  };
  size_t name_len = strlen (server_name);
  size_t record, handshake, exts, ext, list;
  writer w = { buf, size, 0, 0 };

  if (name_len == 0 || name_len > 255)
    return -EINVAL;

  put8 (&w, 0x16);          /* handshake record */
  put16 (&w, 0x0301);       /* record version: TLS 1.0, as every 1.3 client writes it */
  record = begin_length (&w, 2);
  put8 (&w, 0x01);          /* ClientHello */
  handshake = begin_length (&w, 3);
  put16 (&w, 0x0303);       /* legacy_version: TLS 1.2 */
  for (unsigned i = 0; i < 32; i++)
    put8 (&w, 0xa0 + i);    /* random */
  put8 (&w, 32);            /* legacy_session_id: 32 bytes, middlebox compatibility */
  for (unsigned i = 0; i < 32; i++)
    put8 (&w, 0x50 + i);
  put16 (&w, sizeof suites);
  for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
    put16 (&w, suites[i]);
  put8 (&w, 1);             /* compression methods: null only */
  put8 (&w, 0);

  exts = begin_length (&w, 2);

  put16 (&w, 0x0000);       /* server_name */
  ext = begin_length (&w, 2);
  list = begin_length (&w, 2);
  put8 (&w, 0);             /* host_name */
  put16 (&w, (unsigned) name_len);
  put_bytes (&w, server_name, name_len);
  end_length (&w, list, 2);
  end_length (&w, ext, 2);

  put16 (&w, 0x0017);       /* extended_master_secret */
  put16 (&w, 0);

  put16 (&w, 0x000a);       /* supported_groups */
  put16 (&w, 2 + sizeof groups);
  put16 (&w, sizeof groups);
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
    put16 (&w, groups[i]);

  put16 (&w, 0x000b);       /* ec_point_formats: uncompressed */
  put16 (&w, 2);
  put8 (&w, 1);
  put8 (&w, 0);

  put16 (&w, 0x000d);       /* signature_algorithms */
  put16 (&w, 2 + sizeof sig_algs);
  put16 (&w, sizeof sig_algs);
  for (size_t i = 0; i < sizeof sig_algs / sizeof sig_algs[0]; i++)
    put16 (&w, sig_algs[i]);

  if (alpn && alpn[0])
    {
      put16 (&w, 0x0010);   /* application_layer_protocol_negotiation */
      ext = begin_length (&w, 2);
      list = begin_length (&w, 2);
      for (size_t i = 0; alpn[i]; i++)
        {
          size_t len = strlen (alpn[i]);

          if (len == 0 || len > 255)
            return -EINVAL;
          put8 (&w, (unsigned) len);
          put_bytes (&w, alpn[i], len);
        }
      end_length (&w, list, 2);
      end_length (&w, ext, 2);
    }

  put16 (&w, 0x002b);       /* supported_versions: TLS 1.3, TLS 1.2 */
  put16 (&w, 5);
  put8 (&w, 4);
  put16 (&w, 0x0304);
  put16 (&w, 0x0303);

  put16 (&w, 0x002d);       /* psk_key_exchange_modes: psk_dhe_ke */
  put16 (&w, 2);
  put8 (&w, 1);
  put8 (&w, 1);

  put16 (&w, 0x0033);       /* key_share: one X25519 share */
  put16 (&w, 2 + 2 + 2 + 32);
  put16 (&w, 2 + 2 + 32);
  put16 (&w, 0x001d);
  put16 (&w, 32);
  for (unsigned i = 0; i < 32; i++)
    put8 (&w, 0x09 + i);

  end_length (&w, exts, 2);
  end_length (&w, handshake, 3);
  end_length (&w, record, 2);
  if (w.overflow)
    return -EINVAL;
  return (long) w.n;
}

const char *
tls_describe_reply (const uint8_t *buf, size_t len)
{
  /* RFC 8446, 4.1.3: a HelloRetryRequest is a ServerHello with this random. */
  static const uint8_t hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
  };

  if (len >= 6 && buf[0] == 0x16 && buf[1] == 0x03)
    {
      if (buf[5] != 0x02)
        return "other TLS handshake";
      if (len >= 11 + 32 && memcmp (buf + 11, hrr_random, 32) == 0)
        return "HelloRetryRequest";
      return "ServerHello";
    }
  if (len >= 1 && buf[0] == 0x15)
    return "alert";
  return "not TLS";
}

/* ---- HTTP */

int
http_status (const uint8_t *buf, size_t len)
{
  int code = 0;

  if (len < 12 || memcmp (buf, "HTTP/1.", 7) != 0 || buf[8] != ' ')
    return -EBADMSG;
  for (int i = 9; i < 12; i++)
    {
      if (buf[i] < '0' || buf[i] > '9')
        return -EBADMSG;
      code = code * 10 + (buf[i] - '0');
    }
  return code;
}

int
http_body (const uint8_t *buf, size_t len, const uint8_t **ret_body, size_t *ret_len)
{
  for (size_t i = 0; i + 4 <= len; i++)
    if (memcmp (buf + i, "\r\n\r\n", 4) == 0)
      {
        *ret_body = buf + i + 4;
        *ret_len = len - i - 4;
        return 0;
      }
  return -EBADMSG;
}
