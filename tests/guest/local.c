/* Unix sockets: a filesystem path and an abstract name, each bound,
 * listened on and connected to; and a bind whose address changes while it
 * is made. */
#define _GNU_SOURCE

#include "testprog.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

static int
bind_and_connect (const struct sockaddr_un *sa, socklen_t len)
{
  int listener = report ("socket listener", socket (AF_UNIX, SOCK_STREAM, 0));
  int client;

  if (listener < 0
      || report ("bind", bind (listener, (const struct sockaddr *) sa, len)) < 0
      || report ("listen", listen (listener, 1)) < 0)
    return TESTPROG_FAILED;
  client = report ("socket client", socket (AF_UNIX, SOCK_STREAM, 0));
  if (client < 0 || report ("connect", connect (client, (const struct sockaddr *) sa, len)) < 0)
    return TESTPROG_FAILED;
  return TESTPROG_OK;
}

/* /tmp is the testroot's own (mode 1777); the path is NUL-terminated and
 * the length counts the NUL, as most programs pass it. */
int
behaviour_unix_path (int argc, char **argv)
{
  static const char path[] = "/tmp/testprog.sock";
  struct sockaddr_un sa = { .sun_family = AF_UNIX };

  memcpy (sa.sun_path, path, sizeof path);
  unlink (path);
  return bind_and_connect (&sa, offsetof (struct sockaddr_un, sun_path) + sizeof path);
}

/* An abstract name: a leading NUL, and the length ends the name (no
 * trailing NUL). */
int
behaviour_unix_abstract (int argc, char **argv)
{
  static const char name[] = "airlock-testprog";
  struct sockaddr_un sa = { .sun_family = AF_UNIX };

  memcpy (sa.sun_path + 1, name, sizeof name - 1);
  return bind_and_connect (&sa, offsetof (struct sockaddr_un, sun_path) + 1 + sizeof name - 1);
}

/* bind-flip: a second thread flips the port of the address being bound
 * between 7401 and 7402 while this one binds BIND_FLIP_ROUNDS UDP sockets
 * to 0.0.0.0 and prints the port each got ("bound PORT", from
 * getsockname).  A recorder that read the address from this memory and let
 * the kernel read it again would record one port and bind the other; the
 * socket_bind hook records the kernel's own copy, so each record's port is
 * the port bound (tests/vm/test-supervisor.c, check_bind_flip). */
#define BIND_FLIP_ROUNDS 24

static struct sockaddr_in flip_sa;
static volatile int flip_stop;

static void *
flip_port (void *arg)
{
  (void) arg;
  while (!flip_stop)
    {
      __atomic_store_n (&flip_sa.sin_port, htons (7401), __ATOMIC_RELAXED);
      __atomic_store_n (&flip_sa.sin_port, htons (7402), __ATOMIC_RELAXED);
    }
  return NULL;
}

int
behaviour_bind_flip (int argc, char **argv)
{
  socklen_t len = make_sin (&flip_sa, "0.0.0.0", 7401);
  pthread_t flipper;
  int status = TESTPROG_OK;

  if (pthread_create (&flipper, NULL, flip_port, NULL) != 0)
    {
      say ("cannot start the flipping thread");
      return TESTPROG_FAILED;
    }
  for (int i = 0; i < BIND_FLIP_ROUNDS && status == TESTPROG_OK; i++)
    {
      int fd = socket (AF_INET, SOCK_DGRAM, 0);
      struct sockaddr_in got;
      socklen_t got_len = sizeof got;

      /* Each port in turn as the call starts; the flipper changes it while
       * the call is made. */
      __atomic_store_n (&flip_sa.sin_port, htons (i % 2 ? 7402 : 7401), __ATOMIC_RELAXED);
      if (fd < 0 || bind (fd, (const struct sockaddr *) &flip_sa, len) < 0
          || getsockname (fd, (struct sockaddr *) &got, &got_len) < 0)
        {
          report ("socket, bind or getsockname", -1);
          status = TESTPROG_FAILED;
        }
      else
        say ("bound %u", ntohs (got.sin_port));
      if (fd >= 0)
        close (fd);
      /* Let the flipper run. */
      usleep (1000);
    }
  flip_stop = 1;
  pthread_join (flipper, NULL);
  return status;
}
