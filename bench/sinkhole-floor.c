#define _GNU_SOURCE
#include "sinkhole-floor.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_tun.h>

#define FLOOR_TAP "floor0"

const guint8 bench_net_gateway_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };

/* The floor's canned DNS answer: an address in the sinkhole's range. */
static const guint8 answer_addr[4] = { 198, 18, 1, 2 };

static const char http_reply[] = BENCH_NET_HTTP_REPLY;

static gboolean
fail_errno (GError **error, int errsv, const char *what, const char *name)
{
  g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv), "cannot %s '%s': %s", what,
               name, g_strerror (errsv));
  return FALSE;
}

static gboolean
write_proc (const char *path, const char *text, GError **error)
{
  return g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_NONE, 0644, error);
}

gboolean
bench_net_floor_enter_namespace (GError **error)
{
  uid_t uid = geteuid ();
  gid_t gid = getegid ();
  g_autofree char *umap = NULL;
  g_autofree char *gmap = NULL;

  if (uid == 0)
    return unshare (CLONE_NEWNET) == 0
           || fail_errno (error, errno, "make a network namespace", "floor");
  if (unshare (CLONE_NEWUSER | CLONE_NEWNET) < 0)
    {
      int errsv = errno;

      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errsv),
                   "cannot make a user and network namespace for the floor (as uid %u): %s; run "
                   "as root, or allow unprivileged user namespaces", (unsigned) uid,
                   g_strerror (errsv));
      return FALSE;
    }
  umap = g_strdup_printf ("0 %u 1\n", (unsigned) uid);
  gmap = g_strdup_printf ("0 %u 1\n", (unsigned) gid);
  return write_proc ("/proc/self/setgroups", "deny", error)
         && write_proc ("/proc/self/uid_map", umap, error)
         && write_proc ("/proc/self/gid_map", gmap, error);
}

static gboolean
ifreq_call (int s, unsigned long req, struct ifreq *ifr, const char *what, GError **error)
{
  return ioctl (s, req, ifr) == 0 || fail_errno (error, errno, what, ifr->ifr_name);
}

static gboolean
set_v4 (int s, const char *label, const char *addr, const char *mask, GError **error)
{
  struct ifreq ifr = { 0 };
  struct sockaddr_in *sin = (struct sockaddr_in *) &ifr.ifr_addr;

  g_strlcpy (ifr.ifr_name, label, IFNAMSIZ);
  sin->sin_family = AF_INET;
  inet_pton (AF_INET, addr, &sin->sin_addr);
  if (!ifreq_call (s, SIOCSIFADDR, &ifr, "set an IPv4 address on", error))
    return FALSE;
  inet_pton (AF_INET, mask, &sin->sin_addr);
  return ifreq_call (s, SIOCSIFNETMASK, &ifr, "set an IPv4 netmask on", error);
}

static gboolean
bring_up (int s, const char *name, GError **error)
{
  struct ifreq ifr = { .ifr_flags = IFF_UP | IFF_RUNNING };

  g_strlcpy (ifr.ifr_name, name, IFNAMSIZ);
  return ifreq_call (s, SIOCSIFFLAGS, &ifr, "bring up", error);
}

/* The sinkhole's MAC and IPv4 addresses (the gateway, the resolver) and
 * example.com's, which the sinkhole reaches through its redirect.  IPv4
 * only: no frame of the benchmark is IPv6, and nothing should speak
 * first. */
static int
make_tap (GError **error)
{
  struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI };
  int fd = open ("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  int s = -1;
  gboolean ok;

  if (fd < 0)
    {
      fail_errno (error, errno, "open", "/dev/net/tun");
      return -1;
    }
  g_strlcpy (ifr.ifr_name, FLOOR_TAP, IFNAMSIZ);
  if (ioctl (fd, TUNSETIFF, &ifr) < 0)
    {
      fail_errno (error, errno, "make the tap device", FLOOR_TAP);
      close (fd);
      return -1;
    }
  memset (&ifr, 0, sizeof ifr);
  g_strlcpy (ifr.ifr_name, FLOOR_TAP, IFNAMSIZ);
  ifr.ifr_hwaddr.sa_family = 1; /* ARPHRD_ETHER */
  memcpy (ifr.ifr_hwaddr.sa_data, bench_net_gateway_mac, 6);
  ok = write_proc ("/proc/sys/net/ipv6/conf/" FLOOR_TAP "/disable_ipv6", "1", error)
       && ((s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0
           || fail_errno (error, errno, "make a socket to configure", FLOOR_TAP))
       && bring_up (s, "lo", error)
       && ifreq_call (s, SIOCSIFHWADDR, &ifr, "set the MAC address of", error)
       && set_v4 (s, FLOOR_TAP, BENCH_NET_GATEWAY_ADDR, "255.255.255.0", error)
       && set_v4 (s, FLOOR_TAP ":1", BENCH_NET_DNS_ADDR, "255.255.255.0", error)
       && set_v4 (s, FLOOR_TAP ":2", BENCH_NET_SERVER_ADDR, "255.255.255.255", error)
       && bring_up (s, FLOOR_TAP, error);
  if (s >= 0)
    close (s);
  if (!ok)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static int
listen_on (int type, const char *addr, guint16 port, GError **error)
{
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (port) };
  int fd = socket (AF_INET, type | SOCK_CLOEXEC, 0);
  int one = 1;
  g_autofree char *where = g_strdup_printf ("%s port %u", addr, port);

  inet_pton (AF_INET, addr, &sin.sin_addr);
  if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || bind (fd, (struct sockaddr *) &sin, sizeof sin) < 0
      || (type == SOCK_STREAM && listen (fd, 128) < 0))
    {
      fail_errno (error, errno, "listen on", where);
      if (fd >= 0)
        close (fd);
      return -1;
    }
  return fd;
}

