/* Egress over IPv4 and IPv6: every way a destination reaches the kernel
 * (connect, sendto, sendmsg, sendmmsg, MSG_FASTOPEN, a connected socket's
 * write/send).  Destinations are documentation addresses (192.0.2.0/24,
 * 2001:db8::/32); the guest has no route to them, so the calls fail with
 * ENETUNREACH after the supervisor has recorded them. */
#define _GNU_SOURCE

#include "testprog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

int
behaviour_connect_tcp4 (int argc, char **argv)
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "192.0.2.1", 9);

  return connect_to (AF_INET, SOCK_STREAM, 0, (struct sockaddr *) &sa, len) < 0 ? TESTPROG_FAILED
                                                                                : TESTPROG_OK;
}

/* connect-udp4 [N]: N sockets (one by default), each connected to
 * 192.0.2.1:9 and closed; many fill the recorder's ring in the test mode
 * hooks-ring-stall (tests/vm/test-supervisor.c). */
int
behaviour_connect_udp4 (int argc, char **argv)
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "192.0.2.1", 9);
  int n = argc > 1 ? atoi (argv[1]) : 1;

  for (int i = 0; i < n; i++)
    {
      int fd = connect_to (AF_INET, SOCK_DGRAM, 0, (struct sockaddr *) &sa, len);

      if (fd < 0)
        return TESTPROG_FAILED;
      close (fd);
    }
  return TESTPROG_OK;
}

int
behaviour_connect_tcp6 (int argc, char **argv)
{
  struct sockaddr_in6 sa;
  socklen_t len = make_sin6 (&sa, "2001:db8::1", 9, 0);

  return connect_to (AF_INET6, SOCK_STREAM, 0, (struct sockaddr *) &sa, len) < 0 ? TESTPROG_FAILED
                                                                                 : TESTPROG_OK;
}

int
behaviour_connect_udp6 (int argc, char **argv)
{
  struct sockaddr_in6 sa;
  socklen_t len = make_sin6 (&sa, "2001:db8::1", 9, 0);

  return connect_to (AF_INET6, SOCK_DGRAM, 0, (struct sockaddr *) &sa, len) < 0 ? TESTPROG_FAILED
                                                                                : TESTPROG_OK;
}

/* Link-local needs its scope: interface 1 is lo, the one interface every
 * guest has (if_nametoindex would open a socket of its own, a record the
 * behaviour does not mean to make). */
int
behaviour_connect_ll6 (int argc, char **argv)
{
  struct sockaddr_in6 sa;
  socklen_t len = make_sin6 (&sa, "fe80::1", 9, 1);

  return connect_to (AF_INET6, SOCK_STREAM, 0, (struct sockaddr *) &sa, len) < 0 ? TESTPROG_FAILED
                                                                                 : TESTPROG_OK;
}

/* An IPv4 destination written as IPv6: it leaves as IPv4, and the record
 * must keep both forms. */
int
behaviour_connect_v4mapped (int argc, char **argv)
{
  struct sockaddr_in6 sa;
  socklen_t len = make_sin6 (&sa, "::ffff:192.0.2.1", 9, 0);

  return connect_to (AF_INET6, SOCK_STREAM, 0, (struct sockaddr *) &sa, len) < 0 ? TESTPROG_FAILED
                                                                                 : TESTPROG_OK;
}

int
behaviour_sendto_udp4 (int argc, char **argv)
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "192.0.2.1", 9);
  int fd = report ("socket", socket (AF_INET, SOCK_DGRAM, 0));

  if (fd < 0)
    return TESTPROG_FAILED;
  report ("sendto", sendto (fd, "x", 1, 0, (struct sockaddr *) &sa, len));
  return TESTPROG_OK;
}

/* A connected UDP socket sends without naming a destination: the record
 * must carry the peer of the earlier connect.  The peer is on loopback so
 * that the connect succeeds in a guest without a network (an unreachable
 * connect leaves the socket unconnected, and the sends would fail with
 * EDESTADDRREQ before reaching anyone).  After the first datagram the
 * closed port answers ICMP unreachable, so the send() may fail with
 * ECONNREFUSED: it was still made. */
int
behaviour_udp_connected_write (int argc, char **argv)
{
  int fd = udp_connect_loopback (9);

  if (fd < 0)
    return TESTPROG_FAILED;
  report ("write", write (fd, "w", 1));
  report ("send", send (fd, "s", 1, 0));
  return TESTPROG_OK;
}

/* Sends that reach a socket without a send call of their own, or on fd 0:
 * write and pwritev2 on a socket moved to fd 0, sendfile from a memfd and
 * splice from a pipe.  The kernel-hook recorder sees the first two where
 * they reach the socket (guest/hooks.bpf.c; the filter does not look at
 * fd 0 or pwritev2), the supervisor the last two (guest/filter.c). */
