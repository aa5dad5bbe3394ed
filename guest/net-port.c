/* The guest's network when its hypervisor is remote (AIRLOCK_SPEC_NET_PORT).
 *
 * A remote hypervisor's QEMU cannot connect its NIC to the sinkhole's socket
 * on airlock's host; what libvirt does carry back is a virtio-serial
 * channel (virDomainOpenChannel).  So the guest gets no NIC: PID 1 makes a
 * tap with the NIC's MAC, named like a NIC, and two threads of its own relay
 * the tap's frames on AIRLOCK_PORT_NET in the framing of QEMU's stream
 * netdev (a 4-byte big-endian length, then the frame).  airlock's host side
 * passes those bytes to the sinkhole unchanged (lib/vm/net-port.c), so the
 * sinkhole, its capture and its records are the same as for a local NIC.
 *
 * Nothing here is an exit: the port's far end is airlock.  The port is
 * opened by PID 1 before any workload exists and held open, and a
 * virtio-serial port takes one opener (EBUSY), so nothing else in the guest
 * writes to it; the tap's fd and the port's are close-on-exec, and the
 * relay is two threads of PID 1, which no workload can end.  A workload
 * that takes the tap down loses its network and nothing else; whatever it
 * sends goes through the sinkhole's capture. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock-hold.h"
#include "protocol.h"
#include "workload.h"

/* The tap's name: what a workload would see for the NIC. */
#define TAP_NAME "eth0"
/* The largest frame either way: the tap's MTU is 1500, a frame with its
 * header and a VLAN tag fits many times over; anything longer from the
 * host means the stream is out of step. */
#define FRAME_MAX 65536

struct net_port {
  int tap;
  int port;
};

static struct net_port relay;

static void
put_be32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24);
  p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8);
  p[3] = (uint8_t) v;
}

/* Tap → port: one frame a read, sent with its length in one write. */
static void *
to_host (void *data)
{
  struct net_port *n = data;
  static uint8_t buf[4 + FRAME_MAX];

  for (;;)
    {
      ssize_t len = read (n->tap, buf + 4, FRAME_MAX);

      if (len < 0 && errno == EINTR)
        continue;
      if (len <= 0)
        break;
      put_be32 (buf, (uint32_t) len);
      if (clock_hold_write_all (n->port, buf, (size_t) len + 4) < 0)
        break;
    }
  console_log ("network port: the relay to the host stopped: %s", strerror (errno));
  return NULL;
}

/* Port → tap: the host's bytes arrive in pieces of any size; each whole
 * frame is written to the tap as one packet. */
static void *
from_host (void *data)
{
  struct net_port *n = data;
  static uint8_t buf[2 * (4 + FRAME_MAX)];
  size_t have = 0;

  for (;;)
    {
      ssize_t got = read (n->port, buf + have, sizeof buf - have);
      size_t at = 0;

      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        break;
      if (got == 0)
        {
          /* virtio_console: no host on the port's far end (yet, or for a
           * moment); it does not block. */
          usleep (10000);
          continue;
        }
      have += (size_t) got;
      while (have - at >= 4)
        {
          uint32_t len = ((uint32_t) buf[at] << 24) | ((uint32_t) buf[at + 1] << 16)
                         | ((uint32_t) buf[at + 2] << 8) | buf[at + 3];

          if (len > FRAME_MAX)
            {
              console_log ("network port: a frame of %u bytes from the host: the stream is "
                           "out of step, the relay stops", len);
              return NULL;
            }
          if (have - at < 4 + (size_t) len)
            break;
          /* A frame the tap refuses (down, malformed) is dropped, as a
           * NIC's would be. */
          (void) write (n->tap, buf + at + 4, len);
          at += 4 + (size_t) len;
        }
      memmove (buf, buf + at, have - at);
      have -= at;
    }
  console_log ("network port: the relay from the host stopped: %s", strerror (errno));
  return NULL;
}

static int
make_tap (char *error, size_t error_size)
{
  struct ifreq ifr;
  unsigned mac[6];
  int fd, sock;

  fd = open ("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return fail (error, error_size, "cannot open /dev/net/tun for the network port: %s "
                 "(is the tun module in the guest image?)", strerror (errno));
  memset (&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  snprintf (ifr.ifr_name, sizeof ifr.ifr_name, "%s", TAP_NAME);
  if (ioctl (fd, TUNSETIFF, &ifr) < 0)
    {
      int saved = errno;

      close (fd);
      return fail (error, error_size, "cannot make the tap '%s': %s", TAP_NAME, strerror (saved));
    }
  sscanf (AIRLOCK_NET_GUEST_MAC, "%x:%x:%x:%x:%x:%x", &mac[0], &mac[1], &mac[2], &mac[3],
          &mac[4], &mac[5]);
  ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
  for (int i = 0; i < 6; i++)
    ifr.ifr_hwaddr.sa_data[i] = (char) mac[i];
  sock = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0 || ioctl (sock, SIOCSIFHWADDR, &ifr) < 0)
    {
      int saved = errno;

      if (sock >= 0)
        close (sock);
      close (fd);
      return fail (error, error_size, "cannot give the tap '%s' the NIC's address %s: %s",
                   TAP_NAME, AIRLOCK_NET_GUEST_MAC, strerror (saved));
    }
  close (sock);
  return fd;
}

int
net_port_start (char *error, size_t error_size)
{
  pthread_t t;
  pthread_attr_t attr;
  sigset_t all, saved;
  char dev[300];
  int r;

  relay.tap = make_tap (error, error_size);
  if (relay.tap < 0)
    return relay.tap;
  relay.port = open_port (AIRLOCK_PORT_NET, dev, sizeof dev);
  if (relay.port < 0)
    return fail (error, error_size, "cannot open the network port '%s'%s%s: %s",
                 AIRLOCK_PORT_NET, dev[0] ? " at " : "", dev, strerror (-relay.port));
  /* The relay takes no signal: its threads start with every signal
   * blocked.  PID 1 learns of the reaper's end from a signalfd, for which
   * it blocks SIGCHLD in the threads it has when a phase starts; a thread
   * made before that with SIGCHLD open was the one the kernel handed the
   * signal to, its default action dropped it, and PID 1 never reaped the
   * reaper (seen over qemu+ssh: an arm64 run whose controls had ended got
   * no further, the reaper a zombie, one run in ten or so). */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &saved);
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  r = pthread_create (&t, &attr, to_host, &relay);
  if (r == 0)
    r = pthread_create (&t, &attr, from_host, &relay);
  pthread_attr_destroy (&attr);
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  if (r != 0)
    return fail (error, error_size, "cannot start the network port's relay: %s", strerror (r));
  console_log ("network: %s relayed on port %s", TAP_NAME, AIRLOCK_PORT_NET);
  return 0;
}