typedef struct {
  int listen_fd;
  int done_fd;
} Listener;

static G_GNUC_NORETURN void
die_errno (const char *what)
{
  fprintf (stderr, "bench/sinkhole: floor: %s: %s\n", what, g_strerror (errno));
  exit (1);
}

static void
one_done (int done_fd)
{
  guint64 one = 1;

  if (write (done_fd, &one, sizeof one) != sizeof one)
    die_errno ("cannot count an exchange");
}

/* What any TCP server does with one request. */
static gpointer
tcp_listener (gpointer data)
{
  Listener *l = data;

  for (;;)
    {
      int fd = accept4 (l->listen_fd, NULL, NULL, SOCK_CLOEXEC);
      char buf[4096];
      gsize have = 0, sent = 0;
      ssize_t n;

      if (fd < 0)
        die_errno ("accept");
      while (have < sizeof buf - 1 && (n = read (fd, buf + have, sizeof buf - 1 - have)) > 0)
        {
          have += (gsize) n;
          buf[have] = '\0';
          if (strstr (buf, "\r\n\r\n"))
            break;
        }
      while (sent < sizeof http_reply - 1)
        {
          n = write (fd, http_reply + sent, sizeof http_reply - 1 - sent);
          if (n <= 0)
            die_errno ("cannot write the reply");
          sent += (gsize) n;
        }
      shutdown (fd, SHUT_WR);
      while (read (fd, buf, sizeof buf) > 0)
        ;
      close (fd);
      one_done (l->done_fd);
    }
  return NULL;
}

/* A resolver that answers every query with one A record. */
static gpointer
dns_listener (gpointer data)
{
  static const guint8 answer[] = { 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4 };
  Listener *l = data;

  for (;;)
    {
      guint8 buf[512 + sizeof answer + sizeof answer_addr];
      struct sockaddr_in peer;
      socklen_t plen = sizeof peer;
      ssize_t n = recvfrom (l->listen_fd, buf, 512, 0, (struct sockaddr *) &peer, &plen);

      if (n < 12)
        continue;
      buf[2] = 0x81;   /* QR, RD */
      buf[3] = 0x80;   /* RA, NOERROR */
      buf[6] = 0;
      buf[7] = 1;      /* one answer */
      memcpy (buf + n, answer, sizeof answer);
      memcpy (buf + n + sizeof answer, answer_addr, sizeof answer_addr);
      if (sendto (l->listen_fd, buf, (gsize) n + sizeof answer + sizeof answer_addr, 0,
                  (struct sockaddr *) &peer, plen) < 0)
        die_errno ("cannot answer a query");
      one_done (l->done_fd);
    }
  return NULL;
}

int
bench_net_floor_start (int done_fd, GError **error)
{
  /* Static: the listeners outlive this call, as long as the process. */
  static Listener tcp, dns;
  int tap = make_tap (error);

  if (tap < 0)
    return -1;
  tcp = (Listener) { listen_on (SOCK_STREAM, "0.0.0.0", BENCH_NET_SERVER_PORT, error), done_fd };
  dns = (Listener) { tcp.listen_fd < 0 ? -1 : listen_on (SOCK_DGRAM, BENCH_NET_DNS_ADDR, 53, error),
                     done_fd };
  if (tcp.listen_fd < 0 || dns.listen_fd < 0)
    {
      if (tcp.listen_fd >= 0)
        close (tcp.listen_fd);
      close (tap);
      return -1;
    }
  g_thread_unref (g_thread_new ("floor-tcp", tcp_listener, &tcp));
  g_thread_unref (g_thread_new ("floor-dns", dns_listener, &dns));
  return tap;
}
