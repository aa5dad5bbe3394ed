/* The multi-call test program: one static binary per guest arch, run as
 * /bin/COMMAND (a symlink to it in the testroot), dispatching on the
 * basename of argv[0]; `testprog COMMAND [ARGS]` works too.  One behaviour
 * per command, each the workload of one VM test (tests/vm/test-supervisor.c
 * holds the records each must produce).  Commands are listed in
 * behaviours.h, and the hostile techniques in tests/hostile/techniques.h. */
#define _GNU_SOURCE

#include "testprog.h"
#include "techniques.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

const char *testprog_command = "testprog";

void
say (const char *fmt, ...)
{
  va_list ap;

  printf ("testprog: %s: ", testprog_command);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
}

long
report (const char *what, long r)
{
  int saved = errno;

  if (r < 0)
    say ("%s: errno %d (%s)", what, saved, strerrorname_np (saved) ? strerrorname_np (saved) : "?");
  else
    say ("%s: ok (%ld)", what, r);
  errno = saved;
  return r;
}

long
report_raw (const char *what, long r)
{
  if (r < 0 && r > -4096)
    {
      errno = (int) -r;
      report (what, -1);
      errno = (int) -r;
    }
  else
    say ("%s: ok (%ld)", what, r);
  return r;
}

socklen_t
make_sin (struct sockaddr_in *sa, const char *addr, unsigned port)
{
  memset (sa, 0, sizeof *sa);
  sa->sin_family = AF_INET;
  sa->sin_port = htons (port);
  if (inet_pton (AF_INET, addr, &sa->sin_addr) != 1)
    abort ();
  return sizeof *sa;
}

socklen_t
make_sin6 (struct sockaddr_in6 *sa, const char *addr, unsigned port, unsigned scope_id)
{
  memset (sa, 0, sizeof *sa);
  sa->sin6_family = AF_INET6;
  sa->sin6_port = htons (port);
  sa->sin6_scope_id = scope_id;
  if (inet_pton (AF_INET6, addr, &sa->sin6_addr) != 1)
    abort ();
  return sizeof *sa;
}

int
loopback_up (int fd)
{
  struct ifreq ifr;

  memset (&ifr, 0, sizeof ifr);
  strcpy (ifr.ifr_name, "lo");
  if (ioctl (fd, SIOCGIFFLAGS, &ifr) < 0)
    return -errno;
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl (fd, SIOCSIFFLAGS, &ifr) < 0)
    return -errno;
  return 0;
}

size_t
dns_query (unsigned char *buf, const char *name, unsigned id)
{
  size_t n = 0;

  /* Header: id, flags RD, QDCOUNT 1, no other records. */
  buf[n++] = id >> 8;
  buf[n++] = id & 0xff;
  buf[n++] = 0x01;
  buf[n++] = 0x00;
  buf[n++] = 0;
  buf[n++] = 1;
  for (int i = 0; i < 6; i++)
    buf[n++] = 0;
  /* QNAME as labels. */
  while (*name)
    {
      const char *dot = strchr (name, '.');
      size_t len = dot ? (size_t) (dot - name) : strlen (name);

      buf[n++] = (unsigned char) len;
      memcpy (buf + n, name, len);
      n += len;
      name += len;
      if (*name == '.')
        name++;
    }
  buf[n++] = 0;
  buf[n++] = 0;   /* QTYPE A */
  buf[n++] = 1;
  buf[n++] = 0;   /* QCLASS IN */
  buf[n++] = 1;
  return n;
}

int
connect_to (int family, int type, int protocol, const struct sockaddr *sa, socklen_t len)
{
  int fd = report ("socket", socket (family, type, protocol));

  if (fd < 0)
    return -1;
  report ("connect", connect (fd, sa, len));
  return fd;
}

int
udp_connect_loopback (unsigned port)
{
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, "127.0.0.1", port);
  int fd = report ("socket", socket (AF_INET, SOCK_DGRAM, 0));

  if (fd < 0 || report_raw ("loopback up", loopback_up (fd)) < 0
      || report ("connect", connect (fd, (struct sockaddr *) &sa, len)) < 0)
    return -1;
  return fd;
}

static const struct {
  const char *command;
  int (*run) (int argc, char **argv);
} behaviours[] = {
#if defined(__x86_64__)
#define THIS_ARCH TESTPROG_AMD64
#elif defined(__aarch64__)
#define THIS_ARCH TESTPROG_ARM64
#else
#error "testprog is built for x86_64 and aarch64 guests"
#endif
#define ENTRY(command, function, arches) { (arches) & THIS_ARCH ? command : NULL, behaviour_##function },
  TESTPROG_BEHAVIOURS (ENTRY)
  TESTPROG_NET_BEHAVIOURS (ENTRY)
#undef ENTRY
  /* The hostile techniques (tests/hostile), for the hostile sample image. */
#define TECHNIQUE(command, function, arches) { (arches) & THIS_ARCH ? command : NULL, technique_##function },
  HOSTILE_TECHNIQUES (TECHNIQUE)
#undef TECHNIQUE
};

static void
usage (void)
{
  fprintf (stderr, "usage: testprog COMMAND [ARGS] (or run as a link named COMMAND); commands:");
  for (size_t i = 0; i < sizeof behaviours / sizeof behaviours[0]; i++)
    if (behaviours[i].command)
      fprintf (stderr, " %s", behaviours[i].command);
  fputc ('\n', stderr);
}

int
main (int argc, char **argv)
{
  const char *base;
  int status;

  if (argc < 1)
    return 2;
  base = strrchr (argv[0], '/') ? strrchr (argv[0], '/') + 1 : argv[0];
  /* testprog-suid: the hostile image's setuid copy (tests/hostile). */
  if (strcmp (base, "testprog") == 0 || strcmp (base, "testprog-suid") == 0)
    {
      if (argc < 2)
        {
          usage ();
          return 2;
        }
      argc--;
      argv++;
      base = argv[0];
    }
  for (size_t i = 0; i < sizeof behaviours / sizeof behaviours[0]; i++)
    if (behaviours[i].command && strcmp (behaviours[i].command, base) == 0)
      {
        testprog_command = behaviours[i].command;
        status = behaviours[i].run (argc, argv);
        say ("exit %d", status);
        return status;
      }
  fprintf (stderr, "testprog: unknown command '%s'\n", base);
  usage ();
  return 2;
}
