/* A workload that waits before it phones home (`airlock … --clock`): it
 * sleeps, then sends a UDP datagram and connects over TCP to a
 * documentation address.  Under the warped clock (the default) the sleep
 * passes while the guest idles and the gate sees both calls; under the
 * real clock the run's time limit ends it first and they are never made. */
#define _GNU_SOURCE

#include "testprog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* An hour: longer than any time limit a gate would set on the real clock. */
#define DEFAULT_SLEEP_S 3600
#define BOMB_ADDRESS "192.0.2.1"
#define BOMB_PORT 80

/* The RTC's seconds (what any process may read in sysfs), or -1. */
static long long
rtc_s (void)
{
  char buf[32] = "";
  FILE *f = fopen ("/sys/class/rtc/rtc0/since_epoch", "re");
  long long s = -1;

  if (f && fgets (buf, sizeof buf, f))
    s = strtoll (buf, NULL, 10);
  if (f)
    fclose (f);
  return s;
}

static long long
monotonic_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec;
}

/* time-bomb [SECONDS]: sleeps SECONDS (default 3600) of guest time in one
 * clock_nanosleep, then sendto and connect to 192.0.2.1:80. */
int
behaviour_time_bomb (int argc, char **argv)
{
  struct timespec left = { .tv_sec = DEFAULT_SLEEP_S };
  struct sockaddr_in sa;
  socklen_t len = make_sin (&sa, BOMB_ADDRESS, BOMB_PORT);
  long long start, rtc_start;
  int fd;

  if (argc > 1)
    {
      char *end;

      errno = 0;
      left.tv_sec = strtol (argv[1], &end, 10);
      if (errno || *end || end == argv[1] || left.tv_sec < 0)
        {
          say ("bad number of seconds '%s'", argv[1]);
          return TESTPROG_FAILED;
        }
    }
  say ("sleeping %lld s", (long long) left.tv_sec);
  start = monotonic_s ();
  rtc_start = rtc_s ();
  while (clock_nanosleep (CLOCK_MONOTONIC, 0, &left, &left) == EINTR)
    ;
  say ("woke after %lld s of guest time", monotonic_s () - start);
  /* A bomb could wait on the RTC instead: under the warped clock it must
   * warp too, or it shows the host's time passing. */
  if (rtc_start < 0 || rtc_s () < 0)
    say ("the RTC cannot be read");
  else if (rtc_s () - rtc_start >= monotonic_s () - start - 1)
    say ("the RTC kept up with the guest's clock");
  else
    say ("the RTC moved only %lld s", rtc_s () - rtc_start);

  fd = report ("socket", socket (AF_INET, SOCK_DGRAM, 0));
  if (fd < 0)
    return TESTPROG_FAILED;
  report ("sendto", sendto (fd, "boom", 4, 0, (struct sockaddr *) &sa, len));
  close (fd);
  fd = connect_to (AF_INET, SOCK_STREAM, 0, (struct sockaddr *) &sa, len);
  if (fd >= 0)
    close (fd);
  /* Whether the destination answered does not matter: the calls were made. */
  return TESTPROG_OK;
}
