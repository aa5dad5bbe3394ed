/* Setting up: the network namespace (a user namespace too when not root),
 * the tap with the addresses QEMU's user network had, the one nftables
 * table, the listeners' sockets, and the seccomp filter after which no
 * socket is made or connected.  Each step ends the process with its
 * reason when it fails. */
#define _GNU_SOURCE
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <nftables/libnftables.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/if_tun.h>
#include <linux/seccomp.h>

/* The tap answers as QEMU's user network did: its gateway MAC, 10.0.2.2
 * and 10.0.2.3, fec0::2 and fec0::3 (lib/net/flows.h's AirlockCaptureGuest). */
const guint8 sinkhole_gateway_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };

/* linux/ipv6.h's struct in6_ifreq, which glibc's headers do not carry
 * (the guest's supervisor declares it the same way). */
struct airlock_in6_ifreq {
  struct in6_addr ifr6_addr;
  guint32 ifr6_prefixlen;
  int ifr6_ifindex;
};

G_GNUC_PRINTF (1, 2) void
sinkhole_die (const char *fmt, ...)
{
  va_list ap;

  fputs ("airlock-sinkhole: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

static void
write_proc (const char *path, const char *text, gboolean required)
{
  g_autoptr (GError) error = NULL;

  if (!g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_NONE, 0644, &error)
      && required)
    sinkhole_die ("cannot write '%s': %s", path, error->message);
}

/* Into a network namespace of our own: as root, a new one; otherwise
 * inside a new user namespace that maps us to its root, which is what
 * gives the capability to make a tap and load nftables there (and
 * nothing on the host). */
void
sinkhole_enter_namespace (void)
{
  uid_t uid = geteuid ();
  gid_t gid = getegid ();

  if (uid == 0)
    {
      if (unshare (CLONE_NEWNET) < 0)
        sinkhole_die ("cannot make a network namespace: %s", g_strerror (errno));
      return;
    }
  if (unshare (CLONE_NEWUSER | CLONE_NEWNET) < 0)
    sinkhole_die ("cannot make a user and network namespace (as uid %u): %s; the kernel may "
                  "forbid unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone)",
                  (unsigned) uid, g_strerror (errno));
  {
    g_autofree char *umap = g_strdup_printf ("0 %u 1\n", (unsigned) uid);
    g_autofree char *gmap = g_strdup_printf ("0 %u 1\n", (unsigned) gid);
    write_proc ("/proc/self/setgroups", "deny", TRUE);
    write_proc ("/proc/self/uid_map", umap, TRUE);
    write_proc ("/proc/self/gid_map", gmap, TRUE);
  }
}

static void
ifreq_call (int s, unsigned long req, struct ifreq *ifr, const char *what)
{
  if (ioctl (s, req, ifr) < 0)
    sinkhole_die ("cannot %s on '%s': %s", what, ifr->ifr_name, g_strerror (errno));
}

static void
set_v4 (int s, const char *ifname, const char *addr)
{
  struct ifreq ifr = { 0 };
  struct sockaddr_in *sin = (struct sockaddr_in *) &ifr.ifr_addr;

  g_strlcpy (ifr.ifr_name, ifname, IFNAMSIZ);
  sin->sin_family = AF_INET;
  inet_pton (AF_INET, addr, &sin->sin_addr);
  ifreq_call (s, SIOCSIFADDR, &ifr, "set an IPv4 address");
  inet_pton (AF_INET, "255.255.255.0", &sin->sin_addr);
  ifreq_call (s, SIOCSIFNETMASK, &ifr, "set an IPv4 netmask");
}

static void
set_v6 (int s6, int ifindex, const char *addr)
{
  struct airlock_in6_ifreq r = { .ifr6_prefixlen = 64, .ifr6_ifindex = ifindex };

  inet_pton (AF_INET6, addr, &r.ifr6_addr);
  if (ioctl (s6, SIOCSIFADDR, &r) < 0)
    sinkhole_die ("cannot set %s on '" TAP_NAME "': %s", addr, g_strerror (errno));
}

int
sinkhole_make_tap (void)
{
  struct ifreq ifr = { 0 };
  int fd = open ("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  int s, s6;

  if (fd < 0)
    sinkhole_die ("cannot open /dev/net/tun: %s", g_strerror (errno));
  g_strlcpy (ifr.ifr_name, TAP_NAME, IFNAMSIZ);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  if (ioctl (fd, TUNSETIFF, &ifr) < 0)
    sinkhole_die ("cannot make the tap device: %s", g_strerror (errno));

  /* Before the link is up: no router solicitations, no autoconfiguration,
   * no duplicate address detection (the guest has its addresses
   * statically; nothing here should speak first). */
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/accept_ra", "0", FALSE);
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/autoconf", "0", FALSE);
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/router_solicitations", "0", FALSE);
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/dad_transmits", "0", FALSE);
  write_proc ("/proc/sys/net/ipv6/conf/" TAP_NAME "/accept_dad", "0", FALSE);

  s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  s6 = socket (AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0 || s6 < 0)
    sinkhole_die ("cannot make a socket to configure the namespace: %s", g_strerror (errno));

  memset (&ifr, 0, sizeof ifr);
  g_strlcpy (ifr.ifr_name, "lo", IFNAMSIZ);
  ifr.ifr_flags = IFF_UP | IFF_RUNNING;
  ifreq_call (s, SIOCSIFFLAGS, &ifr, "bring up");

  memset (&ifr, 0, sizeof ifr);
  g_strlcpy (ifr.ifr_name, TAP_NAME, IFNAMSIZ);
  ifr.ifr_hwaddr.sa_family = 1; /* ARPHRD_ETHER */
  memcpy (ifr.ifr_hwaddr.sa_data, sinkhole_gateway_mac, 6);
  ifreq_call (s, SIOCSIFHWADDR, &ifr, "set the MAC address");
  set_v4 (s, TAP_NAME, "10.0.2.2");
  set_v4 (s, TAP_NAME ":1", "10.0.2.3");
  memset (&ifr, 0, sizeof ifr);
  g_strlcpy (ifr.ifr_name, TAP_NAME, IFNAMSIZ);
  ifr.ifr_flags = IFF_UP | IFF_RUNNING;
  ifreq_call (s, SIOCSIFFLAGS, &ifr, "bring up");
  ifreq_call (s, SIOCGIFINDEX, &ifr, "find the index");
  set_v6 (s6, ifr.ifr_ifindex, "fec0::2");
  set_v6 (s6, ifr.ifr_ifindex, "fec0::3");
  close (s);
  close (s6);
  return fd;
}

/* The one table.  prerouting: everything from the tap to our listeners
 * (DNS keeps its port); ICMP echo to the tap's own address, which the
 * kernel answers.  output: the namespace sends only replies to the guest
 * and neighbour discovery; it never starts a connection (there is nowhere
 * to start one to, and this says so twice).  Loaded through libnftables. */
static const char nft_rules[] =
  "table inet airlock {\n"
  "  chain prerouting {\n"
  "    type nat hook prerouting priority dstnat; policy accept;\n"
  "    iifname != \"" TAP_NAME "\" return\n"
  "    meta l4proto { tcp, udp } th dport 53 redirect to :53\n"
  "    meta l4proto tcp redirect to :9\n"
  "    meta l4proto udp redirect to :9\n"
  "    icmp type echo-request redirect\n"
  "    icmpv6 type echo-request redirect\n"
  "  }\n"
  "  chain input {\n"
  "    type filter hook input priority filter; policy drop;\n"
  "    iifname \"lo\" accept\n"
  "    ct state established,related accept\n"
  "    meta l4proto { tcp, udp } th dport { 9, 53 } accept\n"
  "    icmp type echo-request accept\n"
  "    icmpv6 type { echo-request, nd-neighbor-solicit, nd-neighbor-advert } accept\n"
  "  }\n"
  "  chain output {\n"
  "    type filter hook output priority filter; policy drop;\n"
  "    oifname \"lo\" accept\n"
  "    ct state established,related accept\n"
  "    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept\n"
  "  }\n"
  "}\n";

void
sinkhole_load_rules (void)
{
  struct nft_ctx *nft = nft_ctx_new (NFT_CTX_DEFAULT);

  if (!nft)
    sinkhole_die ("cannot start libnftables");
  nft_ctx_buffer_error (nft);
  if (nft_run_cmd_from_buffer (nft, nft_rules) != 0)
    sinkhole_die ("cannot load the network's nftables rules: %s", nft_ctx_get_error_buffer (nft));
  nft_ctx_free (nft);
}

int
sinkhole_listen_on (int family, int type, guint16 port)
{
  int fd = socket (family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int one = 1;
  struct sockaddr_storage ss = { 0 };
  socklen_t len;

  if (fd < 0)
    sinkhole_die ("cannot make a listener: %s", g_strerror (errno));
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6)
    {
      struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) &ss;
      setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
      s6->sin6_family = AF_INET6;
      s6->sin6_port = htons (port);
      len = sizeof *s6;
    }
  else
    {
      struct sockaddr_in *s4 = (struct sockaddr_in *) &ss;
      s4->sin_family = AF_INET;
      s4->sin_port = htons (port);
      len = sizeof *s4;
    }
  if (bind (fd, (struct sockaddr *) &ss, len) < 0)
    sinkhole_die ("cannot bind port %u: %s", port, g_strerror (errno));
  if (type == SOCK_STREAM && listen (fd, 128) < 0)
    sinkhole_die ("cannot listen on port %u: %s", port, g_strerror (errno));
  return fd;
}

/* From here on no socket is made or connected: the listeners, the tap and
 * QEMU's socket are all there is.  A hand-written filter (three system
 * calls, one action) rather than libseccomp: the guest's supervisor
 * already writes its filters this way. */
void
sinkhole_forbid_new_sockets (void)
{
#if defined(__x86_64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_SELF AUDIT_ARCH_AARCH64
#endif
#ifdef AUDIT_ARCH_SELF
  struct sock_filter filter[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_SELF, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 3, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_socketpair, 2, 0),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog prog = { .len = G_N_ELEMENTS (filter), .filter = filter };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
    sinkhole_die ("cannot forbid new sockets: %s", g_strerror (errno));
#else
#error "airlock-sinkhole: name this architecture's AUDIT_ARCH"
#endif
}
