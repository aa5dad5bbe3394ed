/* Unix sockets: a filesystem path and an abstract name, each bound,
 * listened on and connected to. */
#define _GNU_SOURCE

#include "testprog.h"

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
