/* DNS queries the supervisor must decode: one datagram to port 53, and one
 * TCP message (2-byte length framing) split across two writes. */
#define _GNU_SOURCE

#include "testprog.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int
behaviour_dns_udp (int argc, char **argv)
{
  unsigned char query[512];
  size_t len = dns_query (query, "example.com", 0x1234);
  struct sockaddr_in sa;
  socklen_t salen = make_sin (&sa, "192.0.2.53", 53);
  int fd = report ("socket", socket (AF_INET, SOCK_DGRAM, 0));

  if (fd < 0)
    return TESTPROG_FAILED;
  report ("sendto example.com A", sendto (fd, query, len, 0, (struct sockaddr *) &sa, salen));
  return TESTPROG_OK;
}

/* A DNS question written on a connected UDP socket: no send call names
 * the server, the kernel-hook recorder (or, without it, the supervisor's
 * look at every write) records it with its payload.  127.0.0.1: nothing
 * answers, and nothing leaves the guest. */
int
behaviour_dns_udp_write (int argc, char **argv)
{
  unsigned char query[512];
  size_t len = dns_query (query, "example.net", 0x5678);
  int fd = udp_connect_loopback (53);

  if (fd < 0)
    return TESTPROG_FAILED;
  report ("write example.net A", write (fd, query, len));
  return TESTPROG_OK;
}

/* The server is this program: a listener on 127.0.0.1:53 (the guest has no
 * network, and the writes must succeed for the data to be sent at all).
 * Loopback connects complete from the backlog, so one process can connect,
 * accept and read without blocking on itself. */
int
behaviour_dns_tcp (int argc, char **argv)
{
  unsigned char msg[2 + 512];
  size_t qlen = dns_query (msg + 2, "example.org", 0x4321);
  size_t first = 2 + 10;   /* the length prefix and part of the header */
  size_t total = 2 + qlen;
  unsigned char got[sizeof msg];
  size_t have = 0;
  struct sockaddr_in sa;
  socklen_t salen = make_sin (&sa, "127.0.0.1", 53);
  int one = 1;
  int listener, client, server;

  msg[0] = qlen >> 8;
  msg[1] = qlen & 0xff;

  listener = report ("socket listener", socket (AF_INET, SOCK_STREAM, 0));
  if (listener < 0)
    return TESTPROG_FAILED;
  if (report_raw ("loopback up", loopback_up (listener)) < 0)
    return TESTPROG_FAILED;
  setsockopt (listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (report ("bind 127.0.0.1:53", bind (listener, (struct sockaddr *) &sa, salen)) < 0
      || report ("listen", listen (listener, 1)) < 0)
    return TESTPROG_FAILED;
  client = report ("socket client", socket (AF_INET, SOCK_STREAM, 0));
  if (client < 0 || report ("connect 127.0.0.1:53", connect (client, (struct sockaddr *) &sa, salen)) < 0)
    return TESTPROG_FAILED;
  server = report ("accept4", accept4 (listener, NULL, NULL, SOCK_CLOEXEC));
  if (server < 0)
    return TESTPROG_FAILED;

  if (report ("write part 1", write (client, msg, first)) != (long) first
      || report ("write part 2", write (client, msg + first, total - first)) != (long) (total - first))
    return TESTPROG_FAILED;
  while (have < total)
    {
      ssize_t n = read (server, got + have, total - have);

      if (n <= 0)
        {
          report ("read", n);
          return TESTPROG_FAILED;
        }
      have += n;
    }
  if (memcmp (got, msg, total) != 0)
    {
      say ("the listener received other bytes than were written");
      return TESTPROG_FAILED;
    }
  say ("the listener received the %zu-byte query for example.org", qlen);
  return TESTPROG_OK;
}
