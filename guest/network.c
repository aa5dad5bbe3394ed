/* The guest's network before a workload runs: loopback up and, when the
 * host gave a NIC, its static addresses and default routes on the
 * sinkhole network.  Part of the supervisor (supervisor.c). */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/route.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervisor.h"
#include "workload.h"

/* The workload shares the guest's network namespace (its egress is what
 * the capture sees); like any container it finds loopback up.  It has no
 * CAP_NET_ADMIN to do this itself. */
int
loopback_up (void)
{
  struct ifreq ifr;
  int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int r = 0;

  if (fd < 0)
    return -errno;
  memset (&ifr, 0, sizeof ifr);
  strcpy (ifr.ifr_name, "lo");
  if (ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    r = -errno;
  else if (!(ifr.ifr_flags & IFF_UP))
    {
      ifr.ifr_flags |= IFF_UP;
      if (ioctl (fd, SIOCSIFFLAGS, &ifr) < 0)
        r = -errno;
    }
  close (fd);
  return r;
}

/* The NIC, when the host gave one: static addresses on the sinkhole
 * network (docs/sinkhole.md: the far end of the NIC's stream, or of the
 * network port on a remote hypervisor, is airlock's sinkhole process), a
 * default route and, through /etc/resolv.conf, a resolver, so software
 * behaves as if it were online.  Nothing it sends reaches anything but the
 * sinkhole; everything is in the host's capture.  IPv6 duplicate address detection is off so the address is
 * usable at once, and router advertisements are ignored. */
#define NET_V4_ADDR "10.0.2.15"
#define NET_V4_GW "10.0.2.2"
#define NET_V6_ADDR "fec0::15"
#define NET_V6_GW "fec0::2"

/* linux/ipv6.h's struct in6_ifreq, which glibc's headers do not carry and
 * which clashes with them when included. */
struct airlock_in6_ifreq {
  struct in6_addr ifr6_addr;
  uint32_t ifr6_prefixlen;
  int ifr6_ifindex;
};

static int
find_nic (char *name, size_t size)
{
  DIR *dir = opendir ("/sys/class/net");
  struct dirent *de;
  int r = -ENODEV;

  if (!dir)
    return -errno;
  while ((de = readdir (dir)))
    if (de->d_name[0] != '.' && strcmp (de->d_name, "lo") != 0 && strlen (de->d_name) < size)
      {
        strcpy (name, de->d_name);
        r = 0;
        break;
      }
  closedir (dir);
  return r;
}

static void
write_sysctl (const char *path, const char *value)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);

  if (fd >= 0)
    {
      (void) write_all (fd, value, strlen (value));
      close (fd);
    }
}

int
configure_network (char *error, size_t error_size)
{
  char nic[IFNAMSIZ], path[128];
  struct ifreq ifr;
  struct rtentry rt;
  struct airlock_in6_ifreq ifr6;
  struct in6_rtmsg rt6;
  struct sockaddr_in *sin;
  int fd4 = -1, fd6 = -1, r = 0;
  unsigned index;

  if (find_nic (nic, sizeof nic) < 0)
    return 0;   /* no NIC: nothing to configure */
  index = if_nametoindex (nic);
  snprintf (path, sizeof path, "/proc/sys/net/ipv6/conf/%s/accept_dad", nic);
  write_sysctl (path, "0");
  snprintf (path, sizeof path, "/proc/sys/net/ipv6/conf/%s/accept_ra", nic);
  write_sysctl (path, "0");
  snprintf (path, sizeof path, "/proc/sys/net/ipv6/conf/%s/autoconf", nic);
  write_sysctl (path, "0");

  fd4 = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  fd6 = socket (AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd4 < 0 || fd6 < 0)
    {
      r = fail (error, error_size, "cannot create sockets to configure '%s': %s", nic,
                strerror (errno));
      goto out;
    }
  memset (&ifr, 0, sizeof ifr);
  strcpy (ifr.ifr_name, nic);
  sin = (struct sockaddr_in *) &ifr.ifr_addr;
  sin->sin_family = AF_INET;
  inet_pton (AF_INET, NET_V4_ADDR, &sin->sin_addr);
  if (ioctl (fd4, SIOCSIFADDR, &ifr) < 0)
    {
      r = fail (error, error_size, "cannot set %s on '%s': %s", NET_V4_ADDR, nic, strerror (errno));
      goto out;
    }
  inet_pton (AF_INET, "255.255.255.0", &sin->sin_addr);
  if (ioctl (fd4, SIOCSIFNETMASK, &ifr) < 0
      || ioctl (fd4, SIOCGIFFLAGS, &ifr) < 0)
    {
      r = fail (error, error_size, "cannot configure '%s': %s", nic, strerror (errno));
      goto out;
    }
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl (fd4, SIOCSIFFLAGS, &ifr) < 0)
    {
      r = fail (error, error_size, "cannot bring '%s' up: %s", nic, strerror (errno));
      goto out;
    }
  memset (&rt, 0, sizeof rt);
  ((struct sockaddr_in *) &rt.rt_dst)->sin_family = AF_INET;
  ((struct sockaddr_in *) &rt.rt_genmask)->sin_family = AF_INET;
  ((struct sockaddr_in *) &rt.rt_gateway)->sin_family = AF_INET;
  inet_pton (AF_INET, NET_V4_GW, &((struct sockaddr_in *) &rt.rt_gateway)->sin_addr);
  rt.rt_flags = RTF_UP | RTF_GATEWAY;
  rt.rt_dev = nic;
  if (ioctl (fd4, SIOCADDRT, &rt) < 0 && errno != EEXIST)
    {
      r = fail (error, error_size, "cannot add the default route via %s: %s", NET_V4_GW,
                strerror (errno));
      goto out;
    }

  memset (&ifr6, 0, sizeof ifr6);
  inet_pton (AF_INET6, NET_V6_ADDR, &ifr6.ifr6_addr);
  ifr6.ifr6_prefixlen = 64;
  ifr6.ifr6_ifindex = (int) index;
  if (ioctl (fd6, SIOCSIFADDR, &ifr6) < 0 && errno != EEXIST)
    {
      r = fail (error, error_size, "cannot set %s on '%s': %s", NET_V6_ADDR, nic, strerror (errno));
      goto out;
    }
  memset (&rt6, 0, sizeof rt6);
  inet_pton (AF_INET6, NET_V6_GW, &rt6.rtmsg_gateway);
  rt6.rtmsg_flags = RTF_UP | RTF_GATEWAY;
  rt6.rtmsg_metric = 1;
  rt6.rtmsg_ifindex = (int) index;
  if (ioctl (fd6, SIOCADDRT, &rt6) < 0 && errno != EEXIST)
    {
      r = fail (error, error_size, "cannot add the IPv6 default route via %s: %s", NET_V6_GW,
                strerror (errno));
      goto out;
    }
  console_log ("network: %s %s/24 via %s, %s/64 via %s", nic, NET_V4_ADDR, NET_V4_GW,
               NET_V6_ADDR, NET_V6_GW);
out:
  if (fd4 >= 0)
    close (fd4);
  if (fd6 >= 0)
    close (fd6);
  return r;
}