int
behaviour_socket_writes_hooked (int argc, char **argv)
{
  struct iovec iov = { .iov_base = "v", .iov_len = 1 };
  int fd = udp_connect_loopback (9);
  int mem, pipefd[2];

  if (fd < 0)
    return TESTPROG_FAILED;
  if (report ("dup2 onto fd 0", dup2 (fd, 0)) < 0)
    return TESTPROG_FAILED;
  report ("write on fd 0", write (0, "w", 1));
  report ("pwritev2 at offset -1", pwritev2 (0, &iov, 1, -1, 0));
  mem = report ("memfd", memfd_create ("payload", 0));
  if (mem < 0 || report ("memfd write", write (mem, "file", 4)) < 0)
    return TESTPROG_FAILED;
  report ("sendfile", sendfile (fd, mem, &(off_t) { 0 }, 4));
  if (report ("pipe", pipe (pipefd)) < 0 || report ("pipe write", write (pipefd[1], "pipe", 4)) < 0)
    return TESTPROG_FAILED;
  report ("splice", splice (pipefd[0], NULL, fd, NULL, 4, 0));
  return TESTPROG_OK;
}

int
behaviour_sendmsg_udp4 (int argc, char **argv)
{
  struct sockaddr_in sa;
  char data[] = "m";
  struct iovec iov = { .iov_base = data, .iov_len = 1 };
  struct msghdr msg = {
    .msg_name = &sa,
    .msg_namelen = make_sin (&sa, "192.0.2.1", 9),
    .msg_iov = &iov,
    .msg_iovlen = 1,
  };
  int fd = report ("socket", socket (AF_INET, SOCK_DGRAM, 0));

  if (fd < 0)
    return TESTPROG_FAILED;
  report ("sendmsg", sendmsg (fd, &msg, 0));
  return TESTPROG_OK;
}

/* Three entries, three destinations (two addresses, and one address on two
 * ports): each entry is its own attempt. */
int
behaviour_sendmmsg3 (int argc, char **argv)
{
  struct sockaddr_in sa[3];
  char data[3][2] = { "a", "b", "c" };
  struct iovec iov[3];
  struct mmsghdr msgs[3];
  int fd = report ("socket", socket (AF_INET, SOCK_DGRAM, 0));

  if (fd < 0)
    return TESTPROG_FAILED;
  memset (msgs, 0, sizeof msgs);
  make_sin (&sa[0], "192.0.2.1", 9);
  make_sin (&sa[1], "192.0.2.2", 9);
  make_sin (&sa[2], "192.0.2.2", 10);
  for (int i = 0; i < 3; i++)
    {
      iov[i].iov_base = data[i];
      iov[i].iov_len = 1;
      msgs[i].msg_hdr.msg_name = &sa[i];
      msgs[i].msg_hdr.msg_namelen = sizeof sa[i];
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
  report ("sendmmsg", sendmmsg (fd, msgs, 3, 0));
  return TESTPROG_OK;
}

/* One sendmmsg of 1000 datagrams to one address (the kernel takes at most
 * UIO_MAXIOV, 1024, in one call): every entry is recorded, with its index,
 * and the call's count reaches them all — though the kernel asks the LSM
 * about the first entry only (guest/hooks.bpf.c).  To loopback, where a datagram to a
 * closed port is dropped without blocking and an unconnected socket
 * hears no ICMP error, so all 1000 go. */
#define MMSG_MANY 1000

int
behaviour_sendmmsg1000 (int argc, char **argv)
{
  static struct mmsghdr msgs[MMSG_MANY];
  static struct iovec iov = { .iov_base = (void *) "x", .iov_len = 1 };
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "127.0.0.1", 9);
  int fd = report ("socket", socket (AF_INET, SOCK_DGRAM, 0));

  if (fd < 0)
    return TESTPROG_FAILED;
  for (int i = 0; i < MMSG_MANY; i++)
    {
      msgs[i].msg_hdr.msg_name = &sa;
      msgs[i].msg_hdr.msg_namelen = len;
      msgs[i].msg_hdr.msg_iov = &iov;
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
  return report ("sendmmsg", sendmmsg (fd, msgs, MMSG_MANY, 0)) == MMSG_MANY ? TESTPROG_OK
                                                                             : TESTPROG_FAILED;
}

/* MSG_FASTOPEN on a fresh TCP socket connects (and sends the data in the
 * SYN): a connect by another name. */
int
behaviour_fastopen (int argc, char **argv)
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "192.0.2.1", 80);
  int fd = report ("socket", socket (AF_INET, SOCK_STREAM, 0));

  if (fd < 0)
    return TESTPROG_FAILED;
  report ("sendto MSG_FASTOPEN", sendto (fd, "GET / HTTP/1.0\r\n\r\n", 18, MSG_FASTOPEN,
                                          (struct sockaddr *) &sa, len));
  return TESTPROG_OK;
}
